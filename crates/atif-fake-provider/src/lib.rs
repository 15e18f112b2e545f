//! A scripted fake model server speaking the OpenAI, Anthropic and Gemini wire protocols, for
//! end-to-end tests of agents, SDKs and the `atif` proxy without a real model. Test-only: not
//! published.
//!
//! Which function for which job:
//! - Serve: [`FakeProvider::start`] with a [`Config`] (`Config::default()` works) serves all
//!   four protocols, streamed and not, on a free loopback port until dropped;
//!   [`FakeProvider::url`] is the base URL to give the agent.
//! - See what the agent sent: [`FakeProvider::requests`] (or `GET /_fake/requests`).
//! - Script the replies: by default one deterministic tool loop (call a shell tool with
//!   [`Config::command`], then quote its result), described on [`Config`];
//!   [`Config::set_calls`] scripts the calls instead, [`Config::set_parallel_calls`] sends
//!   them all in one reply.
//! - Vary runs as a live model does: [`Config::set_sampling`] with a seeded [`Sampling`];
//!   [`Sampling::plan`] gives the same draws in-process, without a server.
//! - Fail: a [`Fault`] (an error status, a stream cut midway); [`unreachable_url`] is a
//!   provider that is down.
//!
//! The key design decision: ids, timestamps and token counts depend only on the request's
//! number of messages and the reply, so two runs of the same behaviour get byte-identical
//! replies. The binary `atif-fake-provider` serves the same for tests in other languages; it
//! prints `listening on http://127.0.0.1:PORT` as its first line (`--help` lists its options).
//!
//! # Example
//!
//! ```
//! use atif_fake_provider::{Config, FakeProvider};
//! use std::io::{Read, Write};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = FakeProvider::start(Config::default())?;
//! let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
//! let mut stream = std::net::TcpStream::connect(provider.addr())?;
//! write!(
//!     stream,
//!     "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
//!      content-length: {}\r\nconnection: close\r\n\r\n{body}",
//!     body.len()
//! )?;
//! let mut reply = String::new();
//! stream.read_to_string(&mut reply)?;
//! assert!(reply.starts_with("HTTP/1.1 200"));
//! assert!(reply.contains("Hello from the atif fake provider."));
//! assert_eq!(provider.request_count(), 1);
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

mod config;
mod error;
mod example;
mod sampling;
mod server;
mod turn;
mod wire;

pub use config::{Config, DEFAULT_COMMAND, DEFAULT_TEXT, Fault, ScriptedCall};
pub use error::{Error, Result};
pub use sampling::{Plan, Sampling};
pub use server::{FakeProvider, RecordedRequest, unreachable_url};
pub use turn::SHELL_TOOLS;
