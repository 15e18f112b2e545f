//! Normalise ATIF trajectories so that two runs of the same behaviour are byte-identical,
//! reduce them to a [`Shape`] and say what moved between two runs. Pure: no I/O, no async.
//!
//! Which function for which job:
//! - [`normalize`] a trajectory (a `serde_json::Value`) with [`NormalizeOptions`] or a
//!   [`preset`]: what is random about a run (timestamps, session and call ids, addresses,
//!   costs, the order concurrent subagents finished in) goes, and nothing else; secrets become
//!   `<redacted:KIND>` first. [`normalize_json`] does the same from JSON text, faster.
//! - [`to_canonical_string`] writes the result as a golden file is written (byte for byte what
//!   Python's `json.dumps(indent=2, sort_keys=True, ensure_ascii=False)` writes).
//! - [`shape`]: what the agent did, in a handful of numbers and lists.
//! - [`compare`] two runs, each read by [`JsonDocument::parse`] and normalised by
//!   [`JsonDocument::normalize`]: the [`Comparison`] holds both Shapes, the [`Delta`]s, the
//!   step-by-step [`StepChange`]s and the failure report, and picks the threads itself.
//!   [`match_runs`] judges two runs by looser [`MatchOptions`] instead of equality.
//!
//! [`diff`], [`explain`], [`render`] and [`report`] are the parts `compare` is made of, for a
//! caller that wants one of them alone, on `Value`s as in the example below.
//!
//! The key design decision: the contract is written once, over a small trait of tree
//! operations, so [`normalize`] and [`normalize_json`] (which borrows its strings from the
//! input and never builds a `Value`) cannot drift apart; tests hold them to the same bytes.
//! The contract in full, with examples, is in `docs/normalization.md`.
//!
//! # Example
//!
//! ```
//! use atif_normalize::{DiffOptions, NormalizeOptions, diff, normalize, shape};
//! use serde_json::json;
//!
//! # fn main() -> atif_normalize::Result<()> {
//! let run = |session: &str, call: &str| {
//!     json!({
//!         "schema_version": "ATIF-v1.8",
//!         "session_id": session,
//!         "agent": {"name": "demo", "version": "1", "model_name": "m-1"},
//!         "steps": [{
//!             "step_id": 1, "source": "agent", "message": "",
//!             "timestamp": "2026-01-01T00:00:00Z",
//!             "tool_calls": [{"tool_call_id": call, "function_name": "grep", "arguments": {}}],
//!             "observation": {"results": [{"source_call_id": call, "content": "ok"}]}
//!         }]
//!     })
//! };
//! let options = NormalizeOptions::default();
//! let golden = normalize(&run("s-1", "call_3hfgfv2c"), &options)?;
//! let actual = normalize(&run("s-2", "call_9xq1"), &options)?;
//! assert_eq!(golden, actual);
//! assert!(diff(&shape(&golden), &shape(&actual), &DiffOptions::default()).is_empty());
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod align;
mod borrowed_tree;
mod canonical;
mod compare;
mod contract;
mod diff;
mod error;
mod explain;
mod matching;
mod normalize;
mod options;
mod path_placeholders;
mod position_free;
mod preset;
mod report;
mod selector;
mod shape;
mod strict_parser;
mod tree;
mod view;

pub use atif_secrets;
pub use canonical::{content_hash, is_canonical_text_of, to_canonical_string, write_canonical};
pub use compare::{Comparison, compare};
pub use diff::{Delta, DiffOptions, diff, render};
pub use error::{Error, Result};
pub use explain::{StepChange, StepChangeKind, explain};
pub use matching::{ArgumentMatch, Band, MatchOptions, MatchOutcome, SequenceMatch, match_runs};
pub use normalize::{
    JsonDocument, NormalizedDocument, normalize, normalize_json, normalize_owned,
    normalize_with_redactions,
};
pub use options::{Masker, NormalizeOptions, SelectorAction};
pub use preset::{PRESETS, preset};
pub use report::{ReportDiff, ReportOptions, report, shown_changes};
pub use shape::{Shape, shape};

/// What other crates of this workspace share with this one: not public API, and free to change
/// in any release.
#[doc(hidden)]
pub mod support {
    pub use crate::path_placeholders::RunDirs;
    pub use crate::shape::{join, shape_without_hash};
}
