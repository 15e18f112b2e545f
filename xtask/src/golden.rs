//! `cargo xtask golden-*`: aliases of `atif golden` for this repository, on the same
//! `atif-golden` code.
//!
//! `golden-update` runs the workspace tests (`cargo test --workspace --all-features
//! --no-fail-fast [FILTER]`) through [`atif_golden::run_update`]; `golden-review`,
//! `golden-accept` and `golden-reject` work on the pending `.json.new` files found by
//! [`atif_golden::find_pending`] under the workspace root.

use std::io::IsTerminal;
use std::path::Path;
use std::process::{Command, ExitCode};

use crate::project_root;

/// `cargo xtask golden-update [FILTER]`.
pub(crate) fn update(args: &[String]) -> anyhow::Result<ExitCode> {
    let filter = single_filter(args, "golden-update")?;
    let root = project_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    // Without --no-fail-fast, one failing test binary would stop cargo before the others had
    // updated their goldens.
    command.current_dir(&root).args(["test", "--workspace", "--all-features", "--no-fail-fast"]);
    command.args(filter);
    eprintln!(
        "xtask: running cargo test --workspace --all-features --no-fail-fast{} with {}=update",
        filter.map(|filter| format!(" {filter}")).unwrap_or_default(),
        atif_golden::MODE_ENV
    );
    let summary = atif_golden::run_update(&root, command, filter.is_some())?;
    print!("golden-update:\n{summary}");
    if !summary.duplicates.is_empty() {
        return Ok(ExitCode::from(1));
    }
    if !summary.tests_passed {
        eprintln!(
            "xtask: some tests failed for reasons other than their goldens; the goldens listed above were still written"
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `cargo xtask golden-review [FILTER]`: interactive on a terminal, a listing otherwise.
pub(crate) fn review(args: &[String]) -> anyhow::Result<ExitCode> {
    let filter = single_filter(args, "golden-review")?;
    let root = project_root();
    let pending = atif_golden::find_pending(&root, filter)?;
    if pending.is_empty() {
        println!("no pending golden files{}", filter_note(filter));
        return Ok(ExitCode::SUCCESS);
    }
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
        let tally = atif_golden::review_interactively(&pending, &root, &mut input, &mut output)?;
        println!(
            "{} accepted, {} rejected, {} skipped",
            tally.accepted, tally.rejected, tally.skipped
        );
        return Ok(ExitCode::SUCCESS);
    }
    for item in &pending {
        print!("{}", atif_golden::review(item)?.render(&root));
    }
    println!(
        "\n{} pending; accept with `cargo xtask golden-accept [FILTER]`, reject with `cargo xtask golden-reject [FILTER]`",
        pending.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `cargo xtask golden-accept [FILTER]`.
pub(crate) fn accept(args: &[String]) -> anyhow::Result<ExitCode> {
    let filter = single_filter(args, "golden-accept")?;
    let root = project_root();
    let pending = atif_golden::find_pending(&root, filter)?;
    if pending.is_empty() {
        println!("no pending golden files{}", filter_note(filter));
    }
    for item in &pending {
        let golden = atif_golden::accept(item)?;
        println!("accepted {}", relative(&root, &golden).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `cargo xtask golden-reject [FILTER]`.
pub(crate) fn reject(args: &[String]) -> anyhow::Result<ExitCode> {
    let filter = single_filter(args, "golden-reject")?;
    let root = project_root();
    let pending = atif_golden::find_pending(&root, filter)?;
    if pending.is_empty() {
        println!("no pending golden files{}", filter_note(filter));
    }
    for item in &pending {
        atif_golden::reject(item)?;
        println!("rejected {}", relative(&root, &item.pending).display());
    }
    Ok(ExitCode::SUCCESS)
}

fn single_filter<'a>(args: &'a [String], command: &str) -> anyhow::Result<Option<&'a str>> {
    match args {
        [] => Ok(None),
        [filter] if !filter.starts_with('-') => Ok(Some(filter)),
        _ => anyhow::bail!("usage: cargo xtask {command} [FILTER]"),
    }
}

fn filter_note(filter: Option<&str>) -> String {
    filter.map(|filter| format!(" matching `{filter}`")).unwrap_or_default()
}

fn relative<'a>(root: &Path, path: &'a Path) -> &'a Path {
    path.strip_prefix(root).unwrap_or(path)
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
