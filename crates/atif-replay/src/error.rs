//! The error type of this crate, shared by clients, scripts, replay and capture.

use std::path::PathBuf;

/// Everything that can go wrong in this crate: a model call, reading or writing a script, a
/// replay that no longer matches its recording, or a captured agent that failed.
///
/// [`LlmError`] is the same type under the name the [`LlmClient`](crate::LlmClient) trait uses.
///
/// `Debug` prints the message and then its causes, one per line, so that a test returning
/// `Result<(), Box<dyn std::error::Error>>` that fails on `run.result?` shows what happened
/// rather than the variant's fields on one line.
///
/// The variants are grouped by what the caller can do about them, in this order, and
/// [`kind`](Error::kind) names the group:
/// - [`ErrorKind::Regression`]: the agent behaves differently from its recording (fix the
///   agent, or re-record the script if the change is intended): [`Error::ScriptExhausted`],
///   [`Error::UnusedReplies`], [`Error::RequestDrift`];
/// - [`ErrorKind::Agent`]: the agent under [`capture`](crate::capture) failed (fix the
///   agent): [`Error::AgentFailed`], [`Error::AgentPanicked`], [`Error::UnknownToolCall`];
/// - [`ErrorKind::Provider`]: the model provider failed, live or as recorded, or answered
///   outside its protocol (retry, or look at the provider): [`Error::Provider`],
///   [`Error::RecordedFailure`], [`Error::LiveClient`], [`Error::Http`], and [`Error::Wire`] holding a
///   provider's error reply or a body not of its protocol;
/// - [`ErrorKind::Script`]: a script file, or the traffic of a recording, cannot be read,
///   used or saved (fix or re-record it): [`Error::Io`], [`Error::Load`], [`Error::Parse`],
///   [`Error::Invalid`], [`Error::UnsupportedVersion`], [`Error::ScriptMissing`],
///   [`Error::ScriptUnusable`], [`Error::SecretSurvived`], and [`Error::Wire`] holding
///   traffic that cannot be read or captured;
/// - [`ErrorKind::Usage`]: the calling code asked for something this crate cannot do (fix the
///   call): [`Error::Pattern`], [`Error::CallInProgress`], [`Error::MissingModel`],
///   [`Error::UnknownRecordMode`], [`Error::ScriptName`];
/// - [`ErrorKind::Bug`]: a bug in this crate (please report it): [`Error::Serialize`], and
///   [`Error::Wire`] holding a captured trajectory the typed model refuses.
///
/// Every variant that wraps another failure keeps it as its
/// [`source`](std::error::Error::source); its message does not repeat it.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // Regression: the agent behaves differently from its recording.
    /// The agent asked a replay, or a [`FakeClient`](crate::FakeClient) given a list,
    /// for more replies than it holds.
    #[error(
        "agent requested reply #{requested} but the recorded script has only {recorded}. \
         The agent is making more model calls than when this script was recorded — that is the \
         regression. If it is intended, re-record the script.\n{request_summary}{}",
        rerecord(record_command.as_deref())
    )]
    ScriptExhausted {
        /// 1-based number of the reply that was requested.
        requested: usize,
        /// How many replies the script holds.
        recorded: usize,
        /// What the extra request carried (its last message and its tool results).
        request_summary: String,
        /// The command that re-records the script, when the replay knows it
        /// ([`ReplayOptions::set_record_command`](crate::ReplayOptions::set_record_command)).
        record_command: Option<String>,
    },
    /// A replay finished with recorded replies that were never requested.
    #[error(
        "{unused} of the {recorded} recorded replies in {path} were never requested (#{first_unused} \
         is the first). {}{}",
        unused_cause(*.stopped_at, *.agent_failed_after),
        rerecord(record_command.as_deref())
    )]
    UnusedReplies {
        /// The script file (or `<memory>`).
        path: PathBuf,
        /// How many replies were never served.
        unused: usize,
        /// How many replies the script holds.
        recorded: usize,
        /// 1-based number of the first reply never served.
        first_unused: usize,
        /// The call at which the replay already failed (a request drift), if it did: the
        /// replies after it were never requested because of that failure.
        stopped_at: Option<usize>,
        /// How many model calls the agent had made when its run failed, if
        /// [`capture`](crate::capture) reported that it did: the replies after them were never
        /// requested because of that failure.
        agent_failed_after: Option<usize>,
        /// The command that re-records the script, when the replay knows it.
        record_command: Option<String>,
    },
    /// With strict request checking, a request differs from the one recorded for that call.
    #[error(
        "request drift at call #{call}: the request differs from the one recorded for reply \
         #{reply}.\n{changes}\nrequest fingerprints (SHA-256): {actual} now, {expected} \
         recorded{}",
        rerecord(record_command.as_deref())
    )]
    RequestDrift {
        /// 1-based number of the call that drifted.
        call: usize,
        /// 1-based number of the recorded reply it was compared with.
        reply: usize,
        /// Recorded fingerprint (hex SHA-256).
        expected: String,
        /// Fingerprint of the request the agent sent.
        actual: String,
        /// What changed, when the script holds full requests; otherwise a sentence saying so.
        changes: String,
        /// The command that re-records the script, when the replay knows it.
        record_command: Option<String>,
    },
    // Agent: the agent under capture failed.
    /// A captured agent returned an error.
    #[error("agent failed")]
    AgentFailed {
        /// The agent's error as text (the same text as `source`, which the message leaves to
        /// error reporters that walk `source()`).
        message: String,
        /// The agent's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A captured agent panicked.
    #[error("agent panicked: {message}")]
    AgentPanicked {
        /// The panic payload when it was a string.
        message: String,
    },
    /// The agent reported a tool result, or started a subagent, for a call id that no step of
    /// its trajectory made.
    #[error("no step of trajectory {trajectory} made tool call `{call_id}`")]
    UnknownToolCall {
        /// The call id reported.
        call_id: String,
        /// The agent name of the trajectory.
        trajectory: String,
    },
    // Provider: the model provider failed, live or as recorded.
    /// A model provider (a real client) failed; build it with [`Error::provider`].
    #[error("model provider error")]
    Provider {
        /// What failed: the provider's own error, or a message saying what it answered.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The recorded call failed when it was recorded; a replay fails the same way.
    #[error(
        "recorded call #{call} failed when it was recorded: {message}{}",
        rerecord(record_command.as_deref())
    )]
    RecordedFailure {
        /// 1-based number of the call.
        call: usize,
        /// The error text recorded.
        message: String,
        /// The command that re-records the script, when the replay knows it.
        record_command: Option<String>,
    },
    /// The live client a [`ScriptClient`](crate::ScriptClient) records through could not be
    /// built (a missing API key, say).
    #[error("cannot build the live client to record {path}")]
    LiveClient {
        /// The script that was to be recorded.
        path: PathBuf,
        /// Why the client could not be built.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An HTTP request to a model provider could not be made or its reply not read (feature
    /// `http`).
    #[error("HTTP request to {url} failed")]
    Http {
        /// The URL posted to.
        url: String,
        /// What the HTTP client said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A provider's traffic could not be read (`atif-wire`): a request or reply not of its
    /// protocol's shape, the provider's own error reply, or traffic no trajectory can be
    /// captured from. Its message is the wire error's own; [`Error::kind`] classifies it.
    #[error(transparent)]
    Wire(#[from] atif_wire::Error),
    // Script: a script file, or recorded traffic, cannot be used.
    /// A script file could not be read or written.
    #[error("cannot {action} {path}")]
    Io {
        /// `read`, `write` or `rename`.
        action: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A script file is larger than the input limit, or binary data (a byte that JSON text
    /// never holds, or a first byte that cannot start JSON): refused before it is parsed.
    #[error("cannot load the script {}", path.display())]
    Load {
        /// The script file.
        path: PathBuf,
        /// What the bounded reader found: [`atif_schema::Error::TooLarge`] or
        /// [`atif_schema::Error::NotTrajectory`], naming the limit or the line and column.
        #[source]
        source: Box<atif_schema::Error>,
    },
    /// A script file is not valid JSON or not a valid script.
    #[error("{path}:{line}:{column}: {}{message}", at(pointer))]
    Parse {
        /// The script file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based byte column of the problem (0 before the first byte of a line).
        column: usize,
        /// JSON Pointer of the value being read at that position (`""` is the root).
        pointer: String,
        /// What was expected and what was found.
        message: String,
    },
    /// A script file is valid JSON but something at `pointer` is not what a script holds.
    #[error("{path}: {}{message}", at(pointer))]
    Invalid {
        /// The script file.
        path: PathBuf,
        /// JSON Pointer of the problem (`""` is the root).
        pointer: String,
        /// What was expected and what was found.
        message: String,
    },
    /// A script file of a format version this crate does not read.
    #[error(
        "{path}: unsupported script format version {found} at /version: this build reads versions \
         1 to {supported}; use the atif version that wrote it, or re-record the script with this one"
    )]
    UnsupportedVersion {
        /// The script file.
        path: PathBuf,
        /// The version found in the file.
        found: String,
        /// The newest version this crate reads (the one it writes).
        supported: u32,
    },
    /// A test's script is missing and the record mode does not record it
    /// ([`RecordMode::None`](crate::RecordMode::None), the default on CI).
    #[error(
        "no replay script {path}: the record mode is `none`{}, so it is replayed and never \
         recorded; record it where the live model is reachable with: {record_command}",
        if *.on_ci { " (on CI, where nothing is recorded)" } else { "" }
    )]
    ScriptMissing {
        /// The script file, relative to the crate when it is inside it.
        path: PathBuf,
        /// Whether the mode is `none` because `CI` is set.
        on_ci: bool,
        /// The command that records it.
        record_command: String,
    },
    /// A test's script exists but cannot be replayed (not readable, not a script, a format
    /// version this build does not read).
    #[error(
        "cannot replay {path}; if it is damaged or outdated, re-record it with: {record_command}"
    )]
    ScriptUnusable {
        /// The script file, relative to the crate when it is inside it.
        path: PathBuf,
        /// The command that re-records it.
        record_command: String,
        /// Why it cannot be read.
        #[source]
        source: Box<Error>,
    },
    /// A secret pattern still matched after redaction, so the script was not saved.
    #[error(
        "refusing to save {path}: secret pattern `{pattern}` still matches after redaction at \
         {pointer}; nothing was written"
    )]
    SecretSurvived {
        /// The file that was not written.
        path: PathBuf,
        /// The pattern that matched.
        pattern: String,
        /// JSON Pointer of the key or string that still matches.
        pointer: String,
    },
    // Usage: the calling code asked for something this crate cannot do.
    /// A secret pattern given by the user is not a valid regular expression, or matches the
    /// empty string.
    #[error(transparent)]
    Pattern(#[from] atif_secrets::Error),
    /// A recording could not be saved because a streamed reply was not read to its end.
    #[error(
        "call #{call} is still in progress (a streamed reply not read to its end); cannot save"
    )]
    CallInProgress {
        /// 1-based number of the call.
        call: usize,
    },
    /// The record mode variable (`ATIF_RECORD`) holds a value that is no mode.
    #[error(
        "{variable}={value:?} is not a record mode: expected `none`, `once`, `new`, `all` or `1` \
         (the same as `all`), or unset"
    )]
    UnknownRecordMode {
        /// The variable read.
        variable: &'static str,
        /// The value found.
        value: String,
    },
    /// A script name that is not a plain file name.
    #[error(
        "script name {name:?} is not a plain file name: use letters, digits, `_`, `-` and `.`, \
         not starting with `.`"
    )]
    ScriptName {
        /// The name given.
        name: String,
    },
    /// A request to a protocol that names the model in its URL (Gemini) named no model
    /// (feature `http`).
    #[error(
        "a {protocol} request names its model in the URL, and this one has none: set \
         LlmRequest::model or HttpClient::with_model (posting under {url})"
    )]
    MissingModel {
        /// The protocol, such as `Gemini generateContent`.
        protocol: &'static str,
        /// The URL the model's name would have followed.
        url: String,
    },
    // Bug: a bug in this crate.
    /// A value could not be serialised to JSON.
    #[error("cannot serialise {what}")]
    Serialize {
        /// What was being serialised.
        what: &'static str,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
}

