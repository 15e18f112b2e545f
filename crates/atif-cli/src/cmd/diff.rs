//! `atif diff`.

use std::process::ExitCode;

/// Arguments of `atif diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `atif diff`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`atif diff` is not built yet")
}
