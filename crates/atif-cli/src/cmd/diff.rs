//! `atif diff`: compare two trajectories: Shape deltas, step-level explanation, unified diff.

use std::process::ExitCode;

use crate::cmd::common::{CompareArgs, NormalizeArgs, print};
use crate::cmd::normalize::load_normalized;

/// Arguments of `atif diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The golden trajectory (normalised again, which changes nothing if it already is).
    #[arg(value_name = "GOLDEN")]
    pub(crate) golden: String,
    /// The trajectory of the run under test.
    #[arg(value_name = "ACTUAL")]
    pub(crate) actual: String,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
    #[command(flatten)]
    pub(crate) normalize: NormalizeArgs,
}

/// Runs `atif diff`: exit 0 when the Shapes agree, 1 when there are deltas (printed first,
/// then the step-level explanation and the unified diff), 2 on error.
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
    if deltas.is_empty() {
        print(|out| writeln!(out, "no behaviour change"))?;
        return Ok(ExitCode::SUCCESS);
    }
    // Each part is printed as soon as it is known: on large runs the unified diff takes the
    // longest, and the deltas are what a reader wants first.
    print(|out| deltas.iter().try_for_each(|delta| writeln!(out, "{delta}")))?;
    let changes = atif_normalize::explain(&golden, &actual);
    if !changes.is_empty() {
        print(|out| {
            writeln!(out, "\nsteps:")?;
            changes.iter().try_for_each(|change| writeln!(out, "  {change}"))
        })?;
    }
    let unified = atif_normalize::render(&golden, &actual);
    if !unified.is_empty() {
        print(|out| write!(out, "\n{unified}"))?;
    }
    Ok(ExitCode::from(1))
}
