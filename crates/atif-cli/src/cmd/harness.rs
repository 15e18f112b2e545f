//! `atif harness`: one long-lived process for a test harness (the pytest plugin), which starts
//! each test's record/replay server and runs its golden checks in-process instead of starting
//! an `atif serve` and an `atif check` process per test.
//!
//! It reads one JSON request per line on standard input and answers each with one JSON line
//! on standard output, in order; it ends when standard input closes. The requests:
//!
//! - `{"op": "serve", "args": [...], "cwd": DIR, "home": DIR}`: starts a server from the
//!   arguments of `atif serve` (`--script FILE --replay ...`), with the test's working and home
//!   directories; answers `{"url": URL, "token": TOKEN}`, or `{"code": N, "stderr": TEXT}`
//!   when it cannot start, N being the exit status `atif serve` would have given.
//! - `{"op": "stop"}`: stops that server; answers `{"code": N, "stderr": TEXT}`, the exit
//!   status and the standard error `atif serve` gives when it is stopped (the failures it
//!   printed during the run, then its verdict).
//! - `{"op": "check", "args": ["atif", "check", ...]}`: runs the `atif check` (or `atif
//!   envelope`) command line; answers `{"code": N, "stdout": TEXT, "stderr": TEXT}`, what the
//!   process would have given. With `"captured": FILE`, the running server's trajectory so far
//!   is first written to FILE (which the command line names), so a check of the captured run
//!   costs one request and no HTTP round trip; when there is none, the answer is status 2 with
//!   the reason.
//!
//! The environment (`ATIF_GOLDEN`, `CI`, `NO_COLOR`) is the harness's, read when each check runs.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use atif_proxy::{Options, Proxy};
use clap::Parser;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cmd::proxy;
use crate::output;
use crate::status::exit_status;

/// Arguments of `atif harness` (none: it is driven through standard input).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// What one command line run in-process gave: its exit status and what it wrote.
#[derive(Debug)]
pub(crate) struct LineOutcome {
    pub(crate) code: u8,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
enum Request {
    Serve { args: Vec<String>, cwd: Option<PathBuf>, home: Option<PathBuf> },
    Stop,
    Check { args: Vec<String>, captured: Option<PathBuf> },
}

/// `atif serve`'s arguments, parsed as that subcommand parses them.
#[derive(Debug, Parser)]
#[command(name = "atif serve")]
struct ServeLine {
    #[command(flatten)]
    serve: proxy::ServeArgs,
}

/// Runs `atif harness` until standard input closes; `run_line` runs one `atif` command line
/// in-process (main's dispatch, with output captured).
pub(crate) fn run(
    _: &Args,
    run_line: &dyn Fn(&[String]) -> LineOutcome,
) -> anyhow::Result<ExitCode> {
    let runtime = proxy::runtime()?;
    let mut serving: Option<(Proxy, Options)> = None;
    for line in std::io::stdin().lock().lines() {
        let line = line.context("cannot read standard input")?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(Request::Serve { args, cwd, home }) => {
                if let Some((proxy, _)) = serving.take() {
                    let _ = runtime.block_on(proxy.abandon());
                }
                match serve(&runtime, &args, cwd, home) {
                    Ok(started) => {
                        let reply = json!({"url": started.0.url(), "token": started.0.token()});
                        serving = Some(started);
                        reply
                    }
                    Err(err) => {
                        json!({"code": exit_status(&err), "stderr": format!("error: {err:#}\n")})
                    }
                }
            }
            Ok(Request::Stop) => match serving.take() {
                Some((proxy, options)) => stop(&runtime, proxy, &options),
                None => json!({"code": 2, "stderr": "error: no server is running\n"}),
            },
            Ok(Request::Check { args, captured }) => {
                let proxy = serving.as_ref().map(|(proxy, _)| proxy);
                match captured.map(|file| write_captured(proxy, &file)) {
                    Some(Err(refused)) => refused,
                    _ => check(&args, run_line),
                }
            }
            Err(err) => {
                json!({"code": 2, "stderr": format!("error: not a harness request: {err}\n")})
            }
        };
        output::out(|out| {
            serde_json::to_writer(&mut *out, &reply)?;
            writeln!(out)
        })?;
    }
    if let Some((proxy, _)) = serving.take() {
        let _ = runtime.block_on(proxy.abandon());
    }
    Ok(ExitCode::SUCCESS)
}

