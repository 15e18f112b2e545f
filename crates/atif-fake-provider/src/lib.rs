//! A scripted fake model server speaking the OpenAI, Anthropic and Gemini wire protocols, for
//! end-to-end tests of agents, SDKs and the `atif` proxy without a real model.
//!
//! It answers:
//!
//! - OpenAI Chat Completions, `POST /v1/chat/completions`;
//! - OpenAI Responses, `POST /v1/responses`;
//! - Anthropic Messages, `POST /v1/messages` (query strings such as `?beta=true` included) and
//!   `POST /v1/messages/count_tokens`;
//! - Gemini, `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` (with
//!   `?alt=sse`, or a JSON array without it) and `:countTokens`;
//! - `GET /v1/models` (in Anthropic's shape when the request has an `anthropic-version` header,
//!   in Gemini's under `/v1beta`);
//! - `GET` or `HEAD /api/hello`, Claude Code's connectivity probe: 200 without a body;
//! - `GET /_fake/requests`: every request received so far, as JSON (`count`, `requests`).
//!
//! Each model request is answered streamed (SSE, framed like the real provider: OpenAI Chat's
//! `data:` lines ending with `data: [DONE]`, the named events of Responses and Anthropic,
//! Gemini's CRLF-separated `data:` chunks) or not, as the request asks, with usage figures.
//!
//! The replies follow one deterministic tool loop, so that an agent completes one tool-using
//! turn:
//!
//! 0. if scripted calls are set ([`Config::set_calls`], `--call NAME=JSON`) and the
//!    conversation holds N tool results, the reply is scripted call N when its tool is
//!    offered;
//! 1. if the request's last message is a tool result, the reply is the final text
//!    `The command printed: …`, quoting the result (see [`Config::quote_pattern`]);
//! 2. else, when the request asks for JSON with a schema, the reply is a small JSON value
//!    fitting it;
//! 3. else, if a shell-like tool is offered (one of [`SHELL_TOOLS`], compared without case:
//!    `bash`, `Bash`, `exec_command`, `run_shell_command`, `shell`, …), the reply calls it with
//!    [`Config::command`], filling the tool's other required arguments from its JSON Schema;
//! 4. else, if any tool is offered, the reply calls the first one, with the smallest arguments
//!    that fit its JSON Schema: its required properties only, each its `const`, its `default`,
//!    its first `enum` value, or a plain value of its type within its bounds (`"fake"`, `0`,
//!    `false`, `[]`), local `$ref`s and `anyOf`/`oneOf`/`allOf` followed;
//! 5. else the reply is plain text, [`Config::text`].
//!
//! Ids, timestamps and token counts depend only on the request's number of messages and the
//! reply, so two runs of the same behaviour get byte-identical replies.
//!
//! In its seeded sampling mode ([`Config::set_sampling`], `--sample-*` flags) it varies
//! conversations as a live model does: each calls two tools, and per conversation, drawn from
//! a seed, it adds a third call, swaps the two, scales token counts within a band, or fails
//! its second request. [`Sampling::plan`] gives the draws without a server, so statistical
//! tests can use the same model in-process.
//!
//! A [`Fault`] simulates a failing provider: an error status on every request, or a stream cut
//! midway. [`unreachable_url`] gives a provider that is down.
//!
//! The binary `atif-fake-provider` serves the same for tests in other languages; it prints
//! `listening on http://127.0.0.1:PORT` as its first line (`--help` lists its options).
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
