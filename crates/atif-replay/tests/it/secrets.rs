//! Secrets never reach disk: every credential shape planted in a recording is gone from the file.

use std::collections::BTreeMap;

use atif_replay::{
    Error, FakeClient, LlmClient, LlmRequest, LlmResponse, Message, RecordOptions, RecordingClient,
    ToolCall, ToolDefinition, read_script, redact_file,
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

fn echo_everything() -> FakeClient {
    FakeClient::from_fn(Some("m"), |_, request| {
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
    assert!(text.matches("<redacted:").count() >= 2 * 7, "{text}");
    let script = read_script(&path).unwrap();
    assert_eq!(
        script.calls[0].request.as_ref().unwrap().params["api_key"],
        json!("<redacted:api-key>")
    );
}

#[tokio::test]
async fn a_user_pattern_matching_the_markers_leaves_them_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut options = RecordOptions::default();
    // A pattern that also matches the marker text must neither loop nor refuse to save.
    options.add_secret_pattern("redacted");
    let recorder = RecordingClient::with_options(echo_everything(), options).unwrap();
    recorder.complete(planted_request()).await.unwrap();
    recorder.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("<redacted:openai-key>"), "{text}");
    assert!(!redact_file(&path, &["redacted".to_owned()]).unwrap(), "nothing left to redact");
    let entries = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(entries, 1, "no temporary file left behind");
}

#[test]
fn an_invalid_user_pattern_is_an_error() {
    let mut options = RecordOptions::default();
    options.add_secret_pattern("[unclosed");
    let err = RecordingClient::with_options(echo_everything(), options).unwrap_err();
    assert_eq!(err.to_string(), "invalid secret pattern `[unclosed`");
    let shown = crate::chain(&err);
    assert!(shown.starts_with("invalid secret pattern `[unclosed`: regex parse error"), "{shown}");
    assert_eq!(shown.matches("unclosed character class").count(), 1, "{shown}");
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
        "key <redacted:openai-key> and <redacted:custom>"
    );
}

/// A model that calls a tool with the secrets it was shown, streams a reply quoting them, and
/// fails with an error quoting one, as providers do ("Incorrect API key provided: sk-…").
fn leaky_tool_model() -> FakeClient {
    FakeClient::from_fn(Some("m"), |call, _| match call {
        1 => Ok(LlmResponse::from_tool_calls(vec![
            ToolCall::new(
                "call_1",
                "http_get",
                json!({"url": "https://api.example.com", "headers": {"Authorization": format!("Basic {}", BASIC)}, "key": PLANTED[0]}),
            ),
            ToolCall::new(
                "call_2",
                "shell",
                json!(format!("{{\"cmd\": \"export AWS={}\"}}", PLANTED[2])),
            ),
        ])),
        2 => Ok(LlmResponse::from_text(format!("streamed {} and {}", PLANTED[3], PLANTED[1]))),
        _ => Err(Error::provider(format!("Incorrect API key provided: {}", PLANTED[0]))),
    })
}

