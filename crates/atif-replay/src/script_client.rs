//! `ScriptClient`: a test's model, replayed from `tests/scripts/NAME.json` or recorded through
//! the live client the test supplies, as the record mode (`ATIF_RECORD`, `CI`) says.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;

use crate::record::lock;
use crate::script::{Script, fingerprint_with, read_script};
use crate::secrets::Redactor;
use crate::{
    ChunkStream, Error, LlmClient, LlmError, LlmRequest, LlmResponse, RecordOptions,
    RecordingClient, ReplayClient, ReplayOptions, Result,
};

/// The environment variable that selects the [`RecordMode`].
pub const RECORD_ENV: &str = "ATIF_RECORD";

/// When a [`ScriptClient`] records its script through the live client rather than replaying
/// it: the record modes of vcrpy, read from [`RECORD_ENV`] by [`RecordMode::from_env`].
///
/// | `ATIF_RECORD`            | mode                  | on CI (`CI` set, not `0`/`false`/empty) |
/// | ------------------------ | --------------------- | ---------------------------------------- |
/// | unset or empty           | [`RecordMode::Once`]  | [`RecordMode::None`]                     |
/// | `none`, `0`, `false`     | [`RecordMode::None`]  | [`RecordMode::None`]                     |
/// | `once`                   | [`RecordMode::Once`]  | [`RecordMode::None`]                     |
/// | `new`                    | [`RecordMode::New`]   | [`RecordMode::None`]                     |
/// | `all`, `1`, `true`       | [`RecordMode::All`]   | [`RecordMode::None`]                     |
///
/// Nothing is ever recorded on CI: a script is recorded where the live model is reachable,
/// looked at (`atif script show`) and committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecordMode {
    /// Replay only; a missing script fails with [`Error::ScriptMissing`]. The default on CI.
    None,
    /// Record when the script is missing, else replay it strictly. The default locally.
    Once,
    /// Replay the calls that match an unused recorded one (by request fingerprint), record the
    /// others through the live client, and save the calls this run made: recorded replies the
    /// run did not ask for are dropped, so the saved script replays strictly.
    New,
    /// Always record through the live client, replacing the script.
    All,
}

impl RecordMode {
    /// The mode [`RECORD_ENV`] and `CI` select (see the table on [`RecordMode`]).
    ///
    /// # Errors
    ///
    /// [`Error::UnknownRecordMode`] when `ATIF_RECORD` holds no mode.
    pub fn from_env() -> Result<RecordMode> {
        let record = std::env::var_os(RECORD_ENV).map(|value| value.to_string_lossy().into_owned());
        let ci = std::env::var_os("CI").map(|value| value.to_string_lossy().into_owned());
        RecordMode::from_env_values(record.as_deref(), ci.as_deref())
    }

    /// The mode selected by these values of `ATIF_RECORD` and `CI` (`None` = unset): the pure
    /// core of [`RecordMode::from_env`]. Case and surrounding whitespace are ignored.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownRecordMode`] when `record` holds no mode, on CI too.
    pub fn from_env_values(record: Option<&str>, ci: Option<&str>) -> Result<RecordMode> {
        let requested = record.map(|value| value.trim().to_ascii_lowercase()).unwrap_or_default();
        let mode = match requested.as_str() {
            "" | "once" => RecordMode::Once,
            "none" | "0" | "false" => RecordMode::None,
            "new" => RecordMode::New,
            "all" | "1" | "true" => RecordMode::All,
            _ => {
                return Err(Error::UnknownRecordMode {
                    variable: RECORD_ENV,
                    value: record.unwrap_or_default().to_owned(),
                });
            }
        };
        Ok(if atif_fs::is_ci(ci) { RecordMode::None } else { mode })
    }

    /// The mode's name, as `ATIF_RECORD` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordMode::None => "none",
            RecordMode::Once => "once",
            RecordMode::New => "new",
            RecordMode::All => "all",
        }
    }
}

impl fmt::Display for RecordMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a [`ScriptClient`] keeps its script and how it replays and records. A plain value;
/// [`script_options!`](crate::script_options) builds it for the calling crate.
///
/// | setting          | default                                                    |
/// | ---------------- | ---------------------------------------------------------- |
/// | `crate_dir`      | the folder relative paths resolve against (required)       |
/// | `package`        | none; names the crate in the re-record command (`-p NAME`) |
/// | `dir`            | `tests/scripts`                                            |
/// | `mode`           | none: [`RecordMode::from_env`]                             |
/// | `record_options` | [`RecordOptions::default`]                                 |
/// | `replay_options` | [`ReplayOptions::default`] (strict)                        |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOptions {
    crate_dir: PathBuf,
    package: Option<String>,
    dir: PathBuf,
    mode: Option<RecordMode>,
    record_options: RecordOptions,
    replay_options: ReplayOptions,
}

