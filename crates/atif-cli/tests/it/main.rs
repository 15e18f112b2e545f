//! Integration tests of the `atif` binary: each runs the real executable on files in a temp dir.
#![allow(clippy::unwrap_used, reason = "test helpers panic on a broken test setup")]

mod check;
mod conventions;
mod diff;
mod examples;
mod files;
mod golden;
mod import;
mod input;
mod normalize;
mod proxy;
mod schema;
mod script;
mod secrets;
mod validate;

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The real `atif` binary with `args`, and none of the variables that change what it writes
/// (`ATIF_GOLDEN`, `ATIF_GOLDEN_REPORT`, `CI`) inherited from the environment the tests run in,
/// so that `cargo xtask golden-update` or a CI runner cannot change a test's outcome.
fn atif_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_atif"));
    command.args(args).env_remove("ATIF_GOLDEN").env_remove("ATIF_GOLDEN_REPORT").env_remove("CI");
    command
}

/// Runs `command` with `stdin` on its standard input and collects what it printed.
fn run_with_stdin(mut command: Command, stdin: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that fails on its arguments may exit before reading: ignore a broken pipe.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

/// What the command printed on standard output.
fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What the command printed on standard error.
fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `command` with its standard output closed before it writes anything, as
/// `atif ... | head -c 0` would, and collects its exit status and standard error.
fn run_with_closed_stdout(mut command: Command) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

/// The id of a process that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}
