//! The golden protocol: compare a run with its golden file, write a pending file, or update.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use atif_normalize::{MatchOptions, MatchOutcome, NormalizedDocument};
use serde::Serialize;
use serde_json::Value;

use crate::check_log::{self, OutcomeKind};
use crate::{Error, MODE_ENV, Mode, Result, Settings, file};

/// What a successful [`check`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The run behaves like the golden (nothing was written).
    Matched {
        /// The golden file.
        path: PathBuf,
    },
    /// Update mode: the golden did not exist and was written.
    Created {
        /// The golden file.
        path: PathBuf,
    },
    /// Update mode: the golden no longer matched and was rewritten.
    Changed {
        /// The golden file.
        path: PathBuf,
        /// The unified diff from the old golden text (what was erased) to the new one.
        erased: String,
    },
    /// Update mode: the golden still matches and was left alone.
    Unchanged {
        /// The golden file.
        path: PathBuf,
    },
}

impl Outcome {
    /// The golden file.
    pub fn path(&self) -> &Path {
        match self {
            Outcome::Matched { path }
            | Outcome::Created { path }
            | Outcome::Changed { path, .. }
            | Outcome::Unchanged { path } => path,
        }
    }

    /// The kind of outcome, as recorded in the check log.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Outcome::Matched { .. } => OutcomeKind::Matched,
            Outcome::Created { .. } => OutcomeKind::Created,
            Outcome::Changed { .. } => OutcomeKind::Changed,
            Outcome::Unchanged { .. } => OutcomeKind::Unchanged,
        }
    }
}

impl fmt::Display for Outcome {
    /// One line naming what happened; a changed golden adds the diff of what it erased.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Matched { path } => write!(f, "golden {} matches", path.display()),
            Outcome::Created { path } => write!(f, "created golden {}", path.display()),
            Outcome::Changed { path, erased } => {
                write!(f, "changed golden {}; this update erased:\n{erased}", path.display())
            }
            Outcome::Unchanged { path } => write!(f, "unchanged golden {}", path.display()),
        }
    }
}

/// Checks the run `actual` against the golden file at `path`, or updates the golden, depending
/// on the mode ([`Settings::mode`], else `ATIF_GOLDEN` and `CI`): the one way to check a golden
/// without the macro ([`assert_golden!`](crate::assert_golden) names the golden after the test
/// and calls this).
///
/// `actual` is anything that is an [`Actual`] run: a reference to whatever serialises to an ATIF
/// trajectory (an `atif_schema::Trajectory`, a raw or normalised `serde_json::Value`), a
/// `serde_json::Value` by value (normalised in place, never copied: a run of a hundred
/// megabytes costs no second hundred), or the run's JSON text as a [`JsonText`] (the fastest
/// check, with the strict loader's rules). Both sides are normalised with the settings'
/// options and their Shapes compared with the settings' tolerance.
///
/// | mode                | golden missing             | behaviour changed               | matches     |
/// |---------------------|----------------------------|---------------------------------|-------------|
/// | [`Mode::Check`]     | [`Error::MissingGolden`]   | [`Error::BehaviourChanged`]     | `Matched`   |
/// | [`Mode::Review`]    | same, and writes `.json.new` | same, and writes `.json.new`  | `Matched`   |
/// | [`Mode::Update`]    | writes it: `Created`       | rewrites it: `Changed`          | `Unchanged` |
///
/// # Errors
/// The three test failures ([`Error::MissingGolden`], [`Error::SchemaVersionChanged`],
/// [`Error::BehaviourChanged`]; see [`Error::is_test_failure`]), and [`Error::UnknownMode`],
/// [`Error::Load`] when `actual` or the golden is not an ATIF trajectory (naming the JSON
/// Pointer of the problem), and [`Error::UnknownMode`], [`Error::Io`], [`Error::Serialize`],
/// [`Error::Normalize`] when something else is broken.
pub fn check<A: Actual>(path: &Path, actual: A, settings: &Settings) -> Result<Outcome> {
    GoldenFile::read(path).check(actual, settings).result
}

