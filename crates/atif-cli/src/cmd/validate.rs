//! `atif validate`.

use std::process::ExitCode;

/// Arguments of `atif validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `atif validate`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`atif validate` is not built yet")
}
