//! `RecordingClient`: forwards, records and saves scripts atomically.

use std::sync::Arc;

use async_trait::async_trait;
use atif_replay::{
    Chunk, ChunkStream, Error, FakeClient, FinishReason, LlmClient, LlmError, LlmRequest,
    LlmResponse, RecordOptions, RecordingClient, ReplayClient, ToolCall, Usage, read_script,
};
use serde_json::json;

use crate::{ask, echo_model, record_to};

/// A provider that streams its reply in small pieces.
#[derive(Debug)]
struct Streamer;

fn streamed_chunks() -> Vec<Chunk> {
    vec![
        Chunk::Reasoning { text: "let me ".to_owned() },
        Chunk::Reasoning { text: "think".to_owned() },
        Chunk::Text { text: "Hel".to_owned() },
        Chunk::Text { text: "lo".to_owned() },
        Chunk::ToolCall { call: ToolCall::new("call_9", "lookup", json!({"q": "x"})) },
        Chunk::Finish {
            finish_reason: FinishReason::ToolCalls,
            usage: Usage::new(7, 3, 1),
            model: None,
        },
    ]
}

#[async_trait]
impl LlmClient for Streamer {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError> {
        self.complete_stream(request).await?.collect().await
    }

    fn model(&self) -> Option<&str> {
        Some("streamer-2")
    }

    async fn complete_stream(&self, _request: LlmRequest) -> Result<ChunkStream, LlmError> {
        let (sender, stream) = ChunkStream::channel(1);
        tokio::spawn(async move {
            for chunk in streamed_chunks() {
                tokio::task::yield_now().await;
                if sender.send(Ok(chunk)).await.is_err() {
                    return;
                }
            }
        });
        Ok(stream)
    }
}

#[tokio::test]
async fn recording_forwards_replies_and_saves_the_inner_model_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let recorder = record_to(&path, echo_model(), &[ask("a"), ask("b")]).await;
    assert_eq!(recorder.len(), 2);
    let script = read_script(&path).unwrap();
    assert_eq!(script.model.as_deref(), Some("echo-1"));
    // Read, it is the newest version; on disk, the oldest that holds it.
    assert_eq!(script.version, atif_replay::SCRIPT_VERSION);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\n  \"version\": 2,\n"), "{text}");
    let texts: Vec<String> =
        script.calls.iter().map(|call| call.response.as_ref().unwrap().text()).collect();
    assert_eq!(texts, ["reply to a", "reply to b"]);
    assert_eq!(script.calls[0].request.as_ref(), Some(&ask("a")), "full requests kept by default");
    assert_eq!(script.calls[0].request_sha256.as_ref().unwrap().len(), 64);
    let names: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["s.json"], "no temporary file is left behind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_stream_replays_as_the_same_chunks_in_the_same_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stream.json");
    let recorder = RecordingClient::new(Streamer);
    let chunks = recorder.complete_stream(ask("go")).await.unwrap().collect_chunks().await.unwrap();
    assert_eq!(chunks, streamed_chunks());
    recorder.save(&path).unwrap();

    let replay = ReplayClient::from_file(&path).unwrap();
    assert_eq!(replay.model(), Some("streamer-2"));
    let replayed = replay.complete_stream(ask("go")).await.unwrap().collect_chunks().await.unwrap();
    assert_eq!(replayed, streamed_chunks());
    replay.finish().unwrap();

    let script = read_script(&path).unwrap();
    let response = script.calls[0].response.as_ref().unwrap();
    assert_eq!(response.text(), "Hello", "the assembled reply is stored beside the chunks");
    assert_eq!(response.reasoning.as_deref(), Some("let me think"));
}

#[tokio::test]
async fn a_stream_not_read_to_its_end_cannot_be_saved() {
    #[derive(Debug)]
    struct Hanging(std::sync::Mutex<Option<tokio::sync::mpsc::Sender<atif_replay::Result<Chunk>>>>);
    #[async_trait]
    impl LlmClient for Hanging {
        async fn complete(&self, _request: LlmRequest) -> Result<LlmResponse, LlmError> {
            Ok(LlmResponse::default())
        }
        fn model(&self) -> Option<&str> {
            None
        }
        async fn complete_stream(&self, _request: LlmRequest) -> Result<ChunkStream, LlmError> {
            let (sender, stream) = ChunkStream::channel(4);
            sender.send(Ok(Chunk::Text { text: "partial".to_owned() })).await.unwrap();
            // Keep the sender so the stream never ends.
            *self.0.lock().unwrap() = Some(sender);
            Ok(stream)
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let recorder = RecordingClient::new(Hanging(std::sync::Mutex::new(None)));
    let mut stream = recorder.complete_stream(ask("go")).await.unwrap();
    assert!(stream.next().await.is_some());
    let err = recorder.save(&path).unwrap_err();
    assert!(matches!(err, Error::CallInProgress { call: 1 }), "{err:?}");
    assert!(!path.exists(), "nothing is written");
}

#[tokio::test]
async fn a_failed_call_is_recorded_and_replays_as_the_same_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let model = FakeClient::from_fn(Some("m"), |call, _| match call {
        1 => Err(Error::provider("rate limited")),
        _ => Ok(LlmResponse::from_text("ok")),
    });
    let recorder = RecordingClient::new(model);
    assert!(recorder.complete(ask("a")).await.is_err());
    recorder.complete(ask("a")).await.unwrap();
    recorder.save(&path).unwrap();

    let replay = ReplayClient::from_file(&path).unwrap();
    let err = replay.complete(ask("a")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "recorded call #1 failed when it was recorded: model provider error: rate limited"
    );
    assert_eq!(replay.complete(ask("a")).await.unwrap().text(), "ok");
    replay.finish().unwrap();
}

#[tokio::test]
async fn requests_can_be_left_out_of_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut options = RecordOptions::default();
    options.set_store_requests(false);
    let model = FakeClient::from_responses(None, vec![LlmResponse::from_text("ok")]);
    let recorder = RecordingClient::with_options(model, options).unwrap();
    recorder.complete(ask("private prompt")).await.unwrap();
    recorder.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("private prompt") && !text.contains("\"request\""), "{text}");
    assert!(text.contains("request_sha256"), "{text}");
}

#[tokio::test]
async fn recording_works_through_a_shared_dyn_client() {
    let inner: Arc<dyn LlmClient> = Arc::new(echo_model());
    let recorder: Arc<dyn LlmClient> = Arc::new(RecordingClient::new(inner));
    assert_eq!(recorder.complete(ask("x")).await.unwrap().text(), "reply to x");
    assert_eq!(recorder.model(), Some("echo-1"));
}