/// A run that [`check`] takes: `&T` for any `T: Serialize` (a `Trajectory`, a `&Value`), a
/// `serde_json::Value` by value, or a [`JsonText`]. Sealed: the three are what the check's fast
/// paths are built for.
pub trait Actual: sealed::Sealed {}

impl<T: Serialize + ?Sized> Actual for &T {}
impl Actual for Value {}
impl Actual for JsonText {}

mod sealed {
    use serde::Serialize;
    use serde_json::Value;

    use crate::check::{Input, JsonText};
    use crate::{Error, Result};

    /// How each [`Actual`](crate::Actual) reaches the check.
    pub trait Sealed {
        /// The run as the check receives it.
        fn into_input(self) -> Result<Input>;
    }

    impl<T: Serialize + ?Sized> Sealed for &T {
        fn into_input(self) -> Result<Input> {
            serde_json::to_value(self)
                .map(Input::Value)
                .map_err(|source| Error::Serialize { source })
        }
    }

    impl Sealed for Value {
        fn into_input(self) -> Result<Input> {
            Ok(Input::Value(self))
        }
    }

    impl Sealed for JsonText {
        fn into_input(self) -> Result<Input> {
            Ok(Input::Json { bytes: self.bytes, name: self.name })
        }
    }
}

/// A run given as its JSON text, and the name messages call it: the fastest [`check`]. The text
/// is read into a tree that borrows its strings, the one strict loader's rules apply (a
/// duplicate key or an integer beyond 64 bits, which a `serde_json::Value` would hide, fails,
/// naming the run and the JSON Pointer), and a run that matches its golden is compared without
/// ever being a `serde_json::Value`.
///
/// ```
/// use atif_golden::{JsonText, Mode, Outcome, Settings, check};
///
/// let dir = tempfile::tempdir()?;
/// let golden = dir.path().join("from_text.json");
/// let run = br#"{"schema_version": "ATIF-v1.8", "session_id": "s-1", "steps": []}"#;
/// let mut settings = Settings::new();
/// settings.set_mode(Some(Mode::Update));
/// let created = check(&golden, JsonText::new(run.to_vec(), "run.json"), &settings)?;
/// assert!(matches!(created, Outcome::Created { .. }));
///
/// settings.set_mode(Some(Mode::Check));
/// let broken = check(&golden, JsonText::new(b"{\"steps\": 1}".to_vec(), "run.json"), &settings);
/// assert!(broken.unwrap_err().to_string().contains("run.json"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText {
    bytes: Vec<u8>,
    name: String,
}

impl JsonText {
    /// The run's JSON text `bytes`, which messages call `name`.
    pub fn new(bytes: Vec<u8>, name: &str) -> JsonText {
        JsonText { bytes, name: name.to_owned() }
    }

    /// Reads the run saved at `path` within atif-schema's size limit; messages name `path`.
    ///
    /// # Errors
    /// [`Error::Load`] naming `path` when it cannot be read, is too large or is binary.
    pub fn read(path: &Path) -> Result<JsonText> {
        let bytes = atif_schema::read_path(path, &atif_schema::LoadOptions::new())
            .map_err(|err| Error::Load(Box::new(err)))?;
        Ok(JsonText { bytes, name: path.display().to_string() })
    }
}

/// The normalised canonical text of `actual`: exactly what a golden file holds.
///
/// # Errors
/// [`Error::Serialize`] or [`Error::Normalize`] when `actual` is not a trajectory.
pub fn canonical_text<T: Serialize + ?Sized>(actual: &T, settings: &Settings) -> Result<String> {
    let actual = serde_json::to_value(actual).map_err(|source| Error::Serialize { source })?;
    let (normalized, _) = normalize_actual(actual, settings)?;
    Ok(normalized.to_canonical_string())
}

/// The non-generic core of [`check`]; `test` names the test in the report and the default fix
/// (by default the harness thread's name, else the golden's file stem).
pub(crate) fn check_named(
    path: &Path,
    actual: Value,
    settings: &Settings,
    test: Option<&Test<'_>>,
) -> Result<Outcome> {
    GoldenFile::read(path).check_as(Input::Value(actual), settings, test).result
}

