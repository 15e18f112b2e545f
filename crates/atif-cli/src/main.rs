//! The `atif` command: a thin layer over the atif-* crates.
//!
//! Exit codes are the same for every subcommand: 0 success, 1 the input is invalid or the
//! behaviour changed, 2 the command could not run (bad arguments, unreadable file).
#![forbid(unsafe_code)]
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a CLI prints")]

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Validate, normalise, compare and import agent trajectories in the ATIF format.
#[derive(Debug, Parser)]
#[command(
    name = "atif",
    version,
    about,
    max_term_width = 100,
    after_help = "Exit status: 0 success; 1 invalid input, or the behaviour changed; 2 the command could not run.\nGuide: README.md and docs/ in the repository."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check that trajectories follow the ATIF rules; report every finding.
    Validate(cmd::validate::Args),
    /// Print the JSON Schema of an ATIF version.
    Schema(cmd::schema::Args),
    /// Rewrite a v1.x trajectory as ATIF-v1.8 on standard output.
    Upgrade(cmd::upgrade::Args),
    /// Print the canonical normalised text of a trajectory.
    Normalize(cmd::normalize::Args),
    /// Print the Shape of a trajectory: what the agent did, in numbers.
    Shape(cmd::shape::Args),
    /// Compare two trajectories: Shape deltas, step-level explanation, unified diff.
    Diff(cmd::diff::Args),
    /// Compare a run against a golden file (exit 1 when behaviour changed).
    Check(cmd::check::Args),
    /// Inspect or redact a recorded model script.
    Script(cmd::script::Args),
    /// Convert a Claude Code or Codex log into an ATIF trajectory.
    Import(cmd::import::Args),
    /// Run an agent command against a local server that records its model traffic into a
    /// script: `atif record --script FILE -- CMD [ARGS...]`.
    Record(cmd::proxy::RecordArgs),
    /// Run an agent command against a local server that replays a recorded script, offline and
    /// strictly: `atif replay --script FILE -- CMD [ARGS...]`.
    Replay(cmd::proxy::ReplayArgs),
    /// Run the record/replay server alone until SIGINT or SIGTERM, for agents started
    /// elsewhere; prints `listening on URL` first.
    Serve(cmd::proxy::ServeArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help and version to stdout with exit 0; usage errors exit 2.
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    let result = match &cli.command {
        Command::Validate(args) => cmd::validate::run(args),
        Command::Schema(args) => cmd::schema::run(args),
        Command::Upgrade(args) => cmd::upgrade::run(args),
        Command::Normalize(args) => cmd::normalize::run(args),
        Command::Shape(args) => cmd::shape::run(args),
        Command::Diff(args) => cmd::diff::run(args),
        Command::Check(args) => cmd::check::run(args),
        Command::Script(args) => cmd::script::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Record(args) => cmd::proxy::record(args),
        Command::Replay(args) => cmd::proxy::replay(args),
        Command::Serve(args) => cmd::proxy::serve(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
