//! The secret table test: every kind of credential, planted in every place of a trajectory
//! (messages, tool arguments, tool results, reasoning, `extra`), goes through every path of
//! the `atif` binary that writes or shows a trajectory, and none survives; the ordinary text
//! around the secrets does.
#![allow(clippy::unwrap_used, reason = "test helpers panic on broken test setup")]

use std::path::Path;
use std::process::Output;

use atif_replay::{LlmRequest, LlmResponse, Message, RecordedCall, Script, ToolCall};
use serde_json::{Value, json};

#[path = "../../../atif-secrets/tests/it/samples.rs"]
mod samples;

use samples::{assert_clean, planted_text};

use crate::{atif_command, run_with_stdin, stderr, stdout};

fn atif(args: &[&str]) -> Output {
    run_with_stdin(atif_command(args), b"")
}

/// Everything the command printed, both streams.
fn printed(output: &Output) -> String {
    format!("{}{}", stdout(output), stderr(output))
}

/// A trajectory with `text` in a user message, an agent message, its reasoning, a tool
/// call's arguments (and a secret-named argument), the tool result, a step's and the root's
/// `extra`.
fn planted_trajectory(text: &str) -> Value {
    json!({
        "schema_version": "ATIF-v1.6",
        "session_id": "s-1",
        "agent": {"name": "agent", "version": "1", "model_name": "m-1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": text},
            {
                "step_id": 2, "source": "agent", "model_name": "m-1",
                "message": text, "reasoning_content": text,
                "tool_calls": [{
                    "tool_call_id": "call_1", "function_name": "shell",
                    "arguments": {"command": text, "api_token": "plain-token-value-9"}
                }],
                "observation": {"results": [{"source_call_id": "call_1", "content": text}]},
                "extra": {"note": text}
            }
        ],
        "extra": {"env": text}
    })
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// The planted secrets, plus the value under the secret-named argument.
fn assert_clean_with_arguments(output: &str, path: &str, survivors: bool) {
    assert_clean(output, path, survivors);
    assert!(!output.contains("plain-token-value-9"), "{path}: a secret argument survived");
}

#[test]
fn no_planted_secret_survives_normalize_check_pending_files_or_diff() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.json");
    write_json(&run, &planted_trajectory(&planted_text()));
    let run = run.to_str().unwrap();

    let normalized = atif(&["normalize", run]);
    assert_eq!(normalized.status.code(), Some(0), "{}", stderr(&normalized));
    assert_clean_with_arguments(&printed(&normalized), "normalize", true);
    // The report line names kinds and places, not secrets.
    let report = stderr(&normalized);
    assert!(report.starts_with("atif normalize: redacted "), "{report}");
    assert!(report.contains("1 private-key") || report.contains("private-key"), "{report}");
    assert!(report.contains("/steps/1/tool_calls/0/arguments/command"), "{report}");

    let golden = dir.path().join("golden.json");
    let golden = golden.to_str().unwrap();
    let updated = atif(&["check", "--update", golden, run]);
    assert_eq!(updated.status.code(), Some(0), "{}", printed(&updated));
    assert_clean_with_arguments(&printed(&updated), "check --update output", false);
    assert_clean_with_arguments(&std::fs::read_to_string(golden).unwrap(), "golden", true);
    // `check` says what it redacted from the run, as `normalize` does.
    let report = stderr(&updated);
    assert!(report.starts_with("atif check: redacted "), "{report}");
    assert!(report.contains("/steps/1/tool_calls/0/arguments/command"), "{report}");
    // A rerun compares equal: the markers are stable.
    let rerun = atif(&["check", golden, run]);
    assert_eq!(rerun.status.code(), Some(0), "{}", printed(&rerun));

    let missing = dir.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let review = atif(&["check", missing, run]);
    assert_eq!(review.status.code(), Some(1), "{}", printed(&review));
    assert_clean_with_arguments(&printed(&review), "check (review)", false);
    let pending = std::fs::read_to_string(format!("{missing}.new")).unwrap();
    assert_clean_with_arguments(&pending, "pending file", true);

    // A golden without the secrets: the diff shows every planted line as added.
    let plain = dir.path().join("plain.json");
    write_json(&plain, &planted_trajectory("nothing to see"));
    let diff = atif(&["diff", plain.to_str().unwrap(), run]);
    assert_eq!(diff.status.code(), Some(1), "{}", printed(&diff));
    assert!(stdout(&diff).contains("<redacted:openai-key>"), "{}", stdout(&diff));
    assert_clean_with_arguments(&printed(&diff), "diff", false);
    // A golden changed by an update: what it erased is shown, redacted.
    let erased = atif(&["check", "--update", golden, plain.to_str().unwrap()]);
    assert_clean_with_arguments(&printed(&erased), "check --update (erased)", false);
}

