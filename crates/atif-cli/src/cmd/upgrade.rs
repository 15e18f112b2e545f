//! `atif upgrade`: rewrite a v1.x trajectory as ATIF-v1.8 on standard output.

use std::io::Write;
use std::process::ExitCode;

use atif_schema::{ValidateOptions, validate};

use crate::input::{display_name, load_trajectory};
use crate::output;
use crate::output::OutputArgs;
use crate::status::invalid;

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
/// note per change (or change not made) to stderr.
///
/// The upgraded document is validated (strict profile) before it is written: errors that the
/// upgrade cannot fix are reported with their JSON pointers, which are those of the input, and
/// nothing is written. The input is not validated first, since the v1.6 subagent refs that the
/// upgrade repairs are errors before it. Exit 1 when the input is not an ATIF trajectory with a
/// known label or the upgraded document is invalid, 2 when it cannot be read or written.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let name = display_name(&args.file);
    let document = load_trajectory(&args.file)?;
    let upgrade = atif_schema::upgrade_owned(document).map_err(|err| {
        invalid(anyhow::Error::new(err).context(format!("cannot upgrade {name}")))
    })?;
    let notes = |out: &mut dyn Write| {
        upgrade.notes.iter().try_for_each(|note| writeln!(out, "{name}: {note}"))
    };
    let report = validate(&upgrade.document, &ValidateOptions::default());
    if !report.is_valid() {
        let n_errors = report.errors().count();
        // The status says "invalid" even when standard error cannot (docs/cli.md).
        let _ = output::error(|out| {
            if !output::quiet() {
                notes(out)?;
            }
            for finding in report.errors() {
                writeln!(out, "{name}: {finding}")?;
            }
            writeln!(
                out,
                "error: {name} is not valid ATIF-v1.8 after the upgrade ({n_errors} {} the \
                 upgrade cannot fix, at the pointers of the input); nothing written: fix the \
                 input and run `atif upgrade` again",
                if n_errors == 1 { "error" } else { "errors" }
            )
        });
        return Ok(ExitCode::from(1));
    }
    output::note(notes)?;
    // serde_json writes in small pieces, and standard output flushes at each newline: a
    // buffer in between turns a line-by-line write into one per 64 KiB.
    args.output.write(|out| {
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
        serde_json::to_writer_pretty(&mut out, &upgrade.document)?;
        writeln!(out)?;
        out.flush()
    })?;
    Ok(ExitCode::SUCCESS)
}