const BASIC: &str = "dXNlcjpzM2NyZXRwYXNz";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_in_tool_arguments_streamed_chunks_and_errors_never_reach_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut options = RecordOptions::default();
    options.add_secret_pattern("CORP-[0-9]{4}-[0-9]{4}");
    let recorder = RecordingClient::with_options(leaky_tool_model(), options).unwrap();
    let tools = vec![ToolDefinition::new(
        "http_get",
        format!("GET a URL; the default token is {}", PLANTED[3]),
        json!({"type": "object", "properties": {"password": {"type": "string"}}}),
    )];
    let first = recorder.complete(planted_request().with_tools(tools.clone())).await.unwrap();
    // The agent sends the tool calls back, arguments and all, with a tool result holding a
    // client secret, and reads the next reply as a stream.
    let second = LlmRequest::new(vec![
        Message::assistant(&first),
        Message::tool_result(
            "call_1",
            format!("client_secret=abcdef0123456789 ok; sent Authorization: Basic {BASIC}"),
        ),
    ])
    .with_tools(tools);
    let chunks =
        recorder.complete_stream(second.clone()).await.unwrap().collect_chunks().await.unwrap();
    assert!(chunks.len() > 1);
    assert!(recorder.complete(second).await.is_err());
    recorder.save(&path).unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    for secret in PLANTED.iter().chain([&BASIC, &"abcdef0123456789"]) {
        assert!(!text.contains(secret), "{secret} reached disk:\n{text}");
    }
    let script = read_script(&path).unwrap();
    let response = script.calls[0].response.as_ref().unwrap();
    assert_eq!(response.tool_calls[0].arguments["headers"]["Authorization"], "<redacted:secret>");
    assert_eq!(response.tool_calls[0].arguments["key"], "<redacted:openai-key>");
    assert_eq!(
        response.tool_calls[1].arguments,
        json!("{\"cmd\": \"export AWS=<redacted:aws-access-key-id>\"}")
    );
    let request = script.calls[1].request.as_ref().unwrap();
    assert_eq!(request.messages[0].tool_calls[0].arguments["key"], "<redacted:openai-key>");
    assert_eq!(
        request.messages[1].content,
        "client_secret=<redacted:secret> ok; sent Authorization: Basic <redacted:secret>"
    );
    assert_eq!(
        request.tools[0].parameters,
        json!({"type": "object", "properties": {"password": {"type": "string"}}}),
        "a tool's schema describing a password parameter is kept"
    );
    assert_eq!(
        request.tools[0].description,
        "GET a URL; the default token is <redacted:github-token>"
    );
    assert!(script.calls[1].chunks.is_some(), "the second call was streamed");
    assert_eq!(
        script.calls[1].response.as_ref().unwrap().text(),
        "streamed <redacted:github-token> and <redacted:anthropic-key>"
    );
    assert_eq!(
        script.calls[2].error.as_deref(),
        Some("model provider error: Incorrect API key provided: <redacted:openai-key>")
    );
}

#[tokio::test]
async fn a_user_pattern_matching_hex_digits_leaves_the_fingerprints_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let model = FakeClient::from_responses(
        Some("m"),
        vec![LlmResponse::from_text("internal token 0123456789abcdef0123")],
    );
    let mut options = RecordOptions::default();
    // Internal tokens are often hex, and so are the fingerprints beside them.
    options.add_secret_pattern("[0-9a-f]{16,}");
    let recorder = RecordingClient::with_options(model, options).unwrap();
    recorder.complete(LlmRequest::new(vec![Message::user("hi")])).await.unwrap();
    recorder.save(&path).unwrap();
    let script = read_script(&path).unwrap();
    assert_eq!(
        script.calls[0].response.as_ref().unwrap().text(),
        "internal token <redacted:custom>"
    );
    assert_eq!(
        script.calls[0].request_sha256,
        Some(
            atif_replay::request_fingerprint(
                &LlmRequest::new(vec![Message::user("hi")]),
                &["[0-9a-f]{16,}".to_owned()]
            )
            .unwrap()
        )
    );
    assert!(!redact_file(&path, &["[0-9a-f]{16,}".to_owned()]).unwrap(), "nothing left to redact");
    read_script(&path).unwrap();
}

/// Every file of the shared corpus (real trajectories and coding-agent logs), or `None` after a
/// skip notice.
fn corpus_files() -> Option<Vec<std::path::PathBuf>> {
    let root = atif_test_support::corpus("")?;
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    Some(files)
}

#[test]
fn real_agent_logs_in_a_script_always_save_with_the_default_patterns() {
    let Some(files) = corpus_files() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut redacted_files = 0;
    for file in &files {
        let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        let mut script = atif_replay::Script::new(Some("m".to_owned()));
        script.calls.push(atif_replay::RecordedCall {
            request_sha256: Some("0".repeat(64)),
            request: None,
            response: Some(LlmResponse::from_text(text)),
            chunks: None,
            error: None,
        });
        // Whatever real logs hold, redaction leaves nothing the refusal check would find, so
        // saving never fails on real content.
        atif_replay::write_script(&path, &script, &[])
            .unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        let saved = read_script(&path).unwrap();
        if saved.calls[0].response.as_ref().unwrap().text().contains("<redacted:") {
            redacted_files += 1;
        }
        assert!(!redact_file(&path, &[]).unwrap(), "{}: redaction is idempotent", file.display());
    }
    eprintln!("{} corpus files saved, {redacted_files} with something redacted", files.len());
}

