//! `atif import`.

use std::process::ExitCode;

/// Arguments of `atif import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `atif import`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`atif import` is not built yet")
}
