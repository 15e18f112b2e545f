//! `atif golden`: the review workflow for pending golden files, in any project and language.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use atif_golden::review::{FOLD_LINES, Pending, Review};
use atif_golden::support::shell_word;

use crate::flags::Format;
use crate::output;
use crate::status::invalid;

/// Arguments of `atif golden`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) action: Action,
}

/// What to do with the pending files.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Action {
    /// List pending `<name>.json.new` files with their Shape deltas (exit 1 when any).
    Pending(PendingArgs),
    /// Show each pending file's deltas, explanation and diff (a new golden's content) and ask
    /// accept/reject/skip (without a terminal, only list them, unless `--interactive`).
    Review(ReviewArgs),
    /// Move pending files over their goldens.
    Accept(Where),
    /// Delete pending files.
    Reject(Where),
    /// Remove the temporary files that killed or interrupted writers left behind (those of
    /// processes that still run are kept).
    Clean(Where),
    /// Run the tests with ATIF_GOLDEN=update and list the goldens created, changed and left.
    Update(UpdateArgs),
}

/// Which pending files: those under `--dir` whose path contains FILTER.
#[derive(Debug, clap::Args)]
pub(crate) struct Where {
    /// Only pending files whose path (relative to the folder) contains this text.
    #[arg(value_name = "FILTER")]
    pub(crate) filter: Option<String>,
    /// The folder searched (skipping target/, node_modules/ and hidden folders).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(crate) dir: PathBuf,
}

/// Arguments of `atif golden review`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReviewArgs {
    #[command(flatten)]
    pub(crate) at: Where,
    /// Ask even without a terminal, reading one answer per line from standard input (for
    /// scripts and editors that drive the review).
    #[arg(long)]
    pub(crate) interactive: bool,
}

/// Arguments of `atif golden pending`: which pending files, and how they are listed.
#[derive(Debug, clap::Args)]
pub(crate) struct PendingArgs {
    #[command(flatten)]
    pub(crate) at: Where,
    /// Output format: `text`, or `json` (one object: `dir`, `pending`, `stale_temp_files`;
    /// see docs/golden.md).
    #[arg(long, value_enum, default_value_t)]
    pub(crate) format: Format,
}

/// Arguments of `atif golden update`.
#[derive(Debug, clap::Args)]
pub(crate) struct UpdateArgs {
    /// Only tests matching this filter (passed to `cargo test`).
    #[arg(value_name = "FILTER")]
    pub(crate) filter: Option<String>,
    /// The folder whose goldens are listed (skipping target/, node_modules/ and hidden
    /// folders), as for the other `atif golden` commands; the tests run in the current folder.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(crate) dir: PathBuf,
    /// The test command, after `--`, run in the current folder (default: `cargo test
    /// --no-fail-fast [FILTER]` when the current folder has a Cargo.toml).
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

/// Runs `atif golden ACTION`.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    match &args.action {
        Action::Pending(args) => pending(&args.at, args.format),
        Action::Review(args) => review(&args.at, args.interactive),
        Action::Accept(at) => accept(at),
        Action::Reject(at) => reject(at),
        Action::Clean(at) => clean(at),
        Action::Update(update_args) => update(update_args),
    }
}

