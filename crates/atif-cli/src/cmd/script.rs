//! `atif script`.

use std::process::ExitCode;

/// Arguments of `atif script`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `atif script`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`atif script` is not built yet")
}
