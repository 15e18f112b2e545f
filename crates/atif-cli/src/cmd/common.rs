//! Helpers shared by several subcommands: reading inputs, normalisation flags, exit statuses.

use std::cell::RefCell;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::Context;
use atif_golden::support::shell_word;
use atif_golden::{GoldenConfig, ProjectConfig};
use atif_normalize::{Masker, NormalizeOptions, SelectorAction};
use atif_schema::{Expected, LoadOptions};
use atif_secrets::{Redactions, Scanner};
use serde_json::Value;

static LOAD_OPTIONS: OnceLock<LoadOptions> = OnceLock::new();

thread_local! {
    /// The command line `atif harness` runs in-process on this thread, with its own
    /// `--max-input-bytes`: what [`command_args`] and the readers see instead of the process's.
    static LINE: RefCell<Option<(Vec<String>, LoadOptions)>> = const { RefCell::new(None) };
}

/// Runs `run` as the command line `args` (`atif check ...`), with `max_input_bytes` as its
/// limit, on this thread.
pub(crate) fn with_command_line<T>(
    args: &[String],
    max_input_bytes: u64,
    run: impl FnOnce() -> T,
) -> T {
    let mut options = LoadOptions::new();
    options.set_max_bytes(max_input_bytes);
    let outer = LINE.with(|line| line.replace(Some((args.to_vec(), options))));
    let value = run();
    LINE.with(|line| line.replace(outer));
    value
}

/// The words of this command line, `atif` first: the process's, or the one
/// [`with_command_line`] runs.
pub(crate) fn command_args() -> Vec<String> {
    LINE.with(|line| line.borrow().as_ref().map(|(args, _)| args.clone()))
        .unwrap_or_else(|| std::env::args().collect())
}

/// Sets the `--max-input-bytes` limit for this run; called once by `main`.
pub(crate) fn set_max_input_bytes(max_bytes: u64) {
    let mut options = LoadOptions::new();
    options.set_max_bytes(max_bytes);
    let _ = LOAD_OPTIONS.set(options);
}

fn load_options() -> LoadOptions {
    LINE.with(|line| line.borrow().as_ref().map(|(_, options)| *options))
        .unwrap_or_else(|| LOAD_OPTIONS.get().copied().unwrap_or_default())
}

/// The `--max-input-bytes` limit of this run, for readers other than [`read_input`] (the log
/// files `atif import` reads through atif-import).
pub(crate) fn max_input_bytes() -> u64 {
    load_options().max_bytes()
}

/// Reads `path` whole, or standard input when `path` is `-`, through atif-schema's bounded
/// reader: at most `--max-input-bytes`, stopped at the first byte of binary input.
///
/// A missing file, a directory or an unreadable file is an error naming the path (exit 2);
/// binary input is invalid input (exit 1).
pub(crate) fn read_input(path: &str) -> anyhow::Result<Vec<u8>> {
    read_input_expecting(path, Expected::TRAJECTORY)
}

/// [`read_input`] for an input that is not a trajectory: `expected` says what it should be
/// in an error about bytes that cannot be JSON.
pub(crate) fn read_input_expecting(path: &str, expected: Expected) -> anyhow::Result<Vec<u8>> {
    let mut options = load_options();
    options.set_expected(expected);
    if path == "-" {
        return Ok(atif_schema::support::read_stdin(&options)?);
    }
    atif_schema::read_path(Path::new(path), &options).map_err(|err| {
        let looks_like_json = path.trim_start().starts_with(['{', '[']);
        match err {
            atif_schema::Error::Read { .. } if looks_like_json => anyhow::anyhow!(
                "{:#}; this argument is a file name, and it looks like JSON text: save the JSON \
                 to a file, or pass `-` and give it on standard input",
                anyhow::Error::new(err)
            ),
            err => err.into(),
        }
    })
}

/// Reads and parses the trajectory at `path` (`-` for standard input): the one loader of
/// atif-schema, which rejects what is not a trajectory with the JSON pointer (exit 1).
pub(crate) fn load_trajectory(path: &str) -> anyhow::Result<Value> {
    let bytes = read_input(path)?;
    Ok(atif_schema::parse_trajectory(&bytes, display_name(path))?)
}

/// How an input is named in messages: its path, or `standard input` for `-`.
pub(crate) fn display_name(path: &str) -> &str {
    if path == "-" { "standard input" } else { path }
}

/// An error about the input itself (exit status 1), for errors of crates other than
/// atif-schema, whose own errors say which kind they are.
#[derive(Debug)]
pub(crate) struct InvalidInput(pub(crate) anyhow::Error);

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for InvalidInput {}

