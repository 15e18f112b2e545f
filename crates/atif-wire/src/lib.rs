//! The model providers' wire protocols, their traffic, and the ATIF trajectory it holds.
//!
//! Four protocols, each as a whole JSON reply and as a stream of server-sent events, named by
//! one enum, [`Protocol`]: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and
//! Gemini `generateContent` ([`Protocol::from_path`] tells them from a request path).
//!
//! Which function for which job:
//! - Read a request body: [`parse_request`] gives an [`LlmRequest`]; [`request_body`] writes
//!   one back in a protocol's shape.
//! - Read a reply: [`parse_response`] for a whole JSON reply, [`parse_stream`] for a stream's
//!   events, [`StreamAssembler`] for events as they arrive; each gives an [`LlmResponse`].
//! - Keep traffic: an [`HttpExchange`] is a request and its reply, a stream as its
//!   [`SseEvent`]s ([`SseParser`] reads them from bytes as they arrive, [`parse_sse`] from a
//!   whole body).
//! - Capture from traffic: [`trajectory_from_traffic`] turns the exchanges of a run into an
//!   ATIF trajectory with no help from the agent, under [`CaptureOptions`].
//!
//! The key design decision: the mapping is written once, here, and shared by everything that
//! speaks to a provider or stands in for one (`atif-replay`, `atif-proxy`, the fake provider).
//! This crate does no I/O and no HTTP and needs no async runtime: the bytes stay with the
//! caller. `docs/replay.md` says how each protocol's fields map.
//!
//! # Example
//!
//! Read an agent's recorded exchange with an OpenAI-compatible provider as a trajectory:
//!
//! ```
//! use atif_wire::{CaptureOptions, HttpExchange, Protocol, parse_response, trajectory_from_traffic};
//! use serde_json::json;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let request = json!({"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]});
//! let reply = json!({
//!     "model": "gpt-test",
//!     "choices": [{"message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
//!     "usage": {"prompt_tokens": 3, "completion_tokens": 1},
//! });
//! assert_eq!(Protocol::from_path("/v1/chat/completions"), Some(Protocol::OpenAiChat));
//! assert_eq!(parse_response(Protocol::OpenAiChat, &reply)?.text(), "hello");
//!
//! let exchange = HttpExchange::new("POST", "/v1/chat/completions", request, 200).with_body(reply);
//! let trajectory = trajectory_from_traffic(&[exchange], &CaptureOptions::new("my-agent", "1.0"))?;
//! assert_eq!(trajectory.steps.len(), 2);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod error;
mod exchange;
mod message;
mod options;
mod protocol;
mod steps;
mod traffic;

pub use error::{Error, Result};
pub use exchange::{HttpExchange, SseEvent, SseParser, parse_sse};
pub use message::{
    Chunk, Content, FinishReason, LlmRequest, LlmResponse, Message, Role, ToolCall, ToolDefinition,
    Usage,
};
pub use options::CaptureOptions;
pub use protocol::{
    Protocol, StreamAssembler, parse_request, parse_response, parse_stream, request_body,
};
pub use traffic::{REQUEST_PARAMS, trajectory_from_traffic};

/// Not public API: what `atif-replay` and the CLI share with this crate. It may change in any
/// release.
#[doc(hidden)]
pub mod support;
