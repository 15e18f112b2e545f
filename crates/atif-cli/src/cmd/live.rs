//! `atif live`: run an agent command N times against the live model, through the recording
//! server, and check (or write) the envelope golden of its behaviour.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

use anyhow::Context;
use atif_envelope::Run;
use atif_golden::LIVE_ENV;
use atif_proxy::Options;
use serde_json::{Value, json};

use crate::cmd::envelope::{VerdictArgs, conclude};
use crate::cmd::proxy::{agent_env, capture_for, runtime, start};
use crate::output;

/// Arguments of `atif live`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// How many times to run CMD.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// The envelope golden to check, or to write with `--update`.
    #[arg(long, value_name = "FILE")]
    golden: PathBuf,
    /// How many runs at a time.
    #[arg(long, default_value_t = 1, value_name = "J", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: u32,
    /// Send every request to this origin instead of each provider's public API.
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// Stop starting runs once the finished ones used this many tokens (prompt and
    /// completion); the verdict then says `inconclusive` when they were too few.
    #[arg(long, value_name = "TOKENS")]
    max_cost_tokens: Option<u64>,
    /// Also write each run's trajectory into this folder, as `run-1.json`, `run-2.json`...
    #[arg(long, value_name = "DIR")]
    trajectories: Option<PathBuf>,
    #[command(flatten)]
    verdict: VerdictArgs,
    /// The agent command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

/// One finished run: its trajectory (captured from the traffic) and CMD's outcome.
struct Finished {
    index: u32,
    trajectory: Value,
    passed: bool,
}

/// Runs `atif live`: the exit status of `atif envelope` on the runs' trajectories; 2 when a
/// run could not start, or on CI without `ATIF_LIVE=1`.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let live = std::env::var(LIVE_ENV).is_ok_and(|value| value == "1");
    if atif_fs::running_on_ci() && !live {
        anyhow::bail!(
            "refusing to run live on CI (CI is set): live runs call the model and cost money; \
             set {LIVE_ENV}=1 to run them anyway"
        );
    }
    let Some(program) = args.command.first() else {
        anyhow::bail!("no command given after `--`");
    };
    if let Some(dir) = &args.trajectories {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the folder {}", dir.display()))?;
    }
    let mut options = Options::record(args.golden.with_extension("live.script.json"));
    options.set_quiet(true).set_capture(capture_for(program));
    options.set_max_input_bytes(crate::input::max_input_bytes());
    if let Some(upstream) = &args.upstream {
        options.set_upstream(upstream.clone());
    }
    let mut finished = runtime()?.block_on(run_all(args, &options))?;
    finished.sort_by_key(|run| run.index);

    let grouping = args.verdict.grouping(&args.golden)?;
    let passed = finished.iter().filter(|run| run.passed).count();
    let n_finished = finished.len();
    let mut runs = Vec::with_capacity(n_finished);
    for run in finished {
        let label = format!("run {}", run.index);
        if let Some(dir) = &args.trajectories {
            let path = dir.join(format!("run-{}.json", run.index));
            let mut text = serde_json::to_string_pretty(&run.trajectory)?;
            text.push('\n');
            atif_fs::write_atomic(&path, text.as_bytes())
                .with_context(|| format!("cannot write the trajectory {}", path.display()))?;
        }
        let mut envelope_run = Run::new(&label, run.trajectory, &grouping.options)?;
        envelope_run.set_passed(Some(run.passed));
        runs.push(envelope_run);
    }
    let noted = output::note(|out| {
        writeln!(out, "atif live: {n_finished} run(s) finished, {passed} passed")
    });
    let code = conclude(&args.golden, &runs, &args.verdict, grouping.order, "live")?;
    // A note that cannot be written fails a successful run (exit 2); a verdict of `changed`
    // keeps its own status (docs/cli.md).
    match noted {
        Err(err) if code == ExitCode::SUCCESS => Err(err),
        _ => Ok(code),
    }
}

/// Runs CMD up to `--runs` times, `--jobs` at a time, until the token budget is spent.
async fn run_all(args: &Args, options: &Options) -> anyhow::Result<Vec<Finished>> {
    let mut pending = tokio::task::JoinSet::new();
    let (mut started, mut tokens) = (0u32, 0u64);
    let mut finished = Vec::new();
    loop {
        let budget_left = args.max_cost_tokens.is_none_or(|max| tokens < max);
        while budget_left && started < args.runs && pending.len() < args.jobs as usize {
            started += 1;
            let (options, command) = (options.clone(), args.command.clone());
            pending.spawn(one_run(started, options, command));
        }
        let Some(joined) = pending.join_next().await else { break };
        let run = joined.context("a run's task failed")??;
        tokens = tokens.saturating_add(tokens_of(&run.trajectory));
        finished.push(run);
    }
    if started < args.runs {
        output::note(|out| {
            writeln!(
                out,
                "atif live: stopped after {started} of {} runs: they used {tokens} tokens, over --max-cost-tokens",
                args.runs
            )
        })?;
    }
    Ok(finished)
}

/// One run: a recording server of its own, CMD pointed at it, the trajectory of its traffic.
/// A run whose traffic holds no model reply, or whose CMD was killed, counts as crashed.
async fn one_run(index: u32, options: Options, command: Vec<String>) -> anyhow::Result<Finished> {
    let (program, program_args) = command.split_first().context("no command given after `--`")?;
    let proxy = start(&options).await?;
    let mut child = tokio::process::Command::new(program);
    child.args(program_args).kill_on_drop(true).stdin(Stdio::null());
    // CMD's output goes to standard error, so that standard output holds only the verdict.
    match output::quiet() {
        true => child.stdout(Stdio::null()).stderr(Stdio::null()),
        false => child.stdout(std::io::stderr()).stderr(std::io::stderr()),
    };
    for (name, value) in agent_env(&proxy, atif_proxy::Operation::Record) {
        child.env(name, value);
    }
    let status = match child.spawn() {
        Ok(mut child) => child.wait().await.with_context(|| format!("cannot wait for `{program}`")),
        Err(err) => Err(anyhow::Error::new(err).context(format!("cannot run `{program}`"))),
    };
    let captured = proxy.trajectory();
    let _ = proxy.abandon().await;
    let status = status?;
    let mut trajectory = match captured {
        Ok(trajectory) => serde_json::to_value(trajectory)?,
        Err(err) => crashed_run(program, &err.to_string()),
    };
    if status.code().is_none() {
        trajectory["extra"]["crashed"] = Value::Bool(true);
    }
    Ok(Finished { index, trajectory, passed: status.success() })
}

/// The trajectory of a run that made no model call: no steps, marked crashed with why.
fn crashed_run(program: &str, why: &str) -> Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "session_id": "live",
        "agent": {"name": capture_for(program).agent_name(), "version": "unknown"},
        "steps": [],
        "extra": {"crashed": true, "error": why},
    })
}

/// The tokens a run used, from its final metrics.
fn tokens_of(trajectory: &Value) -> u64 {
    let metric = |name: &str| trajectory["final_metrics"][name].as_u64().unwrap_or(0);
    metric("total_prompt_tokens").saturating_add(metric("total_completion_tokens"))
}
