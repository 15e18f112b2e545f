//! The log formats this crate reads, and detection of a log's format from its content.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::lines::{DETECT_RECORDS, Record, Records};
use crate::{Error, Result};

/// A log format that can be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Format {
    /// A Claude Code session transcript (`~/.claude/projects/<slug>/<session>.jsonl`).
    ClaudeCode,
    /// The standard output of `claude -p --output-format stream-json --verbose`.
    ClaudeStream,
    /// A Codex rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    CodexRollout,
    /// The standard output of `codex exec --json`.
    CodexExec,
    /// A Gemini CLI session (`~/.gemini/tmp/<project>/chats/session-*.json` or `.jsonl`).
    GeminiSession,
    /// The standard output of `gemini -p … --output-format stream-json`.
    GeminiStream,
    /// The standard output of `opencode run --format json`.
    OpenCodeRun,
    /// The document `opencode export SESSION` prints.
    OpenCodeExport,
    /// A pi session file (`~/.pi/agent/sessions/--<cwd>--/*.jsonl`).
    PiSession,
    /// The standard output of `pi -p --mode json`.
    PiJson,
    /// OpenTelemetry traces as OTLP/JSON (the Collector file exporter's lines, or one export
    /// request), gzip-compressed or not, or OTLP protobuf with the `protobuf` feature.
    Otel,
}

impl Format {
    /// Every format, in the order detection tries them.
    pub const ALL: &'static [Format] = &[
        Format::ClaudeCode,
        Format::ClaudeStream,
        Format::CodexRollout,
        Format::CodexExec,
        Format::GeminiSession,
        Format::GeminiStream,
        Format::OpenCodeRun,
        Format::OpenCodeExport,
        Format::PiJson,
        Format::PiSession,
        Format::Otel,
    ];

    /// The name used on the command line (`claude-code`, `claude-stream`, `codex-rollout`,
    /// `codex-exec`, `gemini-session`, `gemini-stream`, `opencode-run`, `opencode-export`,
    /// `pi-session`, `pi-json`).
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::ClaudeStream => "claude-stream",
            Format::CodexRollout => "codex-rollout",
            Format::CodexExec => "codex-exec",
            Format::GeminiSession => "gemini-session",
            Format::GeminiStream => "gemini-stream",
            Format::OpenCodeRun => "opencode-run",
            Format::OpenCodeExport => "opencode-export",
            Format::PiSession => "pi-session",
            Format::PiJson => "pi-json",
            Format::Otel => "otel",
        }
    }

    /// The agent whose logs this format holds, as `--latest` and the normalisation presets
    /// name it (`claude-code`, `codex`, `gemini-cli`, `opencode`, `pi`).
    pub fn agent(self) -> &'static str {
        match self {
            Format::ClaudeCode | Format::ClaudeStream => "claude-code",
            Format::CodexRollout | Format::CodexExec => "codex",
            Format::GeminiSession | Format::GeminiStream => "gemini-cli",
            Format::OpenCodeRun | Format::OpenCodeExport => "opencode",
            Format::PiSession | Format::PiJson => "pi",
            Format::Otel => "otel",
        }
    }

    /// The known names, comma-separated (for error messages).
    pub fn known_names() -> String {
        Format::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
    }

    /// The agent's own folder under home, as it shows in paths (`/.codex/`); none for traces,
    /// whose agents are the user's own.
    pub(crate) fn home_marker(self) -> Option<&'static str> {
        match self.agent() {
            "claude-code" => Some("/.claude/"),
            "codex" => Some("/.codex/"),
            "gemini-cli" => Some("/.gemini/"),
            "pi" => Some("/.pi/agent/"),
            "opencode" => Some("/.local/share/opencode/"),
            _ => None,
        }
    }

    /// Whether `record` is unmistakably a record of this format.
    pub(crate) fn recognizes(self, record: &Value) -> bool {
        let str_field = |key: &str| record.get(key).and_then(Value::as_str);
        let record_type = str_field("type").unwrap_or("");
        match self {
            Format::ClaudeCode => {
                let envelope = str_field("sessionId").is_some() && str_field("uuid").is_some();
                let bookkeeping = (record_type == "summary" && str_field("leafUuid").is_some())
                    || (record_type == "file-history-snapshot" && record.get("snapshot").is_some());
                envelope || bookkeeping
            }
            Format::ClaudeStream => {
                let has_session = str_field("session_id").is_some();
                (record_type == "system" && str_field("subtype") == Some("init") && has_session)
                    || (has_session
                        && matches!(record_type, "assistant" | "user")
                        && record.get("parent_tool_use_id").is_some())
                    || (has_session && record_type == "result" && record.get("num_turns").is_some())
            }
            Format::CodexRollout => {
                record.get("payload").is_some_and(Value::is_object)
                    && record.get("timestamp").is_some()
                    && matches!(
                        record_type,
                        "session_meta"
                            | "response_item"
                            | "event_msg"
                            | "turn_context"
                            | "compacted"
                    )
            }
            Format::CodexExec => {
                (record_type == "thread.started" && str_field("thread_id").is_some())
                    || (record_type.starts_with("item.")
                        && record.get("item").is_some_and(Value::is_object))
                    || (record_type.starts_with("turn.") && record.get("payload").is_none())
            }
            Format::GeminiSession => {
                let metadata =
                    str_field("sessionId").is_some() && str_field("projectHash").is_some();
                let update = record.get("$set").is_some_and(Value::is_object)
                    || str_field("$rewindTo").is_some();
                metadata || update
            }
            Format::GeminiStream => {
                let stamped = str_field("timestamp").is_some();
                (record_type == "init" && str_field("session_id").is_some() && stamped)
                    || (record_type == "tool_use" && str_field("tool_id").is_some())
                    || (record_type == "tool_result" && str_field("tool_id").is_some())
                    || (record_type == "message" && str_field("role").is_some() && stamped)
            }
            Format::OpenCodeRun => {
                str_field("sessionID").is_some()
                    && (record.get("part").is_some_and(Value::is_object)
                        || matches!(record_type, "error" | "done" | "user"))
            }
            Format::OpenCodeExport => {
                record.get("info").and_then(|info| info.get("id")).is_some_and(Value::is_string)
                    && record.get("messages").is_some_and(Value::is_array)
            }
            Format::PiSession => {
                (record_type == "session"
                    && str_field("id").is_some()
                    && record.get("payload").is_none())
                    || (record_type == "message"
                        && record.get("message").is_some_and(|m| m.get("role").is_some()))
            }
            Format::PiJson => matches!(
                record_type,
                "agent_start"
                    | "turn_start"
                    | "message_start"
                    | "message_end"
                    | "turn_end"
                    | "agent_end"
            ),
            Format::Otel => is_otlp_request(record),
        }
    }
}

