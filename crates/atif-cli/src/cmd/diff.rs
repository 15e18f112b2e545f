//! `atif diff`: compare two trajectories: Shape deltas, step-level explanation, unified diff.

use std::process::ExitCode;

use atif_normalize::{Comparison, Delta, StepChange, StepChangeKind};
use atif_view::ViewOptions;
use serde_json::{Value, json};

use crate::cmd::normalize::normalized_document;
use crate::cmd::page::{Side, write_diff_page};
use crate::flags::{Format, RunArgs};
use crate::input::{display_name, read_input, this_command_as};
use crate::origin::origin;
use crate::output;

/// Arguments of `atif diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The golden trajectory (normalised again, which changes nothing if it already is).
    #[arg(value_name = "GOLDEN")]
    pub(crate) golden: String,
    /// Output format: `text` (the report: deltas, step-level explanation, the first changed
    /// places of the unified diff) or `json` (one object: `changed`, `deltas`, `steps`,
    /// `more_steps`, `diff`, as cut as the text unless `--full`; see docs/cli.md).
    #[arg(long, value_enum, default_value_t)]
    pub(crate) format: Format,
    /// Show every step change and the whole unified diff, not only the first changed places.
    #[arg(long)]
    pub(crate) full: bool,
    /// Also write the two runs side by side as one self-contained HTML page to OUT (see
    /// docs/view.md).
    #[arg(long, value_name = "OUT")]
    pub(crate) html: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(crate) matching: crate::cmd::matching::MatchArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

/// Runs `atif diff`: exit 0 when the Shapes agree, 1 when there are deltas (the report: the
/// deltas, the step-level explanation and the first changed places of the unified diff, or all
/// of it with `--full`) or an input is not a trajectory, 2 when an input cannot be read.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if args.golden == "-" && args.run.actual == "-" {
        anyhow::bail!("GOLDEN and ACTUAL are both `-`: standard input can be read only once");
    }
    // Each side's work overlaps the other's, on two threads: reading, parsing into the fast
    // path's tree (which borrows from the text, so neither run is ever copied into a
    // `serde_json::Value`), hashing. An error in the golden is still the one reported first.
    let (golden_bytes, actual_bytes) =
        atif_normalize::support::join(|| read_input(&args.golden), || read_input(&args.run.actual));
    let golden_bytes = golden_bytes?;
    // Both sides are normalised alike: the preset of the log the run (else the golden) came
    // from, when neither a flag nor the project file names one.
    let recorded = actual_bytes.as_deref().ok().filter(|bytes| origin(bytes).preset().is_some());
    let chosen = args.run.normalize.to_options(
        "diff",
        Some(&args.golden),
        Some(recorded.unwrap_or(&golden_bytes)),
    )?;
    let options = chosen.options;
    let actual_bytes = match actual_bytes {
        Ok(bytes) => bytes,
        Err(err) => {
            // The golden's own error, if it has one, comes first.
            normalized_document(&golden_bytes, &args.golden, &options)?;
            return Err(err);
        }
    };
    let compare = args.run.compare.to_options(&chosen.config);
    if args.matching.is_set(&chosen.config) {
        let golden = (&golden_bytes[..], args.golden.as_str());
        let actual = (&actual_bytes[..], args.run.actual.as_str());
        let modes = (&args.matching, &chosen.config);
        let judged = crate::cmd::matching::judge(golden, actual, &options, modes, args.format)?;
        if let Some(path) = &args.html {
            let golden = Side { bytes: &golden_bytes, name: display_name(&args.golden) };
            let actual = Side { bytes: &actual_bytes, name: display_name(&args.run.actual) };
            write_diff_page(path, &golden, &actual, (&options, &compare), &judged.view())?;
        }
        return Ok(judged.exit_code());
    }
    let (golden, actual) = atif_normalize::support::join(
        || normalized_document(&golden_bytes, &args.golden, &options),
        || normalized_document(&actual_bytes, &args.run.actual, &options),
    );
    let (golden, actual) = (golden?, actual?);
    if let Some(path) = &args.html {
        let golden = Side { bytes: &golden_bytes, name: display_name(&args.golden) };
        let actual = Side { bytes: &actual_bytes, name: display_name(&args.run.actual) };
        write_diff_page(path, &golden, &actual, (&options, &compare), &ViewOptions::new())?;
    }
    let comparison = atif_normalize::compare(&golden, &actual, &compare);
    let changed = !comparison.is_same();
    let mut report_options = atif_normalize::ReportOptions::new();
    // Two runs, named as given: `atif diff` does not know which of them is a golden.
    let names = (display_name(&args.golden).to_owned(), display_name(&args.run.actual).to_owned());
    report_options
        .set_full(args.full)
        .set_full_command(Some(this_command_as("diff", "--full")))
        .set_names(Some(names.clone()));
    if args.format == Format::Json {
        let report = json_report(&comparison, &report_options);
        output::out(|out| {
            serde_json::to_writer_pretty(&mut *out, &report)?;
            writeln!(out)
        })?;
    } else if !changed {
        output::out(|out| writeln!(out, "{} and {} have the same Shape", names.0, names.1))?;
    } else {
        let report = comparison.report(&report_options);
        output::out(|out| output::write_report(out, &report))?;
    }
    Ok(ExitCode::from(u8::from(changed)))
}

/// The JSON report: what the text report shows, as fields, cut the same way unless `--full`,
/// so a long run gives a short document.
fn json_report(comparison: &Comparison<'_>, options: &atif_normalize::ReportOptions) -> Value {
    let (deltas, changed) = (comparison.deltas(), !comparison.is_same());
    let (changes, diff) = match changed {
        true => (comparison.changes(), comparison.report_diff(options).text),
        false => (&[][..], String::new()),
    };
    let n_shown = atif_normalize::shown_changes(changes.len(), options);
    json!({
        "changed": changed,
        "deltas": deltas.iter().map(|delta| delta_json(delta, options.full())).collect::<Vec<_>>(),
        "steps": changes[..n_shown].iter().map(change_json).collect::<Vec<_>>(),
        "more_steps": changes.len() - n_shown,
        "diff": diff,
    })
}

/// A Shape delta in the JSON output: `{"field", "text", "golden", "actual"}`, where `text` is
/// the line the text report prints; lists too long to print whole leave out `golden` and
/// `actual` (the text is then the edit between them) unless `full`.
fn delta_json(delta: &Delta, full: bool) -> Value {
    let mut json = json!({"field": delta.field, "text": delta.to_string()});
    if full || !delta.is_list_edit() {
        json["golden"] = delta.golden.clone();
        json["actual"] = delta.actual.clone();
    }
    json
}

/// A step change in the JSON output: `{"kind", "subagent", "golden_step", "actual_step",
/// "source", "details", "text"}`.
pub(crate) fn change_json(change: &StepChange) -> Value {
    let kind = match change.kind {
        StepChangeKind::Inserted => "inserted",
        StepChangeKind::Removed => "removed",
        _ => "changed",
    };
    json!({
        "kind": kind,
        "subagent": change.subagent,
        "golden_step": change.golden_step,
        "actual_step": change.actual_step,
        "source": change.source,
        "details": change.details,
        "text": change.to_string(),
    })
}