impl ScriptOptions {
    /// Options for scripts of the crate in `crate_dir` (its `CARGO_MANIFEST_DIR`).
    pub fn new(crate_dir: impl Into<PathBuf>) -> Self {
        ScriptOptions {
            crate_dir: crate_dir.into(),
            package: None,
            dir: PathBuf::from("tests/scripts"),
            mode: None,
            record_options: RecordOptions::default(),
            replay_options: ReplayOptions::default(),
        }
    }

    /// The folder a relative [`dir`](ScriptOptions::dir) resolves against.
    pub fn crate_dir(&self) -> &Path {
        &self.crate_dir
    }

    /// The package named in the re-record command. Default: none.
    pub fn package(&self) -> Option<&str> {
        self.package.as_deref()
    }

    /// Sets [`package`](ScriptOptions::package).
    pub fn set_package(&mut self, package: Option<String>) {
        self.package = package;
    }

    /// The scripts' folder, relative to [`crate_dir`](ScriptOptions::crate_dir) unless
    /// absolute. Default: `tests/scripts`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Sets [`dir`](ScriptOptions::dir).
    pub fn set_dir(&mut self, dir: impl Into<PathBuf>) {
        self.dir = dir.into();
    }

    /// The record mode; `None` (the default) reads it from the environment when a client is
    /// opened ([`RecordMode::from_env`]).
    pub fn mode(&self) -> Option<RecordMode> {
        self.mode
    }

    /// Sets [`mode`](ScriptOptions::mode).
    pub fn set_mode(&mut self, mode: Option<RecordMode>) {
        self.mode = mode;
    }

    /// How recordings are made (secret patterns, full requests kept).
    pub fn record_options(&self) -> &RecordOptions {
        &self.record_options
    }

    /// Sets [`record_options`](ScriptOptions::record_options).
    pub fn set_record_options(&mut self, options: RecordOptions) {
        self.record_options = options;
    }

    /// How scripts are replayed (drift policy, secret patterns). Its re-record command is
    /// replaced by the client's own.
    pub fn replay_options(&self) -> &ReplayOptions {
        &self.replay_options
    }

    /// Sets [`replay_options`](ScriptOptions::replay_options).
    pub fn set_replay_options(&mut self, options: ReplayOptions) {
        self.replay_options = options;
    }
}

/// [`ScriptOptions`] for the calling crate: its `CARGO_MANIFEST_DIR` and `CARGO_PKG_NAME`,
/// scripts under `tests/scripts/`.
#[macro_export]
macro_rules! script_options {
    () => {{
        let mut options = $crate::ScriptOptions::new(::std::env!("CARGO_MANIFEST_DIR"));
        options.set_package(::std::option::Option::Some(::std::env!("CARGO_PKG_NAME").to_owned()));
        options
    }};
}

/// Opens a [`ScriptClient`] for the calling crate: `script_client!("calculator", live)` is
/// [`ScriptClient::open`]`("calculator", &script_options!(), live)`.
#[macro_export]
macro_rules! script_client {
    ($name:expr, $live:expr $(,)?) => {
        $crate::ScriptClient::open($name, &$crate::script_options!(), $live)
    };
}

