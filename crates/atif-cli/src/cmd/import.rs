//! `atif import`: a Claude Code or Codex log in, an ATIF-v1.8 trajectory out.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use atif_import::{Format, Import, ImportOptions};

use crate::cmd::common::read_input;

/// Arguments of `atif import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The log's format; `auto` detects it from the first records (never from the file name).
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = ["auto", "claude-code", "claude-stream", "codex-rollout", "codex-exec"])]
    format: String,
    /// Fail on a record type the importer does not know, instead of skipping and counting it.
    #[arg(long)]
    strict: bool,
    /// The log file, a Claude Code session folder (subagents included), or `-` for standard input.
    #[arg(value_name = "FILE|-")]
    input: String,
}

/// Runs `atif import`: prints the trajectory as pretty JSON on standard output and says on
/// standard error which format was used and what was skipped.
///
/// Exit 0 on success, 1 when the log is not a log of a known format, 2 when it cannot be read.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut options = ImportOptions::new();
    options.set_strict(args.strict);
    if args.format != "auto" {
        options.set_format(Some(args.format.parse::<Format>()?));
    }
    let result = if args.input == "-" {
        let bytes = read_input("-")?;
        atif_import::import(&bytes, &options)
    } else {
        let path = Path::new(&args.input);
        if !path.exists() {
            anyhow::bail!("cannot read {}: no such file or folder", args.input);
        }
        atif_import::import_path(path, &options)
    };
    let imported = match result {
        Ok(imported) => imported,
        Err(err @ atif_import::Error::Io { .. }) => return Err(err).context("import failed"),
        Err(err) => {
            let name = if args.input == "-" { "standard input" } else { args.input.as_str() };
            eprintln!("error: {name}: {}", chain(&err));
            return Ok(ExitCode::from(1));
        }
    };
    report(&imported);
    let text = serde_json::to_string_pretty(imported.trajectory())
        .context("cannot write the trajectory")?;
    println!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// The error and its causes on one line.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The summary on standard error.
fn report(imported: &Import) {
    let stats = imported.stats();
    let how = if imported.detected() { "detected" } else { "as asked" };
    eprintln!(
        "atif import: format {} ({how}); {} records, {} skipped",
        imported.format(),
        stats.records(),
        stats.skipped_total()
    );
    for (record_type, count) in stats.skipped() {
        eprintln!("  skipped {count} × unknown record type `{record_type}`");
    }
    for warning in stats.warnings() {
        eprintln!("  warning: {warning}");
    }
}
