//! `atif schema`.

use std::process::ExitCode;

/// Arguments of `atif schema`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `atif schema`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`atif schema` is not built yet")
}
