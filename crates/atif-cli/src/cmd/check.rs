//! `atif check`: the golden-file protocol for agents in any language.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use atif_golden::{Mode, Settings};

use crate::cmd::common::{CompareArgs, NormalizeArgs, print, read_input};

/// Arguments of `atif check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The golden file (the canonical text of a normalised trajectory).
    #[arg(value_name = "GOLDEN")]
    pub(crate) golden: String,
    /// The trajectory of the run under test (`-` for standard input).
    #[arg(value_name = "ACTUAL")]
    pub(crate) actual: String,
    /// Write the run as the new golden (atomically) when it no longer matches, and print the
    /// diff of what that erased. Without it, `ATIF_GOLDEN` and `CI` decide (see docs/golden.md).
    #[arg(long)]
    pub(crate) update: bool,
    /// The command a failure message names to accept the change (default: this command line
    /// with `--update`); test harnesses that drive `atif check` name their own update flag.
    #[arg(long, value_name = "CMD")]
    pub(crate) update_command: Option<String>,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
    #[command(flatten)]
    pub(crate) normalize: NormalizeArgs,
}

/// Runs `atif check`: exit 0 when the behaviour matches (or `--update` wrote the golden), 1 on
/// a behaviour change, a missing golden or a schema version change, 2 on error.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let bytes = read_input(&args.actual)?;
    let actual: serde_json::Value = serde_json::from_slice(&bytes).with_context(|| {
        format!("cannot parse {} as JSON: expected an ATIF trajectory", display_name(&args.actual))
    })?;

    let mut settings = Settings::new();
    settings
        .set_normalize_options(args.normalize.to_options()?)
        .set_token_tolerance(args.compare.token_tolerance)
        .set_compare_content(!args.compare.no_content)
        .set_update_command(Some(args.update_command.clone().unwrap_or_else(update_command)));
    if args.update {
        settings.set_mode(Some(Mode::Update));
    }

    match atif_golden::check(Path::new(&args.golden), &actual, &settings) {
        Ok(outcome) => {
            print(|out| writeln!(out, "{outcome}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(err) if err.is_test_failure() => {
            print(|out| writeln!(out, "{err}"))?;
            Ok(ExitCode::from(1))
        }
        Err(err) => Err(err.into()),
    }
}

fn display_name(path: &str) -> &str {
    if path == "-" { "standard input" } else { path }
}

/// This very command line with `--update` added: the fix a failure message names.
fn update_command() -> String {
    let mut words = vec!["atif".to_owned(), "check".to_owned(), "--update".to_owned()];
    words.extend(std::env::args().skip(2).filter(|arg| arg != "--update").map(|arg| quote(&arg)));
    words.join(" ")
}

/// Quotes a word for a POSIX shell when it needs it.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}