/// What the caller can do about an [`Error`]: the groups its variants come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The agent behaves differently from its recording (more, fewer or other model calls):
    /// fix the agent, or re-record the script if the change is intended.
    Regression,
    /// The agent under [`capture`](crate::capture) failed or panicked: fix the agent.
    Agent,
    /// The model provider failed, live or as recorded, or answered outside its protocol:
    /// retry, or look at the provider.
    Provider,
    /// A script file, or the traffic of a recording, cannot be read, used or saved: fix or
    /// re-record it.
    Script,
    /// The calling code asked for something this crate cannot do (an invalid pattern, a save
    /// during a call, a request with no model where the URL needs one): fix the call.
    Usage,
    /// A bug in this crate: please report it.
    Bug,
}

impl Error {
    /// A [`Error::Provider`] caused by `source`: the provider's own error, or a message
    /// (`Error::provider("rate limited")`).
    pub fn provider(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::Provider { source: source.into() }
    }

    /// The group this error belongs to, which says what the caller can do about it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::ScriptExhausted { .. }
            | Error::UnusedReplies { .. }
            | Error::RequestDrift { .. } => ErrorKind::Regression,
            Error::AgentFailed { .. }
            | Error::AgentPanicked { .. }
            | Error::UnknownToolCall { .. } => ErrorKind::Agent,
            Error::Provider { .. }
            | Error::RecordedFailure { .. }
            | Error::LiveClient { .. }
            | Error::Http { .. } => ErrorKind::Provider,
            Error::Wire(wire) => wire_kind(wire),
            Error::Io { .. }
            | Error::Load { .. }
            | Error::Parse { .. }
            | Error::Invalid { .. }
            | Error::UnsupportedVersion { .. }
            | Error::SecretSurvived { .. }
            | Error::ScriptMissing { .. }
            | Error::ScriptUnusable { .. } => ErrorKind::Script,
            Error::Pattern(_)
            | Error::CallInProgress { .. }
            | Error::MissingModel { .. }
            | Error::UnknownRecordMode { .. }
            | Error::ScriptName { .. } => ErrorKind::Usage,
            Error::Serialize { .. } => ErrorKind::Bug,
        }
    }
}

