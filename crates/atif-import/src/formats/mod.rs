//! One module per log format; each turns records into a [`Trajectory`](crate::draft::Trajectory).
//!
//! Adding a format takes a module here and its arm in `import_runs`, and more besides:
//! - in `format.rs`, the [`Format`] variant, its place in `Format::ALL` (the order detection
//!   tries), its `name`, its `agent` and the records it `recognizes`;
//! - the `--from` values of `atif import` (`atif-cli/src/cmd/import.rs`), and the tests that
//!   spell out the list of known formats (`atif-cli` `tests/it/import.rs`, this crate's
//!   `tests/it/format.rs` and `tests/it/hostile.rs`);
//! - for a new agent, its `home_marker` in `format.rs`, its entry in `latest.rs` (`AGENTS`,
//!   where `--latest` looks) and its normalisation preset (`atif-normalize/src/preset.rs`);
//! - a log spread over several files (Claude Code's subagents, Codex's threads) is joined in
//!   `path.rs`;
//! - the format's rows in docs/import.md, and fixtures under `tests/fixtures/`.

mod anthropic;
pub(crate) mod claude_code;
mod claude_stream;
mod codex_exec;
mod codex_rollout;
pub(crate) mod common;
mod gemini;
mod opencode;
pub(crate) mod otel;
mod pi;

use crate::Result;
use crate::context::Context;
use crate::draft::Trajectory;
use crate::format::Format;
use crate::lines::Records;

/// Imports `records` as `format`: one trajectory per run the log holds (Claude Code's
/// stream-json and OpenCode's run output can hold several, one after the other).
pub(crate) fn import_runs(
    format: Format,
    records: &mut Records<'_>,
    ctx: &mut Context,
) -> Result<Vec<Trajectory>> {
    let trajectory = match format {
        Format::ClaudeStream => return claude_stream::import_runs(records, ctx),
        Format::OpenCodeRun => return opencode::import_runs(records, ctx),
        Format::Otel => return otel::import_runs(records, ctx),
        Format::ClaudeCode => claude_code::import(records, ctx),
        Format::CodexRollout => codex_rollout::import(records, ctx),
        Format::CodexExec => codex_exec::import(records, ctx),
        Format::GeminiSession => gemini::import_session(records, ctx),
        Format::GeminiStream => gemini::import_stream(records, ctx),
        Format::OpenCodeExport => opencode::import_export(records, ctx),
        Format::PiSession => pi::import_session(records, ctx),
        Format::PiJson => pi::import_json(records, ctx),
    }?;
    Ok(vec![trajectory])
}
