//! The error type of this crate.

/// Everything that can go wrong while building, reading or comparing an envelope.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A run could not be normalised (it is not a trajectory, or a masker is invalid).
    #[error("run `{run}` cannot be normalised")]
    Normalize {
        /// The run's label, as given to [`Run::new`](crate::Run::new).
        run: String,
        /// Why normalising failed.
        #[source]
        source: atif_normalize::Error,
    },
    /// An envelope or a comparison was asked for with no runs.
    #[error("no runs given; expected at least one run")]
    NoRuns,
    /// Some runs say whether they passed and others do not.
    #[error(
        "run `{run}` has no pass/fail outcome but other runs do; expected every run or none to have one"
    )]
    MixedOutcomes {
        /// The first run without an outcome.
        run: String,
    },
    /// The envelope text is not JSON, or a field has the wrong type.
    #[error("invalid envelope at {}: {message}", at(.pointer))]
    Invalid {
        /// JSON Pointer of the offending value (`""` is the root).
        pointer: String,
        /// What was expected there.
        message: String,
        /// The parser's error, when there is one.
        #[source]
        source: Option<serde_json::Error>,
    },
    /// The envelope's `envelope_version` is one this crate does not read.
    #[error("unsupported envelope_version {found}; expected {expected}")]
    Version {
        /// The version in the file.
        found: String,
        /// The version this crate reads.
        expected: u32,
    },
}

/// Where a JSON Pointer is, in words: `the root` for `""`, else the pointer in backticks.
fn at(pointer: &str) -> String {
    if pointer.is_empty() { "the root".to_owned() } else { format!("`{pointer}`") }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
