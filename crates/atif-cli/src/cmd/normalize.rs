//! `atif normalize`: print the canonical normalised text of a trajectory.

use std::process::ExitCode;

use anyhow::Context;
use atif_normalize::NormalizeOptions;
use serde_json::Value;

use crate::cmd::common::{NormalizeArgs, print, read_input};

/// Arguments of `atif normalize`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trajectory file (`-` for standard input).
    #[arg(value_name = "FILE")]
    pub(crate) file: String,
    #[command(flatten)]
    pub(crate) normalize: NormalizeArgs,
}

/// Runs `atif normalize`: exit 0 with the canonical text on standard output, or an error
/// (exit 2) naming the file when it cannot be read, is not JSON or is not a trajectory.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let options = args.normalize.to_options()?;
    let bytes = read_input(&args.file)?;
    // The fast path reads the text straight into a tree that borrows its strings, and writes
    // the canonical text in blocks; the output is the same as `load_normalized` then
    // `write_canonical`. It writes nothing before the whole document has been read.
    let mut failure = None;
    print(|out| match atif_normalize::normalize_json(&bytes, &options, &mut *out) {
        Ok(()) => Ok(()),
        Err(atif_normalize::Error::Write { source }) => Err(source),
        Err(err) => {
            failure = Some(err);
            Ok(())
        }
    })?;
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(atif_normalize::Error::InvalidJson { .. }) => {
            // Report bad JSON the way every other subcommand does.
            parse(&args.file, &bytes)?;
            anyhow::bail!("{} is not valid JSON", args.file);
        }
        Some(err) => Err(err).with_context(|| format!("cannot normalise {}", args.file)),
    }
}

/// Reads, parses and normalises the trajectory at `path`; every error names the file.
pub(crate) fn load_normalized(path: &str, options: &NormalizeOptions) -> anyhow::Result<Value> {
    let bytes = read_input(path)?;
    let doc = parse(path, &bytes)?;
    drop(bytes);
    atif_normalize::normalize_owned(doc, options)
        .with_context(|| format!("cannot normalise {path}"))
}

fn parse(path: &str, bytes: &[u8]) -> anyhow::Result<Value> {
    atif_schema::parse_json(bytes).with_context(|| format!("{path} is not valid JSON"))
}
