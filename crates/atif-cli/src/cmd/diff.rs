//! `atif diff`: compare two trajectories: Shape deltas, step-level explanation, unified diff.

use std::process::ExitCode;

use atif_normalize::{Delta, StepChange, StepChangeKind};
use serde_json::{Value, json};

use crate::cmd::common::{CompareArgs, Format, NormalizeArgs, print, this_command_as};
use crate::cmd::normalize::load_normalized;
use crate::output;

/// Arguments of `atif diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The golden trajectory (normalised again, which changes nothing if it already is).
    #[arg(value_name = "GOLDEN")]
    pub(crate) golden: String,
    /// The trajectory of the run under test.
    #[arg(value_name = "ACTUAL")]
    pub(crate) actual: String,
    /// Output format: `text` (the report: deltas, step-level explanation, the first changed
    /// places of the unified diff) or `json` (one object: `changed`, `deltas`, `steps`, `diff`;
    /// see docs/cli.md).
    #[arg(long, value_enum, default_value_t)]
    pub(crate) format: Format,
    /// Show every step change and the whole unified diff, not only the first changed places.
    #[arg(long)]
    pub(crate) full: bool,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
    #[command(flatten)]
    pub(crate) normalize: NormalizeArgs,
}

/// Runs `atif diff`: exit 0 when the Shapes agree, 1 when there are deltas (the report: the
/// deltas, the step-level explanation and the first changed places of the unified diff, or all
/// of it with `--full`) or an input is not a trajectory, 2 when an input cannot be read.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let options = args.normalize.to_options()?;
    if args.golden == "-" && args.actual == "-" {
        anyhow::bail!("GOLDEN and ACTUAL are both `-`: standard input can be read only once");
    }
    let golden = load_normalized(&args.golden, &options)?;
    let actual = load_normalized(&args.actual, &options)?;
    let diff_options = args.compare.to_options();

    let deltas = atif_normalize::diff(
        &atif_normalize::shape(&golden),
        &atif_normalize::shape(&actual),
        &diff_options,
    );
    let changed = !deltas.is_empty();
    if args.format == Format::Json {
        let (changes, unified) = if changed {
            (atif_normalize::explain(&golden, &actual), atif_normalize::render(&golden, &actual))
        } else {
            (Vec::new(), String::new())
        };
        let report = json!({
            "changed": changed,
            "deltas": deltas.iter().map(delta_json).collect::<Vec<_>>(),
            "steps": changes.iter().map(change_json).collect::<Vec<_>>(),
            "diff": unified,
        });
        print(|out| {
            serde_json::to_writer_pretty(&mut *out, &report)?;
            writeln!(out)
        })?;
        return Ok(ExitCode::from(u8::from(changed)));
    }
    if !changed {
        print(|out| writeln!(out, "no behaviour change"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut report_options = atif_normalize::ReportOptions::new();
    report_options.set_full(args.full).set_full_command(Some(this_command_as("diff", "--full")));
    let report = atif_normalize::report(&golden, &actual, &deltas, &report_options);
    print(|out| output::write_report(out, &report))?;
    Ok(ExitCode::from(1))
}

/// A Shape delta in the JSON output: `{"field", "golden", "actual"}`.
pub(crate) fn delta_json(delta: &Delta) -> Value {
    json!({"field": delta.field, "golden": delta.golden, "actual": delta.actual})
}

/// A step change in the JSON output: `{"kind", "subagent", "golden_step", "actual_step",
/// "source", "details", "text"}`.
fn change_json(change: &StepChange) -> Value {
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