/// `atif golden pending`: exit 0 when nothing is pending, 1 when something is. Stale
/// temporary files are listed too, but are no pending change: they alone exit 0.
fn pending(at: &Where, format: Format) -> anyhow::Result<ExitCode> {
    let found = find(at)?;
    let reviews = found
        .iter()
        .map(atif_golden::review::review)
        .collect::<Result<Vec<_>, _>>()
        .map_err(refused)?;
    let stale = atif_golden::review::find_stale_temp_files_under(&at.dir, at.filter.as_deref())?;
    step_summary(&at.dir, &reviews)?;
    match format {
        Format::Json => {
            let json = pending_json(&at.dir, &reviews, &stale);
            output::out(|out| writeln!(out, "{json:#}"))?;
        }
        Format::Text => {
            if reviews.is_empty() {
                output::out(|out| writeln!(out, "no pending golden files{}", filter_note(at)))?;
            }
            for review in &reviews {
                let golden = relative(&at.dir, &review.golden);
                let summary = match review.status {
                    atif_golden::review::PendingStatus::New => "new golden".to_owned(),
                    atif_golden::review::PendingStatus::Same => "no behaviour change".to_owned(),
                    _ => review.deltas.join("; "),
                };
                output::out(|out| writeln!(out, "{}: {summary}", golden.display()))?;
            }
            for path in &stale {
                let path = relative(&at.dir, path).display();
                output::out(|out| {
                    writeln!(out, "{path}: temporary file of a writer that is gone")
                })?;
            }
            if !stale.is_empty() {
                let command = command_for("clean", at);
                output::out(|out| writeln!(out, "remove the temporary files with `{command}`"))?;
            }
        }
    }
    Ok(if reviews.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// On GitHub Actions, one row per pending golden in the step summary: its path, whether it is
/// new, unchanged or changed, and the Shape fields that moved (never their values).
fn step_summary(dir: &Path, reviews: &[Review]) -> anyhow::Result<()> {
    let goldens: Vec<String> =
        reviews.iter().map(|review| relative(dir, &review.golden).display().to_string()).collect();
    let rows: Vec<crate::cmd::ci::SummaryRow<'_>> = reviews
        .iter()
        .zip(&goldens)
        .map(|(review, golden)| crate::cmd::ci::SummaryRow {
            golden,
            verdict: match review.status {
                atif_golden::review::PendingStatus::New => "pending: new golden",
                atif_golden::review::PendingStatus::Same => "pending: no behaviour change",
                _ => "pending: behaviour changed",
            },
            fields: review.deltas.iter().filter_map(|line| line.split(':').next()).collect(),
        })
        .collect();
    crate::cmd::ci::append_step_summary(&rows)
}

/// The documented JSON shape of `atif golden pending --format json`.
fn pending_json(dir: &Path, reviews: &[Review], stale: &[PathBuf]) -> serde_json::Value {
    let items: Vec<serde_json::Value> = reviews
        .iter()
        .map(|review| {
            serde_json::json!({
                "golden": relative(dir, &review.golden),
                "pending": relative(dir, &review.pending),
                "status": review.status,
                "deltas": review.deltas,
            })
        })
        .collect();
    let stale: Vec<&Path> = stale.iter().map(|path| relative(dir, path)).collect();
    serde_json::json!({"dir": dir, "pending": items, "stale_temp_files": stale})
}

/// `atif golden review`: interactive on a terminal, a listing otherwise (exit 1 when anything
/// is left pending).
fn review(at: &Where, interactive: bool) -> anyhow::Result<ExitCode> {
    let found = find(at)?;
    if found.is_empty() {
        output::out(|out| writeln!(out, "no pending golden files{}", filter_note(at)))?;
        return Ok(ExitCode::SUCCESS);
    }
    if interactive || (std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        let mut input = std::io::stdin().lock();
        // Coloured as `atif check` colours its report: the same `--color` rules and NO_COLOR.
        let mut output = output::ReportWriter::new(std::io::stdout().lock());
        let tally =
            atif_golden::review::review_interactively(&found, &at.dir, &mut input, &mut output)
                .map_err(refused)?;
        output::out(|out| {
            writeln!(
                out,
                "{} accepted, {} rejected, {} skipped",
                tally.accepted, tally.rejected, tally.skipped
            )
        })?;
        return Ok(if tally.skipped == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }
    for item in &found {
        let shown = atif_golden::review::review(item).map_err(refused)?.render(&at.dir);
        // Folded as the interactive review folds it: a screen, then how much more there is.
        let lines: Vec<&str> = shown.split_inclusive('\n').collect();
        let mut text: String = lines.iter().take(FOLD_LINES).copied().collect();
        if lines.len() > FOLD_LINES {
            let (n_more, pending) = (lines.len() - FOLD_LINES, item.pending.display());
            text.push_str(&format!("... {n_more} more lines (the whole run is in {pending})\n"));
        }
        output::out(|out| output::write_report(out, &text))?;
    }
    let (accept, reject) = (command_for("accept", at), command_for("reject", at));
    output::out(|out| {
        writeln!(
            out,
            "\n{} pending (no terminal, so nothing was asked); accept with `{accept}`, reject with `{reject}`",
            found.len()
        )
    })?;
    Ok(ExitCode::from(1))
}

/// `atif golden accept`.
fn accept(at: &Where) -> anyhow::Result<ExitCode> {
    let found = find(at)?;
    if found.is_empty() {
        output::out(|out| writeln!(out, "no pending golden files{}", filter_note(at)))?;
    }
    for item in &found {
        let golden = atif_golden::review::accept(item).map_err(refused)?;
        output::out(|out| writeln!(out, "accepted {}", relative(&at.dir, &golden).display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `atif golden reject`.
fn reject(at: &Where) -> anyhow::Result<ExitCode> {
    let found = find(at)?;
    if found.is_empty() {
        output::out(|out| writeln!(out, "no pending golden files{}", filter_note(at)))?;
    }
    for item in &found {
        atif_golden::review::reject(item)?;
        output::out(|out| {
            writeln!(out, "rejected {}", relative(&at.dir, &item.pending).display())
        })?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `atif golden clean`: removes the stale temporary files; exit 0 unless one cannot be removed.
fn clean(at: &Where) -> anyhow::Result<ExitCode> {
    if !at.dir.is_dir() {
        anyhow::bail!("cannot search {}: expected a folder", at.dir.display());
    }
    let removed =
        atif_golden::review::remove_stale_temp_files_under(&at.dir, at.filter.as_deref())?;
    if removed.is_empty() {
        output::out(|out| writeln!(out, "no stale temporary files{}", filter_note(at)))?;
    }
    for path in &removed {
        output::out(|out| writeln!(out, "removed {}", relative(&at.dir, path).display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `atif golden update`: exit 0 when the tests passed, 1 when some failed (the goldens listed
/// were still written), 2 when the command could not run.
fn update(args: &UpdateArgs) -> anyhow::Result<ExitCode> {
    let command = match args.command.split_first() {
        Some((program, rest)) => {
            let mut command = std::process::Command::new(program);
            command.args(rest);
            command
        }
        None if Path::new("Cargo.toml").is_file() => {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut command = std::process::Command::new(cargo);
            command.args(["test", "--no-fail-fast"]).args(&args.filter);
            command
        }
        None => anyhow::bail!(
            "the current folder has no Cargo.toml, so there is no default test command: pass one after `--` (atif golden update -- pytest tests/)"
        ),
    };
    if !args.dir.is_dir() {
        anyhow::bail!("cannot search {}: expected a folder", args.dir.display());
    }
    let summary = atif_golden::review::run_update(&args.dir, command, args.filter.is_some())?;
    output::out(|out| write!(out, "golden update:\n{summary}"))?;
    if !summary.duplicates.is_empty() || !summary.tests_passed {
        if !summary.tests_passed {
            output::error(|err| {
                writeln!(
                    err,
                    "atif: some tests failed for reasons other than their goldens; the goldens listed above were still written"
                )
            })?;
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// An error of atif-golden as the CLI reports it: a pending file or golden the loader refused
/// as a trajectory is invalid input (exit 1); the rest means the command could not run.
fn refused(err: atif_golden::Error) -> anyhow::Error {
    match &err {
        atif_golden::Error::Load(cause) if cause.is_invalid_input() => invalid(err),
        _ => err.into(),
    }
}

fn find(at: &Where) -> anyhow::Result<Vec<Pending>> {
    if !at.dir.is_dir() {
        anyhow::bail!("cannot search {}: expected a folder", at.dir.display());
    }
    atif_golden::review::find_pending(&at.dir, at.filter.as_deref())
        .with_context(|| format!("cannot search {} for pending golden files", at.dir.display()))
}

/// `atif golden VERB`, with the filter and folder this command was given.
fn command_for(verb: &str, at: &Where) -> String {
    let mut command = format!("atif golden {verb}");
    if let Some(filter) = &at.filter {
        command.push(' ');
        command.push_str(&shell_word(filter));
    }
    if at.dir != Path::new(".") {
        command.push_str(" --dir ");
        command.push_str(&shell_word(&at.dir.display().to_string()));
    }
    command
}

fn filter_note(at: &Where) -> String {
    at.filter.as_deref().map(|filter| format!(" matching `{filter}`")).unwrap_or_default()
}

fn relative<'a>(dir: &Path, path: &'a Path) -> &'a Path {
    path.strip_prefix(dir).unwrap_or(path)
}
