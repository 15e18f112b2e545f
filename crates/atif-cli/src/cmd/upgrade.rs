//! `atif upgrade`: rewrite a v1.x trajectory as ATIF-v1.8 on standard output.

use std::process::ExitCode;

use crate::cmd::common::{print, read_input};

/// Arguments of `atif upgrade`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trajectory to upgrade (`-` reads standard input).
    #[arg(value_name = "FILE")]
    file: String,
}

/// Runs `atif upgrade`: the upgraded document (pretty JSON) goes to stdout, one note per change
/// (or change not made) to stderr. Exit 1 when the input is not a JSON object with a known
/// label; an unreadable file is an error (exit 2).
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let bytes = read_input(&args.file)?;
    let name = if args.file == "-" { "<stdin>" } else { args.file.as_str() };
    // Strict JSON (no byte-order mark, no NaN, no duplicate keys), with line and column.
    let document = match atif_schema::parse_json(&bytes) {
        Ok(document) => document,
        Err(err) => {
            eprintln!("{name}: {err}");
            return Ok(ExitCode::from(1));
        }
    };
    let upgrade = match atif_schema::upgrade(&document) {
        Ok(upgrade) => upgrade,
        Err(err) => {
            eprintln!("{name}: cannot upgrade: {err}");
            return Ok(ExitCode::from(1));
        }
    };
    for note in &upgrade.notes {
        eprintln!("{name}: {note}");
    }
    let mut text = serde_json::to_string_pretty(&upgrade.document)?;
    text.push('\n');
    print(|stdout| stdout.write_all(text.as_bytes()))?;
    Ok(ExitCode::SUCCESS)
}
