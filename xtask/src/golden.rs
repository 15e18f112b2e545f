//! `cargo xtask golden-*`: the golden-file workflow.

use std::process::ExitCode;

pub(crate) fn update(_args: &[String]) -> anyhow::Result<ExitCode> {
    let _ = crate::project_root();
    anyhow::bail!("golden-update is not built yet")
}

pub(crate) fn review(_args: &[String]) -> anyhow::Result<ExitCode> {
    anyhow::bail!("golden-review is not built yet")
}

pub(crate) fn accept(_args: &[String]) -> anyhow::Result<ExitCode> {
    anyhow::bail!("golden-accept is not built yet")
}

pub(crate) fn reject(_args: &[String]) -> anyhow::Result<ExitCode> {
    anyhow::bail!("golden-reject is not built yet")
}
