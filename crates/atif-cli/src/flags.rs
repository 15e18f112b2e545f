//! The flag groups several subcommands flatten into theirs: how a run is normalised
//! (`NormalizeArgs`, `SecretArgs`), how two runs are compared (`CompareArgs`, `RunArgs`) and
//! `--format`.

use std::path::Path;

use anyhow::Context;
use atif_golden::{GoldenConfig, ProjectConfig};
use atif_normalize::{Masker, NormalizeOptions, SelectorAction};
use atif_secrets::{Redactions, Scanner};

use crate::origin::origin;

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

/// The output format of `--format`, the same flag in every subcommand that has it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Lines for a person to read.
    #[default]
    Text,
    /// One JSON document with the shape given in docs/cli.md.
    Json,
}
