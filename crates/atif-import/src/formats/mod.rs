//! One module per log format; each turns records into a [`Trajectory`](crate::draft::Trajectory).
//!
//! Adding a format is one file here, one [`Format`] variant and one arm below.

mod anthropic;
pub(crate) mod claude_code;
mod claude_stream;
mod codex_exec;
mod codex_rollout;
pub(crate) mod common;
mod gemini;
mod opencode;
mod pi;

use crate::Result;
use crate::draft::Trajectory;
use crate::format::Format;
use crate::import::Context;
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
