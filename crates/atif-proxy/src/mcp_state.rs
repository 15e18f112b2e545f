//! The MCP half of a run's one tape: what is recorded, or what answers, for the MCP relays of
//! the run (`POST /_atif/mcp`) and the Streamable-HTTP servers it fronts (`/mcp/NAME`), in a
//! recording, a replay or a hybrid recording (`--replay-tools`).
//!
//! A relay (`atif mcp` without `--script`) says it started (`{"server": NAME, "start": true}`)
//! and learns the operation (record or replay); recording, it posts every message it relays
//! (`{"server", "from", "message"}`); replaying, it posts each of the agent's messages and
//! writes the replies it gets back. The HTTP front keeps and asks for messages directly.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use atif_replay::{McpHttp, McpMessage, McpSide, McpVia};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::DriftPolicy;
use crate::mcp_hybrid::HybridTools;
use crate::mcp_tape::{McpAnswer, McpTape, Output, tool_servers};
use crate::normalize::Normalizer;

/// The MCP half of a run's tape.
#[derive(Debug)]
pub(crate) enum McpState {
    /// The messages recorded so far, in the order they were reported.
    Record(Mutex<Vec<McpMessage>>),
    /// The script's MCP messages and what the replay used of them.
    Replay {
        tape: Mutex<McpTape>,
        normalizer: Normalizer,
        drift: DriftPolicy,
        /// Which server offers each tool, from the script.
        tools: HashMap<String, String>,
    },
    /// A hybrid recording (`--replay-tools`): the model is recorded live while the relays are
    /// answered from a tools tape.
    Hybrid(HybridTools),
}

/// One report of a relay.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Report {
    server: String,
    #[serde(default)]
    start: bool,
    #[serde(default)]
    from: Option<McpSide>,
    #[serde(default)]
    message: Option<Value>,
    /// The exact line a server wrote, when it differs from `message` written compactly.
    #[serde(default)]
    line: Option<String>,
    /// What went wrong in the relay itself (a line it could not read), for the verdict.
    #[serde(default)]
    failure: Option<String>,
}

/// What the server answers a relay, and what it says about the run.
#[derive(Debug)]
pub(crate) struct McpReply {
    /// The JSON the relay gets.
    pub(crate) body: Value,
    /// A failure that makes the run not exact.
    pub(crate) failure: Option<String>,
    /// A drift served anyway.
    pub(crate) warning: Option<String>,
}

impl McpState {
    /// Which MCP server offers each tool, as far as the tape knows.
    pub(crate) fn tool_servers(&self) -> HashMap<String, String> {
        match self {
            McpState::Record(messages) => {
                tool_servers(&messages.lock().unwrap_or_else(PoisonError::into_inner))
            }
            McpState::Replay { tools, .. } => tools.clone(),
            McpState::Hybrid(hybrid) => hybrid.tool_servers(),
        }
    }

    /// In a hybrid recording, how many tool calls were answered from the tools tape and how
    /// many missed it.
    pub(crate) fn hybrid_counts(&self) -> Option<(usize, usize)> {
        match self {
            McpState::Hybrid(hybrid) => Some(hybrid.counts()),
            _ => None,
        }
    }