/// A golden file read ahead of its check, so that reading it can overlap with producing the
/// run: `atif check` reads the golden on a second thread while it parses the run.
///
/// ```
/// use atif_golden::support::GoldenFile;
/// use atif_golden::{Mode, Outcome, Settings};
/// use serde_json::json;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("first.json");
/// let run = json!({"schema_version": "ATIF-v1.8", "session_id": "s", "steps": []});
/// let mut settings = Settings::new();
/// settings.set_mode(Some(Mode::Update));
///
/// let golden = std::thread::spawn(move || GoldenFile::read(&path)); // the golden, meanwhile
/// let checked = golden.join().expect("the read does not panic").check(run, &settings);
/// assert!(checked.redacted.is_empty());
/// assert!(matches!(checked.result?, Outcome::Created { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct GoldenFile {
    path: PathBuf,
    /// The text, `None` when there is no file; a read error waits for the check to report it.
    text: Result<Option<String>>,
}

/// What [`GoldenFile::check`] found: the check's result, and the secrets it redacted from the
/// run first (which `atif check` tells the user about, whatever the result).
#[derive(Debug)]
#[non_exhaustive]
pub struct Checked {
    /// What [`check`] returns.
    pub result: Result<Outcome>,
    /// What the settings' secret scanner replaced in the run, and where (JSON Pointers into
    /// the run as given); empty when nothing was, or when the check stopped before redacting.
    pub redacted: atif_normalize::atif_secrets::Redactions,
}

impl GoldenFile {
    /// Reads the golden file at `path`. This never fails: a missing file is what the check
    /// reports as [`Error::MissingGolden`] (or creates, in update mode), and a file that cannot
    /// be read is the check's [`Error::Io`].
    pub fn read(path: &Path) -> GoldenFile {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => Ok(Some(text)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(Error::io("read golden file", path, source)),
        };
        GoldenFile { path: path.to_owned(), text }
    }

    /// The golden file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// [`check`] of `actual` against this golden, which also says what it redacted.
    pub fn check<A: Actual>(self, actual: A, settings: &Settings) -> Checked {
        match sealed::Sealed::into_input(actual) {
            Ok(input) => self.check_as(input, settings, None),
            Err(err) => Checked { result: Err(err), redacted: Default::default() },
        }
    }

    /// The check, run for `test` (see [`check_named`]), and recorded in the check log.
    fn check_as(self, actual: Input, settings: &Settings, test: Option<&Test<'_>>) -> Checked {
        // Called from a test harness thread, the thread's name is the test's name; elsewhere
        // (the CLI, a custom harness) the golden's file stem is the best name there is.
        let name = match (test.map(|test| test.name), std::thread::current().name()) {
            (Some(test), _) => test.to_owned(),
            (None, Some(thread)) if thread != "main" => thread.to_owned(),
            (None, _) => self
                .path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let package = test.and_then(|test| test.package);
        let path = self.path.clone();
        let mut redacted = atif_normalize::atif_secrets::Redactions::new();
        let result = run(self, actual, settings, &Test { name: &name, package }, &mut redacted);
        let kind = match &result {
            Ok(outcome) => outcome.kind(),
            Err(err) if err.is_test_failure() => OutcomeKind::Failed,
            Err(_) => return Checked { result, redacted },
        };
        let erased = match &result {
            Ok(Outcome::Changed { erased, .. }) => Some(erased.as_str()),
            _ => None,
        };
        let result = check_log::record(settings, kind, &path, &name, erased).and(result);
        Checked { result, redacted }
    }
}

/// The run as a check receives it.
#[derive(Debug)]
pub enum Input {
    /// Parsed already (by the caller, or from a typed trajectory).
    Value(Value),
    /// The run's JSON text, and how messages name it; read on the fast path, so that it is
    /// never copied into a `Value`.
    Json { bytes: Vec<u8>, name: String },
}

/// The parts of a check that every step needs.
struct Context<'a> {
    path: &'a Path,
    mode: Mode,
    settings: &'a Settings,
    command: String,
}

