//! The error type of this crate: protocol failures (what a test reports) and broken inputs.

use std::path::{Path, PathBuf};

/// Everything that can go wrong while checking or updating a golden file.
///
/// Three variants are *test failures* rather than breakage: [`Error::MissingGolden`],
/// [`Error::SchemaVersionChanged`] and [`Error::BehaviourChanged`] (see
/// [`Error::is_test_failure`]). Their messages are written to be read in a test log: they say
/// what changed and end with the exact command that accepts the change.
///
/// `Debug` prints the message and then its causes, one per line, so that a test returning
/// `Result<(), Box<dyn std::error::Error>>` that fails on `check(...)?` shows the report as it
/// reads, not the variant's fields on one line.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The golden file does not exist; it is never created outside update mode.
    #[error(
        "golden file {} does not exist; record it with: {command}{}",
        path.display(),
        pending_note(pending.as_deref())
    )]
    MissingGolden {
        /// Where the golden file was expected.
        path: PathBuf,
        /// The command that records it.
        command: String,
        /// The pending file the actual run was written to, if one was written.
        pending: Option<PathBuf>,
    },
    /// The golden and the run carry different `schema_version` labels.
    #[error(
        "the schema version changed from {golden} (golden file {}) to {actual} (this run), so re-record the golden with: {command}{}",
        path.display(),
        pending_note(pending.as_deref())
    )]
    SchemaVersionChanged {
        /// The golden file.
        path: PathBuf,
        /// The golden's label (`ATIF-v1.7`, or `no schema_version`).
        golden: String,
        /// The run's label.
        actual: String,
        /// The command that re-records the golden.
        command: String,
        /// The pending file the actual run was written to, if one was written.
        pending: Option<PathBuf>,
    },
    /// The run's Shape differs from the golden's: the agent behaves differently.
    #[error("{report}")]
    BehaviourChanged {
        /// The golden file.
        path: PathBuf,
        /// Each Shape delta as displayed (`step_count: 1 -> 2`), structural first, hash last.
        deltas: Vec<String>,
        /// The step-level explanation: each step inserted, removed or changed, in order.
        changes: Vec<atif_normalize::StepChange>,
        /// The whole failure message: deltas, step-level explanation, unified diff, command.
        report: String,
        /// The pending file the actual run was written to, if one was written.
        pending: Option<PathBuf>,
    },
    /// Live runs against the model were refused: on CI (`CI` set) they need `ATIF_LIVE=1`.
    #[error(
        "refusing to run live on CI (CI is set): live runs call the model and cost money; set {variable}=1 to run them anyway"
    )]
    LiveRefused {
        /// The variable that allows them (`ATIF_LIVE`).
        variable: &'static str,
    },
    /// Live runs moved away from their envelope golden: the verdict is `changed`.
    #[error(
        "live runs moved from the envelope golden {}: {verdict}if this change is intended, re-record the envelope with: {command}",
        path.display()
    )]
    EnvelopeChanged {
        /// The envelope golden.
        path: std::path::PathBuf,
        /// The verdict, naming each field that moved, its effect, p-values and runs.
        verdict: Box<atif_envelope::Verdict>,
        /// The command that re-records the envelope.
        command: String,
    },
    /// An envelope golden or the runs for it cannot be used: no runs, runs with and without
    /// an outcome, or an envelope file that is malformed (the message names its JSON Pointer).
    #[error("cannot check or write the envelope golden {}", path.display())]
    Envelope {
        /// The envelope golden.
        path: std::path::PathBuf,
        /// What atif-envelope refused.
        #[source]
        source: atif_envelope::Error,
    },
    /// The project file (`atif.toml`) is not what it should be: not TOML, an unknown key, a
    /// bad glob, preset or mask. The message names the place and what was expected.
    #[error("{}: {message}", path.display())]
    ProjectFile {
        /// The project file.
        path: PathBuf,
        /// What is wrong, and where (a TOML error names the line and column).
        message: String,
    },
    /// The mode environment variable holds a value this crate does not know.
    #[error(
        "unknown {variable} value `{value}`: expected one of auto, check, review, update (or unset)"
    )]
    UnknownMode {
        /// The environment variable's name.
        variable: &'static str,
        /// The value found.
        value: String,
    },
    /// Two assertions in one run resolve to the same golden file.
    #[error(
        "golden file {} is claimed twice in one run, by `{first}` and then by `{second}`; give each assertion its own name with assert_golden!(name: \"...\", value)",
        path.display()
    )]
    DuplicateGolden {
        /// The golden file both resolve to.
        path: PathBuf,
        /// The test that claimed it first.
        first: String,
        /// The test that claimed it second.
        second: String,
    },
    /// Reading, writing, renaming or creating a file or folder failed.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done (`read`, `write`, `create folder`, ...).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// What atif-schema's loader refused: the golden file, a pending file or the run is not an
    /// ATIF trajectory (not JSON, a duplicate key, an integer out of range, a root that is not an
    /// object, no `schema_version` or `steps`), or a file cannot be read. The message is the
    /// loader's: it names the file (or `the actual trajectory`) and the JSON Pointer, or the line
    /// and column, of the problem.
    #[error(transparent)]
    Load(Box<atif_schema::Error>),
    /// The actual value cannot be turned into JSON.
    #[error("cannot serialise the actual trajectory into JSON")]
    Serialize {
        /// Why serde_json refused.
        #[source]
        source: serde_json::Error,
    },
    /// Normalisation refused a document (for example, its root is not an object).
    #[error("cannot normalise {what}")]
    Normalize {
        /// Which document: `the actual trajectory` or `golden file <path>`.
        what: String,
        /// The normaliser's error.
        #[source]
        source: atif_normalize::Error,
    },
    /// A line of the check log is not a check log entry.
    #[error(
        "line {line} of check log {} is not a check log entry: expected a JSON object with `outcome`, `path` and `test`",
        path.display()
    )]
    InvalidCheckLog {
        /// The check log.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
}

