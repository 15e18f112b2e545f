//! Hybrid recording (`atif record --replay-tools TAPE`): the model runs live and is recorded,
//! while the MCP relays of the run are answered from the tools tape of an earlier recording,
//! their real servers never started.
//!
//! The Streamable-HTTP servers the run fronts (`--mcp NAME=URL`) are answered from the same
//! tape, in the framing recorded, and never contacted.
//!
//! Tool calls match the tape by tool name and normalised arguments, never by their order, and
//! a call equal to one already served is served again. A call the tape cannot answer (a
//! miss) is answered with a tool error naming the tool and the argument diff against the
//! nearest recorded call of that tool, is counted, and makes the recording not exact, so it
//! never replaces a good script with a result no server gave. The new recording keeps the
//! tool traffic as it was served: the agent's messages and the tape's answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use atif_replay::{McpHttp, McpMessage, McpSide};
use serde_json::{Value, json};

use crate::DriftPolicy;
use crate::mcp_tape::{McpAnswer, McpTape, Output, tool_servers};
use crate::normalize::Normalizer;

/// The MCP half of a hybrid recording: the tools tape and what was served from it.
#[derive(Debug)]
pub(crate) struct HybridTools {
    /// The tools tape's file, for messages.
    source: PathBuf,
    tape: Mutex<McpTape>,
    /// This run's directories and masks, with the tools tape's masks.
    normalizer: Normalizer,
    /// Which server offers each tool, from the tools tape.
    tools: HashMap<String, String>,
    /// The tool traffic as served, for the new recording.
    served: Mutex<Vec<McpMessage>>,
    calls_from_tape: AtomicUsize,
    misses: AtomicUsize,
}

impl HybridTools {
    /// The tools tape of `messages`, read from `source`.
    pub(crate) fn new(source: &Path, messages: &[McpMessage], normalizer: Normalizer) -> Self {
        HybridTools {
            source: source.to_path_buf(),
            tape: Mutex::new(McpTape::new(messages, &normalizer).reusing()),
            tools: tool_servers(messages),
            normalizer,
            served: Mutex::new(Vec::new()),
            calls_from_tape: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }

    /// Which MCP server offers each tool, from the tools tape.
    pub(crate) fn tool_servers(&self) -> HashMap<String, String> {
        self.tools.clone()
    }

    /// How many tool calls were answered from the tape, and how many missed it.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.calls_from_tape.load(Ordering::Relaxed), self.misses.load(Ordering::Relaxed))
    }

    /// The relay of `server` started: the server's recorded opening.
    pub(crate) fn start(&self, server: &str) -> McpAnswer {
        let mut tape = self.tape.lock().unwrap_or_else(PoisonError::into_inner);
        let replies = tape.opening(server);
        self.keep(server, None, &replies);
        McpAnswer { replies, ..McpAnswer::default() }
    }

    /// Answers the agent's `message` to `server` from the tape; a miss is a failure, and a
    /// tool call that misses gets a tool error the model can read (a Streamable-HTTP client
    /// gets it as a JSON reply). `http` says how the message came (`None` from a stdio relay),
    /// for the new recording.
    pub(crate) fn answer(&self, server: &str, message: &Value, http: Option<McpHttp>) -> McpAnswer {
        let mut answer = {
            let mut tape = self.tape.lock().unwrap_or_else(PoisonError::into_inner);
            tape.answer(server, message, &self.normalizer, DriftPolicy::Strict)
        };
        let method = message.get("method").and_then(Value::as_str);
        if let Some(failure) = answer.failure.take() {
            self.misses.fetch_add(1, Ordering::Relaxed);
            let failure = self.miss(server, &failure);
            if method == Some("tools/call") {
                // A tool error, not a protocol error: the live model reads it and the agent
                // goes on, so the recording shows what else changed.
                if let (Some(last), Some(id)) = (answer.replies.last_mut(), message.get("id")) {
                    *last = Output::new(tool_error(id, &failure));
                }
            }
            answer.failure = Some(failure);
        } else if method == Some("tools/call") {
            self.calls_from_tape.fetch_add(1, Ordering::Relaxed);
        }
        self.keep(server, Some((message, http)), &answer.replies);
        answer
    }

