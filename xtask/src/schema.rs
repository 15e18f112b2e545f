//! `cargo xtask schema [--check]`: regenerate the committed JSON Schemas.

use std::process::ExitCode;

pub(crate) fn run(_args: &[String]) -> anyhow::Result<ExitCode> {
    anyhow::bail!("schema is not built yet")
}
