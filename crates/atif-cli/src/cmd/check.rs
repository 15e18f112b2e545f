//! `atif check`: the golden-file protocol for agents in any language.

use std::path::Path;
use std::process::ExitCode;

use atif_golden::review::OutcomeKind;
use atif_golden::{JsonText, Mode, Outcome, Settings};
use atif_normalize::{DiffOptions, NormalizeOptions, PRESETS};
use atif_view::ViewOptions;
use serde_json::json;

use crate::cmd::ci;
use crate::cmd::diff::change_json;
use crate::cmd::normalize::normalized_document;
use crate::cmd::page::{Side, diff_page, write_diff_page};
use crate::flags::{Format, RunArgs};
use crate::input::{command_args, display_name, read_input, this_command_as};
use crate::origin::origin;
use crate::output;
use crate::status::invalid;

/// Arguments of `atif check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The golden file (the canonical text of a normalised trajectory).
    #[arg(value_name = "GOLDEN")]
    pub(crate) golden: String,
    /// Write the run as the new golden (atomically) when it no longer matches, and print the
    /// diff of what that erased. Without it, `ATIF_GOLDEN` and `CI` decide (see docs/golden.md).
    #[arg(long)]
    pub(crate) update: bool,
    /// The command a failure message names to accept the change (default: this command line
    /// with `--update`); test harnesses that drive `atif check` name their own update flag.
    #[arg(long, value_name = "CMD")]
    pub(crate) update_command: Option<String>,
    /// Output format: `text` (the outcome, or the failure report) or `json` (one object:
    /// `golden`, `outcome`, `failure`, `deltas`, `pending`, `message`; see docs/cli.md).
    #[arg(long, value_enum, default_value_t)]
    pub(crate) format: Format,
    /// Also write the golden and the run side by side as one self-contained HTML page to OUT
    /// (see docs/view.md).
    #[arg(long, value_name = "OUT")]
    pub(crate) html: Option<std::path::PathBuf>,
    /// When the check fails, write the run (normalised), its text report and its HTML diff into
    /// DIR, named after the golden, even on CI; nothing is written beside the golden. Default:
    /// `ATIF_ARTIFACTS` when set (see docs/ci.md).
    #[arg(long, value_name = "DIR")]
    pub(crate) artifacts: Option<std::path::PathBuf>,
    /// Write the outcome as JUnit XML to FILE: one test case named after the golden, each Shape
    /// delta a property of it (see docs/ci.md).
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(crate) matching: crate::cmd::matching::MatchArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

