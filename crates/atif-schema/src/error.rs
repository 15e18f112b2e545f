//! The error type of this crate.

/// Everything that can go wrong in this crate outside of validation findings (which are data,
/// see `Finding`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A `schema_version` label that is not one of `ATIF-v1.0` … `ATIF-v1.8`.
    #[error("unknown schema_version `{label}`: expected one of ATIF-v1.0 … ATIF-v1.8")]
    UnknownVersion {
        /// The label as found.
        label: String,
    },
    /// The document could not be read as JSON or as an ATIF trajectory.
    #[error("{message}")]
    Json {
        /// JSON Pointer of the problem, when known (`""` is the root).
        pointer: Option<String>,
        /// Line of the problem (1-based), when known.
        line: Option<usize>,
        /// Column of the problem (1-based), when known.
        column: Option<usize>,
        /// What was expected and what was found.
        message: String,
    },
    /// A validation profile name that is not `strict` or `harbor`.
    #[error("unknown validation profile `{name}`: expected strict or harbor")]
    UnknownProfile {
        /// The name as given.
        name: String,
    },
    /// A builder was asked for something that would make an invalid trajectory.
    #[error("cannot build trajectory: {reason}")]
    Build {
        /// What the caller asked for and why it cannot be.
        reason: String,
    },
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
