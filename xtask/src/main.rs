//! Project automation, run as `cargo xtask <command>`.
#![forbid(unsafe_code)]
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a developer tool prints")]

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(other) => {
            eprintln!("xtask: unknown command `{other}`");
            ExitCode::from(2)
        }
        None => {
            eprintln!("usage: cargo xtask <golden-update|golden-review|golden-accept|golden-reject|schema>");
            ExitCode::from(2)
        }
    }
}