/// A test's model: it replays the script `tests/scripts/NAME.json` strictly, or records it
/// through the live client the test supplies, as the [`RecordMode`] says.
///
/// Locally a missing script is recorded (mode `once`); `ATIF_RECORD=1 cargo test ...`
/// re-records it (mode `all`); on CI it is only replayed, and a missing one fails naming the
/// command that records it. Every failure of the replay ends with that command:
/// `ATIF_RECORD=1 cargo test -p CRATE TEST`.
///
/// Use it as the agent's [`LlmClient`] and call [`finish`](ScriptClient::finish) once the
/// agent's run succeeded: it saves a recording, or checks that a replay used every reply.
///
/// ```
/// use std::sync::Arc;
///
/// use atif_replay::{FakeClient, LlmClient, LlmRequest, LlmResponse, Message, RecordMode, ScriptClient, ScriptOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let runtime = tokio::runtime::Builder::new_current_thread().build()?;
/// let dir = tempfile::tempdir()?;
/// let mut options = ScriptOptions::new(dir.path());
/// options.set_mode(Some(RecordMode::Once));
/// let live = || Ok::<_, atif_replay::Error>(FakeClient::from_responses(Some("m"), vec![LlmResponse::from_text("hi")]));
///
/// // No script yet: this run records one through the live client.
/// let model = Arc::new(ScriptClient::open("greeting", &options, live)?);
/// assert!(model.is_recording());
/// runtime.block_on(model.complete(LlmRequest::new(vec![Message::user("hello")])))?;
/// model.finish()?;
/// assert!(dir.path().join("tests/scripts/greeting.json").exists());
///
/// // Now it replays, and never builds the live client (building this one would fail).
/// let model = ScriptClient::open("greeting", &options, || Err::<FakeClient, _>("no key here"))?;
/// assert!(!model.is_recording());
/// let reply = runtime.block_on(model.complete(LlmRequest::new(vec![Message::user("hello")])))?;
/// assert_eq!(reply.text(), "hi");
/// model.finish()?;
/// # Ok(())
/// # }
/// ```
pub struct ScriptClient {
    /// Where the script is read and written.
    file: PathBuf,
    /// How messages name it: relative to the crate when it is inside it.
    path: PathBuf,
    mode: RecordMode,
    record_command: String,
    state: State,
}

enum State {
    Replay(Box<ReplayClient>),
    Record { recorder: RecordingClient<Box<dyn LlmClient>>, secret_patterns: Vec<String> },
}

impl ScriptClient {
    /// Opens the script `name` (the file `NAME.json` in the options' folder) in the record
    /// mode of `options`, or of the environment.
    ///
    /// `live` builds the live client; it is called only when the mode records, so a replay
    /// needs no key. The re-record command names the running test (the harness's thread name)
    /// and the options' package.
    ///
    /// # Errors
    ///
    /// [`Error::ScriptName`] when `name` is not a plain file name;
    /// [`Error::UnknownRecordMode`] for a bad `ATIF_RECORD`; [`Error::ScriptMissing`] when
    /// the mode is `none` and there is no script; [`Error::ScriptUnusable`] when the script
    /// cannot be read; [`Error::LiveClient`] when `live` fails; [`Error::Pattern`] for an
    /// invalid secret pattern.
    pub fn open<C, E, F>(name: &str, options: &ScriptOptions, live: F) -> Result<ScriptClient>
    where
        C: LlmClient + 'static,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
        F: FnOnce() -> std::result::Result<C, E>,
    {
        let boxed = move || -> std::result::Result<Box<dyn LlmClient>, BoxError> {
            live().map(|client| Box::new(client) as Box<dyn LlmClient>).map_err(Into::into)
        };
        ScriptClient::open_boxed(name, options, Box::new(boxed))
    }

    fn open_boxed(name: &str, options: &ScriptOptions, live: LiveFn<'_>) -> Result<ScriptClient> {
        let file = script_file_name(name)?;
        let path = options.crate_dir.join(&options.dir).join(&file);
        let shown = if options.dir.is_relative() { options.dir.join(&file) } else { path.clone() };
        let (mode, on_ci) = match options.mode {
            Some(mode) => (mode, false),
            None => {
                let mode = RecordMode::from_env()?;
                (mode, mode == RecordMode::None && atif_fs::running_on_ci())
            }
        };
        let record_command = record_command(options.package.as_deref(), name);
        let read = || {
            read_script(&path).map_err(|source| Error::ScriptUnusable {
                path: shown.clone(),
                record_command: record_command.clone(),
                source: Box::new(source),
            })
        };
        let live = || live().map_err(|source| Error::LiveClient { path: shown.clone(), source });
        let state = match (mode, path.exists()) {
            (RecordMode::None, false) => {
                return Err(Error::ScriptMissing { path: shown, on_ci, record_command });
            }
            (RecordMode::None | RecordMode::Once, true) => {
                let mut replay = options.replay_options.clone();
                replay.set_record_command(Some(record_command.clone()));
                State::Replay(Box::new(ReplayClient::with_path(read()?, shown.clone(), replay)?))
            }
            (RecordMode::New, true) => {
                let redactor = Redactor::new(options.replay_options.secret_patterns())?;
                let inner = ReplayOrLive::new(read()?, redactor, live()?);
                recording(options, Box::new(inner))?
            }
            (RecordMode::Once | RecordMode::New | RecordMode::All, _) => {
                recording(options, live()?)?
            }
        };
        Ok(ScriptClient { file: path, path: shown, mode, record_command, state })
    }

