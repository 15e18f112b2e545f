//! `atif import`: an agent's log in, an ATIF-v1.8 trajectory out.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use atif_import::{Format, Import, ImportOptions};

use crate::flags::SecretArgs;
use crate::input::{display_name, max_input_bytes, read_input_expecting};
use crate::output;
use crate::status::invalid;

/// Arguments of `atif import`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Args {
    /// The log's format; `auto` detects it from the first records (never from the file name).
    #[arg(long, value_name = "LOG_FORMAT", default_value = "auto", value_parser = ["auto", "claude-code", "claude-stream", "codex-rollout", "codex-exec", "gemini-session", "gemini-stream", "opencode-run", "opencode-export", "pi-session", "pi-json", "otel"])]
    from: String,
    /// Fail on a record type the importer does not know, or a record that does not have the
    /// shape its format gives it, instead of skipping and counting it.
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
    /// Import the N-th run (from 1) of a log holding several (Claude Code stream-json captured
    /// from several `claude -p` calls).
    #[arg(long, value_name = "N", conflicts_with = "split")]
    run: Option<usize>,
    /// Import every run of the log, each to `DIR/run-N.json`.
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    split: Option<PathBuf>,
    /// Write the trajectory to FILE (atomically) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Where inline images (`data:` URIs) are written as files, each named by its content's
    /// hash and referenced by a path relative to the trajectory (default: `media/` beside
    /// `--output` or in `--split`'s folder, else `atif-import.media/` in the current folder).
    #[arg(long, value_name = "DIR")]
    media_dir: Option<PathBuf>,
    /// Import the newest session file AGENT wrote for the working directory (`--cwd`, default
    /// the current one) in its default place under HOME: claude-code, codex, gemini-cli, pi.
    #[arg(long, value_name = "AGENT", conflicts_with = "input")]
    latest: Option<String>,
    #[command(flatten)]
    secrets: SecretArgs,
    /// The log file, a Claude Code session folder (subagents included), or `-` for standard input.
    #[arg(value_name = "FILE|-", required_unless_present = "latest")]
    input: Option<String>,
}

