//! `cargo xtask dist` and what it builds, installed as users install it: the wheel in a fresh
//! venv with no cargo on `PATH`, the binary tarball unpacked anywhere, and the npm packages from
//! their tarballs into a fresh project, where the package's own vitest suite (`js/test`, with
//! the pinned SDKs, vitest and jest of `cargo xtask e2e-setup`) runs.
//!
//! The artefacts are built once per run of this file, with `--profile dev` (a release build
//! costs minutes), into a temporary folder.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]
#![allow(clippy::print_stderr, reason = "the test reports the times it measured")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

use atif_test_support::{describe, workspace_path, workspace_root};
use tests::e2e;

/// The folder `cargo xtask dist --profile dev --out DIR` filled, built at the first call.
fn dist() -> &'static Path {
    static DIST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_keep, dir) = DIST.get_or_init(|| {
        let temp = tempfile::tempdir().unwrap();
        let out = temp.path().join("dist");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let started = Instant::now();
        let output = Command::new(cargo)
            .args([
                "run",
                "-q",
                "--locked",
                "-p",
                "xtask",
                "--",
                "dist",
                "--profile",
                "dev",
                "--out",
            ])
            .arg(&out)
            .current_dir(workspace_root())
            .output()
            .unwrap();
        assert!(output.status.success(), "cargo xtask dist failed:\n{}", describe(&output));
        eprintln!("cargo xtask dist --profile dev took {:.1} s", started.elapsed().as_secs_f64());
        (temp, out)
    });
    dir
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`.
fn artefact(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(found.len(), 1, "one {prefix}*{suffix} in {}: {found:?}", dir.display());
    found.into_iter().next().unwrap()
}

/// A `PATH` of the system's folders only: no cargo, no rustc, no e2e cache.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{command:?} failed:\n{}", describe(&output));
    output
}

#[test]
fn the_wheel_installs_and_runs_in_a_venv_without_cargo() {
    let Some(python) = e2e::python() else { return };
    let wheel = artefact(dist(), "atif-", ".whl");
    let temp = tempfile::tempdir().unwrap();
    let venv = temp.path().join("venv");
    run(Command::new(&python).arg("-m").arg("venv").arg(&venv));
    let path = format!("{}:{SYSTEM_PATH}", venv.join("bin").display());
    // The positive control: this PATH really has no cargo on it.
    let cargo = Command::new("sh").args(["-c", "command -v cargo"]).env("PATH", &path).output();
    assert!(!cargo.unwrap().status.success(), "cargo is on {path}");

    let started = Instant::now();
    run(Command::new(venv.join("bin").join("pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", "--no-index", "--no-deps"])
        .arg(&wheel)
        .env("PATH", &path));
    eprintln!("pip install of the built wheel took {:.1} s", started.elapsed().as_secs_f64());

    let version = run(Command::new("atif").arg("--version").env("PATH", &path));
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), "atif 0.1.0");
    let example = workspace_path("examples/calculator-run.json");
    let valid = run(Command::new("atif").arg("validate").arg(&example).env("PATH", &path));
    assert!(String::from_utf8_lossy(&valid.stdout).contains("valid (ATIF-v1.7, 5 steps"));
    // The plugin finds the binary the wheel put beside this Python.
    let found = run(Command::new(venv.join("bin").join("python"))
        .args(["-c", "from atif_pytest._binary import find_atif; print(find_atif())"])
        .env("PATH", SYSTEM_PATH));
    assert_eq!(
        PathBuf::from(String::from_utf8_lossy(&found.stdout).trim()),
        venv.join("bin").join("atif")
    );
}

#[test]
fn the_binary_tarball_runs_where_it_is_unpacked() {
    if e2e::python().is_none() {
        return;
    }
    let tarball = artefact(dist(), "atif-0.1.0-", ".tar.gz");
    let temp = tempfile::tempdir().unwrap();
    run(Command::new("tar").arg("-xzf").arg(&tarball).arg("-C").arg(temp.path()));
    let name = tarball.file_name().unwrap().to_string_lossy().replace(".tar.gz", "");
    let binary = temp.path().join(&name).join("atif");
    assert!(temp.path().join(&name).join("README.md").is_file());
    let version = run(Command::new(&binary).arg("--version").env("PATH", SYSTEM_PATH));
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), "atif 0.1.0");
    let shape = run(Command::new(&binary)
        .arg("shape")
        .arg(workspace_path("examples/calculator-run.json"))
        .env("PATH", SYSTEM_PATH));
    assert!(String::from_utf8_lossy(&shape.stdout).contains("llm_calls: 3"));
}

/// The pinned runners and SDKs, or `None` after a skip notice.
fn typescript_packages() -> Option<PathBuf> {
    e2e::cached(
        "typescript/node_modules/vitest",
        "the TypeScript test packages (vitest, jest, SDKs)",
    )?;
    Some(e2e::cache_dir().join("typescript").join("node_modules"))
}

#[test]
fn the_npm_packages_install_from_their_tarballs_and_their_suite_passes() {
    let Some(packages) = typescript_packages() else { return };
    if e2e::python().is_none() {
        return;
    }
    let dist = dist();
    let temp = tempfile::tempdir().unwrap();
    // The project resolves `atif` from its own node_modules and the runners and SDKs from the
    // folder above it, as Node looks upward.
    std::os::unix::fs::symlink(&packages, temp.path().join("node_modules")).unwrap();
    let project = temp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "fresh-project", "private": true, "type": "module"}"#,
    )
    .unwrap();
    let started = Instant::now();
    run(Command::new("npm")
        .args(["install", "--offline", "--no-audit", "--no-fund"])
        .arg(artefact(dist, "atif-cli-", ".tgz"))
        .arg(artefact(dist, "atif-0.1.0", ".tgz"))
        .current_dir(&project));
    eprintln!("npm install of the two tarballs took {:.1} s", started.elapsed().as_secs_f64());
    let bin = project.join("node_modules").join(".bin").join("atif");
    let version = run(Command::new(&bin).arg("--version"));
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), "atif 0.1.0");

    copy_dir(&workspace_path("js/test"), &project.join("test"));
    // The page whose TypeScript blocks `js/test/docs.test.js` runs.
    std::fs::create_dir(project.join("docs")).unwrap();
    std::fs::copy(workspace_path("docs/typescript.md"), project.join("docs/typescript.md"))
        .unwrap();
    let fake = workspace_root().join("target").join("debug").join("atif-fake-provider");
    let fake = std::env::var_os("ATIF_FAKE_PROVIDER").map_or(fake, PathBuf::from);
    let started = Instant::now();
    let suite = Command::new("node")
        .arg(packages.join("vitest").join("vitest.mjs"))
        .args(["run", "test", "--testTimeout", "120000"])
        .current_dir(&project)
        .env("ATIF_FAKE_PROVIDER", &fake)
        .env("NO_COLOR", "1")
        .env_remove("ATIF_BIN")
        .env_remove("CI")
        .output()
        .unwrap();
    eprintln!("the package's vitest suite took {:.1} s", started.elapsed().as_secs_f64());
    // vitest exits 1 when it collects no test, so a suite gone missing fails here too.
    assert!(suite.status.success(), "the package's vitest suite failed:\n{}", describe(&suite));
    let said = String::from_utf8_lossy(&suite.stdout);
    assert!(said.contains(" passed"), "{said}");
    assert!(!said.contains("skipped"), "{said}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
