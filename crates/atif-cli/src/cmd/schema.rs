//! `atif schema`: print the JSON Schema of an ATIF version.

use std::process::ExitCode;

use atif_schema::{SchemaVersion, json_schema_text};

use crate::output;

/// Arguments of `atif schema`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The ATIF version: `1.5`, `v1.5` or `ATIF-v1.5` (default: the newest, 1.8).
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    atif_version: Option<SchemaVersion>,
}

/// Runs `atif schema`: prints the Draft 2020-12 JSON Schema of the version to stdout.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let version = args.atif_version.unwrap_or(SchemaVersion::LATEST);
    let text = json_schema_text(version);
    output::out(|stdout| stdout.write_all(text.as_bytes()))?;
    Ok(ExitCode::SUCCESS)
}

/// Reads a version as `1.5`, `v1.5` or `ATIF-v1.5`.
pub(crate) fn parse_version(text: &str) -> Result<SchemaVersion, String> {
    let trimmed = text.trim();
    let number =
        trimmed.strip_prefix("ATIF-v").or_else(|| trimmed.strip_prefix('v')).unwrap_or(trimmed);
    SchemaVersion::ALL
        .into_iter()
        .find(|version| version.label().strip_prefix("ATIF-v") == Some(number))
        .ok_or_else(|| {
            let valid: Vec<String> =
                SchemaVersion::ALL.iter().map(|version| format!("1.{}", version.minor())).collect();
            format!(
                "unknown ATIF version `{text}`: expected one of {} (also written v1.N or ATIF-v1.N)",
                valid.join(", ")
            )
        })
}
