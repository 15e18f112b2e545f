//! The import entry points, [`import`] and [`import_runs`], and what they return, [`Import`].

use std::path::{Path, PathBuf};

use atif_secrets::Redactions;
use serde_json::Value;

use crate::context::{Context, Stats};
use crate::draft::Trajectory;
use crate::format::{Format, detect_records};
use crate::lines::Records;
use crate::options::ImportOptions;
use crate::{Error, Result};

/// The key of `agent.extra` where an import records the log format it read
/// ([`Format::name`]), beside `agent.name`, the agent ([`Format::agent`]).
pub const LOG_FORMAT_KEY: &str = "log_format";

/// The result of an import: the trajectory, the format it was read as, and statistics.
///
/// The trajectory is kept in atif-schema's typed model, already redacted: no JSON value of the
/// whole trajectory is built, which for a large log would cost more than the import itself
/// (hundreds of megabytes of maps). [`Import::write_json`] writes it as the text `atif import`
/// writes, step by step, and [`Import::trajectory`] gives its JSON value for a caller that
/// wants one.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    body: Body,
    format: Format,
    detected: bool,
    stats: Stats,
    secrets: Redactions,
}

/// How an [`Import`] holds its trajectory.
#[derive(Debug, Clone, PartialEq)]
enum Body {
    /// In atif-schema's model: the usual case.
    Typed(Box<atif_schema::Trajectory>),
    /// As a JSON value: when the options' scanner has patterns of the user's, which could match
    /// a name or a fixed value of ATIF (`message`, `agent`) that the model cannot hold
    /// redacted; and once inline images are written out.
    Value(Value),
}

impl Import {
    /// The ATIF-v1.8 trajectory as a JSON value, built on each call.
    pub fn trajectory(&self) -> Value {
        match &self.body {
            Body::Typed(trajectory) => (**trajectory).clone().into_value(),
            Body::Value(value) => value.clone(),
        }
    }

    /// Takes the trajectory out as a JSON value.
    pub fn into_trajectory(self) -> Value {
        match self.body {
            Body::Typed(trajectory) => (*trajectory).into_value(),
            Body::Value(value) => value,
        }
    }

    /// Writes the trajectory as pretty-printed JSON with sorted keys, as
    /// `serde_json::to_writer_pretty` writes [`Import::trajectory`], without a final newline:
    /// what `atif import` writes. It is written one step at a time, so give a buffered `out`.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match &self.body {
            Body::Typed(trajectory) => crate::json::write_trajectory(trajectory, out),
            Body::Value(value) => crate::json::write_value(value, out),
        }
    }

    /// The text of [`Import::write_json`].
    pub fn json(&self) -> String {
        let mut text = Vec::new();
        // Writing to a `Vec` cannot fail, and serde_json writes UTF-8.
        let _ = self.write_json(&mut text);
        String::from_utf8(text)
            .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
    }

    /// Writes every inline image of the trajectory to `folder` and points the trajectory at the
    /// files, as [`write_media`](crate::write_media) does for a JSON value, and returns the
    /// files written.
    ///
    /// # Errors
    /// As [`write_media`](crate::write_media).
    pub fn write_media(&mut self, folder: &Path, reference: &str) -> Result<Vec<PathBuf>> {
        if let Body::Typed(trajectory) = &mut self.body {
            // An inline image is a string that starts with `data:`; most trajectories have none,
            // and keep their typed model.
            let mut probe = DataUri(false);
            crate::walk::walk(trajectory, &mut probe);
            if !probe.0 {
                return Ok(Vec::new());
            }
        }
        let mut trajectory = match std::mem::replace(&mut self.body, Body::Value(Value::Null)) {
            Body::Typed(trajectory) => (*trajectory).into_value(),
            Body::Value(value) => value,
        };
        let written = crate::write_media(&mut trajectory, folder, reference);
        self.body = Body::Value(trajectory);
        written
    }

    /// The format the log was read as.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether the format was detected (rather than forced by the options).
    pub fn detected(&self) -> bool {
        self.detected
    }

    /// What the import met on its way.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The secrets replaced by `<redacted:KIND>` markers, and where (JSON Pointers into the
    /// trajectory); empty when the options keep secrets.
    pub fn secrets(&self) -> &Redactions {
        &self.secrets
    }

    /// The finished import: the options' scanner redacts the trajectory here, the one place
    /// every import passes through.
    pub(crate) fn from_parts(
        trajectory: Trajectory,
        format: Format,
        stats: Stats,
        options: &ImportOptions,
    ) -> Import {
        let mut trajectory = trajectory.into_atif();
        // The trajectory says which log it came from, so that a check can apply that agent's
        // normalisation preset without being told (`atif check` and friends read it).
        trajectory
            .agent
            .extra
            .get_or_insert_with(Default::default)
            .insert(LOG_FORMAT_KEY.to_owned(), Value::String(format.name().to_owned()));
        let (body, secrets) = match options.secret_scanner() {
            None => (Body::Typed(Box::new(trajectory)), Redactions::new()),
            Some(scanner) if scanner.patterns().count() > atif_secrets::DEFAULT_PATTERNS.len() => {
                let mut value = trajectory.into_value();
                let report = scanner.redact_value(&mut value);
                (Body::Value(value), report)
            }
            Some(scanner) => {
                // The free text only, in the order of a walk over the whole document: the
                // default patterns match no name or fixed value of ATIF (a test checks them all).
                let mut redact = Redact(scanner.redactor());
                crate::walk::walk(&mut trajectory, &mut redact);
                (Body::Typed(Box::new(trajectory)), redact.0.into_redactions())
            }
        };
        Import { body, format, detected: options.format.is_none(), stats, secrets }
    }
}