    /// Answers one report (the request body); `Err` names what is wrong with it.
    pub(crate) fn report(&self, body: &[u8]) -> Result<McpReply, String> {
        let report: Report = serde_json::from_slice(body).map_err(|err| {
            format!(
                "expected {{\"server\", \"start\"}}, {{\"server\", \"from\", \"message\"}} or {{\"server\", \"failure\"}}: {err}"
            )
        })?;
        if report.server.is_empty() {
            return Err("expected a server name in `server`".to_owned());
        }
        if let Some(failure) = report.failure {
            let failure = Some(format!("MCP server `{}`: {failure}", report.server));
            return Ok(McpReply { body: json!({}), failure, warning: None });
        }
        match self {
            McpState::Record(messages) => {
                if let (Some(from), Some(message)) = (report.from, report.message) {
                    let mut messages = messages.lock().unwrap_or_else(PoisonError::into_inner);
                    let recorded = McpMessage::new(report.server, from, message);
                    messages.push(match &report.line {
                        Some(line) => recorded.with_line(line),
                        None => recorded,
                    });
                }
                Ok(McpReply { body: json!({"operation": "record"}), failure: None, warning: None })
            }
            McpState::Replay { tape, normalizer, drift, .. } => {
                let mut tape = tape.lock().unwrap_or_else(PoisonError::into_inner);
                let answer = match (report.start, report.message) {
                    (true, _) => {
                        McpAnswer { replies: tape.opening(&report.server), ..McpAnswer::default() }
                    }
                    (false, Some(message)) => {
                        tape.answer(&report.server, &message, normalizer, *drift)
                    }
                    (false, None) => return Err("expected `start` or a `message`".to_owned()),
                };
                let body = json!({
                    "operation": "replay",
                    "replies": answer.replies.iter().map(Output::text).collect::<Vec<_>>(),
                    "failure": answer.failure,
                    "warning": answer.warning,
                });
                Ok(McpReply { body, failure: answer.failure, warning: answer.warning })
            }
            McpState::Hybrid(hybrid) => {
                let answer = match (report.start, report.message) {
                    (true, _) => hybrid.start(&report.server),
                    (false, Some(message)) => hybrid.answer(&report.server, &message, None),
                    (false, None) => return Err("expected `start` or a `message`".to_owned()),
                };
                // The relay replays: its real server is never started. A miss reaches the agent
                // as the tool error among the replies and the verdict as a failure; the relay
                // is not told, so that it does not say it a second time.
                let body = json!({
                    "operation": "replay",
                    "replies": answer.replies.iter().map(Output::text).collect::<Vec<_>>(),
                });
                Ok(McpReply { body, failure: answer.failure, warning: None })
            }
        }
    }

    /// Keeps a message of a Streamable-HTTP server the record/replay server fronts
    /// (recording; a replay keeps nothing).
    pub(crate) fn keep(&self, message: McpMessage) {
        if let McpState::Record(messages) = self {
            messages.lock().unwrap_or_else(PoisonError::into_inner).push(message);
        }
    }

    /// Whether the MCP servers of the run are answered from a tape (a replay, or a hybrid
    /// recording) rather than run.
    pub(crate) fn answers_from_tape(&self) -> bool {
        !matches!(self, McpState::Record(_))
    }

    /// Answers the message a client `POST`ed to the Streamable-HTTP server `server` from the
    /// tape (replay, hybrid recording; `None` recording).
    pub(crate) fn answer(&self, server: &str, message: &Value) -> Option<McpAnswer> {
        match self {
            McpState::Record(_) => None,
            McpState::Replay { tape, normalizer, drift, .. } => {
                let mut tape = tape.lock().unwrap_or_else(PoisonError::into_inner);
                Some(tape.answer(server, message, normalizer, *drift))
            }
            McpState::Hybrid(hybrid) => {
                Some(hybrid.answer(server, message, Some(McpHttp::new(McpVia::Post))))
            }
        }
    }

    /// The recorded messages, taken out (recording).
    pub(crate) fn take_recorded(&self) -> Vec<McpMessage> {
        match self {
            McpState::Record(messages) => {
                std::mem::take(&mut *messages.lock().unwrap_or_else(PoisonError::into_inner))
            }
            McpState::Hybrid(hybrid) => hybrid.take_served(),
            McpState::Replay { .. } => Vec::new(),
        }
    }

    /// The recorded MCP calls a replay never got, as one failure line, if any.
    pub(crate) fn unused(&self) -> Option<String> {
        let McpState::Replay { tape, .. } = self else { return None };
        let tape = tape.lock().unwrap_or_else(PoisonError::into_inner);
        let unused = tape.unused();
        (!unused.is_empty()).then(|| {
            format!(
                "{} of the {} recorded MCP calls were never made: {}. The agent is making fewer \
                 tool calls than when it was recorded",
                unused.len(),
                tape.calls(),
                unused.join(", ")
            )
        })
    }
}
