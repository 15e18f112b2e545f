//! The error type of this crate: a body that is not its protocol, a provider's error reply,
//! and traffic no trajectory can be captured from.

/// What went wrong reading a provider's traffic.
///
/// `atif-replay` wraps it unchanged (`atif_replay::Error::Wire`), so its message reads the same
/// wherever it is reported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The model provider answered with its own error object (or event), or failed.
    #[error("model provider error")]
    Provider {
        /// The provider's error, or a message saying what it reported.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A request, reply or event is not what its protocol sends.
    #[error("malformed {protocol} {what} at {}: {message}", root(pointer))]
    WireFormat {
        /// The protocol, such as `OpenAI Chat Completions` ([`Protocol::name`](crate::Protocol::name)).
        protocol: &'static str,
        /// `request`, `reply` or `stream`.
        what: &'static str,
        /// JSON Pointer of the field (in a stream: `/events/N/data/...`).
        pointer: String,
        /// What was expected and what was found.
        message: String,
    },
    /// One exchange of recorded traffic cannot be read as its protocol.
    #[error("cannot read HTTP exchange #{exchange} ({path})")]
    Exchange {
        /// The exchange's position in the traffic, from 1.
        exchange: usize,
        /// The exchange's request path.
        path: String,
        /// Why it cannot be read.
        #[source]
        source: Box<Error>,
    },
    /// The traffic holds nothing a trajectory can be captured from.
    #[error("cannot capture a trajectory from this traffic: {message}")]
    Traffic {
        /// What is missing.
        message: String,
    },
    /// A captured trajectory does not fit the typed ATIF model: a bug in this crate.
    #[error("captured trajectory does not fit the typed ATIF model")]
    Schema {
        /// What the model refused.
        #[source]
        source: atif_schema::Error,
    },
}

impl Error {
    /// A [`Error::Provider`] caused by `source`: the provider's own error, or a message
    /// saying what it reported.
    pub fn provider(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::Provider { source: source.into() }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A JSON Pointer as shown in a message: `/` for the root, which `""` would hide.
fn root(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}
