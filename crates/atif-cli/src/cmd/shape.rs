//! `atif shape`: print what the agent did, in numbers.

use std::process::ExitCode;

use crate::cmd::normalize::normalized_document;
use crate::flags::{Format, NormalizeArgs};
use crate::input::read_input;
use crate::output;

/// Arguments of `atif shape`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trajectory file (`-` for standard input); it is normalised first.
    #[arg(value_name = "FILE")]
    pub(crate) file: String,
    /// Output format: `text` (one `field: value` line per field, sequences as compact JSON
    /// arrays) or `json` (the Shape as a JSON object with the documented field names).
    #[arg(long, value_enum, default_value_t)]
    pub(crate) format: Format,
    #[command(flatten)]
    pub(crate) normalize: NormalizeArgs,
}

/// Runs `atif shape`: exit 0 with the Shape on standard output, 1 when the input is not a
/// trajectory, 2 when it cannot be read.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let bytes = read_input(&args.file)?;
    let options = args.normalize.to_options("shape", Some(&args.file), Some(&bytes))?.options;
    let shape = normalized_document(&bytes, &args.file, &options)?.shape();
    output::out(|out| match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &shape)?;
            writeln!(out)
        }
        Format::Text => {
            shape.fields().iter().try_for_each(|(field, value)| writeln!(out, "{field}: {value}"))
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