/// Redacts each string and object of a typed trajectory as they sit in its JSON document.
struct Redact<'s>(atif_secrets::Redactor<'s>);

impl crate::walk::Visit for Redact<'_> {
    fn text(&mut self, text: &mut String, pointer: &str) {
        let mut value = Value::String(std::mem::take(text));
        self.0.redact_value(&mut value, pointer);
        if let Value::String(redacted) = value {
            *text = redacted;
        }
    }

    fn object(&mut self, object: &mut atif_schema::JsonObject, pointer: &str) {
        let mut value = Value::Object(std::mem::take(object));
        self.0.redact_value(&mut value, pointer);
        if let Value::Object(redacted) = value {
            *object = redacted;
        }
    }
}

/// Whether a typed trajectory holds a string that starts with `data:`, at any depth.
struct DataUri(bool);

impl crate::walk::Visit for DataUri {
    fn text(&mut self, text: &mut String, _pointer: &str) {
        self.0 |= text.starts_with("data:");
    }

    fn object(&mut self, object: &mut atif_schema::JsonObject, _pointer: &str) {
        self.0 |= object.values().any(holds_data_uri);
    }
}

fn holds_data_uri(value: &Value) -> bool {
    match value {
        Value::String(text) => text.starts_with("data:"),
        Value::Array(items) => items.iter().any(holds_data_uri),
        Value::Object(map) => map.values().any(holds_data_uri),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Converts a Claude Code, Codex, Gemini CLI, OpenCode or pi log into an ATIF-v1.8 trajectory.
///
/// The log is JSON Lines, or one JSON document (Claude's `--output-format json` array, a Gemini
/// CLI session, `opencode export`); the format is detected from its first records unless the
/// options force one. A final line cut short (a run killed mid-write) is not an error: everything
/// before it is imported and the trajectory is marked `extra.crashed`. Secrets (API keys,
/// tokens, passwords; see `atif-secrets`) become `<redacted:KIND>` markers unless the options
/// keep them.
///
/// # Errors
/// [`Error::Empty`], [`Error::NotJson`] (naming the line) or [`Error::NotAnObject`] when the
/// bytes are not a JSON Lines log; [`Error::Unrecognized`] when detection finds no known
/// format; [`Error::WrongFormat`] when a forced format matches none of the first records;
/// [`Error::UnknownRecord`] in strict mode.
pub fn import(bytes: &[u8], options: &ImportOptions) -> Result<Import> {
    let (trajectory, format, stats) = import_raw(bytes, options)?;
    Ok(Import::from_parts(trajectory, format, stats, options))
}

/// [`import`] before the trajectory is written as JSON (used to embed subagent files).
pub(crate) fn import_raw(
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<(Trajectory, Format, Stats)> {
    let (mut runs, format, stats) = import_raw_runs(bytes, options)?;
    let count = runs.len();
    let trajectory = match options.run {
        Some(run) if (1..=count).contains(&run) => runs.swap_remove(run - 1),
        Some(run) => return Err(Error::NoSuchRun { run, count }),
        None if count == 1 => runs.swap_remove(0),
        None => return Err(Error::SeveralRuns { count }),
    };
    Ok((trajectory, format, stats))
}

/// Imports every run of a log, in file order (a log of one run gives one trajectory).
///
/// # Errors
/// As [`import`], except that several runs are not an error.
pub fn import_runs(bytes: &[u8], options: &ImportOptions) -> Result<Vec<Import>> {
    let (runs, format, stats) = import_raw_runs(bytes, options)?;
    Ok(runs.into_iter().map(|t| Import::from_parts(t, format, stats.clone(), options)).collect())
}

fn import_raw_runs(
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<(Vec<Trajectory>, Format, Stats)> {
    let bytes = crate::binary::decode(bytes, options.max_input_bytes())?;
    let fast = match options.format {
        None | Some(Format::Otel) => crate::formats::otel::import_fast(&bytes, options.strict),
        Some(_) => None,
    };
    let (mut runs, format, stats) = match fast {
        Some((runs, stats)) => (runs, Format::Otel, stats),
        None => import_records(&bytes, options)?,
    };
    for trajectory in &mut runs {
        crate::run_dirs::record_paths(trajectory, format, options);
    }
    Ok((runs, format, stats))
}

/// The runs of a log read through `Records`: detected, then imported by its format.
fn import_records(
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<(Vec<Trajectory>, Format, Stats)> {
    let mut records = Records::open(bytes, options.strict)?;
    let detected = detect_records(records.ahead());
    let format = match (options.format, detected) {
        (Some(format), _) => {
            if !records.ahead().any(|r| format.recognizes(&r.value)) {
                return Err(Error::WrongFormat {
                    format: format.name(),
                    detected: detected.map(Format::name),
                });
            }
            format
        }
        (None, Some(format)) => format,
        (None, None) => {
            return Err(Error::Unrecognized {
                scanned: records.ahead().count(),
                known: Format::known_names(),
            });
        }
    };
    let mut ctx = Context::new(format, options.strict, records.layout());
    let mut runs = crate::formats::import_runs(format, &mut records, &mut ctx)?;
    if ctx.close(&mut records) {
        if let Some(last) = runs.last_mut() {
            last.crashed = true;
        }
    }
    Ok((runs, format, ctx.stats))
}