/// Runs `atif check`: exit 0 when the behaviour matches (or `--update` wrote the golden), 1 on
/// a behaviour change, a missing golden, a schema version change or an input that is not a
/// trajectory, 2 when something cannot be read or written.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    // The golden is read on a second thread while the run is. What is not a trajectory never
    // becomes a golden: the check reads the run with the one loader's rules.
    let golden = Path::new(&args.golden);
    let (golden_file, actual) = atif_normalize::support::join(
        || atif_golden::support::GoldenFile::read(golden),
        || read_input(&args.run.actual),
    );
    let actual = actual?;
    let chosen = args.run.normalize.to_options("check", Some(&args.golden), Some(&actual))?;
    // `--update` writes the run as the golden whatever the modes; a check judges by them.
    if args.matching.is_set(&chosen.config) && !args.update {
        return check_matching(args, &actual, &chosen);
    }
    // A run checked without a preset may fail only on what its agent's preset removes: then
    // the failure says so, which needs the run a second time.
    let hint = match chosen.preset {
        None => origin(&actual).agent.filter(|agent| PRESETS.contains(&agent.as_str())),
        Some(_) => None,
    };
    let again = hint.as_ref().map(|_| actual.clone());
    if let Some(path) = &args.html {
        write_check_page(path, args, &actual, &chosen, &ViewOptions::new())?;
    }
    let artifacts = ci::artifacts_dir(args.artifacts.as_deref());
    // The bundle of a failing check needs the run after the check has taken it.
    let kept = artifacts.as_ref().map(|_| actual.clone());

    let settings = settings(args, chosen);

    // The check redacts the run before anything else, and says what it found.
    let checked =
        golden_file.check(JsonText::new(actual, display_name(&args.run.actual)), &settings);
    args.run.normalize.secrets.report("check", &checked.redacted)?;
    if let Some(verdict) = verdict_of(&args.golden, &checked.result) {
        let options = (settings.normalize_options(), &settings.diff_options());
        let bundle = Bundle { dir: artifacts.as_deref(), run: kept.as_deref(), options };
        leave_for_ci(args, &verdict, &bundle, &ViewOptions::new())?;
    }
    match checked.result {
        Ok(outcome) => {
            if args.format == Format::Json {
                print_json(&outcome_json(&outcome))?;
            } else if !(output::quiet() && matches!(outcome, Outcome::Matched { .. })) {
                // `-q` leaves a match silent, as a passing test is.
                output::out(|out| output::write_report(out, &format!("{outcome}\n")))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(err) if err.is_test_failure() => {
            if args.format == Format::Json {
                print_json(&failure_json(golden, &err))?;
            } else {
                output::out(|out| output::write_report(out, &format!("{err}\n")))?;
            }
            if let (Some(agent), Some(run), atif_golden::Error::BehaviourChanged { .. }) =
                (&hint, again, &err)
            {
                hint_preset(golden, run, &settings, agent)?;
            }
            Ok(ExitCode::from(1))
        }
        Err(err @ (atif_golden::Error::Load(_) | atif_golden::Error::Normalize { .. })) => {
            Err(invalid(err))
        }
        Err(err) => Err(err.into()),
    }
}

/// The settings of this check: the chosen normalise options, the tolerance and content
/// comparison of the flags over the project file's, the commands a failure names.
fn settings(args: &Args, chosen: crate::flags::Chosen) -> Settings {
    let mut settings = Settings::new();
    settings
        .set_token_tolerance(args.run.compare.tolerance(&chosen.config))
        .set_compare_content(args.run.compare.compare_content(&chosen.config))
        .set_normalize_options(chosen.options)
        .set_update_command(Some(
            args.update_command.clone().unwrap_or_else(|| fed_again("check", "--update")),
        ))
        .set_full_diff_command(Some(fed_again("diff", "--full")));
    if args.update {
        settings.set_mode(Some(Mode::Update));
    }
    settings
}

/// Says which preset a failed check probably wanted, when the run passes with `agent`'s.
fn hint_preset(
    golden: &Path,
    run: Vec<u8>,
    settings: &Settings,
    agent: &str,
) -> anyhow::Result<()> {
    if !passes_with_preset(golden, run, settings, agent) {
        return Ok(());
    }
    output::note(|out| {
        writeln!(
            out,
            "atif check: this looks like a {agent} import; did you mean --preset {agent}?"
        )
    })
}

/// Whether the run would match its golden with `agent`'s preset (checked without writing
/// anything): then what failed is only what that preset removes.
fn passes_with_preset(golden: &Path, run: Vec<u8>, settings: &Settings, agent: &str) -> bool {
    let Ok(mut options) = atif_normalize::preset(agent) else { return false };
    options.set_secret_scanner(settings.normalize_options().secret_scanner().cloned());
    let mut settings = settings.clone();
    settings.set_normalize_options(options).set_mode(Some(Mode::Check));
    let checked = atif_golden::support::GoldenFile::read(golden)
        .check(JsonText::new(run, "the run"), &settings);
    matches!(checked.result, Ok(Outcome::Matched { .. }))
}

/// `atif check` with match modes: the run judged against the golden by them, which is never
/// written; a missing golden is a failure naming the command that records it (exit 1).
fn check_matching(
    args: &Args,
    actual: &[u8],
    chosen: &crate::flags::Chosen,
) -> anyhow::Result<ExitCode> {
    let golden = match std::fs::read(&args.golden) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(invalid(anyhow::anyhow!(
                "golden file {} does not exist; record it with: {}",
                args.golden,
                this_command_as("check", "--update")
            )));
        }
        Err(err) => {
            return Err(anyhow::Error::new(err).context(format!("cannot read {}", args.golden)));
        }
    };
    let judged = crate::cmd::matching::judge(
        (&golden[..], args.golden.as_str()),
        (actual, args.run.actual.as_str()),
        &chosen.options,
        (&args.matching, &chosen.config),
        args.format,
    )?;
    // The page, the JUnit file and the bundle say what the modes decided, not the Shape.
    let view = judged.view();
    if let Some(path) = &args.html {
        write_check_page(path, args, actual, chosen, &view)?;
    }
    let failed = !judged.outcome.passed();
    let verdict = ci::Verdict {
        golden: args.golden.clone(),
        verdict: if failed { "behaviour-changed" } else { "matched" }.to_owned(),
        failed,
        deltas: judged
            .outcome
            .failures
            .iter()
            .map(|line| (delta_field(line), line.clone()))
            .collect(),
        message: judged.outcome.to_string(),
    };
    let compare = args.run.compare.to_options(&chosen.config);
    let artifacts = ci::artifacts_dir(args.artifacts.as_deref());
    let bundle = Bundle {
        dir: artifacts.as_deref(),
        run: Some(actual),
        options: (&chosen.options, &compare),
    };
    leave_for_ci(args, &verdict, &bundle, &view)?;
    Ok(judged.exit_code())
}

/// The field a report line names: the words before its first colon (`step_count: 3 -> 4`).
fn delta_field(line: &str) -> String {
    line.split(':').next().unwrap_or_default().to_owned()
}

/// The JSON document of a check that passed (or updated the golden).
fn outcome_json(outcome: &Outcome) -> serde_json::Value {
    let erased = match outcome {
        Outcome::Changed { erased, .. } => Some(erased.as_str()),
        _ => None,
    };
    json!({
        "golden": outcome.path(),
        "outcome": outcome.kind(),
        "failure": null,
        "deltas": [],
        "steps": [],
        "more_steps": 0,
        "pending": null,
        "erased": erased,
        "message": outcome.to_string(),
    })
}

