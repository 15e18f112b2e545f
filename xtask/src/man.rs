//! `cargo xtask man [DIR]`: the man pages of `atif` (clap_mangen), written by the binary's
//! hidden `atif man DIR` so that the pages always describe the built command line.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::Context;

use crate::project_root;

/// Builds `atif` and writes `atif.1` and one `atif-SUBCOMMAND.1` per subcommand into DIR
/// (default `target/man`).
pub(crate) fn run(args: &[String]) -> anyhow::Result<ExitCode> {
    let dir = match args {
        [] => project_root().join("target/man"),
        [dir] if !dir.starts_with('-') => PathBuf::from(dir),
        _ => anyhow::bail!("usage: cargo xtask man [DIR]"),
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .current_dir(project_root())
        .args(["run", "--quiet", "--package", "atif-cli", "--bin", "atif", "--", "man"])
        .arg(&dir)
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        anyhow::bail!("`atif man` failed ({status})");
    }
    println!(
        "wrote the man pages to {} (read one with `man -l {}/atif.1`)",
        dir.display(),
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
