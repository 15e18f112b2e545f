//! Integration tests of atif-replay: real tokio runtimes, real files in temp dirs, a fake model.
#![allow(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]
#![allow(clippy::print_stderr, reason = "corpus tests print a skip notice and what they measured")]

mod capture;
mod error;
mod fake_client;
#[cfg(feature = "http")]
mod http;
mod record;
mod replay;
mod script;
mod script_client;
mod secrets;

use std::sync::Arc;

use atif_replay::{
    FakeClient, LlmClient, LlmRequest, LlmResponse, Message, RecordingClient, ToolCall, Usage,
};
use serde_json::json;

pub(crate) use atif_schema::error_chain as chain;

/// A request whose only message is a user message saying `text`.
pub(crate) fn ask(text: &str) -> LlmRequest {
    LlmRequest::new(vec![Message::user(text)])
}

/// A fake model that answers `reply to <last message>` with some usage.
pub(crate) fn echo_model() -> FakeClient {
    FakeClient::from_fn(Some("echo-1"), |call, request| {
        let last =
            request.last_message().map(|message| message.content.clone()).unwrap_or_default();
        Ok(LlmResponse::from_text(format!("reply to {last}")).with_usage(Usage::new(
            10 * call as u64,
            2,
            0,
        )))
    })
}

/// A reply calling tool `name` with id `id`.
pub(crate) fn calls(id: &str, name: &str) -> LlmResponse {
    LlmResponse::from_tool_calls(vec![ToolCall::new(id, name, json!({"x": 1}))])
        .with_usage(Usage::new(5, 1, 0))
}

/// Records `requests` against `model` (one after the other) and saves the script at `path`.
pub(crate) async fn record_to(
    path: &std::path::Path,
    model: impl LlmClient + 'static,
    requests: &[LlmRequest],
) -> Arc<RecordingClient<Box<dyn LlmClient>>> {
    let recorder = Arc::new(RecordingClient::new(Box::new(model) as Box<dyn LlmClient>));
    for request in requests {
        recorder.complete(request.clone()).await.unwrap();
    }
    recorder.save(path).unwrap();
    recorder
}
