//! What the workspace's tests share, in one place: where the shared corpus and the workspace's
//! files are, and how to run the real `atif` binary.
//!
//! A dev-dependency only (`publish = false`; `tests/tests/architecture.rs` checks that no
//! published crate depends on it otherwise). Its helpers panic with a message naming what is
//! missing, as a broken test setup should.
//!
//! - [`corpus`] finds a folder of the shared corpus of real trajectories and agent logs
//!   (`$ATIF_CORPUS`, else `../shared/corpus` beside the checkout), or prints the skip notice
//!   and returns `None`, so a test without it passes with a notice; with
//!   `ATIF_CORPUS_REQUIRED=1` (set by `.ci/run`) a missing corpus fails the test instead.
//! - [`workspace_root`] and [`workspace_path`] locate committed fixtures from any crate;
//!   [`json_files_below`] lists the JSON files below a folder, [`file_names`] a folder's entries.
//! - [`atif_binary`], [`atif_command`], [`run_with_stdin`], [`stdout`], [`stderr`],
//!   [`describe`] run the real binary the way the CLI tests do.
//! - [`env_flag`] is the one reading of the `*_REQUIRED` switches.
//! - [`dead_pid`] is a process id that no longer runs, for temporary files of killed writers.
//!
//! # Example
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let Some(logs) = atif_test_support::corpus("logs") else { return Ok(()) };
//! let output = atif_test_support::atif_command(&["import", "--help"]).output()?;
//! assert!(output.status.success(), "{}", atif_test_support::describe(&output));
//! # let _ = logs;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![allow(clippy::print_stderr, reason = "a skip notice goes to the test's standard error")]
#![allow(clippy::expect_used, reason = "a broken test setup panics with the reason")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The environment variable naming the shared corpus folder.
pub const CORPUS_ENV: &str = "ATIF_CORPUS";

/// The environment variable that turns a missing corpus from a skip into a failure.
pub const CORPUS_REQUIRED_ENV: &str = "ATIF_CORPUS_REQUIRED";

/// Whether the environment variable `name` is set to anything but empty, `0` or `false`: the
/// one reading of the workspace's `*_REQUIRED` switches.
pub fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| !matches!(value.as_str(), "" | "0" | "false"))
}

/// The workspace's root folder (the one holding the root `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // This crate lives at crates/atif-test-support.
    manifest.ancestors().nth(2).unwrap_or(manifest).to_path_buf()
}

/// `relative` under the workspace root: `workspace_path("tests/fixtures/crash.json")`.
pub fn workspace_path(relative: &str) -> PathBuf {
    workspace_root().join(relative)
}

/// Every `*.json` file below `dir`, at any depth, sorted.
///
/// # Panics
/// When `dir` or a folder below it cannot be read: a test's own fixture folder must exist.
pub fn json_files_below(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
        for entry in entries {
            let path = entry.unwrap_or_else(|err| panic!("{}: {err}", dir.display())).path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "json") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, &mut found);
    found.sort();
    found
}

/// The folder `sub` of the shared corpus (`""` for the corpus itself), from `$ATIF_CORPUS`,
/// else `../shared/corpus` beside the workspace; or `None` after printing a skip notice naming
/// where it was looked for, when that folder does not exist.
///
/// # Panics
/// When the folder does not exist and `$ATIF_CORPUS_REQUIRED` is set (see [`env_flag`]), so
/// that CI never passes a corpus test by skipping it.
pub fn corpus(sub: &str) -> Option<PathBuf> {
    let root = match std::env::var_os(CORPUS_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("../shared/corpus"),
    };
    find_corpus(&root, sub, env_flag(CORPUS_REQUIRED_ENV))
}

