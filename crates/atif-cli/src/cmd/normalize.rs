//! `atif normalize`.

use std::process::ExitCode;

/// Arguments of `atif normalize`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `atif normalize`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`atif normalize` is not built yet")
}