/// Marks `err` as being about the input (exit status 1).
pub(crate) fn invalid(err: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(InvalidInput(err.into()))
}

/// The exit status for an error: 1 when it is about the input (not a trajectory, not JSON, an
/// invalid script or log), 2 when the command could not run (unreadable file, bad arguments,
/// a write error).
pub(crate) fn exit_status(err: &anyhow::Error) -> u8 {
    let about_input = err.chain().any(|cause| {
        cause.is::<InvalidInput>()
            || cause.downcast_ref::<atif_schema::Error>().is_some_and(|err| err.is_invalid_input())
    });
    if about_input { 1 } else { 2 }
}

/// How a trajectory is normalised: the flags shared by `normalize`, `shape`, `diff` and `check`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct NormalizeArgs {
    /// Also remove this key at every depth (outside tool-call arguments); repeatable.
    #[arg(long = "volatile", value_name = "KEY")]
    pub(crate) volatile: Vec<String>,
    /// Remove the values at this insta-style selector (`.steps[].extra.request_id`,
    /// `.**.request_id`), or replace them with a string with `SELECTOR=REPLACEMENT`; repeatable.
    #[arg(long = "selector", value_name = "SELECTOR[=REPLACEMENT]")]
    pub(crate) selectors: Vec<String>,
    /// Replace every match of REGEX in string values with REPLACEMENT (split at the last `=`);
    /// repeatable, applied in order after the default address masker.
    #[arg(long = "mask", value_name = "REGEX=REPLACEMENT")]
    pub(crate) mask: Vec<String>,
    /// Keep embedded subagents in their recorded order (ids are still renumbered).
    #[arg(long)]
    pub(crate) keep_subagent_order: bool,
    /// Start from a named preset for logs of a known agent (`claude-code`, `codex`, `gemini-cli`,
    /// `opencode`, `pi`): their volatile keys, ids and timings, and the recorded cwd and home as
    /// `<cwd>`, `<home>` (default: the project file's, else the one of the agent whose log
    /// `atif import` read, which it records in `agent.extra.log_format`).
    // The names are clap's possible values, so shell completion offers them.
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(atif_normalize::PRESETS))]
    pub(crate) preset: Option<String>,
    #[command(flatten)]
    pub(crate) secrets: SecretArgs,
}

/// The normalise options of a command, and what chose them.
#[derive(Debug)]
pub(crate) struct Chosen {
    /// The options: the preset's, then the project file's keys and masks, then the flags.
    pub(crate) options: NormalizeOptions,
    /// What the project file (`atif.toml`) says about the golden or file.
    pub(crate) config: GoldenConfig,
    /// The preset applied, if any (by `--preset`, the project file, or the run's log format).
    pub(crate) preset: Option<String>,
}

impl NormalizeArgs {
    /// The normalise options for `command` on the golden (or file) at `path` and the run whose
    /// text is `run`: the preset (`--preset`, else the project file's, else the one of the
    /// agent whose log the run was imported from, which a note says), then the project file's
    /// volatile keys and masks, then the flags in order.
    pub(crate) fn to_options(
        &self,
        command: &str,
        path: Option<&str>,
        run: Option<&[u8]>,
    ) -> anyhow::Result<Chosen> {
        let config = project_config(path)?;
        let mut preset = self.preset.clone().or_else(|| config.preset().map(str::to_owned));
        if preset.is_none() {
            let origin = run.map(origin).unwrap_or_default();
            if let (Some(name), Some(format)) = (origin.preset(), &origin.log_format) {
                let source = match format.as_str() {
                    "otel" => "an OpenTelemetry trace".to_owned(),
                    format => format!("a {format} log"),
                };
                crate::output::note(|err| {
                    writeln!(
                        err,
                        "atif {command}: preset {name}, as the run was imported from {source} (--preset chooses another)"
                    )
                })?;
                preset = Some(name.to_owned());
            }
        }
        let mut options = match &preset {
            Some(name) => atif_normalize::preset(name)?,
            None => NormalizeOptions::default(),
        };
        config.add_to(&mut options)?;
        for key in &self.volatile {
            options.add_volatile_key(key.clone());
        }
        for spec in &self.selectors {
            let (selector, action) = match split_selector(spec) {
                Some((selector, replacement)) => {
                    (selector, SelectorAction::Replace(replacement.to_owned().into()))
                }
                None => (spec.as_str(), SelectorAction::Remove),
            };
            options.add_selector(selector, action).context("--selector")?;
        }
        for spec in &self.mask {
            let Some((pattern, replacement)) = spec.rsplit_once('=') else {
                anyhow::bail!("--mask: expected REGEX=REPLACEMENT, got `{spec}`");
            };
            options.add_masker(Masker::new(pattern, replacement).context("--mask")?);
        }
        if self.keep_subagent_order {
            options.set_sort_subagents(false);
        }
        options.set_secret_scanner(self.secrets.scanner()?);
        Ok(Chosen { options, config, preset })
    }
}