fn run(
    golden: GoldenFile,
    actual: Input,
    settings: &Settings,
    test: &Test<'_>,
    redacted: &mut atif_normalize::atif_secrets::Redactions,
) -> Result<Outcome> {
    let mode = match settings.mode() {
        Some(mode) => mode,
        None => Mode::from_env()?,
    };
    let command = match settings.update_command() {
        Some(command) => command.to_owned(),
        None => test.update_command(),
    };
    let cx = Context { path: &golden.path, mode, settings, command };
    let bytes;
    let (actual, found) = match actual {
        Input::Value(actual) => {
            // What is not a trajectory never becomes a golden, whatever the mode.
            atif_schema::support::check_trajectory(&actual, "the actual trajectory")
                .map_err(|err| Error::Load(Box::new(err)))?;
            normalize_actual(actual, settings)?
        }
        Input::Json { bytes: json, name } => {
            bytes = json;
            normalize_json(&bytes, &name, settings.normalize_options())?
        }
    };
    *redacted = found;
    check_document(&cx, golden.text?, &actual)
}

/// Reads JSON text on the fast path and normalises it; messages call it `name`. What is not a
/// trajectory never becomes a golden: the one loader's form check, and its message for text
/// the fast reader refuses (which is exactly what the loader refuses).
pub(crate) fn normalize_json<'a>(
    bytes: &'a [u8],
    name: &str,
    options: &atif_normalize::NormalizeOptions,
) -> Result<(NormalizedDocument<'a>, atif_normalize::atif_secrets::Redactions)> {
    let load = |err| Error::Load(Box::new(err));
    let document = match atif_normalize::JsonDocument::parse_for(bytes, options) {
        Ok(document) => document,
        Err(source) => {
            atif_schema::parse_trajectory(bytes, name).map_err(load)?;
            return Err(Error::Normalize { what: name.to_owned(), source });
        }
    };
    atif_schema::support::TrajectoryForm {
        root: document.kind(),
        schema_version: document.member_kind("schema_version"),
        steps: document.member_kind("steps"),
    }
    .check(name)
    .map_err(load)?;
    document.normalize(options).map_err(|source| Error::Normalize { what: name.to_owned(), source })
}

/// The check of the normalised run against the golden's text (`None`: no golden file).
fn check_document(
    cx: &Context<'_>,
    golden_text: Option<String>,
    actual: &NormalizedDocument<'_>,
) -> Result<Outcome> {
    let (path, mode) = (cx.path, cx.mode);
    let Some(golden_text) = golden_text else {
        if mode == Mode::Update {
            file::write_atomic(path, actual.to_canonical_string().as_bytes())?;
            remove_stale_pending(path)?;
            return Ok(Outcome::Created { path: path.to_owned() });
        }
        let pending = write_pending(mode, path, actual)?;
        let command = cx.command.clone();
        return Err(Error::MissingGolden { path: path.to_owned(), command, pending });
    };
    // The same canonical text is the same behaviour: no need to parse the golden at all. The
    // run's text is compared as it is written, never held whole.
    if actual.is_canonical_text_of(golden_text.as_bytes()) {
        remove_stale_pending_unless_check(mode, path)?;
        return Ok(match mode {
            Mode::Update => Outcome::Unchanged { path: path.to_owned() },
            _ => Outcome::Matched { path: path.to_owned() },
        });
    }
    differs(cx, &golden_text, actual)
}

