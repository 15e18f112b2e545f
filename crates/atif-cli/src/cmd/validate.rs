//! `atif validate`: check trajectories against the ATIF rules and report every finding.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use atif_schema::{Profile, ValidateOptions, Validation, validate_bytes};
use serde::Serialize;

use crate::flags::Format;
use crate::input::read_input;
use crate::output;
use crate::status::exit_status;

/// Arguments of `atif validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Which verdict to give: `strict` (JSON and ATIF as written) or `harbor` (what Harbor
    /// 0.26's validator accepts, Python coercions included).
    #[arg(long, value_enum, default_value_t = ProfileArg::Strict)]
    profile: ProfileArg,
    /// Treat warnings as errors: a file with any warning is invalid (exit 1).
    #[arg(long)]
    deny_warnings: bool,
    /// Do not check that the local image and audio files a trajectory names exist beside it
    /// (like Harbor's `--no-validate-images`); standard input is never checked.
    #[arg(long)]
    no_media_check: bool,
    /// Output format: `text` (one line per file or finding) or `json` (an array of reports).
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// Trajectory files to check; `-` reads standard input.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<String>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ProfileArg {
    Strict,
    Harbor,
}

/// One file's entry in the JSON output.
#[derive(Debug, Serialize)]
struct FileReport<'a> {
    file: &'a str,
    valid: bool,
    version: Option<atif_schema::SchemaVersion>,
    findings: &'a [atif_schema::Finding],
}

/// Runs `atif validate`: exit 0 when every file is valid, 1 when any is invalid (binary input
/// included), 2 when a file could not be read (the others are still checked and reported).
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let profile = match args.profile {
        ProfileArg::Strict => Profile::Strict,
        ProfileArg::Harbor => Profile::Harbor,
    };
    let mut reports: Vec<(String, Validation, bool)> = Vec::new();
    let mut unreadable = false;
    for file in &args.files {
        let name = if file == "-" { "<stdin>".to_owned() } else { file.clone() };
        let mut options = ValidateOptions::with_profile(profile);
        if file != "-" && !args.no_media_check {
            // Media paths are relative to the trajectory's folder, as Harbor resolves them.
            options.set_media_folder(Path::new(file).parent().map(Path::to_path_buf));
        }
        match read_input(file) {
            Ok(bytes) => {
                let report = validate_bytes(&bytes, &options);
                let valid = report.is_valid()
                    && !(args.deny_warnings && report.warnings().next().is_some());
                reports.push((name, report, valid));
            }
            Err(err) if exit_status(&err) == 1 => {
                // Binary input, stopped by the bounded reader before it was read whole: a
                // finding like any other JSON error.
                let message = format!("{err:#}");
                let message = message.strip_prefix(&format!("{name}: ")).unwrap_or(&message);
                reports.push((name.clone(), Validation::not_json(message), false));
            }
            Err(err) => {
                output::error(|out| writeln!(out, "error: {err:#}"))?;
                unreadable = true;
            }
        }
    }
    let output = match args.format {
        Format::Text => text(&reports),
        Format::Json => {
            let entries: Vec<FileReport<'_>> = reports
                .iter()
                .map(|(file, report, valid)| FileReport {
                    file,
                    valid: *valid,
                    version: report.version,
                    findings: &report.findings,
                })
                .collect();
            let mut json = serde_json::to_string_pretty(&entries)?;
            json.push('\n');
            json
        }
    };
    output::out(|stdout| stdout.write_all(output.as_bytes()))?;
    let code = if unreadable {
        2
    } else if reports.iter().any(|(_, _, valid)| !valid) {
        1
    } else {
        0
    };
    Ok(ExitCode::from(code))
}

/// Per file, a head line with its verdict and counts (`path: valid (ATIF-v1.5, 10 steps, 2
/// warnings)`, `path: invalid (ATIF-v1.5, 10 steps, 1 error, 0 warnings)`), then its findings,
/// indented, each by its JSON Pointer in that file; after several files, the totals.
fn text(reports: &[(String, Validation, bool)]) -> String {
    let mut out = String::new();
    let (mut n_errors, mut n_warnings, mut n_valid) = (0, 0, 0);
    for (file, report, valid) in reports {
        let version = report.version.map_or("no version".to_owned(), |version| version.to_string());
        let n_steps = report.n_steps.unwrap_or(0);
        let warnings = report.warnings().count();
        let errors = report.findings.len() - warnings;
        let steps = format!("{n_steps} {}", plural(n_steps, "step", "steps"));
        let (errors_text, warnings_text) = (
            format!("{errors} {}", plural(errors, "error", "errors")),
            format!("{warnings} {}", plural(warnings, "warning", "warnings")),
        );
        if *valid {
            let _ = writeln!(out, "{file}: valid ({version}, {steps}, {warnings_text})");
        } else {
            let _ = writeln!(
                out,
                "{file}: invalid ({version}, {steps}, {errors_text}, {warnings_text})"
            );
        }
        for finding in &report.findings {
            let _ = writeln!(out, "  {finding}");
        }
        n_errors += errors;
        n_warnings += warnings;
        n_valid += usize::from(*valid);
    }
    if reports.len() > 1 {
        let _ = writeln!(
            out,
            "{} files: {n_valid} valid, {} invalid; {n_errors} {}, {n_warnings} {}",
            reports.len(),
            reports.len() - n_valid,
            plural(n_errors, "error", "errors"),
            plural(n_warnings, "warning", "warnings")
        );
    }
    out
}

fn plural(count: usize, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 { one } else { many }
}
