//! Import the logs of Claude Code, Codex, Gemini CLI, OpenCode and pi, and the OpenTelemetry
//! traces of agent frameworks, as ATIF-v1.8 trajectories, so runs of agents that do not speak
//! ATIF can be normalised, shaped and compared against golden files.
//!
//! Which function for which job:
//! - Import a file: [`import_path`] reads it (gzip and OTLP protobuf too, within a size limit)
//!   and, for a Claude Code transcript or a Codex rollout, the subagent files beside it.
//! - Import bytes you hold: [`import`] (one run) or [`import_runs`] (every run of a log, in
//!   file order); [`read_log`] reads a stream such as standard input as [`import_path`] reads
//!   a file.
//! - Find the log: [`latest_session`] gives the newest session file an agent ([`AGENTS`])
//!   wrote for a working directory.
//! - Use the result: an [`Import`] holds the trajectory ([`Import::trajectory`],
//!   [`Import::write_json`]), the [`Format`] read, the [`Stats`] of records skipped and
//!   warnings, and the secrets redacted; [`Import::write_media`] moves inline images to files.
//! - Choose: [`ImportOptions`] sets the format (otherwise [`detect`]ed from the content of the
//!   first records, never from a file name), strict mode, which run of several, the run's
//!   working directory and home (recorded in `extra`), and the secret scanner.
//!
//! The key design decision: the mapping is built for golden tests, so it keeps behaviour
//! stable and visible: one agent step per model call, tool results exactly as the model
//! received them, file order rather than timestamp order, the log's own token totals (no cost
//! ever estimated), and every error or cancellation a step, with `extra.crashed: true` on a
//! run that died. The full rules, and how they differ from other converters, are in
//! `docs/import.md`.
//!
//! # Example
//! ```
//! # fn main() -> Result<(), atif_import::Error> {
//! use atif_import::{Format, ImportOptions, import};
//!
//! let log = br#"{"type":"thread.started","thread_id":"t-1"}
//! {"type":"turn.started"}
//! {"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hello."}}
//! {"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":3}}
//! "#;
//! let imported = import(log, &ImportOptions::default())?;
//! assert_eq!(imported.format(), Format::CodexExec);
//! let trajectory = imported.trajectory();
//! assert_eq!(trajectory["schema_version"], "ATIF-v1.8");
//! assert_eq!(trajectory["steps"][0]["message"], "Hello.");
//! assert_eq!(trajectory["final_metrics"]["total_prompt_tokens"], 10);
//! // What `atif import` writes: pretty JSON with sorted keys.
//! assert!(imported.json().starts_with("{\n  \"agent\": {"));
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod binary;
mod context;
mod draft;
mod error;
mod format;
mod formats;
mod import;
mod json;
mod latest;
mod lines;
mod media;
mod options;
mod path;
mod run_dirs;
mod walk;

pub use context::Stats;
pub use error::{Error, Result};
pub use format::{Format, detect};
pub use import::{Import, LOG_FORMAT_KEY, import, import_runs};
pub use latest::{AGENTS, latest_session};
pub use media::write_media;
pub use options::ImportOptions;
pub use path::{import_path, read_log};