/// The rest of a check whose run's text is not the golden's: compare the Shapes, and fail with
/// the report, or rewrite the golden in update mode.
fn differs(
    cx: &Context<'_>,
    golden_text: &str,
    actual: &NormalizedDocument<'_>,
) -> Result<Outcome> {
    let (path, mode, settings) = (cx.path, cx.mode, cx.settings);
    let golden = match read_golden(path, golden_text, actual, settings) {
        Ok(ReadGolden::Read(golden)) => golden,
        // A golden that cannot even be read as a trajectory is rewritten too: update mode is
        // the way out of a broken golden.
        _ if mode == Mode::Update => return rewrite(path, golden_text, actual),
        Ok(ReadGolden::VersionChanged { golden, actual: actual_version }) => {
            return Err(Error::SchemaVersionChanged {
                path: path.to_owned(),
                golden,
                actual: actual_version,
                command: cx.command.clone(),
                pending: write_pending(mode, path, actual)?,
            });
        }
        Err(err) => return Err(err),
    };
    let comparison = atif_normalize::compare(&golden, actual, &settings.diff_options());
    if mode == Mode::Update {
        if comparison.is_same() {
            remove_stale_pending(path)?;
            return Ok(Outcome::Unchanged { path: path.to_owned() });
        }
        return rewrite(path, golden_text, actual);
    }
    let judged = match settings.match_options() {
        Some(modes) if !comparison.is_same() => Some(judge(&golden, actual, modes)?),
        _ => None,
    };
    if comparison.is_same() || judged.as_ref().is_some_and(MatchOutcome::passed) {
        remove_stale_pending_unless_check(mode, path)?;
        return Ok(Outcome::Matched { path: path.to_owned() });
    }
    let pending = write_pending(mode, path, actual)?;
    // Each delta displayed once, for the error and its report: a list's edit runs an
    // alignment of the whole list.
    let deltas: Vec<String> = comparison.deltas().iter().map(ToString::to_string).collect();
    let report = behaviour_report(&Failure {
        path,
        comparison: &comparison,
        deltas: &deltas,
        settings,
        pending: pending.as_deref(),
        command: &cx.command,
    });
    let changes = comparison.changes().to_vec();
    // Under match modes the failure leads with what the modes forbid, and its deltas are those
    // differences; the Shape report follows, for the steps.
    let (deltas, report) = match judged {
        Some(outcome) => (outcome.failures.clone(), format!("{outcome}\n{report}")),
        None => (deltas, report),
    };
    Err(Error::BehaviourChanged { path: path.to_owned(), deltas, changes, report, pending })
}

/// The match modes' verdict on a run whose Shape differs from its golden's. Both are read
/// back as values here, off the fast path: only a differing run under match modes gets here.
fn judge(
    golden: &NormalizedDocument<'_>,
    actual: &NormalizedDocument<'_>,
    modes: &MatchOptions,
) -> Result<MatchOutcome> {
    let read = |doc: &NormalizedDocument<'_>, name: &str| {
        atif_schema::parse_trajectory(doc.to_canonical_string().as_bytes(), name)
            .map_err(|err| Error::Load(Box::new(err)))
    };
    let (golden, actual) = (read(golden, "the golden")?, read(actual, "the actual trajectory")?);
    Ok(atif_normalize::match_runs(&golden, &actual, modes))
}

/// Update mode's answer to a golden that differs: the run's canonical text replaces it.
fn rewrite(path: &Path, golden_text: &str, actual: &NormalizedDocument<'_>) -> Result<Outcome> {
    let actual_text = actual.to_canonical_string();
    let erased = text_diff(golden_text, &actual_text);
    file::write_atomic(path, actual_text.as_bytes())?;
    remove_stale_pending(path)?;
    Ok(Outcome::Changed { path: path.to_owned(), erased })
}

/// Who ran a check, for the command a failure names as the fix: a test under `cargo test`
/// (its harness name, and its package when the macro knows it), or a golden checked elsewhere.
#[derive(Debug)]
pub(crate) struct Test<'a> {
    /// The name `cargo test` accepts as a filter, or the golden's file stem.
    pub(crate) name: &'a str,
    /// The package the test is in, when known (`assert_golden!` knows it).
    pub(crate) package: Option<&'a str>,
}

impl Test<'_> {
    /// `ATIF_GOLDEN=update cargo test -p PACKAGE NAME`: the command every Rust project has.
    fn update_command(&self) -> String {
        let package = self.package.map(|package| format!(" -p {package}")).unwrap_or_default();
        format!("{MODE_ENV}=update cargo test{package} {}", self.name)
    }
}

/// The golden as read for a comparison: normalised again, unless its schema version differs
/// from the run's (then no Shape comparison means anything).
enum ReadGolden<'g> {
    VersionChanged { golden: String, actual: String },
    Read(NormalizedDocument<'g>),
}