/// What the project file found upward from the working folder says about `path` (a golden or
/// a trajectory; the defaults alone for standard input or when there is no such file).
pub(crate) fn project_config(path: Option<&str>) -> anyhow::Result<GoldenConfig> {
    let Some(project) = ProjectConfig::find(Path::new("."))? else {
        return Ok(GoldenConfig::default());
    };
    Ok(match path {
        Some(path) if path != "-" => project.config_for(Path::new(path)),
        _ => project.defaults().clone(),
    })
}

/// What a trajectory says about the log it was imported from: `agent.name`, and the log format
/// `atif import` records in `agent.extra` ([`atif_import::LOG_FORMAT_KEY`]).
#[derive(Debug, Default)]
pub(crate) struct Origin {
    /// `agent.name`.
    pub(crate) agent: Option<String>,
    /// `agent.extra.log_format`.
    pub(crate) log_format: Option<String>,
}

impl Origin {
    /// The preset of the agent whose log format the run names, if it names a known one.
    pub(crate) fn preset(&self) -> Option<&'static str> {
        let format = self.log_format.as_deref()?.parse::<atif_import::Format>().ok()?;
        Some(format.agent()).filter(|name| atif_normalize::PRESETS.contains(name))
    }
}

/// Reads the root's `agent` member of a trajectory's text and stops there: a tool-call argument
/// or a message that mentions a log format deeper down never counts, and the rest of a long run
/// is not read. Text that is not a trajectory says nothing.
pub(crate) fn origin(bytes: &[u8]) -> Origin {
    use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

    #[derive(serde::Deserialize)]
    struct AgentHead {
        name: Option<Value>,
        extra: Option<Value>,
    }
    struct Root<'a>(&'a mut Origin);
    impl<'de> Visitor<'de> for Root<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a trajectory")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key != "agent" {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                let agent: AgentHead = map.next_value()?;
                let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
                self.0.agent = text(agent.name.as_ref());
                self.0.log_format = text(
                    agent.extra.as_ref().and_then(|extra| extra.get(atif_import::LOG_FORMAT_KEY)),
                );
                // Stopping here leaves the rest unread, which the caller's error ignores.
                return Ok(());
            }
            Ok(())
        }
    }
    impl<'de> DeserializeSeed<'de> for Root<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
            de.deserialize_map(self)
        }
    }

    let mut origin = Origin::default();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    // An error after the agent was read (the unread rest) or before (not a trajectory) leaves
    // what was found: nothing, in the second case.
    let _ = Root(&mut origin).deserialize(&mut de);
    origin
}

/// Which secrets are redacted: the flags of every command whose output may be committed.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SecretArgs {
    /// Keep secrets (API keys, tokens, passwords) instead of replacing each with
    /// `<redacted:KIND>`: for a local investigation only; never commit or share the output.
    #[arg(long)]
    pub(crate) keep_secrets: bool,
    /// Also redact every match of REGEX, as `<redacted:custom>`; repeatable.
    #[arg(long = "secret-pattern", value_name = "REGEX")]
    pub(crate) secret_patterns: Vec<String>,
}

impl SecretArgs {
    /// The scanner these flags describe, or `None` with `--keep-secrets`.
    pub(crate) fn scanner(&self) -> anyhow::Result<Option<Scanner>> {
        if self.keep_secrets {
            return Ok(None);
        }
        let mut scanner = Scanner::new();
        for pattern in &self.secret_patterns {
            scanner.add_user_pattern(pattern).context("--secret-pattern")?;
        }
        Ok(Some(scanner))
    }

    /// Says on standard error what was redacted (kinds, counts, JSON Pointers, never a
    /// secret), or that secrets were kept: neither happens silently, and the kept-secrets
    /// warning shows even under `--quiet`.
    pub(crate) fn report(&self, command: &str, report: &Redactions) -> anyhow::Result<()> {
        if self.keep_secrets {
            crate::output::error(|err| {
                writeln!(
                    err,
                    "atif {command}: --keep-secrets: secrets were not redacted; do not commit or share this output"
                )
            })
        } else if report.is_empty() {
            Ok(())
        } else {
            crate::output::note(|err| writeln!(err, "atif {command}: {report}"))
        }
    }
}