impl Error {
    /// Whether this is a failed check (missing golden, schema version change, behaviour change,
    /// live runs that moved from their envelope)
    /// rather than something broken (unreadable file, bad settings).
    ///
    /// The `atif check` command exits 1 for these and 2 for the rest.
    pub fn is_test_failure(&self) -> bool {
        matches!(
            self,
            Error::MissingGolden { .. }
                | Error::SchemaVersionChanged { .. }
                | Error::BehaviourChanged { .. }
                | Error::EnvelopeChanged { .. }
        )
    }

    /// The pending file this failure wrote the actual run to, if any.
    pub fn pending(&self) -> Option<&Path> {
        match self {
            Error::MissingGolden { pending, .. }
            | Error::SchemaVersionChanged { pending, .. }
            | Error::BehaviourChanged { pending, .. } => pending.as_deref(),
            _ => None,
        }
    }

    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Error {
        Error::Io { action, path: path.to_owned(), source }
    }
}

impl std::fmt::Debug for Error {
    /// The message, then each cause on a line of its own.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let causes: Vec<String> =
            std::iter::successors(std::error::Error::source(self), |cause| cause.source())
                .map(|cause| format!("\n    {cause}"))
                .collect();
        match causes.is_empty() {
            true => write!(f, "{self}"),
            false => write!(f, "{self}\n\ncaused by:{}", causes.concat()),
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The lines naming the pending file and the `atif golden` commands that review or accept it;
/// empty when nothing was written.
pub(crate) fn pending_note(pending: Option<&Path>) -> String {
    match pending {
        Some(pending) => format!(
            "\npending: the actual run was written to {}\nreview it: {}, or accept it: {}",
            pending.display(),
            crate::command::golden_command("review", pending),
            crate::command::golden_command("accept", pending),
        ),
        None => String::new(),
    }
}