/// Parses and normalises the golden, while the run's content hash (most of what its Shape
/// costs on a long run) is computed on a second thread, for the comparison that follows.
fn read_golden<'g>(
    path: &Path,
    golden_text: &'g str,
    actual: &NormalizedDocument<'_>,
    settings: &Settings,
) -> Result<ReadGolden<'g>> {
    // The one strict loader's rules: a duplicate key or an integer out of range in a golden
    // edited by hand is named with its pointer, not silently read. Normalising the golden
    // again is a no-op for a golden this crate wrote (normalisation is idempotent), and makes a
    // golden recorded before a new volatile key was added still match.
    let name = format!("golden file {}", path.display());
    let (_, golden) = atif_normalize::support::join(
        || actual.content_hash(),
        || normalize_json(golden_text.as_bytes(), &name, settings.normalize_options()),
    );
    let (golden, _) = golden?;
    let golden_version = version_label(&golden);
    let actual_version = version_label(actual);
    if golden_version != actual_version {
        return Ok(ReadGolden::VersionChanged { golden: golden_version, actual: actual_version });
    }
    Ok(ReadGolden::Read(golden))
}

/// The run normalised, and what the settings' secret scanner replaced in it.
fn normalize_actual(
    actual: Value,
    settings: &Settings,
) -> Result<(NormalizedDocument<'static>, atif_normalize::atif_secrets::Redactions)> {
    NormalizedDocument::from_value(actual, settings.normalize_options())
        .map_err(|source| Error::Normalize { what: "the actual trajectory".to_owned(), source })
}

fn version_label(doc: &NormalizedDocument<'_>) -> String {
    match doc.member("schema_version") {
        Some(Value::String(label)) => label,
        Some(other) => format!("schema_version {other}"),
        None => "no schema_version".to_owned(),
    }
}

/// Writes the pending file (the canonical text of the run) in review mode; returns its path
/// when written.
fn write_pending(
    mode: Mode,
    golden: &Path,
    actual: &NormalizedDocument<'_>,
) -> Result<Option<PathBuf>> {
    if mode != Mode::Review {
        return Ok(None);
    }
    let pending = file::pending_path(golden);
    file::write_atomic(&pending, actual.to_canonical_string().as_bytes())?;
    Ok(Some(pending))
}

/// In update and review mode, a golden that matches makes its pending file stale.
fn remove_stale_pending_unless_check(mode: Mode, golden: &Path) -> Result<()> {
    match mode {
        Mode::Check => Ok(()),
        _ => remove_stale_pending(golden),
    }
}

/// A pending file left by an earlier failing run is stale once the golden matches.
fn remove_stale_pending(golden: &Path) -> Result<()> {
    let pending = file::pending_path(golden);
    match std::fs::remove_file(&pending) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::io("remove stale pending file", &pending, source)),
    }
}

fn text_diff(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header("golden (erased)", "actual")
        .to_string()
}

struct Failure<'a> {
    path: &'a Path,
    comparison: &'a atif_normalize::Comparison<'a>,
    deltas: &'a [String],
    settings: &'a Settings,
    pending: Option<&'a Path>,
    command: &'a str,
}

/// The failure message: the report (what changed first, then where, then the text), then
/// where the run is and what to type.
fn behaviour_report(failure: &Failure<'_>) -> String {
    let mut options = atif_normalize::ReportOptions::new();
    options.set_max_places(failure.settings.max_diff_places());
    let full_command = match (failure.settings.full_diff_command(), failure.pending) {
        (Some(command), _) => command.to_owned(),
        (None, Some(pending)) => format!(
            "atif diff --full {} {}",
            crate::command::shell_word(&failure.path.display().to_string()),
            crate::command::shell_word(&pending.display().to_string())
        ),
        (None, None) => {
            "run locally (not on CI, ATIF_GOLDEN unset) to get the run as a pending file, \
                 then atif diff --full GOLDEN PENDING"
                .to_owned()
        }
    };
    options.set_full_command(Some(full_command));
    let mut out = failure.comparison.report_with(failure.deltas, &options);
    // Writing into a String cannot fail, so the fmt::Results below are ignored.
    let _ = writeln!(out, "golden: {}", failure.path.display());
    let pending_note = crate::error::pending_note(failure.pending);
    if let Some(lines) = pending_note.strip_prefix('\n') {
        let _ = writeln!(out, "{lines}");
    }
    let _ = write!(out, "if this change is intended: {}", failure.command);
    out
}
