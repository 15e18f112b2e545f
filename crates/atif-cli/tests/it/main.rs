//! Integration tests of the `atif` binary: each runs the real executable on files in a temp dir.
#![allow(clippy::unwrap_used, reason = "test helpers panic on a broken test setup")]

mod check;
mod ci;
mod config;
mod conventions;
mod diff;
mod envelope;
mod examples;
mod files;
mod golden;
mod harness;
mod import;
mod input;
mod live;
mod matching;
mod normalize;
mod proxy;
mod schema;
mod script;
mod secrets;
mod validate;
mod view;

use std::process::{Command, Output, Stdio};

use atif_test_support::{atif_command, dead_pid, run_with_stdin, stderr, stdout};

/// Runs `command` with its standard output closed before it writes anything, as
/// `atif ... | head -c 0` would, and collects its exit status and standard error.
fn run_with_closed_stdout(mut command: Command) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}
