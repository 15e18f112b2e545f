//! Secrets never reach disk: every credential shape planted in a recording is gone from the file.

use std::collections::BTreeMap;

use atif_replay::{
    Error, LlmClient, LlmRequest, LlmResponse, Message, RecordOptions, RecordingClient,
    ScriptedClient, read_script, redact_file,
};
use serde_json::json;

/// One planted secret of each kind the issue names, and a user-defined one.
const PLANTED: &[&str] = &[
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t",
    "sk-ant-api03-Zy1xWv4uTs7rQp0oNm3l",
    "AKIAZZZZZZZZZZZZZZZZ",
    "ghp_1234567890abcdefghijABCDEFGHIJ",
    "eyJhbGciOiJIUzI1NiJ9.payload.sig",
    "plain-password-value",
    "hunter2hunter2",
    "CORP-4242-7777",
];

fn planted_request() -> LlmRequest {
    let mut params = BTreeMap::new();
    params.insert("api_key".to_owned(), json!(PLANTED[5]));
    params.insert("headers".to_owned(), json!({"Authorization": format!("Bearer {}", PLANTED[4])}));
    LlmRequest {
        model: None,
        messages: vec![
            Message::system(format!("openai {} anthropic {}", PLANTED[0], PLANTED[1])),
            Message::user(format!("aws {} github {}", PLANTED[2], PLANTED[3])),
            Message::tool_result(
                "call_1",
                format!("config: api_key={}\nticket {}", PLANTED[6], PLANTED[7]),
            ),
        ],
        tools: Vec::new(),
        params,
    }
}

fn echo_everything() -> ScriptedClient {
    ScriptedClient::from_fn(Some("m"), |_, request| {
        let all: Vec<String> = request.messages.iter().map(|m| m.content.clone()).collect();
        Ok(LlmResponse::from_text(all.join(" | "))
            .with_reasoning(format!("the key is {}", PLANTED[0])))
    })
}

#[tokio::test]
async fn no_planted_secret_of_any_kind_survives_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut options = RecordOptions::default();
    options.add_secret_pattern("CORP-[0-9]{4}-[0-9]{4}");
    let recorder = RecordingClient::with_options(echo_everything(), options).unwrap();
    let reply = recorder.complete(planted_request()).await.unwrap();
    assert!(reply.text().contains(PLANTED[0]), "the live reply itself is not altered");
    recorder.save(&path).unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    for secret in PLANTED {
        assert!(!text.contains(secret), "{secret} reached disk:\n{text}");
    }
    // Each planted value left a marker where it was, in the request and in the echoed reply.
    assert!(text.matches("[REDACTED]").count() >= 2 * 7, "{text}");
    let script = read_script(&path).unwrap();
    assert_eq!(script.calls[0].request.as_ref().unwrap().params["api_key"], json!("[REDACTED]"));
}

#[tokio::test]
async fn saving_refuses_when_a_told_about_pattern_still_matches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, "old content").unwrap();
    let mut options = RecordOptions::default();
    // A pattern that also matches the marker can never be satisfied: saving must refuse.
    options.add_secret_pattern("REDACTED");
    let recorder = RecordingClient::with_options(echo_everything(), options).unwrap();
    recorder.complete(planted_request()).await.unwrap();
    let err = recorder.save(&path).unwrap_err();
    assert!(matches!(err, Error::SecretSurvived { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "refusing to save {}: secret pattern `REDACTED` still matches",
            path.display()
        )),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old content", "no partial write");
    let entries = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(entries, 1, "no temporary file left behind");
}

#[test]
fn an_invalid_user_pattern_is_an_error() {
    let mut options = RecordOptions::default();
    options.add_secret_pattern("[unclosed");
    let err = RecordingClient::with_options(echo_everything(), options).unwrap_err();
    assert!(err.to_string().starts_with("invalid secret pattern `[unclosed`"), "{err}");
}

#[test]
fn redact_file_cleans_a_script_written_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let text = format!(
        r#"{{"format": "atif-replay-script", "version": 1, "model": "m", "calls": [
  {{"request_sha256": "{}", "response": {{"content": {{"text": "key {} and {}"}}}}}}]}}"#,
        "a".repeat(64),
        PLANTED[0],
        PLANTED[7]
    );
    std::fs::write(&path, text).unwrap();
    assert!(redact_file(&path, &["CORP-[0-9]+-[0-9]+".to_owned()]).unwrap());
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(!after.contains(PLANTED[0]) && !after.contains(PLANTED[7]), "{after}");
    assert_eq!(
        read_script(&path).unwrap().calls[0].response.as_ref().unwrap().text(),
        "key [REDACTED] and [REDACTED]"
    );
}
