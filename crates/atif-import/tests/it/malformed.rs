//! Malformed records in every format: each format × {a record of the wrong shape, a line that
//! is not JSON} × {default, strict}. By default the record is skipped, counted by its reason
//! and named in a warning, and the trajectory is exactly the one the log without that record
//! gives (nothing invented, nothing else lost); in strict mode the import fails naming the line,
//! or the JSON Pointer in a log written as one JSON document.

use atif_import::{Error, Format, ImportOptions, import};
use serde_json::{Value, json};

/// A log of `format` that imports cleanly, and a record inserted into it.
struct Case {
    format: Format,
    /// The log, as JSON Lines or as one JSON document.
    base: Log,
    /// The reason counted for the bad record.
    reason: &'static str,
    /// Where the messages say it is: `line 3`, or `at /messages/1`.
    at: &'static str,
}

enum Log {
    /// JSON Lines, and the bad line inserted before the line of that index (0-based).
    Lines { lines: Vec<Value>, insert_at: usize, bad: String },
    /// One JSON document, and the same document with the bad value in it.
    Document { good: Value, bad: Value },
}

impl Case {
    fn good(&self) -> String {
        match &self.base {
            Log::Lines { lines, .. } => lines.iter().map(|l| format!("{l}\n")).collect(),
            Log::Document { good, .. } => serde_json::to_string_pretty(good).unwrap(),
        }
    }

    fn bad(&self) -> String {
        match &self.base {
            Log::Lines { lines, insert_at, bad } => {
                let mut text: Vec<String> = lines.iter().map(Value::to_string).collect();
                text.insert(*insert_at, bad.clone());
                text.iter().map(|l| format!("{l}\n")).collect()
            }
            Log::Document { bad, .. } => serde_json::to_string_pretty(bad).unwrap(),
        }
    }
}

fn lines(lines: Vec<Value>, insert_at: usize, bad: Value) -> Log {
    Log::Lines { lines, insert_at, bad: bad.to_string() }
}

fn not_json(lines: Vec<Value>, insert_at: usize) -> Log {
    Log::Lines { lines, insert_at, bad: "{\"type\": not json".to_owned() }
}

fn codex_exec() -> Vec<Value> {
    vec![
        json!({"type": "thread.started", "thread_id": "t-1"}),
        json!({"type": "turn.started"}),
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "Hello."}}),
        json!({"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 3}}),
    ]
}

fn codex_rollout() -> Vec<Value> {
    let line = |kind: &str, payload: Value| json!({"timestamp": "2026-01-01T00:00:00.000Z", "type": kind, "payload": payload});
    vec![
        line("session_meta", json!({"id": "s-1", "cwd": "/w", "cli_version": "0.50.0"})),
        line("turn_context", json!({"model": "gpt-5"})),
        line(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
        ),
        line(
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]}),
        ),
        line(
            "event_msg",
            json!({"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": 5, "output_tokens": 1},
                "last_token_usage": {"input_tokens": 5, "output_tokens": 1}
            }}),
        ),
    ]
}