    /// The script file, relative to the crate when the options' folder is relative
    /// (`tests/scripts/NAME.json`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The record mode this client was opened in.
    pub fn mode(&self) -> RecordMode {
        self.mode
    }

    /// Whether this client records (and [`finish`](ScriptClient::finish) saves) rather than
    /// replays.
    pub fn is_recording(&self) -> bool {
        matches!(self.state, State::Record { .. })
    }

    /// The command that re-records the script: `ATIF_RECORD=1 cargo test -p CRATE TEST`.
    pub fn record_command(&self) -> &str {
        &self.record_command
    }

    /// How many model calls the agent made so far.
    pub fn calls(&self) -> usize {
        match &self.state {
            State::Replay(replay) => replay.calls(),
            State::Record { recorder, .. } => recorder.len(),
        }
    }

    /// Ends the run: a recording is saved (atomically, secrets redacted) and reported on
    /// standard error; a replay checks that every recorded reply was requested.
    ///
    /// Call it after the agent's run succeeded, so that a failed run is never saved.
    ///
    /// # Errors
    ///
    /// Replaying: [`Error::UnusedReplies`], ending with the re-record command. Recording: as
    /// [`RecordingClient::save`].
    pub fn finish(&self) -> Result<()> {
        match &self.state {
            State::Replay(replay) => replay.finish(),
            State::Record { recorder, secret_patterns } => {
                let script = recorder.script()?;
                crate::write_script(&self.file, &script, secret_patterns)?;
                report_recorded(&self.path, script.calls.len(), self.mode);
                Ok(())
            }
        }
    }
}

