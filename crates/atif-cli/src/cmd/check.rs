//! `atif check`.

use std::process::ExitCode;

/// Arguments of `atif check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `atif check`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`atif check` is not built yet")
}
