//! `atif upgrade`: rewrite a v1.x trajectory as ATIF-v1.8 on standard output.

use std::process::ExitCode;

use crate::cmd::common::{OutputArgs, display_name, invalid, load_trajectory};
use crate::output;

/// Arguments of `atif upgrade`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trajectory to upgrade (`-` reads standard input).
    #[arg(value_name = "FILE")]
    file: String,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `atif upgrade`: the upgraded document (pretty JSON) goes to stdout (or `-o FILE`), one
/// note per change (or change not made) to stderr. Exit 1 when the input is not an ATIF
/// trajectory with a known label, 2 when it cannot be read or written.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let name = display_name(&args.file);
    let document = load_trajectory(&args.file)?;
    let upgrade = atif_schema::upgrade(&document).map_err(|err| {
        invalid(anyhow::Error::new(err).context(format!("cannot upgrade {name}")))
    })?;
    output::note(|out| upgrade.notes.iter().try_for_each(|note| writeln!(out, "{name}: {note}")))?;
    args.output.write(|out| {
        serde_json::to_writer_pretty(&mut *out, &upgrade.document)?;
        writeln!(out)
    })?;
    Ok(ExitCode::SUCCESS)
}
