//! Helpers shared by several subcommands: reading inputs, normalisation flags.

use std::io::Read;
use std::path::Path;

use anyhow::Context;
use atif_normalize::{Masker, NormalizeOptions, Redaction};

/// Reads `path` whole, or standard input when `path` is `-`.
///
/// A missing file, a directory or an unreadable file is an error naming the path
/// (the caller turns it into exit code 2).
pub(crate) fn read_input(path: &str) -> anyhow::Result<Vec<u8>> {
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).context("cannot read standard input")?;
        return Ok(bytes);
    }
    if Path::new(path).is_dir() {
        anyhow::bail!("cannot read {path}: it is a directory, expected a JSON file");
    }
    std::fs::read(path).with_context(|| format!("cannot read {path}"))
}

/// How a trajectory is normalised: the flags shared by `normalize`, `shape`, `diff` and `check`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct NormalizeArgs {
    /// Also remove this key at every depth (outside tool-call arguments); repeatable.
    #[arg(long = "volatile", value_name = "KEY")]
    pub(crate) volatile: Vec<String>,
    /// Remove the values at this insta-style selector (`.steps[].extra.request_id`,
    /// `.**.request_id`), or replace them with a string with `SELECTOR=REPLACEMENT`; repeatable.
    #[arg(long = "redact", value_name = "SELECTOR[=REPLACEMENT]")]
    pub(crate) redact: Vec<String>,
    /// Replace every match of REGEX in string values with REPLACEMENT (split at the last `=`);
    /// repeatable, applied in order after the default address masker.
    #[arg(long = "mask", value_name = "REGEX=REPLACEMENT")]
    pub(crate) mask: Vec<String>,
    /// Keep embedded subagents in their recorded order (ids are still renumbered).
    #[arg(long)]
    pub(crate) keep_subagent_order: bool,
    /// Start from a named preset for logs of a known agent (`claude-code`, `codex`, `gemini-cli`,
    /// `opencode`, `pi`): their volatile keys and ids, and the recorded cwd and home as `<cwd>`, `<home>`.
    #[arg(long, value_name = "NAME")]
    pub(crate) preset: Option<String>,
}

impl NormalizeArgs {
    /// The normalise options these flags describe: the preset first, then the flags in order.
    pub(crate) fn to_options(&self) -> anyhow::Result<NormalizeOptions> {
        let mut options = match &self.preset {
            Some(name) => atif_normalize::preset(name)?,
            None => NormalizeOptions::default(),
        };
        for key in &self.volatile {
            options.add_volatile_key(key.clone());
        }
        for spec in &self.redact {
            let (selector, redaction) = match split_redaction(spec) {
                Some((selector, replacement)) => {
                    (selector, Redaction::Replace(replacement.to_owned().into()))
                }
                None => (spec.as_str(), Redaction::Remove),
            };
            options.add_redaction(selector, redaction).context("--redact")?;
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
        Ok(options)
    }
}

/// Splits `SELECTOR=REPLACEMENT` at the first `=` outside a quoted key (`.["a=b"]=x`), or
/// returns `None` when there is no such `=`.
fn split_redaction(spec: &str) -> Option<(&str, &str)> {
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

/// Runs `write` on a locked standard output and flushes it.
///
/// A reader that stops early (`atif diff a b | head`) closes the pipe; that is not an error,
/// so a broken pipe ends the output quietly. Any other write error names standard output.
pub(crate) fn print(
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match write(&mut stdout).and_then(|()| std::io::Write::flush(&mut stdout)) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(err).context("cannot write to standard output")
        }
        _ => Ok(()),
    }
}

/// How two Shapes are compared: the flags shared by `diff` and `check`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CompareArgs {
    /// Relative band allowed on prompt and completion tokens (`0.1` = 10%); a golden 0 needs 0.
    // A negative value reaches `parse_tolerance` and gets its message, rather than clap's
    // "unexpected argument '-1'" with a tip that would make it a positional argument.
    #[arg(
        long,
        value_name = "F",
        default_value_t = 0.0,
        value_parser = parse_tolerance,
        allow_negative_numbers = true
    )]
    pub(crate) token_tolerance: f64,
    /// Do not compare the content hash: only structural fields count.
    #[arg(long)]
    pub(crate) no_content: bool,
}

impl CompareArgs {
    /// The diff options these flags describe.
    pub(crate) fn to_options(&self) -> atif_normalize::DiffOptions {
        let mut options = atif_normalize::DiffOptions::default();
        options.set_token_tolerance(self.token_tolerance).set_compare_content(!self.no_content);
        options
    }
}
