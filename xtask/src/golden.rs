//! `cargo xtask golden-*`: aliases of `atif golden` for this repository.
//!
//! Each one runs the workspace's own `atif` binary (`cargo run -p atif-cli -- golden …`) at the
//! workspace root, so the aliases cannot drift from what users run: `golden-update` is
//! `atif golden update [FILTER] -- cargo test --workspace --all-features --no-fail-fast
//! [FILTER]`, and `golden-review`, `golden-accept` and `golden-reject` are `atif golden review`,
//! `accept` and `reject` over the whole workspace.

use std::process::{Command, ExitCode};

use anyhow::Context;

use crate::project_root;

/// `cargo xtask golden-update [FILTER]`.
pub(crate) fn update(args: &[String]) -> anyhow::Result<ExitCode> {
    let filter = single_filter(args, "golden-update")?;
    // Without --no-fail-fast, one failing test binary would stop cargo before the others had
    // updated their goldens.
    let mut words = vec!["update"];
    words.extend(filter);
    words.extend(["--", "cargo", "test", "--workspace", "--all-features", "--no-fail-fast"]);
    words.extend(filter);
    atif_golden(&words)
}

/// `cargo xtask golden-review [FILTER]`: interactive on a terminal, a listing otherwise.
pub(crate) fn review(args: &[String]) -> anyhow::Result<ExitCode> {
    verb("review", single_filter(args, "golden-review")?)
}

/// `cargo xtask golden-accept [FILTER]`.
pub(crate) fn accept(args: &[String]) -> anyhow::Result<ExitCode> {
    verb("accept", single_filter(args, "golden-accept")?)
}

/// `cargo xtask golden-reject [FILTER]`.
pub(crate) fn reject(args: &[String]) -> anyhow::Result<ExitCode> {
    verb("reject", single_filter(args, "golden-reject")?)
}

fn verb(verb: &str, filter: Option<&str>) -> anyhow::Result<ExitCode> {
    let mut words = vec![verb];
    words.extend(filter);
    atif_golden(&words)
}

/// Runs `atif golden WORDS…` at the workspace root and returns its exit status.
fn atif_golden(words: &[&str]) -> anyhow::Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(project_root())
        .args(["run", "--quiet", "--locked", "-p", "atif-cli", "--", "golden"])
        .args(words)
        .status()
        .context("cannot run cargo")?;
    let code = status.code().and_then(|code| u8::try_from(code).ok()).unwrap_or(1);
    Ok(ExitCode::from(code))
}

fn single_filter<'a>(args: &'a [String], command: &str) -> anyhow::Result<Option<&'a str>> {
    match args {
        [] => Ok(None),
        [filter] if !filter.starts_with('-') => Ok(Some(filter)),
        _ => anyhow::bail!("usage: cargo xtask {command} [FILTER]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_one_plain_word() {
        assert_eq!(single_filter(&[], "x").unwrap(), None);
        assert_eq!(single_filter(&["abc".to_owned()], "x").unwrap(), Some("abc"));
        let err = single_filter(&["--all".to_owned()], "golden-accept").unwrap_err();
        assert_eq!(err.to_string(), "usage: cargo xtask golden-accept [FILTER]");
    }
}