#[cfg(unix)]
#[test]
fn redacting_a_private_script_keeps_it_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let text = format!(
        r#"{{"format": "atif-replay-script", "version": 1, "calls": [{{"request_sha256": "{}", "error": "bad key {}"}}]}}"#,
        "a".repeat(64),
        PLANTED[0]
    );
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(redact_file(&path, &[]).unwrap());
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the rewritten file keeps its permissions");
    assert_eq!(
        read_script(&path).unwrap().calls[0].error.as_deref(),
        Some("bad key <redacted:openai-key>")
    );
}

#[path = "../../../atif-secrets/tests/it/samples.rs"]
mod samples;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_planted_secret_survives_capture() {
    let text = samples::planted_text();
    let reply_text = text.clone();
    let model: std::sync::Arc<dyn LlmClient> =
        std::sync::Arc::new(FakeClient::from_fn(Some("m"), move |call, _| match call {
            1 => Ok(LlmResponse::from_tool_calls(vec![ToolCall::new(
                "call_1",
                "shell",
                json!({"command": reply_text.clone(), "password": "plain-token-value-9"}),
            )])
            .with_reasoning(reply_text.clone())),
            _ => Ok(LlmResponse::from_text(reply_text.clone())),
        }));
    let options = atif_replay::CaptureOptions::new("agent", "1");
    let agent_text = text.clone();
    let captured = atif_replay::capture(model, &options, |handle| async move {
        handle.user_message(agent_text.clone());
        handle.client().complete(LlmRequest::new(vec![Message::user(agent_text.clone())])).await?;
        handle.tool_result("call_1", agent_text.clone())?;
        handle.client().complete(LlmRequest::new(vec![Message::user("go on")])).await?;
        // A crash puts its error text in the trajectory's `extra`.
        Err::<(), Error>(Error::provider(agent_text))
    })
    .await;
    assert!(captured.result.is_err());
    let trajectory = captured.trajectory.to_string();
    samples::assert_clean(&trajectory, "capture", false);
    assert!(!trajectory.contains("plain-token-value-9"), "{trajectory}");
    // Every place was reached: user message, reasoning, tool arguments, tool result, reply, extra.
    assert!(trajectory.matches("<redacted:jwt>").count() >= 6, "{trajectory}");
    assert!(captured.secrets.len() >= 6 * samples::SAMPLES.len(), "{}", captured.secrets);
    for survivor in samples::SURVIVORS {
        let escaped = serde_json::to_string(survivor).unwrap();
        assert!(trajectory.contains(&escaped[1..escaped.len() - 1]), "lost {survivor}");
    }

    let mut keep = atif_replay::CaptureOptions::new("agent", "1");
    keep.set_secret_scanner(None);
    let model: std::sync::Arc<dyn LlmClient> = std::sync::Arc::new(FakeClient::from_responses(
        Some("m"),
        vec![LlmResponse::from_text(PLANTED[0])],
    ));
    let kept = atif_replay::capture(model, &keep, |handle| async move {
        handle.client().complete(LlmRequest::new(vec![Message::user("hi")])).await
    })
    .await;
    assert!(kept.trajectory.to_string().contains(PLANTED[0]));
    assert!(kept.secrets.is_empty());
}

#[tokio::test]
async fn no_planted_sample_survives_a_saved_recording() {
    let text = samples::planted_text();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let reply = text.clone();
    let model = FakeClient::from_fn(Some("m"), move |_, _| {
        Ok(LlmResponse::from_tool_calls(vec![ToolCall::new(
            "c1",
            "shell",
            json!({"cmd": reply.clone()}),
        )])
        .with_reasoning(reply.clone()))
    });
    let recorder = RecordingClient::new(model);
    let request = LlmRequest::new(vec![
        Message::system(text.clone()),
        Message::user(text.clone()),
        Message::tool_result("c0", text.clone()),
    ]);
    recorder.complete(request).await.unwrap();
    recorder.save(&path).unwrap();
    let saved = std::fs::read_to_string(&path).unwrap();
    samples::assert_clean(&saved, "record", false);
    assert!(saved.matches("<redacted:jwt>").count() >= 5, "{saved}");
}