/// [`corpus`] below `root`, with the environment already read.
fn find_corpus(root: &Path, sub: &str, required: bool) -> Option<PathBuf> {
    let dir = if sub.is_empty() { root.to_path_buf() } else { root.join(sub) };
    if dir.is_dir() {
        return Some(dir);
    }
    let notice = format!("corpus not found at {} (set {CORPUS_ENV})", dir.display());
    assert!(!required, "{CORPUS_REQUIRED_ENV} is set but the {notice}");
    eprintln!("skipping: {notice}");
    None
}

/// The `atif` binary: `$ATIF_BIN` when set, else the one cargo built beside the running test
/// (tests run from `target/<profile>/deps/`, binaries sit one folder up).
///
/// # Panics
/// When it does not exist, naming the command that builds it.
pub fn atif_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("ATIF_BIN").filter(|path| !path.is_empty()) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap_or(Path::new("."));
    let atif = profile_dir.join(format!("atif{}", std::env::consts::EXE_SUFFIX));
    assert!(
        atif.exists(),
        "no atif binary at {}: run the tests with `cargo test --workspace`, or `cargo build -p atif-cli` first",
        atif.display()
    );
    atif
}

/// The real `atif` binary with `args`, and none of the variables that change what it writes
/// (`ATIF_GOLDEN`, `ATIF_GOLDEN_LOG`, `CI`) inherited from the environment the tests run in,
/// so that `atif golden update` or a CI runner cannot change a test's outcome.
pub fn atif_command(args: &[&str]) -> Command {
    let mut command = Command::new(atif_binary());
    command.args(args).env_remove("ATIF_GOLDEN").env_remove("ATIF_GOLDEN_LOG").env_remove("CI");
    command
}

/// Runs `command` with `stdin` on its standard input and collects what it printed.
///
/// # Panics
/// When the command cannot be started.
pub fn run_with_stdin(mut command: Command, stdin: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    // A command that fails on its arguments may exit before reading: ignore a broken pipe.
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin);
    }
    child.wait_with_output().expect("the command's output can be collected")
}

/// What the command printed on standard output.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What the command printed on standard error.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A finished process's status, standard output and standard error, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!("{}\nstdout:\n{}\nstderr:\n{}", output.status, stdout(output), stderr(output))
}

/// The names of the entries in `dir`, sorted: what a test that writes files finds there.
///
/// # Panics
/// When `dir` cannot be listed.
pub fn file_names(dir: &Path) -> Vec<String> {
    let entries = std::fs::read_dir(dir).expect("the folder lists");
    let mut names: Vec<String> = entries
        .map(|entry| entry.expect("the entry reads").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The id of a process that has exited and been reaped: what a temporary file left by a killed
/// writer carries in its name.
///
/// # Panics
/// When `true` cannot be run.
pub fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("`true` runs");
    let pid = child.id();
    child.wait().expect("`true` exits");
    pid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_root_holds_the_root_manifest_and_this_crate() {
        let root = workspace_root();
        assert!(root.join("Cargo.toml").is_file(), "{}", root.display());
        assert!(workspace_path("crates/atif-test-support/src/lib.rs").is_file());
    }

    #[test]
    fn a_dead_pid_names_no_running_process() {
        let pid = dead_pid();
        assert_ne!(pid, std::process::id());
        if Path::new("/proc/self").exists() {
            assert!(!Path::new("/proc").join(pid.to_string()).exists(), "{pid} still runs");
        }
    }

    #[test]
    fn a_missing_corpus_is_a_skip_unless_required() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("logs")).expect("logs folder");
        assert_eq!(find_corpus(dir.path(), "logs", true), Some(dir.path().join("logs")));
        assert_eq!(find_corpus(dir.path(), "trajectories", false), None);
        let required = std::panic::catch_unwind(|| find_corpus(dir.path(), "trajectories", true));
        let message = required.expect_err("a required corpus that is missing fails");
        let message = message.downcast_ref::<String>().map_or("", String::as_str);
        assert!(message.contains("ATIF_CORPUS_REQUIRED is set"), "{message}");
        assert!(message.contains("trajectories"), "{message}");
    }
}
