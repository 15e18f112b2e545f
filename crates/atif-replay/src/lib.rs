//! Record an LLM's replies once, replay them strictly offline, and capture agent runs as ATIF.
//!
//! A golden trajectory is only reproducible if the model's replies are. This crate puts a seam
//! between an agent and its model, the [`LlmClient`] trait, and offers five things behind it:
//!
//! - [`RecordingClient`] wraps a real client and saves what it replied as a **script**
//!   (a versioned JSON file, secrets redacted, written atomically; see `docs/replay.md`);
//! - [`ReplayClient`] serves a script offline and is strict both ways: one call too many is
//!   [`Error::ScriptExhausted`], replies never requested make [`ReplayClient::finish`] fail, and
//!   a request that differs from its recording is caught by its SHA-256 fingerprint
//!   ([`DriftPolicy`]);
//! - [`ScriptClient`] is what a test uses: it replays `tests/scripts/NAME.json`, or records it
//!   through the live client the test supplies, as the [`RecordMode`] says (`ATIF_RECORD`:
//!   `none`, `once`, `new`, `all`; never recording on CI), and every replay failure ends with the
//!   command that re-records;
//! - [`FakeClient`] is a test double answering from a list or a closure, remembering every
//!   request it [`seen`](FakeClient::seen);
//! - [`capture`] runs an agent future and returns its run as an ATIF trajectory, even when the
//!   agent fails or panics.
//!
//! The key design decision: the agent loop, its tools and its context assembly run for real in
//! a replay; only the model is a tape. So a replay exercises everything but the model, and any
//! change in what the agent asks the model shows up as a failure naming the call.
//!
//! The providers' wire protocols (OpenAI Chat Completions and Responses, Anthropic Messages,
//! Gemini) are mapped once, in `atif-wire`, whose request and response types ([`LlmRequest`],
//! [`LlmResponse`] and their parts) and recorded traffic ([`HttpExchange`], [`SseEvent`]) this
//! crate's API speaks and re-exports. Only with the cargo feature `http` does this crate do
//! HTTP: `HttpClient` is an [`LlmClient`] for each of the four protocols, through that mapping.
//!
//! Its words (script, fake, call, drift, capture) are the workspace's, defined in the glossary
//! of `docs/architecture.md`.
//!
//! Script reading, writing and redaction ([`read_script`], [`write_script`], [`redact_file`])
//! are plain functions that need no async runtime.
//!
//! # Example
//!
//! Record a fake model, save the script, replay it, and check nothing was left unused:
//!
//! ```
//! use std::sync::Arc;
//!
//! use atif_replay::{LlmClient, LlmRequest, LlmResponse, Message, RecordingClient, ReplayClient, FakeClient};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("hello.script.json");
//!
//! let model = FakeClient::from_responses(Some("gpt-test"), vec![LlmResponse::from_text("hello")]);
//! let recorder = RecordingClient::new(model);
//! let request = LlmRequest::new(vec![Message::user("say hello")]);
//! runtime.block_on(recorder.complete(request.clone()))?;
//! recorder.save(&path)?;
//!
//! let replay = Arc::new(ReplayClient::from_file(&path)?);
//! let reply = runtime.block_on(replay.complete(request))?;
//! assert_eq!(reply.text(), "hello");
//! assert_eq!(replay.model(), Some("gpt-test"));
//! replay.finish()?;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod capture;
mod client;
mod error;
mod fake_client;
#[cfg(feature = "http")]
mod http;
mod mcp;
mod record;
mod replay;
mod script;
mod script_client;
mod secrets;

/// The model-call types of `atif-wire` that this crate's API speaks (the [`LlmClient`] seam,
/// scripts, capture), so that an agent needs no second import for them.
pub use atif_wire::{
    CaptureOptions, Chunk, Content, FinishReason, HttpExchange, LlmRequest, LlmResponse, Message,
    Role, SseEvent, ToolCall, ToolDefinition, Usage,
};
pub use capture::{CaptureHandle, Captured, capture};
pub use client::{ChunkStream, LlmClient};
pub use error::{Error, ErrorKind, LlmError, Result};
pub use fake_client::FakeClient;
#[cfg(feature = "http")]
pub use http::{ANTHROPIC_VERSION, HttpClient};
pub use mcp::{McpHttp, McpMessage, McpSide, McpVia};
pub use record::{RecordOptions, RecordingClient};
pub use replay::{Drift, DriftPolicy, ReplayClient, ReplayOptions};
pub use script::{
    OLDEST_SCRIPT_VERSION, RecordedCall, Recording, SCRIPT_FORMAT, SCRIPT_VERSION, Script,
    parse_script, read_script, redact_file, redact_script, request_fingerprint, write_script,
};
pub use script_client::{RECORD_ENV, RecordMode, ScriptClient, ScriptOptions};

/// What other crates of this workspace share with this one (the record/replay server): not
/// public API, and free to change in any release. [`read_script`], [`write_script`] and
/// [`redact_file`] are the ways to read, write and redact a script; the server also reads one
/// under its own size limit, writes a large recording without a second copy of it, and redacts
/// the bodies of the traffic it logs.
#[doc(hidden)]
pub mod support {
    pub use crate::script::{read_script_with, redact_json, write_script_owned};
}