/// The JSON document of a failed check: its kind, deltas and the steps as `atif diff --format
/// json` gives them, cut the same way.
fn failure_json(golden: &Path, err: &atif_golden::Error) -> serde_json::Value {
    let (failure, deltas, changes) = match err {
        atif_golden::Error::MissingGolden { .. } => ("missing-golden", &[][..], &[][..]),
        atif_golden::Error::SchemaVersionChanged { .. } => {
            ("schema-version-changed", &[][..], &[][..])
        }
        atif_golden::Error::BehaviourChanged { deltas, changes, .. } => {
            ("behaviour-changed", &deltas[..], &changes[..])
        }
        _ => ("failed", &[][..], &[][..]),
    };
    let n_shown =
        atif_normalize::shown_changes(changes.len(), &atif_normalize::ReportOptions::new());
    let steps: Vec<_> = changes[..n_shown].iter().map(change_json).collect();
    json!({
        "golden": golden,
        "outcome": OutcomeKind::Failed,
        "failure": failure,
        "deltas": deltas,
        "steps": steps,
        "more_steps": changes.len() - n_shown,
        "pending": err.pending(),
        "erased": null,
        "message": err.to_string(),
    })
}

/// This command line as `atif SUBCOMMAND FLAG ...`; when the run came on standard input, which
/// is gone once read, the command says it needs the run piped in again.
fn fed_again(subcommand: &str, flag: &str) -> String {
    let command = this_command_as(subcommand, flag);
    match command_args().iter().skip(2).any(|arg| arg == "-") {
        true => format!("<the run> | {command}"),
        false => command,
    }
}

fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    output::out(|out| {
        serde_json::to_writer_pretty(&mut *out, value)?;
        writeln!(out)
    })
}

/// Writes the page of `atif check --html`: the golden and the run side by side, compared with
/// the check's own settings, so what is highlighted is what the check judges.
fn write_check_page(
    path: &Path,
    args: &Args,
    actual: &[u8],
    chosen: &crate::flags::Chosen,
    view: &ViewOptions,
) -> anyhow::Result<()> {
    let golden_bytes = read_input(&args.golden)?;
    let golden = Side { bytes: &golden_bytes, name: &args.golden };
    let actual = Side { bytes: actual, name: display_name(&args.run.actual) };
    let compare = args.run.compare.to_options(&chosen.config);
    write_diff_page(path, &golden, &actual, (&chosen.options, &compare), view)
}

/// The check's outcome as CI files name it, for a check that ran to a verdict.
fn verdict_of(golden: &str, result: &Result<Outcome, atif_golden::Error>) -> Option<ci::Verdict> {
    let (verdict, failed, deltas, message) = match result {
        Ok(outcome) => {
            let kind = serde_json::to_value(outcome.kind()).ok()?;
            (kind.as_str()?.to_owned(), false, Vec::new(), outcome.to_string())
        }
        Err(err) if err.is_test_failure() => {
            let failure = failure_json(Path::new(golden), err);
            let kind = failure["failure"].as_str().unwrap_or("failed").to_owned();
            let deltas = match err {
                atif_golden::Error::BehaviourChanged { deltas, .. } => deltas
                    .iter()
                    // Each line is the report's `field: what moved`.
                    .map(|line| (delta_field(line), line.clone()))
                    .collect(),
                _ => Vec::new(),
            };
            (kind, true, deltas, err.to_string())
        }
        Err(_) => return None,
    };
    Some(ci::Verdict { golden: golden.to_owned(), verdict, failed, deltas, message })
}

/// What the bundle of a failing check is made from: its folder (none: no bundle), the run's
/// bytes, and the options both sides are normalised and compared with.
struct Bundle<'a> {
    dir: Option<&'a Path>,
    run: Option<&'a [u8]>,
    options: (&'a NormalizeOptions, &'a DiffOptions),
}

/// The JUnit file, the step summary's row and, for a failing check, the artifacts bundle, its
/// page drawn with `view`.
fn leave_for_ci(
    args: &Args,
    verdict: &ci::Verdict,
    bundle: &Bundle<'_>,
    view: &ViewOptions,
) -> anyhow::Result<()> {
    if let Some(path) = &args.junit {
        ci::write_junit(path, verdict)?;
    }
    let fields = verdict.deltas.iter().map(|(field, _)| field.as_str()).collect();
    let row = ci::SummaryRow { golden: &args.golden, verdict: &verdict.verdict, fields };
    ci::append_step_summary(&[row])?;
    let (Some(dir), Some(run), true) = (bundle.dir, bundle.run, verdict.failed) else {
        return Ok(());
    };
    let normalize = bundle.options.0;
    let name = display_name(&args.run.actual);
    let normalized = normalized_document(run, name, normalize)?.to_canonical_string();
    // A missing golden has no other side: the run and the report are the bundle.
    let page = match std::fs::read(&args.golden) {
        Ok(golden_bytes) => {
            let golden = Side { bytes: &golden_bytes, name: &args.golden };
            let actual = Side { bytes: run, name };
            Some(diff_page(&golden, &actual, bundle.options, view)?)
        }
        Err(_) => None,
    };
    ci::write_artifacts(dir, verdict, Some(&normalized), page.as_deref())
}
