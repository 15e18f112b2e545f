//! `atif import`: a Claude Code or Codex log in, an ATIF-v1.8 trajectory out.

use std::path::Path;
use std::process::ExitCode;

use atif_import::{Format, Import, ImportOptions};

use crate::cmd::common::{print, read_input};

/// Arguments of `atif import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The log's format; `auto` detects it from the first records (never from the file name).
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = ["auto", "claude-code", "claude-stream", "codex-rollout", "codex-exec", "gemini-session", "gemini-stream", "opencode-run", "opencode-export", "pi-session", "pi-json"])]
    format: String,
    /// Fail on a record type the importer does not know, instead of skipping and counting it.
    #[arg(long)]
    strict: bool,
    /// The run's working directory, recorded as `extra.cwd` (default: the one the log names).
    /// Normalising with a preset writes it as `<cwd>`.
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// The run's home folder, recorded as `extra.home` (default: the one the log reveals).
    /// Normalising with a preset writes it as `<home>`.
    #[arg(long, value_name = "DIR")]
    home: Option<String>,
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
    options.set_strict(args.strict).set_cwd(args.cwd.as_deref()).set_home(args.home.as_deref());
    if args.format != "auto" {
        options.set_format(Some(args.format.parse::<Format>()?));
    }
    let result = if args.input == "-" {
        let bytes = read_input("-")?;
        atif_import::import(&bytes, &options)
    } else {
        // A missing file is atif-import's `Io` error, which carries the operating system's reason.
        atif_import::import_path(Path::new(&args.input), &options)
    };
    let imported = match result {
        Ok(imported) => imported,
        Err(err @ atif_import::Error::Io { .. }) => return Err(err.into()),
        Err(err) => {
            let name = if args.input == "-" { "standard input" } else { args.input.as_str() };
            // The message and its causes (`<file>: line 2 is not JSON: ...`): atif-import's
            // errors keep their causes in `source()`, as anyhow's `{:#}` shows them.
            let text = format!("{:#}", anyhow::Error::new(err));
            // Errors about a file or folder name it themselves.
            if text.starts_with(name) {
                eprintln!("error: {text}");
            } else {
                eprintln!("error: {name}: {text}");
            }
            return Ok(ExitCode::from(1));
        }
    };
    report(&imported);
    // Streamed, not built as one string; a reader that stops early (`| head`) is not an error.
    print(|out| {
        serde_json::to_writer_pretty(&mut *out, imported.trajectory())?;
        writeln!(out)
    })?;
    Ok(ExitCode::SUCCESS)
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
    for (reason, count) in stats.dropped() {
        eprintln!("  left out {count} × {reason}");
    }
    for warning in stats.warnings() {
        eprintln!("  warning: {warning}");
    }
}