impl fmt::Debug for ScriptClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptClient")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("recording", &self.is_recording())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl LlmClient for ScriptClient {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError> {
        match &self.state {
            State::Replay(replay) => replay.complete(request).await,
            State::Record { recorder, .. } => recorder.complete(request).await,
        }
    }

    fn model(&self) -> Option<&str> {
        match &self.state {
            State::Replay(replay) => replay.model(),
            State::Record { recorder, .. } => recorder.model(),
        }
    }

    async fn complete_stream(&self, request: LlmRequest) -> Result<ChunkStream, LlmError> {
        match &self.state {
            State::Replay(replay) => replay.complete_stream(request).await,
            State::Record { recorder, .. } => recorder.complete_stream(request).await,
        }
    }

    fn run_failed(&self, error: &LlmError) {
        match &self.state {
            State::Replay(replay) => replay.run_failed(error),
            State::Record { recorder, .. } => recorder.run_failed(error),
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type LiveFn<'a> = Box<dyn FnOnce() -> std::result::Result<Box<dyn LlmClient>, BoxError> + 'a>;

/// `NAME.json`, for a name that is a plain file name (`NAME.json` given whole is kept).
fn script_file_name(name: &str) -> Result<String> {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && !name.contains("..")
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !plain {
        return Err(Error::ScriptName { name: name.to_owned() });
    }
    Ok(if name.ends_with(".json") { name.to_owned() } else { format!("{name}.json") })
}

/// `ATIF_RECORD=1 cargo test -p PACKAGE TEST`: the test is the harness's name for the running
/// test (its thread's name), or the script's name outside a harness.
fn record_command(package: Option<&str>, name: &str) -> String {
    let test = match std::thread::current().name() {
        Some(thread) if thread != "main" => thread.to_owned(),
        _ => name.to_owned(),
    };
    let package = package.map(|package| format!(" -p {package}")).unwrap_or_default();
    format!("{RECORD_ENV}=1 cargo test{package} {test}")
}

/// A client that records through `inner` with the options' recording settings.
fn recording(options: &ScriptOptions, inner: Box<dyn LlmClient>) -> Result<State> {
    let record = options.record_options.clone();
    let secret_patterns = record.secret_patterns().to_vec();
    Ok(State::Record { recorder: RecordingClient::with_options(inner, record)?, secret_patterns })
}

#[allow(clippy::print_stderr, reason = "a test reports the script it recorded, as insta does")]
fn report_recorded(path: &Path, calls: usize, mode: RecordMode) {
    let plural = if calls == 1 { "" } else { "s" };
    eprintln!(
        "atif-replay: recorded {calls} model call{plural} to {} (record mode {mode}); look at it \
         with `atif script show {}` and commit it",
        path.display(),
        path.display()
    );
}

/// Mode `new`: a request whose fingerprint matches an unused recorded call (one that did not
/// fail) gets that call's reply; any other goes to the live client.
struct ReplayOrLive {
    script: Script,
    used: Mutex<Vec<bool>>,
    redactor: Redactor,
    live: Box<dyn LlmClient>,
}

impl ReplayOrLive {
    fn new(script: Script, redactor: Redactor, live: Box<dyn LlmClient>) -> Self {
        let used = Mutex::new(vec![false; script.calls.len()]);
        ReplayOrLive { script, used, redactor, live }
    }

    /// The index of the recorded call that answers `request`, marked used.
    fn take(&self, request: &LlmRequest) -> Option<usize> {
        let fingerprint = fingerprint_with(request, &self.redactor);
        let mut used = lock(&self.used);
        let idx = self.script.calls.iter().enumerate().position(|(idx, call)| {
            !used[idx]
                && call.error.is_none()
                && call.request_sha256.as_deref() == Some(fingerprint.as_str())
        })?;
        used[idx] = true;
        Some(idx)
    }
}

#[async_trait]
impl LlmClient for ReplayOrLive {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError> {
        match self.take(&request) {
            Some(idx) => {
                let call = &self.script.calls[idx];
                Ok(match (&call.response, &call.chunks) {
                    (Some(response), _) => response.clone(),
                    (None, Some(chunks)) => LlmResponse::from_chunks(chunks),
                    (None, None) => LlmResponse::default(),
                })
            }
            None => self.live.complete(request).await,
        }
    }

    fn model(&self) -> Option<&str> {
        self.live.model().or(self.script.model.as_deref())
    }

    async fn complete_stream(&self, request: LlmRequest) -> Result<ChunkStream, LlmError> {
        match self.take(&request) {
            Some(idx) => {
                let call = &self.script.calls[idx];
                let chunks = match (&call.chunks, &call.response) {
                    (Some(chunks), _) => chunks.clone(),
                    (None, Some(response)) => response.to_chunks(),
                    (None, None) => Vec::new(),
                };
                Ok(ChunkStream::from_chunks(chunks))
            }
            None => self.live.complete_stream(request).await,
        }
    }

    fn run_failed(&self, error: &LlmError) {
        self.live.run_failed(error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(record: Option<&str>, ci: Option<&str>, expected: RecordMode) {
        let mode = RecordMode::from_env_values(record, ci);
        assert_eq!(mode.ok(), Some(expected), "ATIF_RECORD={record:?} CI={ci:?}");
    }

    #[test]
    fn locally_a_missing_script_is_recorded_and_one_means_all() {
        check(None, None, RecordMode::Once);
        check(Some(""), Some("false"), RecordMode::Once);
        check(Some("1"), None, RecordMode::All);
        check(Some(" TRUE "), Some("0"), RecordMode::All);
        check(Some("all"), None, RecordMode::All);
        check(Some("new"), None, RecordMode::New);
        check(Some("once"), None, RecordMode::Once);
        check(Some("none"), None, RecordMode::None);
        check(Some("0"), None, RecordMode::None);
    }

    #[test]
    fn nothing_is_recorded_on_ci_whatever_is_asked() {
        for record in [None, Some("1"), Some("all"), Some("new"), Some("once")] {
            check(record, Some("true"), RecordMode::None);
        }
    }

    #[test]
    fn an_unknown_mode_is_an_error_naming_the_variable_and_the_choices() {
        let err = RecordMode::from_env_values(Some("yes please"), Some("true")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ATIF_RECORD=\"yes please\" is not a record mode: expected `none`, `once`, `new`, \
             `all` or `1` (the same as `all`), or unset"
        );
    }

    #[test]
    fn a_script_name_stays_a_plain_file_name() {
        assert_eq!(script_file_name("calculator").ok().as_deref(), Some("calculator.json"));
        assert_eq!(script_file_name("a.script.json").ok().as_deref(), Some("a.script.json"));
        for bad in ["", "../x", "a/b", ".hidden", "a..b", "a b", "a\\b"] {
            assert!(matches!(script_file_name(bad), Err(Error::ScriptName { .. })), "{bad:?}");
        }
    }

    #[test]
    fn the_record_command_names_the_package_and_the_running_test() {
        assert_eq!(
            record_command(Some("my-agent"), "calc"),
            "ATIF_RECORD=1 cargo test -p my-agent \
             script_client::tests::the_record_command_names_the_package_and_the_running_test"
        );
        let outside = std::thread::Builder::new().spawn(|| record_command(None, "calc"));
        let outside = outside.ok().and_then(|handle| handle.join().ok());
        assert_eq!(outside.as_deref(), Some("ATIF_RECORD=1 cargo test calc"));
    }
}
