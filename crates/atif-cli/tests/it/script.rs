//! Tests of `atif script show` and `atif script redact`, run on the real binary.

use std::path::Path;
use std::process::{Command, Output};

use atif_replay::{
    Chunk, FinishReason, LlmResponse, RecordedCall, Script, ToolCall, Usage, write_script,
};
use serde_json::json;

use crate::{atif_command, stderr, stdout};

fn atif(args: &[&str]) -> Output {
    atif_command(args).output().expect("the atif binary runs")
}

/// A three-call script: two tool calls with usage, a streamed text reply, a recorded failure.
fn sample_script() -> Script {
    let mut script = Script::new(Some("gpt-test".to_owned()));
    let call = |response: Option<LlmResponse>| RecordedCall {
        request_sha256: Some("ab".repeat(32)),
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
        Chunk::Finish {
            finish_reason: FinishReason::Stop,
            usage: Usage::new(200, 3, 0),
            model: None,
        },
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
    let output = Command::new(atif_test_support::atif_binary())
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
    let text = std::fs::read_to_string(&path).unwrap().replace("\"version\": 2", "\"version\": 9");
    std::fs::write(&path, text).unwrap();
    let output = atif(&["script", "show", &path]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!(
            "error: {path}: unsupported script format version 9 at /version: this build reads \
             versions 1 to 4; use the atif version that wrote it, or re-record the script with \
             this one\n"
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
            "error: {}:4:12: at /calls: EOF while parsing a list (the file is truncated)\n",
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
fn a_missing_file_shows_the_operating_system_reason_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.json");
    // The operating system's own words for this file, as the binary will meet them.
    let reason = std::fs::read(&path).unwrap_err().to_string();
    let expected = format!("error: cannot read {}: {reason}\n", path.display());
    for command in ["show", "redact"] {
        let output = atif(&["script", command, path.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "script {command}");
        assert_eq!(stderr(&output), expected, "script {command}");
        assert_eq!(stderr(&output).matches(&reason).count(), 1, "script {command}");
    }
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
    assert!(
        after.contains("four, key <redacted:anthropic-key>, ticket <redacted:custom>"),
        "{after}"
    );
    let names: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "no temporary file left behind: {names:?}");

    let again = atif(&["script", "redact", &path]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(stdout(&again), format!("{path}: nothing to redact\n"));
}

#[test]
fn redact_with_a_pattern_matching_the_markers_leaves_them_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_sample(dir.path());
    let output = atif(&["script", "redact", &path, "--pattern", "four", "--pattern", "redacted"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("\"<redacted:custom>\""), "{after}");
    // A second run finds nothing: the marker is not redacted again, however the pattern reads.
    let again = atif(&["script", "redact", &path, "--pattern", "four", "--pattern", "redacted"]);
    assert_eq!(stdout(&again), format!("{path}: nothing to redact\n"));
}

#[test]
fn redact_with_an_invalid_pattern_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_sample(dir.path());
    let output = atif(&["script", "redact", &path, "--pattern", "("]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("error: invalid secret pattern `(`: regex parse error"),
        "{}",
        stderr(&output)
    );
    // The regex engine's reason is shown once, not once in the message and again as its cause.
    assert_eq!(stderr(&output).matches("unclosed group").count(), 1, "{}", stderr(&output));
}

/// One credential of each kind the redaction knows, planted by hand (not through
/// `write_script`, which would redact them) in every place a script holds text.
const HAND_MADE_SECRETS: &[&str] = &[
    "sk-proj-Q1w2E3r4T5y6U7i8O9p0Aa",
    "sk-ant-api03-Zz9Yy8Xx7Ww6Vv5Uu4",
    "AKIAQWERTYUIOPASDFGH",
    "ghp_0123456789abcdefghijKLMNOPQRSTuv",
    "eyJhbGciOiJSUzI1NiJ9.claims.signature",
    "field-api-key-value",
    "text-authz-value-77",
    "tool-arg-password-1",
];

fn hand_made_script() -> String {
    let [openai, anthropic, aws, github, bearer, api_key, authz, password] = HAND_MADE_SECRETS
    else {
        unreachable!("eight planted secrets")
    };
    let sha = "0".repeat(64);
    format!(
        r#"{{
  "format": "atif-replay-script",
  "version": 1,
  "model": "gpt-test",
  "calls": [
    {{
      "request_sha256": "{sha}",
      "request": {{
        "messages": [
          {{"role": "system", "content": "use {openai} or {anthropic}"}},
          {{"role": "assistant", "content": "", "tool_calls": [{{"id": "c1", "name": "login", "arguments": {{"password": "{password}", "aws": "{aws}"}}}}]}},
          {{"role": "tool", "content": "curl -H 'Authorization: {authz}'", "tool_call_id": "c1"}}
        ],
        "params": {{"api_key": "{api_key}", "extra_headers": {{"Authorization": "Bearer {bearer}"}}}}
      }},
      "response": {{"content": {{"text": "your token is {github}"}}, "tool_calls": [{{"id": "c2", "name": "push", "arguments": {{"token": "{github}"}}}}]}}
    }},
    {{
      "request_sha256": "{sha}",
      "chunks": [{{"type": "text", "text": "key {openai}"}}, {{"type": "finish", "finish_reason": "stop", "usage": {{"prompt_tokens": 1, "completion_tokens": 1, "cached_tokens": 0}}}}]
    }},
    {{"request_sha256": "{sha}", "error": "invalid x-api-key: {anthropic}"}}
  ]
}}
"#
    )
}

#[test]
fn redact_removes_every_credential_kind_from_a_hand_made_script() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hand.script.json");
    std::fs::write(&path, hand_made_script()).unwrap();
    let path = path.display().to_string();
    let before = atif(&["script", "show", &path]);
    assert_eq!(before.status.code(), Some(0), "the hand-made script is valid: {}", stderr(&before));

    let output = atif(&["script", "redact", &path]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), format!("{path}: secrets redacted\n"));
    let after = std::fs::read_to_string(&path).unwrap();
    for secret in HAND_MADE_SECRETS {
        assert!(!after.contains(secret), "{secret} survived `atif script redact`:\n{after}");
    }
    let script = atif_replay::read_script(Path::new(&path)).unwrap();
    let request = script.calls[0].request.as_ref().unwrap();
    assert_eq!(
        request.messages[0].content,
        "use <redacted:openai-key> or <redacted:anthropic-key>"
    );
    assert_eq!(
        request.messages[1].tool_calls[0].arguments,
        json!({"password": "<redacted:password>", "aws": "<redacted:aws-access-key-id>"})
    );
    assert_eq!(request.messages[2].content, "curl -H 'Authorization: <redacted:secret>'");
    assert_eq!(
        serde_json::to_value(&request.params).unwrap(),
        json!({"api_key": "<redacted:api-key>", "extra_headers": {"Authorization": "<redacted:secret>"}})
    );
    let response = script.calls[0].response.as_ref().unwrap();
    assert_eq!(response.text(), "your token is <redacted:github-token>");
    assert_eq!(response.tool_calls[0].arguments, json!({"token": "<redacted:token>"}));
    assert_eq!(
        script.calls[1].chunks.as_ref().unwrap()[0],
        Chunk::Text { text: "key <redacted:openai-key>".to_owned() }
    );
    assert_eq!(
        script.calls[2].error.as_deref(),
        Some("invalid x-api-key: <redacted:anthropic-key>")
    );

    let shown = atif(&["script", "show", &path]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    assert!(stdout(&shown).contains("call 1: tool calls: push {\"token\":\"<redacted:token>\"}"));
}

