//! The HTTP adapters (feature `http`) against the fake provider on 127.0.0.1: each protocol,
//! streamed and not, recorded with `RecordingClient` and replayed offline.

use std::sync::Arc;

use atif_fake_provider::{Config, FakeProvider, Fault};
use atif_replay::{
    CaptureOptions, Error, ErrorKind, HttpClient, LlmClient, LlmRequest, LlmResponse, Message,
    RecordingClient, ReplayClient, ToolDefinition, capture,
};
use serde_json::json;

use crate::chain;

#[derive(Debug, Clone, Copy)]
enum Adapter {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

const ADAPTERS: [Adapter; 4] =
    [Adapter::Chat, Adapter::Responses, Adapter::Anthropic, Adapter::Gemini];

fn client(adapter: Adapter, provider: &FakeProvider) -> HttpClient {
    let base = provider.url();
    let client = match adapter {
        Adapter::Chat => HttpClient::openai_chat(&format!("{base}/v1"), "sk-test-key"),
        Adapter::Responses => HttpClient::openai_responses(&format!("{base}/v1"), "sk-test-key"),
        Adapter::Anthropic => HttpClient::anthropic(base, "sk-ant-test-key"),
        Adapter::Gemini => HttpClient::gemini(base, "AIzaSyTestKeyForTheFakeProvider0000000"),
    };
    client.unwrap().with_model("fake-model-1")
}

fn shell_tool() -> ToolDefinition {
    ToolDefinition::new(
        "shell",
        "Runs a shell command.",
        json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
    )
}

async fn call(client: &dyn LlmClient, request: LlmRequest, stream: bool) -> LlmResponse {
    if stream {
        client.complete_stream(request).await.unwrap().collect().await.unwrap()
    } else {
        client.complete(request).await.unwrap()
    }
}

/// One tool-using turn: the model calls `shell`, the agent answers `hello from the tool`, the
/// model quotes it. Returns both replies.
async fn tool_turn(client: &dyn LlmClient, stream: bool) -> (LlmResponse, LlmResponse) {
    let mut messages = vec![Message::system("You run commands."), Message::user("Say hello.")];
    let request = LlmRequest::new(messages.clone()).with_tools(vec![shell_tool()]);
    let first = call(client, request, stream).await;
    assert_eq!(first.tool_calls.len(), 1, "{first:?}");
    messages.push(Message::assistant(&first));
    messages.push(Message::tool_result(first.tool_calls[0].id.clone(), "hello from the tool"));
    let request = LlmRequest::new(messages).with_tools(vec![shell_tool()]);
    let second = call(client, request, stream).await;
    (first, second)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_adapter_records_a_tool_turn_from_a_live_server_and_replays_it_offline() {
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for adapter in ADAPTERS {
        for stream in [false, true] {
            let label = format!("{adapter:?}, stream {stream}");
            let recorder = Arc::new(RecordingClient::new(client(adapter, &provider)));
            let (first, second) = tool_turn(recorder.as_ref(), stream).await;
            assert_eq!(first.tool_calls[0].name, "shell", "{label}");
            assert!(first.tool_calls[0].arguments["command"].is_string(), "{label}: {first:?}");
            assert!(
                second.text().contains("hello from the tool"),
                "{label}: the reply quotes the tool result: {second:?}"
            );
            assert!(second.usage.prompt_tokens > 0, "{label}: usage arrives: {second:?}");
            assert_eq!(second.model.as_deref(), Some("fake-model-1"), "{label}: the model");
            let path = dir.path().join(format!("{adapter:?}-{stream}.script.json"));
            recorder.save(&path).unwrap();

            let replay = ReplayClient::from_file(&path).unwrap();
            let (replayed_first, replayed_second) = tool_turn(&replay, stream).await;
            assert_eq!(replayed_first.tool_calls, first.tool_calls, "{label}");
            assert_eq!(replayed_second.text(), second.text(), "{label}");
            assert_eq!(replayed_second.model, second.model, "{label}");
            replay.finish().unwrap();
        }
    }
    for adapter in ADAPTERS {
        let saved =
            std::fs::read_to_string(dir.path().join(format!("{adapter:?}-true.script.json")))
                .unwrap();
        for key in ["sk-test-key", "sk-ant-test-key", "AIzaSyTestKey"] {
            assert!(!saved.contains(key), "{adapter:?}: the API key is never in a script");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adapter_sends_the_protocol_shape_with_its_credentials() {
    let provider = FakeProvider::start(Config::default()).unwrap();
    let anthropic = client(Adapter::Anthropic, &provider);
    anthropic.complete(LlmRequest::new(vec![Message::user("hi")])).await.unwrap();
    let chat = client(Adapter::Chat, &provider);
    chat.complete_stream(LlmRequest::new(vec![Message::user("hi")])).await.unwrap();
    let requests = provider.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test-key"));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(requests[0].body["model"], "fake-model-1");
    assert_eq!(requests[0].body["max_tokens"], 4096);
    assert_eq!(requests[1].path, "/v1/chat/completions");
    assert_eq!(requests[1].header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(requests[1].body["stream"], true);
    assert!(!format!("{chat:?}").contains("sk-test-key"), "Debug never shows the key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_through_each_adapter_records_prompts_calls_and_usage() {
    let provider = FakeProvider::start(Config::default()).unwrap();
    for adapter in ADAPTERS {
        let live: Arc<dyn LlmClient> = Arc::new(client(adapter, &provider));
        let options = CaptureOptions::new("http-agent", "1.0.0");
        let captured = capture(live, &options, |handle| async move {
            let (first, _) = tool_turn(handle.client().as_ref(), true).await;
            handle.tool_result(&first.tool_calls[0].id, "hello from the tool")?;
            Ok::<_, Error>(())
        })
        .await;
        captured.result.unwrap();
        let steps = captured.trajectory["steps"].as_array().unwrap();
        let sources: Vec<&str> =
            steps.iter().map(|step| step["source"].as_str().unwrap()).collect();
        assert_eq!(sources, ["system", "user", "agent", "agent"], "{adapter:?}");
        let call_id = &steps[2]["tool_calls"][0]["tool_call_id"];
        let result = &steps[2]["observation"]["results"][0];
        assert_eq!(&result["source_call_id"], call_id, "{adapter:?}");
        assert_eq!(result["content"], "hello from the tool", "{adapter:?}");
        assert!(steps[2]["metrics"]["prompt_tokens"].as_i64().unwrap() > 0, "{adapter:?}");
        let quoted = steps[3]["message"].as_str().unwrap();
        assert!(quoted.contains("hello from the tool"), "{adapter:?}: {quoted}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_errors_and_unreachable_servers_are_clear_errors() {
    let mut config = Config::default();
    config.set_fault(Some(Fault::Status(429)));
    let provider = FakeProvider::start(config).unwrap();
    for (adapter, kind) in [
        (Adapter::Chat, "rate_limit_exceeded"),
        (Adapter::Responses, "rate_limit_exceeded"),
        (Adapter::Anthropic, "rate_limit_error"),
        (Adapter::Gemini, "RESOURCE_EXHAUSTED"),
    ] {
        let err = client(adapter, &provider)
            .complete(LlmRequest::new(vec![Message::user("hi")]))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Provider, "{adapter:?}");
        let message = chain(&err);
        assert!(message.starts_with("model provider error: http://"), "{adapter:?}: {message}");
        assert!(
            message.contains(&format!("answered HTTP 429 Too Many Requests: {kind}: simulated")),
            "{adapter:?}: {message}"
        );
    }

    let url = atif_fake_provider::unreachable_url().unwrap();
    let err = HttpClient::anthropic(&url, "k")
        .unwrap()
        .complete(LlmRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Http { .. }), "{err:?}");
    assert!(chain(&err).starts_with(&format!("HTTP request to {url}/v1/messages failed: ")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_midway_is_an_error_not_a_short_reply() {
    let mut config = Config::default();
    config.set_fault(Some(Fault::CutStream { after_events: 2 }));
    let provider = FakeProvider::start(config).unwrap();
    for adapter in ADAPTERS {
        let stream = client(adapter, &provider)
            .complete_stream(LlmRequest::new(vec![Message::user("hi")]))
            .await
            .unwrap();
        let err = stream.collect().await.unwrap_err();
        let message = chain(&err);
        assert!(
            message.contains("the stream ended before its final event")
                || message.starts_with("HTTP request to"),
            "{adapter:?}: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gemini_adapter_names_the_model_in_the_path_and_sends_its_key_as_a_header() {
    let provider = FakeProvider::start(Config::default()).unwrap();
    let gemini = client(Adapter::Gemini, &provider);
    let whole = gemini.complete(LlmRequest::new(vec![Message::user("hi")])).await.unwrap();
    assert_eq!(whole.model.as_deref(), Some("fake-model-1"), "modelVersion names the model");
    let request = LlmRequest::new(vec![Message::system("Be brief."), Message::user("hi")])
        .with_model("models/gemini-test-2")
        .with_param("generationConfig", json!({"temperature": 0}));
    let reply = gemini.complete_stream(request).await.unwrap().collect().await.unwrap();
    assert_eq!(reply.text(), "Hello from the atif fake provider.");
    assert_eq!(reply.model.as_deref(), Some("gemini-test-2"), "a stream names its model too");
    let requests = provider.requests();
    assert_eq!(requests[0].path, "/v1beta/models/fake-model-1:generateContent");
    assert_eq!(
        requests[0].header("x-goog-api-key"),
        Some("AIzaSyTestKeyForTheFakeProvider0000000")
    );
    assert_eq!(requests[0].body["contents"][0]["parts"][0]["text"], "hi");
    assert!(requests[0].body.get("model").is_none(), "Gemini bodies carry no model");
    assert_eq!(requests[1].path, "/v1beta/models/gemini-test-2:streamGenerateContent?alt=sse");
    assert_eq!(requests[1].body["systemInstruction"]["parts"][0]["text"], "Be brief.");
    assert_eq!(requests[1].body["generationConfig"]["temperature"], 0);
    assert!(requests[1].body.get("stream").is_none(), "streaming is in the path, not the body");
    assert!(!format!("{gemini:?}").contains("AIzaSy"), "Debug never shows the key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_request_without_a_model_is_refused_before_anything_is_sent() {
    let provider = FakeProvider::start(Config::default()).unwrap();
    let gemini = HttpClient::gemini(provider.url(), "k").unwrap();
    let err = gemini.complete(LlmRequest::new(vec![Message::user("hi")])).await.unwrap_err();
    assert!(matches!(err, Error::MissingModel { .. }), "{err:?}");
    assert!(err.to_string().contains("set LlmRequest::model or HttpClient::with_model"), "{err}");
    assert_eq!(provider.request_count(), 0, "nothing reached the provider");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_comments_and_retry_fields_in_a_stream_change_nothing() {
    // Real providers interleave `: ping` comments and `retry:` fields with their events.
    let mut config = Config::default();
    config.set_keepalives(true);
    let with_pings = FakeProvider::start(config).unwrap();
    let plain = FakeProvider::start(Config::default()).unwrap();
    for adapter in ADAPTERS {
        let (first, second) = tool_turn(&client(adapter, &with_pings), true).await;
        let (plain_first, plain_second) = tool_turn(&client(adapter, &plain), true).await;
        assert_eq!(first.tool_calls, plain_first.tool_calls, "{adapter:?}");
        assert_eq!(second.text(), plain_second.text(), "{adapter:?}");
        assert_eq!(second.usage, plain_second.usage, "{adapter:?}");
    }
}
