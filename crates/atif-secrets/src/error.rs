//! The one error type of atif-secrets.

/// What can go wrong when building a [`Scanner`](crate::Scanner).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A user pattern is not a valid regular expression.
    #[error("invalid secret pattern `{pattern}`")]
    InvalidPattern {
        /// The pattern as given.
        pattern: String,
        /// Why the regex crate refused it.
        #[source]
        source: regex::Error,
    },
    /// A user pattern matches the empty string, so it would redact between every two characters.
    #[error(
        "secret pattern `{pattern}` matches the empty string; expected a pattern that needs at least one character"
    )]
    EmptyMatch {
        /// The pattern as given.
        pattern: String,
    },
    /// A kind name is not lower-case letters, digits and dashes.
    #[error("invalid secret kind `{kind}`; expected lower-case letters, digits and `-`")]
    InvalidKind {
        /// The kind as given.
        kind: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
