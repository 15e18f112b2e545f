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
    /// An input could not be read: missing, a directory, no permission, an I/O error.
    #[error("cannot read {file}")]
    Read {
        /// The input's name (a path, or `standard input`).
        file: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// An input is larger than the limit set with `LoadOptions::set_max_bytes`.
    #[error("{file} is larger than the input limit of {limit} bytes")]
    TooLarge {
        /// The input's name.
        file: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// An input is not an ATIF trajectory: not JSON, binary data, duplicate keys, an integer
    /// beyond 64 bits, a root that is not an object, no `schema_version` or `steps`.
    #[error("{file}: {message}")]
    NotTrajectory {
        /// The input's name.
        file: String,
        /// JSON Pointer of the problem, when known (`""` is the root).
        pointer: Option<String>,
        /// Line of the problem (1-based), when known.
        line: Option<usize>,
        /// Column of the problem (1-based, in bytes), when known.
        column: Option<usize>,
        /// What was expected and what was found, with the pointer or position.
        message: String,
    },
    /// A timestamp that the ATIF references reject (see `check_timestamp`).
    #[error(
        "{text:?} is not an ISO 8601 date-time as Python's datetime.fromisoformat reads it after \
         Z → +00:00 ({reason}); expected e.g. \"2025-10-16T14:30:00Z\""
    )]
    Timestamp {
        /// The text as found.
        text: String,
        /// What is wrong with it, e.g. `hour must be 0..23`.
        reason: &'static str,
    },
    /// A builder was asked for something that would make an invalid trajectory.
    #[error("cannot build trajectory: {reason}")]
    Build {
        /// What the caller asked for and why it cannot be.
        reason: String,
    },
}

impl Error {
    /// Whether the error is about the input itself (exit status 1 in the `atif` command: the
    /// input is invalid), rather than about reading it (exit status 2: the command could not
    /// run).
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            Error::NotTrajectory { .. }
                | Error::Json { .. }
                | Error::UnknownVersion { .. }
                | Error::Timestamp { .. }
        )
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