/// Starts the server `atif serve ARGS` would start, quietly: its failures are given at `stop`.
fn serve(
    runtime: &tokio::runtime::Runtime,
    args: &[String],
    cwd: Option<PathBuf>,
    home: Option<PathBuf>,
) -> anyhow::Result<(Proxy, Options)> {
    let words = std::iter::once("atif serve".to_owned()).chain(args.iter().cloned());
    let line = ServeLine::try_parse_from(words)
        .map_err(|err| anyhow::anyhow!(err.render().to_string()))?;
    let mut options = proxy::serve_options(&line.serve)?;
    options.set_quiet(true).set_cwd(cwd).set_home(home);
    let proxy = runtime.block_on(proxy::start(&options))?;
    Ok((proxy, options))
}

/// Stops the server and says what `atif serve` says when stopped: the failures and warnings it
/// printed as they happened, then its verdict.
fn stop(runtime: &tokio::runtime::Runtime, proxy: Proxy, options: &Options) -> Value {
    let verdict = proxy.verdict();
    let mut stderr = String::new();
    for warning in &verdict.warnings {
        stderr.push_str(&format!("atif proxy: warning: {warning}\n"));
    }
    for error in &verdict.errors {
        stderr.push_str(&format!("atif proxy: {error}\n"));
    }
    let (concluded, captured) =
        output::capture(|| runtime.block_on(proxy::conclude(proxy, options, None)));
    stderr.push_str(&String::from_utf8_lossy(&captured.stderr));
    let code = match concluded {
        Ok(code) => code_of(code),
        Err(err) => {
            stderr.push_str(&format!("error: {err:#}\n"));
            exit_status(&err)
        }
    };
    json!({"code": code, "stderr": stderr})
}

/// Writes the trajectory the running server captured to `file`; the harness's answer when
/// there is no server, no trajectory yet, or the file cannot be written.
fn write_captured(proxy: Option<&Proxy>, file: &std::path::Path) -> Result<(), Value> {
    let refused = |why: String| json!({"code": 2, "stderr": format!("error: {why}\n")});
    let Some(proxy) = proxy else {
        return Err(refused("no server is running, so no trajectory was captured".to_owned()));
    };
    let trajectory = proxy.trajectory().map_err(|err| {
        let err = anyhow::Error::new(err);
        refused(format!("no trajectory could be captured from the test's model traffic: {err:#}"))
    })?;
    let text = serde_json::to_vec(&trajectory)
        .map_err(|err| refused(format!("cannot write the captured trajectory: {err}")))?;
    std::fs::write(file, text).map_err(|err| {
        refused(format!("cannot write the captured trajectory to {}: {err}", file.display()))
    })
}

/// Runs an `atif check` or `atif envelope` command line in-process; other subcommands are
/// refused.
fn check(args: &[String], run_line: &dyn Fn(&[String]) -> LineOutcome) -> Value {
    if !matches!(args.get(1).map(String::as_str), Some("check" | "envelope")) {
        return json!({"code": 2, "stderr": "error: the harness runs only `atif check` and `atif envelope` command lines\n"});
    }
    let outcome = run_line(args);
    json!({"code": outcome.code, "stdout": outcome.stdout, "stderr": outcome.stderr})
}

/// The status an exit code stands for: the statuses subcommands give are 0, 1 and 2.
pub(crate) fn code_of(code: ExitCode) -> u8 {
    (0..=u8::MAX).find(|n| ExitCode::from(*n) == code).unwrap_or(2)
}