/// An OTLP/JSON export request of traces or logs (`formats::otel` reads it).
fn is_otlp_request(record: &Value) -> bool {
    record.get("resourceSpans").is_some_and(Value::is_array)
        || record.get("resourceLogs").is_some_and(Value::is_array)
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = Error;

    fn from_str(name: &str) -> Result<Format> {
        Format::ALL.iter().copied().find(|format| format.name() == name).ok_or_else(|| {
            Error::UnknownFormat { name: name.to_owned(), known: Format::known_names() }
        })
    }
}

/// Names the format of a log from its first records.
pub(crate) fn detect_records<'r>(
    records: impl Iterator<Item = &'r Record> + Clone,
) -> Option<Format> {
    let found = records.clone().take(DETECT_RECORDS).find_map(|record| {
        Format::ALL.iter().copied().find(|format| format.recognizes(&record.value))
    })?;
    // pi writes the same header line to its session file and ahead of its JSON-mode events.
    if found == Format::PiSession
        && records.take(DETECT_RECORDS).any(|record| Format::PiJson.recognizes(&record.value))
    {
        return Some(Format::PiJson);
    }
    Some(found)
}

/// Names the format of a log from its content (never its file name).
///
/// # Errors
/// [`Error::Empty`], [`Error::NotJson`] or [`Error::NotAnObject`] when the first records are
/// not a JSON Lines log, [`Error::Unrecognized`] when no record among the first 60 matches a
/// known format.
pub fn detect(bytes: &[u8]) -> Result<Format> {
    let records = Records::open(bytes, false)?;
    detect_records(records.ahead()).ok_or_else(|| Error::Unrecognized {
        scanned: records.ahead().count(),
        known: Format::known_names(),
    })
}