impl std::fmt::Debug for Error {
    /// The message, then each cause on a line of its own, the lines of a cause's message
    /// indented under it (what a test that returns `Result<(), Box<dyn Error>>` prints when
    /// it fails).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")?;
        let mut cause = std::error::Error::source(self);
        if cause.is_some() {
            f.write_str("\n\ncaused by:")?;
        }
        while let Some(source) = cause {
            for (idx, line) in source.to_string().lines().enumerate() {
                match (idx, line.is_empty()) {
                    (_, true) => f.write_str("\n")?,
                    (0, false) => write!(f, "\n    {line}")?,
                    (_, false) => write!(f, "\n      {line}")?,
                }
            }
            cause = source.source();
        }
        Ok(())
    }
}

/// Why replies went unused: the failure the replay already reported, the agent's own failure,
/// or, when neither is known, fewer model calls (unless the agent failed unseen).
/// The kind of a wire error, as it was when this crate read the protocols itself.
fn wire_kind(error: &atif_wire::Error) -> ErrorKind {
    match error {
        atif_wire::Error::Provider { .. } | atif_wire::Error::WireFormat { .. } => {
            ErrorKind::Provider
        }
        atif_wire::Error::Exchange { .. } | atif_wire::Error::Traffic { .. } => ErrorKind::Script,
        // Schema, and any variant added later: a capture that does not fit the model is a bug.
        _ => ErrorKind::Bug,
    }
}

