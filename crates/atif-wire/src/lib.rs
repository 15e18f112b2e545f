//! The model providers' wire protocols, their traffic, and the ATIF trajectory it holds.
//!
//! Four protocols are read and written, each as a whole JSON reply and as a stream of
//! server-sent events: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Gemini
//! `generateContent`, named by one enum, [`Protocol`]. [`parse_request`], [`parse_response`]
//! and [`parse_stream`] read request bodies and replies into [`LlmRequest`] and
//! [`LlmResponse`], [`StreamAssembler`] does it event by event, and [`request_body`] writes a
//! request back.
//!
//! The traffic itself is kept as [`HttpExchange`]s (a request and its reply, a stream as its
//! [`SseEvent`]s, read by [`SseParser`]), and [`trajectory_from_traffic`] turns the exchanges
//! of a run into an ATIF trajectory with no help from the agent: *capture from traffic*.
//!
//! The key design decision: the mapping is written once, here, and shared by everything that
//! speaks to a provider or stands in for one: `atif-replay` (its HTTP clients, and the script
//! format that holds exchanges), `atif-proxy` (the record/replay server) and
//! `atif-fake-provider` (the test model server). This crate does no I/O and no HTTP, and needs
//! no async runtime: the bytes stay with the caller.
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
    Protocol, StreamAssembler, anthropic_response, gemini_model_from_path, openai_response,
    parse_request, parse_response, parse_stream, request_body,
};
pub use traffic::{REQUEST_PARAMS, trajectory_from_traffic};

/// Not public API: what `atif-replay` shares with this crate. It may change in any release.
#[doc(hidden)]
pub mod support;
