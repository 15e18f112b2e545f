//! Tests of `atif schema` and `atif upgrade`, run on the real binary.
#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use std::process::Output;

use serde_json::{Value, json};

use crate::{atif_command, run_with_closed_stdout, run_with_stdin, stderr};

/// Runs `atif ARGS...` with `stdin` on standard input.
fn atif(args: &[&str], stdin: &[u8]) -> Output {
    run_with_stdin(atif_command(args), stdin)
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn schema_prints_the_newest_schema_by_default() {
    let output = atif(&["schema"], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let schema = stdout_json(&output);
    assert_eq!(schema, atif_schema_v1_8());
    assert_eq!(schema["$defs"]["Trajectory"]["properties"]["schema_version"]["const"], "ATIF-v1.8");
}

#[test]
fn schema_accepts_three_spellings_of_a_version() {
    for spelling in ["1.5", "v1.5", "ATIF-v1.5"] {
        let output = atif(&["schema", "--atif-version", spelling], b"");
        assert_eq!(output.status.code(), Some(0), "{spelling}: {}", stderr(&output));
        let schema = stdout_json(&output);
        assert_eq!(
            schema["$defs"]["Trajectory"]["properties"]["schema_version"]["const"], "ATIF-v1.5",
            "{spelling}"
        );
        assert!(schema["$defs"]["Step"]["properties"].get("llm_call_count").is_none());
    }
}

#[test]
fn schema_rejects_an_unknown_version_with_exit_2_naming_the_valid_ones() {
    for spelling in ["1.9", "2.0", "banana", "ATIF-v1.7.1"] {
        let output = atif(&["schema", "--atif-version", spelling], b"");
        assert_eq!(output.status.code(), Some(2), "{spelling}");
        let message = stderr(&output);
        assert!(message.contains(&format!("unknown ATIF version `{spelling}`")), "{message}");
        assert!(message.contains("1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8"), "{message}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn upgrade_relabels_a_file_and_reports_the_change_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.json");
    let document = json!({
        "schema_version": "ATIF-v1.5",
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi", "extra": {"keep": [1, 2.5, null]}}]
    });
    std::fs::write(&path, serde_json::to_vec(&document).unwrap()).unwrap();
    let output = atif(&["upgrade", path.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mut expected = document;
    expected["schema_version"] = json!("ATIF-v1.8");
    assert_eq!(stdout_json(&output), expected);
    assert!(String::from_utf8_lossy(&output.stdout).contains("\n  \"agent\""), "pretty-printed");
    assert!(
        stderr(&output).contains("/schema_version: ATIF-v1.5 -> ATIF-v1.8"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn upgrade_reads_stdin_and_leaves_unresolvable_session_refs_alone_then_exits_1_naming_the_ref() {
    let document = json!({
        "schema_version": "ATIF-v1.6",
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [{
            "step_id": 1, "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": "c", "function_name": "delegate", "arguments": {}}],
            "observation": {"results": [{"source_call_id": "c", "subagent_trajectory_ref": [{"session_id": "child"}]}]}
        }]
    });
    let output = atif(&["upgrade", "-"], &serde_json::to_vec(&document).unwrap());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(output.stdout.is_empty(), "an invalid upgrade writes nothing");
    let message = stderr(&output);
    let pointer = "/steps/0/observation/results/0/subagent_trajectory_ref/0";
    for expected in [
        format!("standard input: {pointer}: left unchanged"),
        format!("standard input: error[subagent-ref] {pointer}: subagent ref has neither"),
        "error: standard input is not valid ATIF-v1.8 after the upgrade (1 error".to_owned(),
    ] {
        assert!(message.contains(&expected), "missing `{expected}` in:\n{message}");
    }
}

#[test]
fn upgrade_exits_1_naming_the_pointer_of_each_error_it_cannot_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken-join.json");
    let document = json!({
        "schema_version": "ATIF-v1.5",
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "hi"},
            {
                "step_id": 2, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "ls", "arguments": {}}],
                "observation": {"results": [{"source_call_id": "c9", "content": "x"}]}
            },
            {"step_id": 7, "source": "agent", "message": "done"}
        ]
    });
    std::fs::write(&path, serde_json::to_vec(&document).unwrap()).unwrap();
    let out_path = dir.path().join("new.json");
    let output = atif(&["upgrade", path.to_str().unwrap(), "-o", out_path.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    for expected in [
        "broken-join.json: error[call-join] /steps/1/observation/results/0/source_call_id",
        "broken-join.json: error[step-sequence] /steps/2/step_id",
        "(2 errors the upgrade cannot fix",
    ] {
        assert!(message.contains(expected), "missing `{expected}` in:\n{message}");
    }
    assert!(!out_path.exists(), "no output file is written for an invalid upgrade");
    assert!(output.stdout.is_empty());
}

#[test]
fn upgrade_repairs_v1_6_session_refs_and_writes_a_valid_v1_8_document() {
    let document = json!({
        "schema_version": "ATIF-v1.6",
        "session_id": "parent",
        "agent": {"name": "a", "version": "1"},
        "steps": [{
            "step_id": 1, "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": "c", "function_name": "delegate", "arguments": {}}],
            "observation": {"results": [{"source_call_id": "c", "subagent_trajectory_ref": [{"session_id": "child"}]}]}
        }],
        "subagent_trajectories": [{
            "schema_version": "ATIF-v1.6",
            "session_id": "child",
            "trajectory_id": "child-1",
            "agent": {"name": "c", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "x"}]
        }]
    });
    let options = atif_schema::ValidateOptions::default();
    assert!(!atif_schema::validate(&document, &options).is_valid(), "the input is invalid");
    let output = atif(&["upgrade", "-"], &serde_json::to_vec(&document).unwrap());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let upgraded = stdout_json(&output);
    assert_eq!(
        upgraded["steps"][0]["observation"]["results"][0]["subagent_trajectory_ref"],
        json!([{"session_id": "child", "trajectory_id": "child-1"}])
    );
    let report = atif_schema::validate(&upgraded, &options);
    assert!(report.is_valid(), "{:?}", report.findings);
    assert_eq!(report.version, Some(atif_schema::SchemaVersion::V1_8));
    assert!(
        stderr(&output).contains("resolved to the embedded subagent with trajectory_id `child-1`")
    );
}

