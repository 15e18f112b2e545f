//! `atif upgrade`.

use std::process::ExitCode;

/// Arguments of `atif upgrade`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `atif upgrade`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`atif upgrade` is not built yet")
}
