//! The `atif` command: a thin layer over the atif-* crates.
//!
//! Exit codes are the same for every subcommand: 0 success, 1 the input is invalid or the
//! behaviour changed, 2 the command could not run (bad arguments, unreadable file).
#![forbid(unsafe_code)]

mod cmd;
mod flags;
mod input;
mod origin;
mod output;
mod status;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Validate, normalise, compare and import agent trajectories in the ATIF format.
#[derive(Debug, Parser)]
#[command(
    name = "atif",
    version,
    about,
    max_term_width = 100,
    after_help = "Exit status: 0 success; 1 invalid input, or the behaviour changed; 2 the command could not run.\nMan pages: `atif man DIR`. Guide: README.md and docs/ in the repository."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to colour reports and diffs: `auto` (on a terminal, unless NO_COLOR is set;
    /// CLICOLOR_FORCE forces it), `always` or `never`.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t, global = true)]
    color: output::ColorChoice,
    /// Print nothing on standard error but errors (no summaries, notes or warnings).
    #[arg(short, long, global = true)]
    quiet: bool,
    /// The most bytes read from one input (file or standard input), e.g. `4GiB`, `200MiB`,
    /// `1000000`; a larger input is an error (exit 2).
    #[arg(long, value_name = "BYTES", default_value = "4GiB", value_parser = parse_bytes, global = true)]
    max_input_bytes: u64,
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
    /// Draw a trajectory as one self-contained HTML page (`atif view RUN.json -o run.html`).
    View(cmd::view::Args),
    /// Review, accept or reject pending golden files; re-record goldens.
    Golden(cmd::golden::Args),
    /// Compare N runs with an envelope golden (the behaviour of N earlier runs): changed, no
    /// clear change or inconclusive, at a stated error rate; `--update` writes the envelope.
    Envelope(cmd::envelope::Args),
    /// Inspect or redact a recorded model script.
    Script(cmd::script::Args),
    /// Convert a Claude Code, Codex, Gemini CLI, OpenCode or pi log into an ATIF trajectory.
    Import(cmd::import::Args),
    /// Run an agent command against a local server that records its model traffic into a
    /// script: `atif record --script FILE -- CMD [ARGS...]`.
    Record(cmd::proxy::RecordArgs),
    /// Run an agent command against a local server that replays a recorded script, offline and
    /// strictly: `atif replay --script FILE -- CMD [ARGS...]`.
    Replay(cmd::proxy::ReplayArgs),
    /// Run an agent command N times against the live model through the recording server and
    /// check the envelope golden of its behaviour: `atif live --runs N --golden G.json -- CMD`.
    Live(cmd::live::Args),
    /// A stdio MCP relay in place of an MCP server in the agent's config: records the server's
    /// JSON-RPC traffic, or answers from the tape without starting it:
    /// `atif mcp --name NAME -- SERVER_CMD [ARGS...]`.
    Mcp(cmd::mcp::Args),
    /// Run the record/replay server alone until SIGINT or SIGTERM, for agents started
    /// elsewhere; prints `listening on URL` first.
    Serve(cmd::proxy::ServeArgs),
    /// Print a shell completion script (`atif completions bash > /etc/bash_completion.d/atif`).
    Completions(cmd::completions::Args),
    /// Write the man pages into a folder: `atif man DIR` writes `DIR/atif.1` and one
    /// `DIR/atif-SUBCOMMAND.1` per subcommand (`man -l DIR/atif-check.1` reads one).
    Man(cmd::completions::ManArgs),
    /// One long-lived process for a test harness: starts each test's server and runs its
    /// golden checks in-process, driven by JSON lines on standard input (the pytest plugin's;
    /// see docs/python.md).
    #[command(hide = true)]
    Harness(cmd::harness::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help and version to stdout with exit 0; usage errors exit 2.
            let text = err.render().to_string();
            let printed = if err.use_stderr() {
                output::error(|out| out.write_all(text.as_bytes()))
            } else {
                output::out(|out| out.write_all(text.as_bytes()))
            };
            let code = if err.use_stderr() || printed.is_err() { 2 } else { 0 };
            return ExitCode::from(code);
        }
    };
    output::init(cli.color, cli.quiet);
    input::set_max_input_bytes(cli.max_input_bytes);
    run(&cli)
}

/// Runs the subcommand; an error is printed on standard error and gives its exit status.
fn run(cli: &Cli) -> ExitCode {
    let result = match &cli.command {
        Command::Validate(args) => cmd::validate::run(args),
        Command::Schema(args) => cmd::schema::run(args),
        Command::Upgrade(args) => cmd::upgrade::run(args),
        Command::Normalize(args) => cmd::normalize::run(args),
        Command::Shape(args) => cmd::shape::run(args),
        Command::Diff(args) => cmd::diff::run(args),
        Command::Check(args) => cmd::check::run(args),
        Command::View(args) => cmd::view::run(args),
        Command::Golden(args) => cmd::golden::run(args),
        Command::Envelope(args) => cmd::envelope::run(args),
        Command::Script(args) => cmd::script::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Record(args) => cmd::proxy::record(args),
        Command::Replay(args) => cmd::proxy::replay(args),
        Command::Live(args) => cmd::live::run(args),
        Command::Serve(args) => cmd::proxy::serve(args),
        Command::Mcp(args) => cmd::mcp::run(args),
        Command::Completions(args) => cmd::completions::run(args, Cli::command()),
        Command::Man(args) => cmd::completions::man(args, Cli::command()),
        Command::Harness(args) => cmd::harness::run(args, &run_line),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // When standard error fails too, the exit status is all that is left to say it.
            let _ = output::error(|out| writeln!(out, "error: {err:#}"));
            ExitCode::from(status::exit_status(&err))
        }
    }
}

/// Runs the command line `args` (`atif` first) in this process, as `atif harness` does for
/// each check: its output is captured, and its `--max-input-bytes` and its words are what its
/// subcommand sees. `--color` and `--quiet` stay the harness's own.
fn run_line(args: &[String]) -> cmd::harness::LineOutcome {
    let (code, captured) = output::capture(|| match Cli::try_parse_from(args) {
        Ok(cli) => {
            let code = input::with_command_line(args, cli.max_input_bytes, || run(&cli));
            cmd::harness::code_of(code)
        }
        Err(err) => {
            let _ = output::error(|out| out.write_all(err.render().to_string().as_bytes()));
            2
        }
    });
    cmd::harness::LineOutcome {
        code,
        stdout: String::from_utf8_lossy(&captured.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&captured.stderr).into_owned(),
    }
}

/// Reads a byte count: a number, optionally followed by `KiB`, `MiB` or `GiB` (`K`, `M`, `G`
/// and `KB`, `MB`, `GB` mean the same binary units).
fn parse_bytes(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit()).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "expected a byte count such as 4GiB, 200MiB or 1000000, got `{text}`"
            ));
        }
    };
    number.parse::<u64>().ok().and_then(|number| number.checked_mul(scale)).ok_or_else(|| {
        format!("expected a byte count such as 4GiB, 200MiB or 1000000, got `{text}`")
    })
}
