//! Hostile input: a clear error or a correct import, never a panic. Large inputs are generated
//! here, never committed.

use atif_import::{Error, ImportOptions, import};
use serde_json::json;

use crate::support::{assert_valid, sources, steps};

fn import_err(bytes: &[u8]) -> Error {
    import(bytes, &ImportOptions::default()).unwrap_err()
}

#[test]
fn an_empty_file_is_a_clear_error() {
    assert_eq!(import_err(b"").to_string(), "the log is empty: expected one JSON object per line");
    assert!(matches!(import_err(b"\n\n   \n"), Error::Empty));
}

#[test]
fn binary_input_names_the_first_line() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let err = import_err(&bytes);
    assert!(matches!(err, Error::NotJson { line: 1, .. }), "{err:?}");
    assert!(err.to_string().starts_with("line 1 is not JSON"), "{err}");
}

#[test]
fn a_json_document_that_is_not_a_log_is_unrecognised_and_the_known_formats_are_listed() {
    let trajectory =
        json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": []});
    let err = import_err(trajectory.to_string().as_bytes());
    assert_eq!(
        err.to_string(),
        "unrecognised log: none of the first 1 records looks like a known format (known: claude-code, claude-stream, codex-rollout, codex-exec, gemini-session, gemini-stream, opencode-run, opencode-export, pi-json, pi-session, otel)"
    );
    // Pretty-printed, it is read as one JSON document (as `opencode export` writes), which is
    // no known log either.
    let pretty = serde_json::to_string_pretty(&trajectory).unwrap();
    assert!(matches!(import_err(pretty.as_bytes()), Error::Unrecognized { scanned: 1, .. }));
    // A document cut short names the line where it stops.
    let cut = &pretty[..pretty.len() - 3];
    let err = import_err(cut.as_bytes());
    assert!(matches!(err, Error::NotJson { line, .. } if line == cut.lines().count()), "{err:?}");
    assert_eq!(
        import_err(b"[1, 2, 3]\n").to_string(),
        "line 1 is not a log record: expected a JSON object, found an array"
    );
}

fn strict_err(bytes: &[u8]) -> Error {
    let mut options = ImportOptions::default();
    options.set_strict(true);
    import(bytes, &options).unwrap_err()
}

#[test]
fn a_broken_line_in_the_middle_is_skipped_and_counted_or_in_strict_mode_names_its_number() {
    let log = b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n{\"type\": nope}\n{\"type\":\"turn.completed\"}\n";
    let err = strict_err(log);
    assert!(matches!(err, Error::NotJson { line: 3, .. }), "{err:?}");
    let imported = import(log, &ImportOptions::default()).unwrap();
    assert_eq!(imported.stats().records(), 3);
    assert_eq!(imported.stats().malformed().get("line that is not JSON"), Some(&1));
    assert_eq!(
        imported.stats().warnings(),
        ["line 3: skipped: line that is not JSON: expected ident at column 11"]
    );
}

#[test]
fn invalid_utf8_and_deep_nesting_are_errors_in_strict_mode_and_skipped_lines_otherwise() {
    let log = b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"\xff\xfe\"}\n";
    assert!(matches!(strict_err(log), Error::NotJson { line: 2, .. }));
    let deep =
        format!("{}\n{}\n", r#"{"type":"thread.started","thread_id":"t"}"#, "[".repeat(100_000));
    assert!(matches!(strict_err(deep.as_bytes()), Error::NotJson { line: 2, .. }));
    for log in [&log[..], deep.as_bytes()] {
        let imported = import(log, &ImportOptions::default()).unwrap();
        assert_eq!(imported.stats().malformed().get("line that is not JSON"), Some(&1));
    }
}

#[test]
fn a_ten_megabyte_line_imports_whole() {
    let big = "x".repeat(10 * 1024 * 1024);
    let lines = [
        json!({"type": "user", "uuid": "u1", "sessionId": "S", "message": {"role": "user", "content": "read it"}}),
        json!({"type": "assistant", "uuid": "a1", "sessionId": "S", "message": {"id": "m1", "model": "m", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "big.txt"}}]}}),
        json!({"type": "user", "uuid": "u2", "sessionId": "S", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": big}]}}),
    ];
    let log: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert!(log.len() > 10 * 1024 * 1024);
    let imported = import(log.as_bytes(), &ImportOptions::default()).unwrap();
    let t = &imported.trajectory();
    assert_eq!(sources(t), "ua");
    assert_eq!(
        steps(t)[1]["observation"]["results"][0]["content"].as_str().unwrap().len(),
        10 * 1024 * 1024
    );
}

#[test]
fn a_fifty_megabyte_log_imports_every_call() {
    let n_calls = 60_000;
    let mut log = String::with_capacity(52 * 1024 * 1024);
    log.push_str(r#"{"timestamp":"2025-09-25T02:12:23.966Z","type":"session_meta","payload":{"id":"s-big","cli_version":"0.40.0"}}"#);
    log.push('\n');
    let padding = "y".repeat(600);
    for i in 0..n_calls {
        let usage = json!({"input_tokens": 100, "cached_input_tokens": 50, "output_tokens": 10});
        let total = json!({"input_tokens": 100 * (i + 1), "cached_input_tokens": 50 * (i + 1), "output_tokens": 10 * (i + 1)});
        let lines = [
            json!({"timestamp": "2025-09-25T02:12:24.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": usage, "total_token_usage": total}}}),
            json!({"timestamp": "2025-09-25T02:12:24.000Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": format!("{{\"command\":[\"echo\",\"{i}\"]}}"), "call_id": format!("call_{i}")}}),
            json!({"timestamp": "2025-09-25T02:12:24.000Z", "type": "response_item", "payload": {"type": "function_call_output", "call_id": format!("call_{i}"), "output": format!("{i} {padding}")}}),
        ];
        for line in lines {
            log.push_str(&line.to_string());
            log.push('\n');
        }
    }
    assert!(log.len() > 50 * 1024 * 1024, "{}", log.len());
    let imported = import(log.as_bytes(), &ImportOptions::default()).unwrap();
    let t = &imported.trajectory();
    assert_eq!(steps(t).len(), n_calls as usize);
    assert_eq!(t["final_metrics"]["total_prompt_tokens"], 100 * n_calls);
    assert_eq!(
        steps(t)[n_calls as usize - 1]["observation"]["results"][0]["source_call_id"],
        format!("call_{}", n_calls - 1)
    );
    assert_valid(t, "the 50 MB log");
}

