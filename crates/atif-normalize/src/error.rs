//! The error type of this crate.

/// Everything that can go wrong while normalising, shaping or diffing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A masker's regular expression matches the empty string, so it would insert its
    /// replacement between every two characters.
    #[error(
        "masking pattern `{pattern}` matches the empty string; expected a pattern that matches at least one character"
    )]
    EmptyMatch {
        /// The pattern as given.
        pattern: String,
    },
    /// A masker's regular expression does not compile.
    #[error("invalid masking pattern `{pattern}`")]
    InvalidPattern {
        /// The pattern as given.
        pattern: String,
        /// Why the regex crate rejected it.
        #[source]
        source: regex::Error,
    },
    /// A volatile selector is not in insta's selector grammar.
    #[error("invalid selector `{selector}`: {reason}")]
    InvalidSelector {
        /// The selector as given.
        selector: String,
        /// What was expected where it went wrong.
        reason: String,
    },
    /// The document is not a trajectory at all (for example a JSON array root).
    #[error("not an ATIF trajectory at {}: expected {expected}, found {found}", at(.pointer))]
    NotATrajectory {
        /// JSON Pointer of the offending value (`""` is the root).
        pointer: String,
        /// What was expected there.
        expected: String,
        /// What was found there.
        found: String,
    },
    /// The input is not strict JSON.
    #[error("invalid JSON at line {line} column {column}: {message}")]
    InvalidJson {
        /// Line of the problem (1-based).
        line: usize,
        /// Column of the problem (1-based, in characters).
        column: usize,
        /// What was expected and what was found.
        message: String,
    },
    /// Writing the canonical text failed.
    #[error("cannot write the canonical text")]
    Write {
        /// The writer's error.
        #[source]
        source: std::io::Error,
    },
    /// No preset of that name exists.
    #[error("unknown normalisation preset `{name}` (known: {known})")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The known preset names, comma-separated.
        known: String,
    },
}

/// Where a JSON Pointer is, in words: `the root` for `""`, else the pointer in backticks.
fn at(pointer: &str) -> String {
    if pointer.is_empty() { "the root".to_owned() } else { format!("`{pointer}`") }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
