//! Tests of `atif script show` and `atif script redact`, run on the real binary.

use std::path::Path;
use std::process::{Command, Output};

use atif_replay::{
    Chunk, FinishReason, LlmResponse, RecordedCall, Script, ToolCall, Usage, write_script,
};
use serde_json::json;

fn atif(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_atif")).args(args).output().expect("the atif binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A three-call script: two tool calls with usage, a streamed text reply, a recorded failure.
fn sample_script() -> Script {
    let mut script = Script::new(Some("gpt-test".to_owned()));
    let call = |response: Option<LlmResponse>| RecordedCall {
        request_sha256: "ab".repeat(32),
        request: None,
        response,
        chunks: None,
        error: None,
    };
    script.calls.push(call(Some(
        LlmResponse::from_tool_calls(vec![
            ToolCall::new("c1", "calculator", json!({"expression": "2+2"})),
            ToolCall::new("c2", "return_result", json!({"value": 4})),
        ])
        .with_usage(Usage::new(120, 15, 100)),
    )));
    let chunks = vec![
        Chunk::Text { text: "fo".to_owned() },
        Chunk::Text { text: "ur".to_owned() },
        Chunk::Finish { finish_reason: FinishReason::Stop, usage: Usage::new(200, 3, 0) },
    ];
    let mut streamed = call(Some(LlmResponse::from_chunks(&chunks)));
    streamed.chunks = Some(chunks);
    script.calls.push(streamed);
    let mut failed = call(None);
    failed.error = Some("model provider error: overloaded".to_owned());
    script.calls.push(failed);
    script
}

fn write_sample(dir: &Path) -> String {
    let path = dir.join("run.script.json");
    write_script(&path, &sample_script(), &[]).expect("the sample script is written");
    path.display().to_string()
}

#[test]
fn show_prints_the_model_the_calls_their_tool_calls_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_sample(dir.path());
    let output = atif(&["script", "show", &path]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "model: gpt-test\n\
         calls: 3\n\
         call 1: tool calls: calculator {\"expression\":\"2+2\"}, return_result {\"value\":4}; tokens: prompt 120, completion 15, cached 100\n\
         call 2: no tool calls (text \"four\"); tokens: prompt 200, completion 3, cached 0; streamed in 3 chunks\n\
         call 3: failed when recorded: model provider error: overloaded\n"
    );
}

#[test]
fn show_reads_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_sample(dir.path());
    let output = Command::new(env!("CARGO_BIN_EXE_atif"))
        .args(["script", "show", "-"])
        .stdin(std::fs::File::open(&path).unwrap())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).starts_with("model: gpt-test\ncalls: 3\n"));
}

#[test]
fn show_of_a_script_of_another_version_exits_1_naming_file_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_sample(dir.path());
    let text = std::fs::read_to_string(&path).unwrap().replace("\"version\": 1", "\"version\": 9");
    std::fs::write(&path, text).unwrap();
    let output = atif(&["script", "show", &path]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!(
            "error: {path}: unsupported script format version 9 at /version: this build reads \
             version 1; re-record the script with this version of atif-replay\n"
        )
    );
}

#[test]
fn show_of_a_truncated_script_exits_1_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.json");
    std::fs::write(
        &path,
        "{\n  \"format\": \"atif-replay-script\",\n  \"version\": 1,\n  \"calls\": [",
    )
    .unwrap();
    let output = atif(&["script", "show", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!(
            "error: {}:4:12: EOF while parsing a list (the file is truncated)\n",
            path.display()
        )
    );
}

#[test]
fn show_of_a_missing_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.json");
    let output = atif(&["script", "show", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with(&format!("error: cannot read {}", path.display())),
        "{}",
        stderr(&output)
    );
}

#[test]
fn redact_replaces_secrets_in_place_and_keeps_the_script_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_sample(dir.path());
    // A script edited by hand after recording, with a key pasted into a reply.
    let leaked = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"four\"", "\"four, key sk-ant-api03-LEAKEDLEAKEDLEAKED, ticket T-99812\"");
    std::fs::write(&path, &leaked).unwrap();
    let output = atif(&["script", "redact", &path, "--pattern", "T-[0-9]{5}"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), format!("{path}: secrets redacted\n"));
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(!after.contains("LEAKED") && !after.contains("T-99812"), "{after}");
    assert!(after.contains("four, key [REDACTED], ticket [REDACTED]"), "{after}");
    let names: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "no temporary file left behind: {names:?}");

    let again = atif(&["script", "redact", &path]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(stdout(&again), format!("{path}: nothing to redact\n"));
}

#[test]
fn redact_refuses_when_a_pattern_would_still_match_and_leaves_the_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_sample(dir.path());
    let before = std::fs::read(&path).unwrap();
    let output = atif(&["script", "redact", &path, "--pattern", "four", "--pattern", "REDACTED"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with(&format!(
            "error: refusing to save {path}: secret pattern `REDACTED` still matches"
        )),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "no partial write");
}

#[test]
fn redact_with_an_invalid_pattern_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_sample(dir.path());
    let output = atif(&["script", "redact", &path, "--pattern", "("]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("error: invalid secret pattern `(`"),
        "{}",
        stderr(&output)
    );
}
