//! Find credentials in text and JSON and replace each with a stable marker naming its kind,
//! before anything reaches a file somebody commits or shares.
//!
//! Goldens, pending files, replay scripts and imported or captured trajectories are made to be
//! committed, and agents handle credentials all the time: an agent that runs `env` or reads a
//! `.env` file puts a key in a tool result. Every layer of atif that writes such a file runs
//! the same [`Scanner`] over it.
//!
//! The default scanner knows the shapes in [`DEFAULT_PATTERNS`] (OpenAI, Anthropic, Google,
//! AWS, GitHub, GitLab, Slack and Stripe keys, JWTs, `Bearer` tokens, whole PEM private-key
//! blocks, the password part of URLs) and redacts the value after any `NAME=` or `NAME: ` whose
//! name says secret, password, token or api key ([`is_secret_name`]), up to the value's end
//! only. Users add their own patterns with [`Scanner::add_user_pattern`].
//!
//! The key design decision: a secret becomes `<redacted:KIND>` (see [`marker`]), the same text
//! on every run, so a rerun compares equal, and the marker matches no pattern, so redacting
//! is idempotent. The [`Redactions`] says how many secrets of each kind were replaced and where
//! (JSON Pointers), never what they were.
//!
//! The crate is pure: `regex` and `serde_json`, no I/O.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//!
//! # fn main() -> atif_secrets::Result<()> {
//! let mut scanner = atif_secrets::Scanner::new();
//! scanner.add_user_pattern(r"corp-[0-9]{6}")?;
//!
//! let mut step = json!({
//!     "message": "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuv next=word",
//!     "tool_calls": [{"arguments": {"password": "hunter22", "ticket": "corp-123456"}}]
//! });
//! let report = scanner.redact_value(&mut step);
//! assert_eq!(step, json!({
//!     "message": "OPENAI_API_KEY=<redacted:openai-key> next=word",
//!     "tool_calls": [{"arguments": {"password": "<redacted:password>", "ticket": "<redacted:custom>"}}]
//! }));
//! assert_eq!(report.counts().get("openai-key"), Some(&1));
//! assert_eq!(report.len(), 3);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod error;
mod patterns;
mod report;
mod scanner;

pub use error::{Error, Result};
pub use patterns::{DEFAULT_PATTERNS, is_secret_name};
pub use report::{Redaction, Redactions};
pub use scanner::{CUSTOM_KIND, MARKER_PREFIX, Redactor, Scanner, marker};
