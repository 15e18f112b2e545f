//! `atif normalize`: print the canonical normalised text of a trajectory.

use std::process::ExitCode;

use atif_normalize::{NormalizeOptions, NormalizedDocument};

use crate::flags::NormalizeArgs;
use crate::input::{display_name, read_input};
use crate::output::OutputArgs;
use crate::status::invalid;

/// Arguments of `atif normalize`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trajectory file (`-` for standard input).
    #[arg(value_name = "FILE")]
    pub(crate) file: String,
    #[command(flatten)]
    pub(crate) normalize: NormalizeArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// Runs `atif normalize`: exit 0 with the canonical text on standard output (or in `-o FILE`),
/// 1 when the input is not a trajectory, 2 when it cannot be read or written.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let bytes = read_input(&args.file)?;
    let options = args.normalize.to_options("normalize", Some(&args.file), Some(&bytes))?.options;
    let name = display_name(&args.file);
    // One read of the text: the fast path reads it into a tree that borrows its strings and
    // writes the canonical text in blocks (the same output as `atif_normalize::normalize` then
    // `write_canonical`). The one loader decides what is a trajectory: its form from the kinds
    // of the root's members, and, for text the fast path refuses, the loader's own message.
    let document = parse_document(&bytes, name, &options)?;
    let mut failure = None;
    let mut secrets = None;
    let written = args.output.write(|out| {
        match document.normalize_to(&options, &mut *out) {
            Ok(report) => {
                secrets = Some(report);
                Ok(())
            }
            Err(atif_normalize::Error::Write { source }) => Err(source),
            Err(err) => {
                failure = Some(err);
                // An error, so that `-o FILE` keeps the file as it was.
                Err(std::io::Error::other("not normalised"))
            }
        }
    });
    if let Some(err) = failure {
        return Err(invalid(anyhow::Error::new(err).context(format!("cannot normalise {name}"))));
    }
    written?;
    if let Some(report) = &secrets {
        args.normalize.secrets.report("normalize", report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Parses and normalises `bytes`, read from `path` by [`read_input`], into the fast path's
/// tree, which borrows from them; every error names the file.
pub(crate) fn normalized_document<'a>(
    bytes: &'a [u8],
    path: &str,
    options: &NormalizeOptions,
) -> anyhow::Result<NormalizedDocument<'a>> {
    let name = display_name(path);
    let (normalized, _) =
        parse_document(bytes, name, options)?.normalize(options).map_err(|err| {
            invalid(anyhow::Error::new(err).context(format!("cannot normalise {name}")))
        })?;
    Ok(normalized)
}

/// Reads `bytes` into the fast path's tree, which borrows its strings. The one loader decides
/// what is a trajectory: its form from the kinds of the root's members, and, for text the fast
/// path refuses, the loader's own message.
fn parse_document<'a>(
    bytes: &'a [u8],
    name: &str,
    options: &NormalizeOptions,
) -> anyhow::Result<atif_normalize::JsonDocument<'a>> {
    let document = match atif_normalize::JsonDocument::parse_for(bytes, options) {
        Ok(document) => document,
        Err(err) => {
            atif_schema::support::check_trajectory_bytes(bytes, name)?;
            return Err(invalid(anyhow::Error::new(err).context(format!("cannot read {name}"))));
        }
    };
    atif_schema::support::TrajectoryForm {
        root: document.kind(),
        schema_version: document.member_kind("schema_version"),
        steps: document.member_kind("steps"),
    }
    .check(name)?;
    Ok(document)
}