/// Every variant of `value` with one member (at depth ≤ 3) replaced by a value of another type.
fn mutations(value: &serde_json::Value) -> Vec<serde_json::Value> {
    let replacements =
        [json!(null), json!(7), json!("x"), json!([]), json!({}), json!([{"type": "text"}])];
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), 0, &replacements, value, &mut out);
    return out;

    fn walk(
        node: &serde_json::Value,
        path: &mut Vec<String>,
        depth: usize,
        replacements: &[serde_json::Value],
        root: &serde_json::Value,
        out: &mut Vec<serde_json::Value>,
    ) {
        let Some(map) = node.as_object() else { return };
        for (key, child) in map {
            path.push(key.clone());
            for replacement in replacements {
                let mut mutated = root.clone();
                let pointer: String = path.iter().map(|p| format!("/{p}")).collect();
                *mutated.pointer_mut(&pointer).unwrap() = replacement.clone();
                out.push(mutated);
            }
            if depth < 3 {
                walk(child, path, depth + 1, replacements, root, out);
            }
            path.pop();
        }
    }
}

#[test]
fn every_fixture_with_any_member_swapped_for_another_type_imports_validly_or_fails_cleanly() {
    let fixtures = [
        "claude-code/basic.jsonl",
        "claude-code/api-error.jsonl",
        "claude-code/sidechains.jsonl",
        "claude-stream/basic.jsonl",
        "codex-rollout/usage-before.jsonl",
        "codex-rollout/usage-after.jsonl",
        "codex-exec/basic.jsonl",
    ];
    let mut n_variants = 0;
    for rel in fixtures {
        let text = String::from_utf8(crate::support::fixture(rel)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (idx, line) in lines.iter().enumerate() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            for mutated in mutations(&record) {
                let mut log = lines.clone();
                let mutated_line = mutated.to_string();
                log[idx] = &mutated_line;
                let bytes = log.join("\n");
                n_variants += 1;
                match import(bytes.as_bytes(), &ImportOptions::default()) {
                    Ok(imported) => assert_valid(
                        &imported.trajectory(),
                        &format!("{rel} line {} mutated", idx + 1),
                    ),
                    Err(err) => assert!(!err.to_string().is_empty()),
                }
            }
        }
    }
    assert!(n_variants > 1000, "{n_variants}");
}

