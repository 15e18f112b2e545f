//! Import the logs of Claude Code, Codex, Gemini CLI, OpenCode and pi as ATIF-v1.8
//! trajectories, so runs of agents that do not speak ATIF can be normalised, shaped and compared
//! against golden files.
//!
//! Each agent's session files and the JSON its CLI prints are read ([`Format`]), each detected
//! from the content of its first records (never from a file name): Claude Code session
//! transcripts and `claude -p --output-format stream-json` (JSON Lines or one JSON array), Codex
//! rollout files and `codex exec --json`, Gemini CLI sessions and `--output-format stream-json`,
//! `opencode run --format json` and `opencode export`, pi sessions and `pi --mode json`. [`import`] takes the bytes of a log and
//! returns an [`Import`]: the trajectory (in atif-schema's typed model, written out as JSON
//! with [`Import::write_json`] or given as a [`serde_json::Value`] by [`Import::trajectory`]),
//! the format, and [`Stats`] (records skipped, warnings). Subagents are embedded as `subagent_trajectories` linked from
//! the call that spawned them: the sidechain conversations of a Claude Code transcript and the
//! subagent lines of a stream, and, through [`import_path`], the subagent transcripts kept in
//! other files of a Claude Code session and the rollouts of the threads a Codex session
//! spawned.
//!
//! The mapping is built for golden tests, so it keeps behaviour stable and visible:
//! - one agent step per model call (`llm_call_count: 1`): Claude per `message.id`, its split
//!   content blocks merged; Codex per run of output items, each `token_count` bound to its call
//!   whether the log writes usage before or after the call's items;
//! - tool results exactly as the model received them, joined by `source_call_id`, with the
//!   tool's structured data (`toolUseResult`, exit codes, `is_error`) in `extra`; a call that
//!   never got a result keeps no observation;
//! - file order, never timestamp order;
//! - `prompt_tokens` counts the whole input (cache reads and writes included), `cached_tokens`
//!   the cache reads, `completion_tokens` includes reasoning; raw counters in `metrics.extra`;
//!   `final_metrics` are the log's own totals, and no cost is ever estimated;
//! - every error or cancellation is a step with `extra.error = {kind, message}`, and a run that
//!   died (truncated log, fatal error, cancellation at the end) has `extra.crashed: true`.
//!
//! The full rules, and how they differ from other converters, are in `docs/import.md`.
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
mod path;
mod walk;

pub use context::Stats;
pub use error::{Error, Result};
pub use format::{Format, detect};
pub use import::{Import, ImportOptions, LOG_FORMAT_KEY, import, import_runs};
pub use latest::{AGENTS, latest_session};
pub use media::write_media;
pub use path::{import_path, read_log};