#[test]
fn show_of_the_committed_reference_script_is_what_docs_replay_md_pastes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("tests/scripts/tool_loop_3_turns.script.json");
    let output = atif(&["script", "show", script.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let docs = std::fs::read_to_string(root.join("docs/replay.md")).unwrap();
    let pasted = format!(
        "$ atif script show tests/scripts/tool_loop_3_turns.script.json\n{}```",
        stdout(&output)
    );
    assert!(docs.contains(&pasted), "docs/replay.md must paste the current output:\n{pasted}");
}

#[test]
fn show_cuts_long_tool_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.script.json");
    let mut script = Script::new(None);
    script.calls.push(RecordedCall {
        request_sha256: Some("cd".repeat(32)),
        request: None,
        response: Some(LlmResponse::from_tool_calls(vec![ToolCall::new(
            "c1",
            "write_file",
            json!({"content": "x".repeat(5000)}),
        )])),
        chunks: None,
        error: None,
    });
    write_script(&path, &script, &[]).unwrap();
    let output = atif(&["script", "show", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let expected = format!(
        "call 1: tool calls: write_file {{\"content\":\"{}…; tokens: prompt 0, completion 0, cached 0\n",
        "x".repeat(120 - "{\"content\":\"".len())
    );
    assert!(stdout(&output).ends_with(&expected), "{}", stdout(&output));
}