#[test]
fn token_counts_whose_sum_overflows_saturate_instead_of_panicking() {
    // The prompt is input + cache reads + cache writes; u64::MAX plus anything used to panic
    // (debug builds) or wrap (release builds).
    let init =
        json!({"type": "system", "subtype": "init", "session_id": "s", "model": "m", "uuid": "i"});
    let reply = json!({
        "type": "assistant",
        "message": {
            "model": "m", "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "hi"}],
            "usage": {
                "input_tokens": u64::MAX,
                "cache_read_input_tokens": 1,
                "cache_creation_input_tokens": 5000,
                "output_tokens": 3
            }
        },
        "parent_tool_use_id": null, "session_id": "s", "uuid": "a"
    });
    let log = format!("{init}\n{reply}\n");
    let imported = import(log.as_bytes(), &ImportOptions::default()).unwrap();
    let trajectory = &imported.trajectory();
    let agent = steps(trajectory).iter().find(|step| step["source"] == "agent").unwrap();
    // The sum saturates, and is written as the largest count ATIF's typed model holds.
    assert_eq!(agent["metrics"]["prompt_tokens"], json!(i64::MAX));
    assert_eq!(agent["metrics"]["cached_tokens"], json!(1));
    assert_eq!(agent["metrics"]["completion_tokens"], json!(3));
    assert_eq!(trajectory["final_metrics"]["total_prompt_tokens"], json!(i64::MAX));
    assert!(atif_schema::Trajectory::from_value(trajectory).is_ok());
}

#[test]
fn a_session_of_a_format_version_newer_than_known_is_refused_naming_it() {
    let log = br#"{"type":"session","version":4,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
"#;
    let err = import_err(log);
    assert_eq!(
        err.to_string(),
        "line 1: pi-session version 4 is newer than this importer knows (up to 3); upgrade atif"
    );
}

/// A Claude Code log whose second and third records are malformed: an assistant record whose
/// `message` is a string, and a user record whose content is a number.
fn malformed_claude_log() -> String {
    let record = |kind: &str, uuid: &str, message: serde_json::Value| {
        json!({
            "parentUuid": null, "isSidechain": false, "cwd": "/tmp/run", "sessionId": "s-1",
            "version": "2.0.27", "type": kind, "uuid": uuid,
            "timestamp": "2025-11-02T09:00:00.000Z", "message": message
        })
        .to_string()
    };
    [
        record("user", "u-1", json!({"role": "user", "content": "hello"})),
        record("assistant", "a-1", json!("just a string")),
        record("user", "u-2", json!({"role": "user", "content": 42})),
        record(
            "assistant",
            "a-2",
            json!({"model": "m", "id": "msg_1", "role": "assistant", "content": [
                {"type": "text", "text": {"not": "text"}},
                {"type": "text", "text": "fine"}
            ]}),
        ),
    ]
    .join("\n")
}

#[test]
fn malformed_records_are_skipped_and_counted_with_a_reason_never_invented_or_dropped_silently() {
    let imported = import(malformed_claude_log().as_bytes(), &ImportOptions::default()).unwrap();
    let t = &imported.trajectory();
    // The user message and the one good text block; no empty step for the string message.
    let messages: Vec<&serde_json::Value> = steps(t).iter().map(|step| &step["message"]).collect();
    assert_eq!(messages, [&json!("hello"), &json!("fine")], "{t:#}");
    let stats = imported.stats();
    assert_eq!(stats.skipped_total(), 3);
    let reasons: Vec<(&str, usize)> =
        stats.malformed().iter().map(|(reason, count)| (reason.as_str(), *count)).collect();
    assert_eq!(
        reasons,
        [
            ("assistant record whose `message` is a string, expected an object", 1),
            ("assistant text block whose `text` is an object, expected a string", 1),
            (
                "user record whose `message.content` is a number, expected text or a list of parts",
                1
            ),
        ]
    );
    assert!(
        stats.warnings().iter().any(|w| w.starts_with("line 2: skipped: assistant record")),
        "{:?}",
        stats.warnings()
    );
}

#[test]
fn strict_mode_fails_on_the_first_malformed_record_naming_its_line() {
    let mut options = ImportOptions::default();
    options.set_strict(true);
    let err = import(malformed_claude_log().as_bytes(), &options).unwrap_err();
    assert!(matches!(err, Error::MalformedRecord { line: Some(2), pointer: None, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "line 2: malformed claude-code record: assistant record whose `message` is a string, \
         expected an object (strict mode)"
    );
}
