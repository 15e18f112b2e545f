//! Envelope goldens: the behaviour of N runs of an agent against a live model, and a verdict,
//! with a stated error rate, on whether new runs moved it. One run proves little: the model
//! samples, so an unchanged agent takes different paths on different runs.
//!
//! Which function for which job:
//! - Take a run: [`Run::new`] normalises a trajectory and keeps its
//!   [`Shape`](atif_normalize::Shape); [`Run::set_passed`] records whether it passed (the
//!   command's exit status, or the test's own assertion).
//! - Write the golden: [`Envelope::build`] gives the distribution over the runs of what varies
//!   between live runs: the tool-call variants grouped by a [`ToolOrder`], with one
//!   representative trajectory each; step counts, LLM calls and tokens as samples; the crash
//!   and pass rates. The Shape's other fields (tool errors, subagents, models) are not kept:
//!   a test's own assertion, through the pass rate, is the way to judge them. [`Envelope::to_json`] is the canonical text a pull request reviews, and
//!   [`Envelope::from_json`] reads it back.
//! - Judge new runs: [`compare`] tests them against the golden field by field and gives a
//!   [`Verdict`] whose [`Conclusion`] is `changed` (each [`FieldVerdict`] that moved, with its
//!   effect, p-value and the runs that show it), `no-clear-change`, or `inconclusive` when the
//!   runs were too few to see the shift [`VerdictOptions`] asks for.
//!
//! The key design decision: the chance of calling an unchanged agent `changed` is the
//! family-wise α (0.05 by default) whatever the number of fields (Holm's correction over a
//! seeded permutation test on the variants, Fisher's exact test on rates and Mann-Whitney's U
//! on counts), and the same runs always give the same verdict. The crate is pure: no I/O, no
//! async. `docs/live.md` explains the statistics in plain words.
//!
//! # Example
//!
//! ```
//! use atif_envelope::{Conclusion, Envelope, Run, ToolOrder, VerdictOptions, compare};
//! use atif_normalize::NormalizeOptions;
//! use serde_json::json;
//!
//! # fn main() -> atif_envelope::Result<()> {
//! let trajectory = |tools: &[&str]| {
//!     let calls: Vec<_> = tools
//!         .iter()
//!         .map(|name| json!({"tool_call_id": "c", "function_name": name, "arguments": {}}))
//!         .collect();
//!     json!({
//!         "schema_version": "ATIF-v1.8",
//!         "session_id": "s",
//!         "agent": {"name": "demo", "version": "1", "model_name": "m-1"},
//!         "steps": [{"step_id": 1, "source": "agent", "message": "", "tool_calls": calls}]
//!     })
//! };
//! let options = NormalizeOptions::default();
//! let runs = |tools: &[&str], n: usize| -> atif_envelope::Result<Vec<Run>> {
//!     (1..=n).map(|i| Run::new(&format!("run {i}"), trajectory(tools), &options)).collect()
//! };
//! let golden = Envelope::build(&runs(&["read"], 20)?, ToolOrder::Exact)?;
//! let text = golden.to_json();
//! assert_eq!(Envelope::from_json(&text)?, golden);
//!
//! let same = compare(&golden, &runs(&["read"], 20)?, &VerdictOptions::default())?;
//! assert_eq!(same.verdict, Conclusion::NoClearChange);
//! let moved = compare(&golden, &runs(&["grep", "read"], 20)?, &VerdictOptions::default())?;
//! assert_eq!(moved.verdict, Conclusion::Changed);
//! assert!(moved.to_string().contains("`grep` called in 20/20 runs, was 0/20"));
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod envelope;
mod error;
mod order;
mod stats;
mod verdict;

pub use envelope::{ENVELOPE_VERSION, Envelope, Run, Variant};
pub use error::{Error, Result};
pub use order::ToolOrder;
pub use verdict::{Conclusion, FieldVerdict, Verdict, VerdictOptions, compare};