/// Runs `atif import`: prints the trajectory as pretty JSON on standard output and says on
/// standard error which format was used and what was skipped.
///
/// Exit 0 on success, 1 when the log is not a log of a known format, 2 when it cannot be read.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let input = match (&args.latest, &args.input) {
        (Some(agent), _) => {
            let path = latest(agent, args.cwd.as_deref()).map_err(invalid)?;
            output::note(|out| {
                writeln!(out, "atif import: newest {agent} session: {}", path.display())
            })?;
            path.to_string_lossy().into_owned()
        }
        (None, Some(input)) => input.clone(),
        (None, None) => anyhow::bail!("give a log FILE, `-` for standard input, or --latest AGENT"),
    };
    let args = &Args { input: Some(input.clone()), ..args.clone() };
    let mut options = ImportOptions::new();
    options.set_strict(args.strict).set_cwd(args.cwd.as_deref()).set_home(args.home.as_deref());
    options.set_secret_scanner(args.secrets.scanner()?);
    if args.from != "auto" {
        options.set_format(Some(args.from.parse::<Format>()?));
    }
    options.set_run(args.run).set_max_input_bytes(max_input_bytes());
    if let Some(dir) = &args.split {
        let bytes = read_log(&input, &options)?;
        return match atif_import::import_runs(&bytes, &options) {
            Ok(runs) => split(runs, dir, &args.secrets),
            Err(err) => Err(failed(args, err)),
        };
    }
    let result = if input == "-" {
        let bytes = read_log("-", &options)?;
        atif_import::import(&bytes, &options)
    } else {
        // Read within `--max-input-bytes` and stopped at the first byte of binary data, as
        // `import -` is: atif-import reads files through atif-schema's bounded reader. A
        // missing file is atif-import's `Io` error, which carries the operating system's
        // reason.
        atif_import::import_path(Path::new(&input), &options)
    };
    let mut imported = match result {
        Ok(imported) => imported,
        Err(err @ atif_import::Error::Io { .. }) => return Err(err.into()),
        // The reader's own error names the file, and says whether it is the input (binary
        // data: exit 1) or the limit (exit 2).
        Err(atif_import::Error::Load { source, .. }) => return Err(anyhow::Error::new(*source)),
        Err(err) => return Err(failed(args, err)),
    };
    report(&imported)?;
    args.secrets.report("import", imported.secrets())?;
    match &args.output {
        Some(output) => {
            media_beside(&mut imported, output, args.media_dir.as_deref())?;
            let mut text = imported.json();
            text.push('\n');
            atif_fs::write_atomic(output, text.as_bytes())?;
        }
        None => {
            let media_dir = args.media_dir.clone().unwrap_or_else(|| "atif-import.media".into());
            let written = write_media(&mut imported, &media_dir, &media_dir)?;
            if !written.is_empty() {
                output::note(|out| {
                    writeln!(
                        out,
                        "  wrote {} inline image(s) to {}; the trajectory names them relative to the current folder, so save it here",
                        written.len(),
                        media_dir.display()
                    )
                })?;
            }
            // Streamed step by step, not built as one string; a reader that stops early
            // (`| head`) is not an error.
            output::out(|out| {
                let mut out = std::io::BufWriter::new(out);
                imported.write_json(&mut out)?;
                writeln!(out)?;
                out.flush()
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the inline images of a trajectory saved as `output` to `media_dir`, by default
/// `media/` beside it, and names them relative to `output`'s folder: never by `output`'s own
/// name, so the same log imported under two names gives the same trajectory.
fn media_beside(
    imported: &mut Import,
    output: &Path,
    media_dir: Option<&Path>,
) -> anyhow::Result<()> {
    let folder = output.parent().unwrap_or(Path::new(""));
    let media_dir = media_dir.map_or_else(|| folder.join(MEDIA_DIR), Path::to_path_buf);
    let reference = media_dir.strip_prefix(folder).unwrap_or(&media_dir);
    let written = write_media(imported, &media_dir, reference)?;
    if !written.is_empty() {
        let (n, dir) = (written.len(), media_dir.display());
        output::note(|out| writeln!(out, "  wrote {n} inline image(s) to {dir}"))?;
    }
    Ok(())
}

/// The bytes of a log named on the command line (`-` for standard input), gzip and OTLP
/// protobuf included, as `import FILE` reads them: a file other than a log of either kind, and
/// standard input, are read as atif-schema reads every input (JSON only, within the limit).
fn read_log(input: &str, options: &ImportOptions) -> anyhow::Result<Vec<u8>> {
    let result = match input {
        "-" => atif_import::read_log(std::io::stdin().lock(), Path::new("standard input"), options),
        // A folder, or a file that cannot be opened: atif-schema's reader says why.
        path => match std::fs::File::open(path) {
            Ok(file) if !Path::new(path).is_dir() => {
                atif_import::read_log(file, Path::new(path), options)
            }
            _ => return read_input_expecting(path, options.load_options().expected()),
        },
    };
    match result {
        Ok(bytes) => Ok(bytes),
        Err(err @ atif_import::Error::Io { .. }) => Err(err.into()),
        Err(atif_import::Error::Load { source, .. }) => Err(anyhow::Error::new(*source)),
        Err(err) => Err(err.into()),
    }
}

/// The folder beside a saved trajectory where its inline images go, by default.
const MEDIA_DIR: &str = "media";

/// Writes each run to `dir/run-N.json` (with its images in `dir/media/`, shared by the runs:
/// each image is named by its content).
fn split(runs: Vec<Import>, dir: &Path, secrets: &SecretArgs) -> anyhow::Result<ExitCode> {
    let n_runs = runs.len();
    for (idx, mut imported) in runs.into_iter().enumerate() {
        if idx == 0 {
            report(&imported)?;
        }
        secrets.report(&format!("import (run {})", idx + 1), imported.secrets())?;
        let name = format!("run-{}.json", idx + 1);
        write_media(&mut imported, &dir.join(MEDIA_DIR), Path::new(MEDIA_DIR))?;
        let mut text = imported.json();
        text.push('\n');
        atif_fs::write_atomic(&dir.join(&name), text.as_bytes())?;
    }
    output::note(|out| writeln!(out, "  wrote {n_runs} run(s) to {}", dir.display()))?;
    Ok(ExitCode::SUCCESS)
}

fn write_media(
    imported: &mut Import,
    dir: &Path,
    reference: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    let reference = reference.to_string_lossy().replace('\\', "/");
    Ok(imported.write_media(dir, &reference)?)
}

/// The newest session of `agent` for `cwd` (default: the current directory) under `$HOME`.
fn latest(agent: &str, cwd: Option<&str>) -> anyhow::Result<PathBuf> {
    let cwd = match cwd {
        Some(cwd) => PathBuf::from(cwd),
        None => std::env::current_dir()?,
    };
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let config_dir = match agent {
        "claude-code" => std::env::var_os("CLAUDE_CONFIG_DIR"),
        "codex" => std::env::var_os("CODEX_HOME"),
        _ => None,
    };
    Ok(atif_import::latest_session(agent, &cwd, &home, config_dir.as_deref().map(Path::new))?)
}

/// Why the log could not be imported: invalid input (exit 1).
fn failed(args: &Args, err: atif_import::Error) -> anyhow::Error {
    let name = display_name(args.input.as_deref().unwrap_or("-"));
    // The message and its causes (`<file>: line 2 is not JSON: ...`): atif-import's errors
    // keep their causes in `source()`, as anyhow's `{:#}` shows them.
    let text = format!("{:#}", anyhow::Error::new(err));
    // Errors about a file or folder name it themselves.
    let text = if text.starts_with(name) { text } else { format!("{name}: {text}") };
    invalid(anyhow::Error::msg(text))
}

/// The summary on standard error (none under `--quiet`).
fn report(imported: &Import) -> anyhow::Result<()> {
    let stats = imported.stats();
    let how = if imported.detected() { "detected" } else { "as asked" };
    output::note(|out| {
        writeln!(
            out,
            "atif import: format {} ({how}); {} records, {} skipped",
            imported.format(),
            stats.records(),
            stats.skipped_total()
        )?;
        for (record_type, count) in stats.skipped() {
            writeln!(out, "  skipped {count} × unknown record type `{record_type}`")?;
        }
        for (reason, count) in stats.malformed() {
            writeln!(out, "  skipped {count} × malformed record: {reason}")?;
        }
        for (reason, count) in stats.dropped() {
            writeln!(out, "  left out {count} × {reason}")?;
        }
        for warning in stats.warnings() {
            writeln!(out, "  warning: {warning}")?;
        }
        Ok(())
    })
}
