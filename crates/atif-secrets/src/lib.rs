//! Find credentials in text and JSON and replace each with a stable marker naming its kind,
//! before anything reaches a file somebody commits or shares (goldens, pending files, replay
//! scripts, imported or captured trajectories). Every layer of atif that writes such a file
//! runs the same [`Scanner`] over it.
//!
//! Which function for which job:
//! - Redact a JSON document in place: [`Scanner::redact_value`], which returns the
//!   [`Redactions`] (how many secrets of each kind, at which JSON Pointers, never what they
//!   were). Several values or parts of one document: [`Scanner::redactor`].
//! - Redact text: [`Scanner::redact_text`] (`None` when there is nothing to replace).
//! - Only look: [`Scanner::scan_value`] reports without changing anything, and
//!   [`Scanner::may_hold_secret`] is the cheap exact `false` that lets a caller skip a walk.
//! - Add a user's own shapes: [`Scanner::add_user_pattern`] (or [`Scanner::add_pattern`] with
//!   a kind).
//!
//! [`Scanner::new`] knows the shapes in [`DEFAULT_PATTERNS`] (OpenAI, Anthropic, Google, AWS,
//! GitHub, GitLab, Slack and Stripe keys, JWTs, `Bearer` tokens, PEM private-key blocks, the
//! password in a URL) and the value after any `NAME=` or `NAME: ` whose name says secret,
//! password, token or api key ([`is_secret_name`]).
//!
//! The key design decision: a secret becomes `<redacted:KIND>` (see [`marker`]), the same text
//! on every run, so a rerun compares equal, and the marker matches no pattern, so redacting is
//! idempotent. The crate is pure: `regex` and `serde_json`, no I/O.
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