#[test]
fn keep_secrets_keeps_them_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.json");
    write_json(&run, &planted_trajectory("key sk-ant-api03-AbCdEf123456-xyz"));
    let output = atif(&["normalize", "--keep-secrets", run.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("sk-ant-api03-AbCdEf123456-xyz"));
    assert!(
        stderr(&output).contains("--keep-secrets: secrets were not redacted"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn secret_patterns_add_to_the_defaults_and_a_bad_one_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.json");
    write_json(&run, &planted_trajectory("ticket corp-123456 and sk-ant-api03-AbCdEf123456-xyz"));
    let run = run.to_str().unwrap();
    let output = atif(&["normalize", "--secret-pattern", "corp-[0-9]{6}", run]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("ticket <redacted:custom> and <redacted:anthropic-key>"));
    let bad = atif(&["normalize", "--secret-pattern", "(", run]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("invalid secret pattern `(`"), "{}", stderr(&bad));
}

#[test]
fn no_planted_secret_survives_import() {
    let text = planted_text();
    let record = |kind: &str, uuid: &str, message: Value| {
        json!({
            "parentUuid": null, "isSidechain": false, "userType": "external",
            "cwd": "/tmp/run", "sessionId": "sess-1", "version": "2.0.27",
            "type": kind, "uuid": uuid, "timestamp": "2025-11-02T09:00:00.000Z",
            "message": message
        })
        .to_string()
    };
    let assistant = |content: Value| {
        json!({
            "model": "claude-sonnet-4-5", "id": "msg_01", "type": "message", "role": "assistant",
            "content": content, "stop_reason": null,
            "usage": {"input_tokens": 3, "output_tokens": 2}
        })
    };
    let log = [
        record("user", "u-1", json!({"role": "user", "content": text})),
        record("assistant", "a-1", assistant(json!([{"type": "thinking", "thinking": text, "signature": "sig"}]))),
        record("assistant", "a-2", assistant(json!([{"type": "text", "text": text}]))),
        record(
            "assistant",
            "a-3",
            assistant(json!([{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": text}}])),
        ),
        record(
            "user",
            "u-2",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": text}]}),
        ),
    ]
    .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, log).unwrap();
    let output = atif(&["import", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_clean(&printed(&output), "import", true);
    assert!(stderr(&output).contains("atif import: redacted "), "{}", stderr(&output));
    // Every place was reached: the message, the reasoning, the tool call and its result.
    let trajectory: Value = serde_json::from_slice(&output.stdout).unwrap();
    let joined = trajectory.to_string();
    assert!(joined.matches("<redacted:jwt>").count() >= 5, "{joined}");
}

#[test]
fn script_show_never_prints_a_secret() {
    let text = planted_text();
    let mut request = LlmRequest::new(vec![Message::user(text.clone())]);
    request.params.insert("api_key".to_owned(), json!("plain-token-value-9"));
    let mut response = LlmResponse::from_text(text.clone());
    response.tool_calls.push(ToolCall::new("c1", "shell", json!({"command": text})));
    let mut script = Script::new(Some("m-1".to_owned()));
    for response in [response, LlmResponse::from_text(format!("short {}", samples::SAMPLES[0].1))] {
        script.calls.push(RecordedCall {
            request_sha256: Some("0".repeat(64)),
            request: Some(request.clone()),
            response: Some(response),
            chunks: None,
            error: None,
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.script.json");
    // Written as an old recorder might have, without redaction.
    std::fs::write(&path, serde_json::to_string(&script).unwrap()).unwrap();
    let output = atif(&["script", "show", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output)
            .contains("call 2: no tool calls (text \"short key <redacted:openai-key> end\")"),
        "{}",
        stdout(&output)
    );
    assert_clean_with_arguments(&printed(&output), "script show", false);
}
