//! A local server that speaks the model providers' HTTP protocols, to record any agent's model
//! traffic once and replay it strictly offline. Every agent SDK and CLI already takes a base
//! URL: point it at this server and the agent needs no instrumentation at all.
//!
//! Which function for which job:
//! - Record: [`start`] with [`Options::record`] forwards each request to the provider (or
//!   [`Options::set_upstream`]), streams its reply back as it arrives, and keeps the exchange;
//!   credentials stay in the agent's headers and are never saved, key-shaped strings are
//!   redacted before anything reaches disk.
//! - Replay: [`start`] with [`Options::replay`] answers each request from the script with the
//!   same status, content type and body (events in the same order and framing) and opens no
//!   network connection.
//! - End a run: [`Proxy::url`] is the base URL to give the agent; [`Proxy::finish`] stops the
//!   server, saves a recording and returns the [`Verdict`], or an error naming everything that
//!   was not exact ([`Proxy::finish_failed`] when the agent itself failed). A recording that is
//!   not exact is saved at [`failed_path`], never over the script.
//! - MCP servers: [`relay_mcp`] stands between the agent and a stdio MCP server (or
//!   [`Options::add_mcp_http`] for one over HTTP), recording or replaying its messages the same
//!   way.
//!
//! It speaks OpenAI Chat Completions and Responses, Anthropic Messages and Gemini, streamed and
//! not (`docs/replay.md` lists the endpoints).
//!
//! The key design decision: a replay matches by content, not by position. Each request is
//! normalised (dates, ids, the working and home directories and the user's masks) and gets the
//! first unused exchange of its endpoint whose normalised request is equal, so a tool loop is
//! served in recorded order and concurrent subagents find their own replies. Every failure
//! reaches the agent as a non-retryable 4xx in its provider's own error shape, so its SDK gives
//! up at once.
//!
//! # Example
//!
//! Replay a one-exchange script to a client, and check the run was exact:
//!
//! ```
//! use atif_proxy::{Options, start};
//! use atif_replay::{HttpExchange, Script, write_script};
//! use serde_json::json;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("hello.script.json");
//! let request = json!({"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]});
//! let mut script = Script::new(None);
//! let reply = json!({"choices": [{"message": {"role": "assistant", "content": "hello"}}]});
//! script.exchanges.push(
//!     HttpExchange::new("POST", "/v1/chat/completions", request.clone(), 200).with_body(reply),
//! );
//! write_script(&path, &script, &[])?;
//!
//! let proxy = start(&Options::replay(&path)).await?;
//! let reply = reqwest::Client::new()
//!     .post(format!("{}/v1/chat/completions", proxy.url()))
//!     .header("content-type", "application/json")
//!     .body(request.to_string())
//!     .send()
//!     .await?;
//! assert_eq!(reply.status(), 200);
//! assert!(reply.text().await?.contains("hello"));
//! let verdict = proxy.finish().await?;
//! assert_eq!(verdict.requests_served, 1);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod access;
mod clean;
mod error;
mod journal;
mod json_reader;
mod limits;
mod mcp;
mod mcp_http;
mod mcp_hybrid;
mod mcp_state;
mod mcp_tape;
mod normalize;
mod options;
mod protocol;
mod record;
mod reply;
mod serve;
mod server;
mod tape;
mod tool_drift;
mod upload;
mod verdict;

/// What a replay does with a request that differs from the recorded one: the one policy of
/// `atif-replay`, used by the server too.
pub use atif_replay::DriftPolicy;
pub use error::{Error, Result};
pub use limits::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_UPSTREAM_FIRST_BYTE_TIMEOUT,
    DEFAULT_UPSTREAM_IDLE_TIMEOUT,
};
pub use mcp::{McpOptions, McpOutcome, McpTarget, Stop, relay_mcp};
pub use options::Options;
pub use server::{Proxy, failed_path, start};
pub use verdict::{MAX_KEPT, Operation, UnusedExchange, Verdict};
