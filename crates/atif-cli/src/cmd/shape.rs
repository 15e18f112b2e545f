//! `atif shape`: print what the agent did, in numbers.

use std::process::ExitCode;

use anyhow::Context;

use crate::cmd::common::{NormalizeArgs, print};
use crate::cmd::normalize::load_normalized;

/// Output format of `atif shape`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// One `field: value` line per field, sequences as compact JSON arrays.
    Text,
    /// The Shape as a JSON object with the documented field names.
    Json,
}

/// Arguments of `atif shape`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trajectory file (`-` for standard input); it is normalised first.
    #[arg(value_name = "FILE")]
    pub(crate) file: String,
    /// How to print the Shape.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    #[command(flatten)]
    pub(crate) normalize: NormalizeArgs,
}

/// Runs `atif shape`: exit 0 with the Shape on standard output, or 2 on error.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let options = args.normalize.to_options()?;
    let normalized = load_normalized(&args.file, &options)?;
    let shape = atif_normalize::shape(&normalized);
    let text = match args.format {
        Format::Json => {
            serde_json::to_string_pretty(&shape).context("cannot serialise the shape")? + "\n"
        }
        Format::Text => {
            shape.fields().iter().map(|(field, value)| format!("{field}: {value}\n")).collect()
        }
    };
    print(|out| out.write_all(text.as_bytes()))?;
    Ok(ExitCode::SUCCESS)
}
