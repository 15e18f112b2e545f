//! `atif shape`.

use std::process::ExitCode;

/// Arguments of `atif shape`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `atif shape`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`atif shape` is not built yet")
}
