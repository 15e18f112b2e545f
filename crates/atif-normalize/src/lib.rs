//! Normalise ATIF trajectories so that two runs of the same behaviour are byte-identical,
//! reduce them to a [`Shape`] and say what moved between two runs.
//!
//! A raw trajectory differs on every run: timestamps, session ids, provider call ids, memory
//! addresses in prompts, costs, the order in which concurrent subagents finished.
//! [`normalize`] removes exactly that and nothing more (the join between a tool call and its
//! result, model names and the schema version are behaviour), [`to_canonical_string`] writes
//! the result byte-for-byte as Python's `json.dumps(indent=2, sort_keys=True,
//! ensure_ascii=False)` would, [`shape`] answers "what did the agent do", and [`diff`],
//! [`explain`] and [`render`] say what moved, most telling first; [`report`] puts them together
//! into the one failure report, cut to a screen on long runs.
//!
//! The crate is pure: no I/O, no async. Options live in plain values ([`NormalizeOptions`],
//! [`DiffOptions`]) passed to free functions. Two runs are compared by one function,
//! [`compare`], whatever the caller: it hashes one run on a second thread while it explains the
//! steps, so long runs cost what one of them costs.
//!
//! Two entry points give the same bytes. [`normalize`] works on a `serde_json::Value`, which
//! every other function takes too. [`normalize_json`] reads JSON text into a tree that borrows
//! its strings from the input and streams the canonical text to a writer, so strings it does
//! not change are never allocated or re-escaped: on a 15 MB trajectory it is about twice as fast
//! and needs well under half the memory, which is what `atif normalize` uses. Both apply one
//! contract, written once over a small trait of tree operations that both trees implement, so
//! they cannot drift apart; tests check that they agree on the corpus, on generated
//! trajectories and on arbitrary documents. [`JsonDocument::normalize`] keeps the borrowed tree
//! as a [`NormalizedDocument`], which answers what [`shape`], [`explain`] and [`report`] answer
//! for `Value`s, with the same results, so two long runs can be compared without either being
//! copied into a `Value`.
//!
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
    normalize_with_report,
};
pub use options::{Masker, NormalizeOptions, SelectorAction};
pub use preset::{PRESETS, preset};
pub use report::{ReportDiff, ReportOptions, report, report_diff, report_explained, shown_changes};
pub use shape::{Shape, shape};

/// What other crates of this workspace share with this one: not public API, and free to change
/// in any release.
#[doc(hidden)]
pub mod support {
    pub use crate::path_placeholders::RunDirs;
    pub use crate::shape::{join, shape_without_hash};
}