    /// The tool traffic as served, taken out.
    pub(crate) fn take_served(&self) -> Vec<McpMessage> {
        std::mem::take(&mut *self.served.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Keeps the agent's `message` and the `replies` it got, in order, with the run's
    /// directories as `<cwd>` and `<home>` and how each travelled, as a recording relay or
    /// front would have.
    fn keep(&self, server: &str, message: Option<(&Value, Option<McpHttp>)>, replies: &[Output]) {
        let mut served = self.served.lock().unwrap_or_else(PoisonError::into_inner);
        let with_http = |kept: McpMessage, http: Option<McpHttp>| match http {
            Some(http) => kept.with_http(http),
            None => kept,
        };
        if let Some((message, http)) = message {
            let mut message = message.clone();
            self.normalizer.insert_placeholders(&mut message);
            served.push(with_http(McpMessage::new(server, McpSide::Client, message), http));
        }
        for reply in replies {
            let line = self.normalizer.place_dirs_in(&reply.text());
            let mut value = reply.value.clone();
            self.normalizer.insert_placeholders(&mut value);
            let kept = McpMessage::new(server, McpSide::Server, value).with_line(&line);
            served.push(with_http(kept, reply.http.clone()));
        }
    }

    /// The failure of a miss: what the tape said, where the tape is, and what to do.
    fn miss(&self, server: &str, failure: &str) -> String {
        // The file's name only: the message reaches the model, and so the recording.
        let source = self.source.file_name().unwrap_or(self.source.as_os_str());
        let source = source.to_string_lossy();
        let server_known =
            self.tape.lock().unwrap_or_else(PoisonError::into_inner).has_server(server);
        let fix = match server_known {
            true => "record the tools live to add the call: `atif record` without --replay-tools",
            false => {
                "the tools tape has no message of this server; record it live with `atif record` without --replay-tools"
            }
        };
        format!(
            "tool miss (not on the tools tape {source}; answered with a tool error, the server \
             was not started): {failure}\nTo serve it, {fix}"
        )
    }
}

/// A `tools/call` result that says the call failed, with `text` for the model.
fn tool_error(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": text}],
        "isError": true,
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalizer(cwd: &str) -> Normalizer {
        Normalizer::new(Some(cwd.to_owned()), None, &[]).unwrap()
    }

    fn call(id: u64, path: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "read_text_file", "arguments": {"path": path}}})
    }

    fn hybrid() -> HybridTools {
        let message = |from, value| McpMessage::new("files", from, value);
        let messages = vec![
            message(
                McpSide::Client,
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
            ),
            message(McpSide::Server, json!({"jsonrpc": "2.0", "id": 0, "result": {"ok": true}})),
            message(McpSide::Client, call(1, "<cwd>/a.txt")),
            message(
                McpSide::Server,
                json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ay at <cwd>"}]}}),
            ),
        ];
        HybridTools::new(Path::new("/somewhere/tools.json"), &messages, normalizer("/now"))
    }

    #[test]
    fn a_call_is_served_by_its_arguments_as_often_as_it_is_made_and_kept_as_served() {
        let hybrid = hybrid();
        let init = json!({"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": {}});
        assert!(hybrid.answer("files", &init, None).failure.is_none());
        for id in [7, 8] {
            let answer = hybrid.answer("files", &call(id, "/now/a.txt"), None);
            assert!(answer.failure.is_none(), "{:?}", answer.failure);
            assert_eq!(answer.replies[0].value["result"]["content"][0]["text"], "ay at /now");
            assert_eq!(answer.replies[0].value["id"], id);
        }
        assert_eq!(hybrid.counts(), (2, 0));
        let served = hybrid.take_served();
        assert_eq!(served.len(), 6, "{served:?}");
        assert_eq!(served[2].message["params"]["arguments"]["path"], "<cwd>/a.txt");
        assert_eq!(served[3].message["result"]["content"][0]["text"], "ay at <cwd>");
        assert_eq!(served[3].from, McpSide::Server);
    }

    #[test]
    fn a_call_with_new_arguments_is_a_miss_answered_with_a_tool_error() {
        let hybrid = hybrid();
        let answer = hybrid.answer("files", &call(3, "/now/b.txt"), None);
        let failure = answer.failure.unwrap();
        assert!(failure.starts_with("tool miss (not on the tools tape tools.json"), "{failure}");
        assert!(
            failure.contains("tools/call of `read_text_file` matches no recorded call"),
            "{failure}"
        );
        assert!(failure.contains("-    \"path\": \"<cwd>/a.txt\""), "{failure}");
        assert!(failure.contains("+    \"path\": \"<cwd>/b.txt\""), "{failure}");
        let reply = &answer.replies[0].value;
        assert_eq!(reply["id"], 3);
        assert_eq!(reply["result"]["isError"], true);
        assert_eq!(reply["result"]["content"][0]["text"], failure);
        assert_eq!(hybrid.counts(), (0, 1));
        let other = hybrid.answer("memory", &call(4, "/now/a.txt"), None).failure.unwrap();
        assert!(other.contains("the tools tape has no message of this server"), "{other}");
        assert_eq!(hybrid.counts(), (0, 2));
    }
}
