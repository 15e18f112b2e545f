//! The log formats this crate reads, and detection of a log's format from its content.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::lines::{Record, Records};
use crate::{Error, Result};

/// How many records detection looks at before giving up.
pub(crate) const DETECT_RECORDS: usize = 60;

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
}

impl Format {
    /// Every format, in the order detection tries them.
    pub const ALL: &'static [Format] =
        &[Format::ClaudeCode, Format::ClaudeStream, Format::CodexRollout, Format::CodexExec];

    /// The name used on the command line (`claude-code`, `claude-stream`, `codex-rollout`,
    /// `codex-exec`).
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::ClaudeStream => "claude-stream",
            Format::CodexRollout => "codex-rollout",
            Format::CodexExec => "codex-exec",
        }
    }

    /// The known names, comma-separated (for error messages).
    pub fn known_names() -> String {
        Format::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
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
        }
    }
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
pub(crate) fn detect_records<'r>(records: impl Iterator<Item = &'r Record>) -> Option<Format> {
    records.take(DETECT_RECORDS).find_map(|record| {
        Format::ALL.iter().copied().find(|format| format.recognizes(&record.value))
    })
}

/// Names the format of a log from its content (never its file name).
///
/// # Errors
/// [`Error::Empty`], [`Error::NotJson`] or [`Error::NotAnObject`] when the first records are
/// not a JSON Lines log, [`Error::Unrecognized`] when no record among the first 60 matches a
/// known format.
pub fn detect(bytes: &[u8]) -> Result<Format> {
    let records = Records::open(bytes)?;
    detect_records(records.ahead()).ok_or_else(|| Error::Unrecognized {
        scanned: records.ahead().count(),
        known: Format::known_names(),
    })
}
