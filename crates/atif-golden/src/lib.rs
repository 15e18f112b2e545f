//! Golden-file regression tests for agent trajectories: the committed golden file is the
//! review artefact, and a changed behaviour fails with a message that says what moved.
//! A golden file is the canonical text of a normalised trajectory
//! ([`atif_normalize::to_canonical_string`]), so it is itself an ATIF document.
//!
//! Which function for which job:
//! - [`assert_golden!`] in a test: checks a run against the golden named after the test
//!   function, with the [`Settings`] bound to the scope (insta-style) and the project file
//!   `atif.toml` ([`ProjectConfig`]).
//! - [`check`] the same without the macro, naming the golden yourself: the one way to check a
//!   golden. It takes any [`Actual`] run (a `&Trajectory` or `&Value`, a `Value` by value, or
//!   the run's JSON text as a [`JsonText`], the fastest) and returns the [`Outcome`], or an
//!   [`Error`] that is the failure message.
//! - [`Mode`] says what a check may write (`ATIF_GOLDEN` and `CI`): compare only, leave a
//!   pending `<name>.json.new` for review, or rewrite the golden.
//! - [`LiveEnvelope`] and [`live_envelope!`]: N live runs against an envelope golden of their
//!   behaviour ([`atif_envelope`]), refused on CI unless `ATIF_LIVE=1`.
//! - The [`review`] module is the reviewer's side, behind `atif golden`: find, review, accept
//!   and reject pending files, and run a test suite in update mode.
//! - `assert_trajectory_snapshot!` (cargo feature `insta`) for teams on `cargo insta review`.
//!
//! The key design decision: a failing check never edits the golden. A missing golden fails
//! instead of recording itself, nothing is written on CI unless update mode is asked for, and
//! every write is atomic (a temporary file in the same folder, then a rename).
//! The walk-through from a first golden to a reviewed update is in `docs/golden.md`.
//!
//! # Example
//!
//! ```
//! use atif_golden::{Mode, Outcome, Settings, check};
//! use serde_json::json;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let golden = dir.path().join("greeting.json");
//! let run = |steps: usize| {
//!     let steps: Vec<_> = (1..=steps)
//!         .map(|step_id| json!({"step_id": step_id, "source": "agent", "message": "hi"}))
//!         .collect();
//!     json!({
//!         "schema_version": "ATIF-v1.8",
//!         "session_id": "changes-every-run",
//!         "agent": {"name": "demo", "version": "1", "model_name": "m-1"},
//!         "steps": steps,
//!     })
//! };
//!
//! // Record the golden (what `ATIF_GOLDEN=update cargo test` does).
//! let mut settings = Settings::new();
//! settings.set_mode(Some(Mode::Update));
//! assert!(matches!(check(&golden, run(1), &settings)?, Outcome::Created { .. }));
//!
//! // The same behaviour passes; one more step fails and says so on the second line
//! // (step_count, sources, llm_calls and the content hash moved).
//! settings.set_mode(Some(Mode::Check));
//! assert!(matches!(check(&golden, run(1), &settings)?, Outcome::Matched { .. }));
//! let failure = check(&golden, run(2), &settings).unwrap_err();
//! let message = failure.to_string();
//! assert!(message.starts_with("agent behaviour changed (4 difference(s)):"));
//! assert_eq!(message.lines().nth(1), Some("  step_count: 1 -> 2"));
//! assert!(message.ends_with("if this change is intended: ATIF_GOLDEN=update cargo test greeting"));
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod check;
mod check_log;
mod command;
mod error;
mod file;
mod live;
mod macros;
mod mode;
mod name;
mod pending;
mod project;
mod settings;
mod update;

pub use check::{Actual, JsonText, Outcome, canonical_text, check};
pub use error::{Error, Result};
pub use live::{LIVE_ENV, LiveEnvelope, LiveOutcome};
#[doc(hidden)]
pub use macros::__private;
pub use mode::{MODE_ENV, Mode};
pub use project::{GoldenConfig, PROJECT_FILE, ProjectConfig};
pub use settings::{Settings, SettingsBindDropGuard};

/// The review workflow behind `atif golden`: find the pending `<name>.json.new` files a failing
/// check left, show each one's report, accept or reject it, run a test suite in update mode and
/// list what it wrote, and the check log that a run of tests leaves for `atif golden`.
///
/// A test author needs none of it: [`check`], [`assert_golden!`] and [`Settings`] are the
/// test's side; this is the reviewer's.
pub mod review {
    pub use crate::check_log::{CheckLogEntry, OutcomeKind, append_check_log, read_check_log};
    pub use crate::file::{
        PENDING_SUFFIX, accept_pending, golden_for_pending, pending_path, reject_pending,
    };
    pub use crate::mode::LOG_ENV;
    pub use crate::pending::{
        FOLD_LINES, Pending, PendingStatus, Review, Tally, accept, find_pending,
        find_stale_temp_files_under, reject, remove_stale_temp_files_under, review,
        review_interactively,
    };
    pub use crate::update::{UpdateSummary, run_update};
}

/// What other crates of this workspace share with this one (the `atif` binary): not public
/// API, and free to change in any release. [`check`] is the test author's way in; `atif check`
/// also reads the golden on a second thread while it reads the run ([`support::GoldenFile`]),
/// and tells the user what the check redacted ([`support::Checked`]).
#[doc(hidden)]
pub mod support {
    pub use crate::check::{Checked, GoldenFile};
    pub use crate::command::shell_word;
}