/// Splits `SELECTOR=REPLACEMENT` at the first `=` outside a quoted key (`.["a=b"]=x`), or
/// returns `None` when there is no such `=`.
fn split_selector(spec: &str) -> Option<(&str, &str)> {
    let mut in_quotes = false;
    let mut escaped = false;
    for (idx, c) in spec.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quotes => escaped = true,
            '"' => in_quotes = !in_quotes,
            '=' if !in_quotes => return Some((&spec[..idx], &spec[idx + 1..])),
            _ => {}
        }
    }
    None
}

/// Parses `--token-tolerance`: a finite number, 0 or more.
pub(crate) fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!("expected a finite number of 0 or more (0.1 for 10%), got `{text}`")),
    }
}

/// Runs `write` on standard output: [`crate::output::out`], under the name the subcommands
/// have always used.
pub(crate) fn print(
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    crate::output::out(write)
}

/// How two Shapes are compared: the flags shared by `diff` and `check`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CompareArgs {
    /// Relative band allowed on prompt and completion tokens (`0.1` = 10%); a golden 0 needs 0
    /// (default: the project file's `token_tolerance`, else 0).
    // A negative value reaches `parse_tolerance` and gets its message, rather than clap's
    // "unexpected argument '-1'" with a tip that would make it a positional argument.
    // Without the flag, the project file's `token_tolerance` applies, else 0.
    #[arg(long, value_name = "F", value_parser = parse_tolerance, allow_negative_numbers = true)]
    pub(crate) token_tolerance: Option<f64>,
    /// Do not compare the content hash: only structural fields count.
    #[arg(long)]
    pub(crate) no_content: bool,
}

impl CompareArgs {
    /// The token tolerance: the flag's, else the project file's, else 0.
    pub(crate) fn tolerance(&self, config: &GoldenConfig) -> f64 {
        self.token_tolerance.or(config.token_tolerance()).unwrap_or(0.0)
    }

    /// Whether the content hash is compared: not with `--no-content`, else as the project file
    /// says, else yes.
    pub(crate) fn compare_content(&self, config: &GoldenConfig) -> bool {
        !self.no_content && config.compare_content().unwrap_or(true)
    }

    /// The diff options these flags describe, on top of the project file's.
    pub(crate) fn to_options(&self, config: &GoldenConfig) -> atif_normalize::DiffOptions {
        let mut options = atif_normalize::DiffOptions::default();
        options
            .set_token_tolerance(self.tolerance(config))
            .set_compare_content(self.compare_content(config));
        options
    }
}

/// The run under test and how it is compared with its golden: what `diff` and `check` share
/// after their GOLDEN argument. Flattened last, so ACTUAL stays their second argument and these
/// flags come after their own in `--help`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RunArgs {
    /// The trajectory of the run under test (`-` for standard input).
    #[arg(value_name = "ACTUAL")]
    pub(crate) actual: String,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
    #[command(flatten)]
    pub(crate) normalize: NormalizeArgs,
}

/// The `-o/--output FILE` flag of the commands that print a document.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct OutputArgs {
    /// Write to FILE instead of standard output, atomically: a killed run leaves the old file
    /// (or none), never a truncated one. A symlink is followed and kept.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<std::path::PathBuf>,
}

impl OutputArgs {
    /// Runs `write` on the output file (atomically) or on standard output.
    pub(crate) fn write(
        &self,
        write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        match &self.output {
            Some(path) => write_atomically(path, write),
            None => crate::output::out(write),
        }
    }
}

/// Writes a file atomically through `atif_fs::write_atomic_with` (temp file beside it, then
/// a rename), the one atomic write of the workspace, for a command that needs no path back.
pub(crate) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    atif_fs::write_atomic_with(path, write)?;
    Ok(())
}

/// The output format of `--format`, the same flag in every subcommand that has it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Lines for a person to read.
    #[default]
    Text,
    /// One JSON document with the shape given in docs/cli.md.
    Json,
}

/// This very command line turned into `atif SUBCOMMAND FLAG ...`, without the flags that only
/// `check` takes (`--update`, `--update-command CMD`), `--full` or `--format`: the fix
/// (`atif check --update ...`) and the full diff (`atif diff --full ...`) a failure names.
pub(crate) fn this_command_as(subcommand: &str, flag: &str) -> String {
    let mut words = vec!["atif".to_owned(), subcommand.to_owned(), flag.to_owned()];
    let mut args = command_args().into_iter().skip(2);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--update" | "--full" => {}
            "--update-command" | "--format" => {
                args.next();
            }
            _ if arg.starts_with("--update-command=") || arg.starts_with("--format=") => {}
            _ => words.push(shell_word(&arg)),
        }
    }
    words.join(" ")
}