#[test]
fn upgrade_exits_1_on_input_that_is_not_a_json_object_with_a_known_label() {
    let dir = tempfile::tempdir().unwrap();
    for (name, content, expected) in [
        ("broken.json", "{\"schema_version\": ", "invalid JSON at line 1"),
        (
            "duplicate.json",
            "{\"schema_version\": \"ATIF-v1.5\", \"schema_version\": \"ATIF-v1.6\"}",
            "repeats an earlier key",
        ),
        ("array.json", "[]", "(root): the root is an array: an ATIF trajectory is a JSON object"),
        (
            "label.json",
            "{\"schema_version\": \"1.4\", \"steps\": []}",
            "/schema_version: unknown schema_version `1.4`",
        ),
        ("empty.json", "", "empty document"),
        ("bom.json", "\u{FEFF}{\"schema_version\": \"ATIF-v1.5\"}", "byte-order mark"),
        ("nan.json", "{\"schema_version\": NaN}", "line 1, column 20: `NaN` is not JSON"),
        ("garbage.json", "{} {}", "line 1, column 4: trailing characters"),
        ("deep.json", &"[".repeat(100_000), "nested deeper than 128"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let output = atif(&["upgrade", path.to_str().unwrap()], b"");
        assert_eq!(output.status.code(), Some(1), "{name}");
        assert!(stderr(&output).contains(expected), "{name}: {}", stderr(&output));
        assert!(stderr(&output).contains(name), "{name}: the message names the file");
        assert!(output.stdout.is_empty(), "{name}");
    }
}

#[test]
fn upgrade_rejects_invalid_utf8_naming_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.json");
    std::fs::write(&path, b"{\"schema_version\": \"caf\xE9\"}").unwrap();
    let output = atif(&["upgrade", path.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("line 1, column 24: invalid UTF-8 (byte 0xE9"),
        "{}",
        stderr(&output)
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn schema_and_upgrade_stop_quietly_when_the_reader_stops_early() {
    let dir = tempfile::tempdir().unwrap();
    let steps: Vec<Value> = (1..=2_000)
        .map(|step_id| json!({"step_id": step_id, "source": "user", "message": "x".repeat(100)}))
        .collect();
    let document = json!({
        "schema_version": "ATIF-v1.5",
        "agent": {"name": "a", "version": "1"},
        "steps": steps
    });
    let path = dir.path().join("big.json");
    std::fs::write(&path, serde_json::to_vec(&document).unwrap()).unwrap();
    for args in [&["upgrade", path.to_str().unwrap()][..], &["schema"]] {
        let output = run_with_closed_stdout(atif_command(args));
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
        assert!(!stderr(&output).contains("panicked"), "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn upgrade_exits_2_on_a_missing_file_or_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    for path in [missing.to_str().unwrap(), dir.path().to_str().unwrap()] {
        let output = atif(&["upgrade", path], b"");
        assert_eq!(output.status.code(), Some(2), "{path}");
        assert!(stderr(&output).contains(path), "{}", stderr(&output));
    }
}

/// The v1.8 schema as the library generates it.
fn atif_schema_v1_8() -> Value {
    atif_schema::json_schema(atif_schema::SchemaVersion::V1_8)
}