fn unused_cause(stopped_at: Option<usize>, agent_failed_after: Option<usize>) -> String {
    match (stopped_at, agent_failed_after) {
        (Some(call), _) => format!(
            "The replay already failed at call #{call} (request drift), so the agent stopped \
             asking: that failure is the one to fix"
        ),
        (None, Some(calls)) => format!(
            "The agent's run failed after {calls} model call{} (see the error its run \
             returned), so it stopped asking: that failure is the one to fix",
            if calls == 1 { "" } else { "s" }
        ),
        (None, None) => {
            "The agent made fewer model calls than when this script was recorded: unless it \
                 failed before making them (see the error its run returned), that is the \
                 regression. If it is intended, re-record the script"
                .to_owned()
        }
    }
}

/// The last line of a regression's message when the replay knows how the script is recorded.
fn rerecord(command: Option<&str>) -> String {
    match command {
        Some(command) => format!("\nto re-record the script: {command}"),
        None => String::new(),
    }
}

/// `at /calls/0: ` before a message about a value inside the file; nothing for the root.
fn at(pointer: &str) -> String {
    if pointer.is_empty() { String::new() } else { format!("at {pointer}: ") }
}

/// The error of a model call: the same type as [`Error`], named for the [`LlmClient`](crate::LlmClient) trait.
pub type LlmError = Error;

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
