//! `atif mcp`: the stdio MCP relay of atif-proxy, in place of an MCP server in an agent's
//! configuration (see `docs/mcp.md`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use atif_proxy::{McpOptions, McpTarget, Operation};

use crate::cmd::proxy::{DriftArgs, interrupted, runtime};
use crate::output;
use crate::status::invalid;

/// Arguments of `atif mcp`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("mode").args(["record", "replay"]).requires("script"))]
pub(crate) struct Args {
    /// The server's name in the agent's configuration; its messages carry it on the tape.
    #[arg(long, value_name = "NAME")]
    name: String,
    /// A script of the relay's own, for an agent without a model tape; without it, the relay
    /// reports to the record/replay server named by ATIF_PROXY_URL and ATIF_PROXY_TOKEN
    /// (`atif record`, `atif replay`, `atif serve` set them), which keeps the one tape.
    #[arg(long, value_name = "FILE", requires = "mode")]
    script: Option<PathBuf>,
    /// With --script: start the server and record its traffic into the script (this server's
    /// messages are replaced; the rest of the script is kept).
    #[arg(long)]
    record: bool,
    /// With --script: answer from the script without starting the server.
    #[arg(long)]
    replay: bool,
    #[command(flatten)]
    drift: DriftArgs,
    /// Ignore what this regex matches when calls are compared (dates, UUIDs, long hex ids and
    /// the working and home directories are masked already); repeatable.
    #[arg(long = "mask", value_name = "REGEX")]
    masks: Vec<String>,
    /// The real MCP server's command and its arguments, after `--` (not started in a replay).
    #[arg(last = true, required = true, value_name = "SERVER_CMD")]
    command: Vec<OsString>,
}

/// Runs `atif mcp`: 0 when the relay's run was exact, 1 when it was not (a replay's unrecorded
/// or missing calls), 2 when it could not run.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let target = match &args.script {
        Some(path) => McpTarget::Script {
            path: path.clone(),
            operation: if args.record { Operation::Record } else { Operation::Replay },
        },
        None => {
            let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
            let (Some(url), Some(token)) = (var("ATIF_PROXY_URL"), var("ATIF_PROXY_TOKEN")) else {
                anyhow::bail!(
                    "atif mcp needs a tape: run the agent under `atif record`, `atif replay` or \
                     `atif serve` (which set ATIF_PROXY_URL and ATIF_PROXY_TOKEN), or give \
                     `--script FILE --record` or `--script FILE --replay`"
                );
            };
            McpTarget::Server { url, token }
        }
    };
    let mut options = McpOptions::new(&args.name, args.command.clone(), target);
    options.set_drift(args.drift.policy());
    for mask in &args.masks {
        options.add_mask(mask);
    }
    let runtime = runtime()?;
    let outcome = runtime.block_on(async {
        let stop = interrupted().context("cannot install the signal handlers")?;
        atif_proxy::relay_mcp(&options, Box::pin(stop)).await.map_err(|err| match err {
            atif_proxy::Error::Script(
                err @ (atif_replay::Error::Io { .. } | atif_replay::Error::Pattern { .. }),
            ) => anyhow::Error::new(err),
            atif_proxy::Error::Script(err) => invalid(err),
            err => anyhow::Error::new(err),
        })
    });
    // A read of the agent's standard input may still wait in a thread of the runtime (the
    // server ended first, the agent's side is open): the relay ends without it.
    runtime.shutdown_background();
    let outcome = outcome?;
    for error in &outcome.errors {
        output::error(|out| writeln!(out, "atif mcp: {error}"))?;
    }
    for warning in &outcome.warnings {
        output::note(|out| writeln!(out, "atif mcp: warning: {warning}"))?;
    }
    if let Some(saved) = &outcome.saved {
        let (name, count) = (&args.name, outcome.messages);
        output::note(|out| {
            writeln!(out, "atif mcp: wrote {} ({name}: {count} messages)", saved.display())
        })?;
    }
    Ok(match outcome.errors.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}