fn gemini_messages() -> Vec<Value> {
    vec![
        json!({"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [{"text": "list ."}]}),
        json!({"id": "m1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "Done.", "model": "gemini-2.5-flash",
               "tokens": {"input": 10, "output": 2, "cached": 0, "thoughts": 0, "tool": 0, "total": 12}}),
    ]
}

fn gemini_session_lines() -> Vec<Value> {
    let mut lines = vec![json!({"sessionId": "g1", "projectHash": "h", "kind": "main"})];
    lines.extend(gemini_messages());
    lines
}

fn gemini_stream() -> Vec<Value> {
    vec![
        json!({"type": "init", "timestamp": "2026-01-01T00:00:00Z", "session_id": "g1", "model": "gemini-2.5-flash"}),
        json!({"type": "message", "timestamp": "2026-01-01T00:00:01Z", "role": "user", "content": "hi"}),
        json!({"type": "message", "timestamp": "2026-01-01T00:00:02Z", "role": "assistant", "content": "hello", "delta": true}),
        json!({"type": "result", "timestamp": "2026-01-01T00:00:03Z", "status": "success", "stats": {"input_tokens": 5, "output_tokens": 1}}),
    ]
}

fn opencode_run() -> Vec<Value> {
    let event = |kind: &str, part: Value| json!({"type": kind, "timestamp": 1_769_231_333_010_i64, "sessionID": "ses_1", "part": part});
    vec![
        event("step_start", json!({"id": "p1", "type": "step-start"})),
        event("text", json!({"id": "p2", "type": "text", "text": "hello"})),
        event(
            "step_finish",
            json!({"id": "p3", "type": "step-finish", "reason": "stop", "tokens": {"input": 5, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}}),
        ),
    ]
}

fn opencode_export(text: Value) -> Value {
    json!({
        "info": {"id": "ses_1", "version": "1.0.0", "directory": "/w", "title": "t"},
        "messages": [
            {"info": {"role": "user", "time": {"created": 1_769_231_333_000_i64}}, "parts": [{"type": "text", "text": "hi"}]},
            {"info": {"role": "assistant", "modelID": "m", "time": {"created": 1_769_231_333_010_i64}}, "parts": [
                {"type": "step-start"},
                {"type": "text", "text": text},
                {"type": "step-finish", "tokens": {"input": 5, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}}
            ]}
        ]
    })
}

fn pi_session() -> Vec<Value> {
    vec![
        json!({"type": "session", "version": 1, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}),
        json!({"type": "message", "timestamp": "2026-01-01T00:00:01.000Z", "message": {"role": "user", "content": "hi", "timestamp": 1}}),
        json!({"type": "message", "timestamp": "2026-01-01T00:00:02.000Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "model": "m", "usage": {"input": 5, "output": 1}, "stopReason": "stop"}}),
    ]
}

fn pi_json() -> Vec<Value> {
    vec![
        json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}),
        json!({"type": "agent_start"}),
        json!({"type": "message_end", "message": {"role": "user", "content": "hi", "timestamp": 1}}),
        json!({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "model": "m", "usage": {"input": 5, "output": 1}, "stopReason": "stop"}}),
        json!({"type": "agent_end"}),
    ]
}

fn claude_code() -> Vec<Value> {
    let record = |kind: &str, uuid: &str, message: Value| {
        json!({"parentUuid": null, "isSidechain": false, "sessionId": "s-1", "version": "2.0.27",
               "type": kind, "uuid": uuid, "timestamp": "2025-11-02T09:00:00.000Z", "message": message})
    };
    vec![
        record("user", "u-1", json!({"role": "user", "content": "hello"})),
        record(
            "assistant",
            "a-1",
            json!({"model": "m", "id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}),
        ),
    ]
}

const NOT_JSON: &str = "line that is not JSON";

fn cases() -> Vec<Case> {
    let rollout_line = |payload: Value| json!({"timestamp": "2026-01-01T00:00:00.000Z", "type": "response_item", "payload": payload});
    let mut gemini_bad =
        json!({"sessionId": "g1", "projectHash": "h", "messages": gemini_messages()});
    let mut gemini_good = gemini_bad.clone();
    gemini_good["messages"].as_array_mut().unwrap().truncate(1);
    gemini_bad["messages"][1]["content"] = json!(42);
    vec![
        Case {
            format: Format::CodexExec,
            base: lines(
                codex_exec(),
                2,
                json!({"type": "item.completed", "item": "just a string"}),
            ),
            reason: "item.completed record whose `item` is a string, expected an object",
            at: "line 3",
        },
        Case {
            format: Format::CodexExec,
            base: lines(
                codex_exec(),
                3,
                json!({"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": 42}}),
            ),
            reason: "agent_message item whose `text` is a number, expected a string",
            at: "line 4",
        },
        Case {
            format: Format::CodexExec,
            base: not_json(codex_exec(), 2),
            reason: NOT_JSON,
            at: "line 3",
        },
        Case {
            format: Format::CodexRollout,
            base: lines(
                codex_rollout(),
                3,
                rollout_line(json!({"type": "message", "role": "assistant", "content": 42})),
            ),
            reason: "response_item/message whose `content` is a number, expected text or a list of parts",
            at: "line 4",
        },
        Case {
            format: Format::CodexRollout,
            base: lines(
                codex_rollout(),
                4,
                rollout_line(json!({"type": "function_call_output", "output": "orphan"})),
            ),
            reason: "response_item/function_call_output without `call_id`",
            at: "line 5",
        },
        Case {
            format: Format::CodexRollout,
            base: lines(
                codex_rollout(),
                2,
                json!({"timestamp": "2026-01-01T00:00:00.000Z", "type": "event_msg", "payload": "a string"}),
            ),
            reason: "event_msg record whose `payload` is a string, expected an object",
            at: "line 3",
        },
        Case {
            format: Format::CodexRollout,
            base: not_json(codex_rollout(), 3),
            reason: NOT_JSON,
            at: "line 4",
        },
        Case {
            format: Format::GeminiSession,
            base: lines(
                gemini_session_lines(),
                2,
                json!({"id": "u9", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": 42}),
            ),
            reason: "message whose `content` is a number, expected text or a list of parts",
            at: "line 3",
        },
        Case {
            format: Format::GeminiSession,
            base: lines(gemini_session_lines(), 2, json!({"id": "u9", "content": "no type"})),
            reason: "message without `type`",
            at: "line 3",
        },
        Case {
            format: Format::GeminiSession,
            base: not_json(gemini_session_lines(), 2),
            reason: NOT_JSON,
            at: "line 3",
        },
        Case {
            format: Format::GeminiSession,
            base: Log::Document { good: gemini_good, bad: gemini_bad },
            reason: "message whose `content` is a number, expected text or a list of parts",
            at: "at /messages/1",
        },
        Case {
            format: Format::GeminiStream,
            base: lines(
                gemini_stream(),
                3,
                json!({"type": "tool_result", "timestamp": "2026-01-01T00:00:02Z", "status": "success", "output": "x"}),
            ),
            reason: "tool_result event without `tool_id`",
            at: "line 4",
        },
        Case {
            format: Format::GeminiStream,
            base: lines(
                gemini_stream(),
                2,
                json!({"type": "message", "timestamp": "2026-01-01T00:00:01Z", "role": "user", "content": 42}),
            ),
            reason: "message event whose `content` is a number, expected text or a list of parts",
            at: "line 3",
        },
        Case {
            format: Format::GeminiStream,
            base: not_json(gemini_stream(), 2),
            reason: NOT_JSON,
            at: "line 3",
        },
        Case {
            format: Format::OpenCodeRun,
            base: lines(
                opencode_run(),
                2,
                json!({"type": "text", "timestamp": 1_769_231_333_011_i64, "sessionID": "ses_1", "part": "hello"}),
            ),
            reason: "text event whose `part` is a string, expected an object",
            at: "line 3",
        },
        Case {
            format: Format::OpenCodeRun,
            base: lines(
                opencode_run(),
                2,
                json!({"type": "tool_use", "timestamp": 1_769_231_333_011_i64, "sessionID": "ses_1",
                       "part": {"id": "p9", "type": "tool", "callID": "c1", "tool": "bash"}}),
            ),
            reason: "tool part without `state`",
            at: "line 3 at /part",
        },
        Case {
            format: Format::OpenCodeRun,
            base: not_json(opencode_run(), 1),
            reason: NOT_JSON,
            at: "line 2",
        },
        Case {
            format: Format::OpenCodeExport,
            base: Log::Document {
                good: {
                    let mut good = opencode_export(json!("hello"));
                    let parts = good["messages"][1]["parts"].as_array_mut().unwrap();
                    parts.remove(1);
                    good
                },
                bad: opencode_export(json!(42)),
            },
            reason: "text part whose `text` is a number, expected a string",
            at: "at /messages/1/parts/1",
        },
        Case {
            format: Format::PiSession,
            base: lines(
                pi_session(),
                2,
                json!({"type": "message", "timestamp": "2026-01-01T00:00:01.500Z", "message": "just a string"}),
            ),
            reason: "message record whose `message` is a string, expected an object",
            at: "line 3",
        },
        Case {
            format: Format::PiSession,
            base: lines(
                pi_session(),
                2,
                json!({"type": "message", "timestamp": "2026-01-01T00:00:01.500Z", "message": {"role": "toolResult", "content": "x"}}),
            ),
            reason: "message record without `message.toolCallId`",
            at: "line 3",
        },
        Case {
            format: Format::PiSession,
            base: not_json(pi_session(), 2),
            reason: NOT_JSON,
            at: "line 3",
        },
        Case {
            format: Format::PiJson,
            base: lines(
                pi_json(),
                3,
                json!({"type": "message_end", "message": {"role": "user", "content": 42, "timestamp": 2}}),
            ),
            reason: "message_end record whose `message.content` is a number, expected text or a list of parts",
            at: "line 4",
        },
        Case {
            format: Format::PiJson,
            base: not_json(pi_json(), 3),
            reason: NOT_JSON,
            at: "line 4",
        },
        Case {
            format: Format::ClaudeCode,
            base: lines(
                claude_code(),
                1,
                json!({"type": "assistant", "uuid": "a-0", "sessionId": "s-1", "message": "just a string"}),
            ),
            reason: "assistant record whose `message` is a string, expected an object",
            at: "line 2",
        },
        Case {
            format: Format::ClaudeCode,
            base: not_json(claude_code(), 1),
            reason: NOT_JSON,
            at: "line 2",
        },
    ]
}

#[test]
fn by_default_a_malformed_record_is_skipped_counted_and_named_and_nothing_else_changes() {
    for case in cases() {
        let name = format!("{} / {}", case.format, case.reason);
        let good = import(case.good().as_bytes(), &ImportOptions::default())
            .unwrap_or_else(|err| panic!("{name}: the base log does not import: {err}"));
        assert_eq!(good.stats().skipped_total(), 0, "{name}: {:?}", good.stats());
        let imported = import(case.bad().as_bytes(), &ImportOptions::default())
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(imported.format(), case.format, "{name}");
        let malformed: Vec<(&str, usize)> =
            imported.stats().malformed().iter().map(|(r, n)| (r.as_str(), *n)).collect();
        assert_eq!(malformed, [(case.reason, 1)], "{name}");
        assert_eq!(imported.stats().skipped_total(), 1, "{name}");
        let warning = format!("{}: skipped: {}", case.at, case.reason);
        assert!(
            imported.stats().warnings().iter().any(|w| w.starts_with(&warning)),
            "{name}: expected a warning `{warning}`, got {:?}",
            imported.stats().warnings()
        );
        // The record is left out whole: the trajectory is the one of the log without it.
        assert_eq!(imported.trajectory(), good.trajectory(), "{name}");
    }
}

#[test]
fn in_strict_mode_a_malformed_record_fails_the_import_naming_where_it_is_and_what_was_expected() {
    let mut strict = ImportOptions::default();
    strict.set_strict(true);
    for case in cases() {
        let name = format!("{} / {}", case.format, case.reason);
        let good = import(case.good().as_bytes(), &strict);
        assert!(good.is_ok(), "{name}: the base log does not import strictly: {good:?}");
        let err = import(case.bad().as_bytes(), &strict).unwrap_err();
        let line: Option<usize> = case
            .at
            .strip_prefix("line ")
            .map(|rest| rest.split(' ').next().unwrap().parse().unwrap());
        if case.reason == NOT_JSON {
            assert!(
                matches!(err, Error::NotJson { line: l, .. } if Some(l) == line),
                "{name}: {err:?}"
            );
            assert!(
                err.to_string().starts_with(&format!("{} is not JSON: ", case.at)),
                "{name}: {err}"
            );
            continue;
        }
        assert!(
            matches!(&err, Error::MalformedRecord { line: l, .. } if *l == line),
            "{name}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("{}: malformed {} record: {} (strict mode)", case.at, case.format, case.reason),
            "{name}"
        );
    }
}
