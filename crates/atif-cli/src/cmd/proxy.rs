//! `atif record`, `atif replay` and `atif serve`: the record/replay server of atif-proxy around
//! an agent command, or alone (see `docs/replay.md`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use atif_proxy::{DriftPolicy, Options, Proxy};
use atif_wire::CaptureOptions;

use crate::input::max_input_bytes;
use crate::output;
use crate::status::invalid;

/// Arguments of `atif record`.
#[derive(Debug, clap::Args)]
pub(crate) struct RecordArgs {
    /// The script to write: atomically, secrets redacted, only when CMD succeeds; never over an
    /// existing file on CI.
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
    /// Send every request to this origin (`http://127.0.0.1:8080`) instead of each provider's
    /// public API; paths are forwarded unchanged.
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// Hybrid: record the model live, but answer the agent's MCP servers (run through
    /// `atif mcp`, or fronted with --mcp) from the MCP messages of this script, never starting
    /// or contacting them; a tool call it cannot answer is a miss (see docs/mcp.md). It may be
    /// the --script file itself.
    #[arg(long, value_name = "FILE")]
    replay_tools: Option<PathBuf>,
    #[command(flatten)]
    timeouts: UpstreamTimeoutArgs,
    #[command(flatten)]
    server: ServerArgs,
    /// The agent command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Arguments of `atif replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReplayArgs {
    /// The script to replay.
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    drift: DriftArgs,
    /// The agent command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Arguments of `atif serve`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("mode").required(true).args(["record", "replay"]))]
pub(crate) struct ServeArgs {
    /// The script to record into or to replay.
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
    /// Record: forward to the upstream and save the script when interrupted.
    #[arg(long)]
    record: bool,
    /// Replay the script, never opening a network connection.
    #[arg(long)]
    replay: bool,
    /// With --record: send every request to this origin instead of each provider's public API.
    #[arg(long, value_name = "URL", requires = "record")]
    upstream: Option<String>,
    /// With --record: answer the MCP servers from this script's MCP messages (hybrid, as
    /// `atif record --replay-tools`).
    #[arg(long, value_name = "FILE", requires = "record")]
    replay_tools: Option<PathBuf>,
    #[command(flatten)]
    timeouts: UpstreamTimeoutArgs,
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    drift: DriftArgs,
}

/// The flags every mode shares.
#[derive(Debug, clap::Args)]
struct ServerArgs {
    /// Listen on this address, such as 127.0.0.1:8080 for an agent configured by file
    /// [default: 127.0.0.1 on a free port].
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Also write the run as an ATIF-v1.8 trajectory captured from the traffic alone
    /// (atomically, secrets redacted, directories as `<cwd>` and `<home>`).
    #[arg(long, value_name = "FILE")]
    trajectory: Option<PathBuf>,
    /// Ignore what this regex matches when requests are compared (dates, UUIDs, long hex ids,
    /// session ids and the working and home directories are masked already); repeatable.
    #[arg(long = "mask", value_name = "REGEX")]
    masks: Vec<String>,
    /// Also front the Streamable-HTTP MCP server NAME at URL (`http://127.0.0.1:3001/mcp`):
    /// the agent's MCP client uses `$ATIF_PROXY_URL/mcp/NAME`, and its messages go on the
    /// one tape under NAME; a replay, or a recording with --replay-tools, needs no URL
    /// (`--mcp NAME`); repeatable.
    #[arg(long = "mcp", value_name = "NAME=URL")]
    mcp: Vec<String>,
    /// Allow --listen on an address other machines can reach (0.0.0.0, a LAN address): they
    /// can then be served the script's replies or record through the server.
    #[arg(long)]
    allow_remote: bool,
    /// The largest request body read; a larger one gets 413.
    #[arg(long, value_name = "BYTES", default_value = "256MiB", value_parser = crate::parse_bytes)]
    max_body_bytes: u64,
    /// The most bytes of request bodies held at once, across all requests; a request that
    /// would go over it gets 503.
    #[arg(long, value_name = "BYTES", default_value = "1GiB", value_parser = crate::parse_bytes)]
    max_buffered_bytes: u64,
    /// The longest pause while a client sends a request body (`30s`, `500ms`, `2m`); after it
    /// the request gets 408.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    body_read_timeout: Duration,
    /// The longest a client may take to send a request's head; after it the connection is
    /// closed.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    header_read_timeout: Duration,
    /// The longest a kept-alive connection may stay idle between requests; after it the
    /// connection is closed.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    idle_timeout: Duration,
}

/// How long the upstream may keep the agent waiting, for recordings.
#[derive(Debug, clap::Args)]
struct UpstreamTimeoutArgs {
    /// The longest wait for the upstream's reply to begin; after it the agent gets 504.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    upstream_first_byte_timeout: Duration,
    /// The longest silence of the upstream within a reply (between two events of a stream);
    /// after it the reply is cut off and recorded as cut.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    upstream_idle_timeout: Duration,
}

impl UpstreamTimeoutArgs {
    fn apply(&self, options: &mut Options) {
        options
            .set_upstream_first_byte_timeout(self.upstream_first_byte_timeout)
            .set_upstream_idle_timeout(self.upstream_idle_timeout);
    }
}

/// `--drift`, for replays.
#[derive(Debug, clap::Args)]
pub(crate) struct DriftArgs {
    /// A request that matches no recorded exchange: `strict` fails it with a diff, `warn`
    /// serves the next unused exchange of its endpoint anyway and reports the diff, `off`
    /// serves it without a word.
    #[arg(long, value_enum, default_value = "strict", value_name = "MODE")]
    drift: Drift,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Drift {
    Strict,
    Warn,
    Off,
}

impl ServerArgs {
    fn apply(&self, options: &mut Options) {
        options
            .set_max_input_bytes(max_input_bytes())
            .set_allow_remote(self.allow_remote)
            .set_max_body_bytes(self.max_body_bytes)
            .set_max_buffered_bytes(self.max_buffered_bytes)
            .set_body_read_timeout(self.body_read_timeout)
            .set_header_read_timeout(self.header_read_timeout)
            .set_idle_timeout(self.idle_timeout);
        if let Some(addr) = self.listen {
            options.set_listen(addr);
        }
        for mask in &self.masks {
            options.add_mask(mask.clone());
        }
        for server in &self.mcp {
            let (name, url) = match server.split_once('=') {
                Some((name, url)) => (name, Some(url.to_owned())),
                None => (server.as_str(), None),
            };
            options.add_mcp_http(name, url);
        }
    }
}

/// Reads a duration: a number of seconds, or a number followed by `ms`, `s`, `m` or `h`
/// (`500ms`, `1.5s`, `10m`).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let expected = || format!("expected a duration such as 30s, 500ms or 10m, got `{text}`");
    let scale = match unit.trim() {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(expected()),
    };
    let number: f64 = number.parse().map_err(|_| expected())?;
    Duration::try_from_secs_f64(number * scale).map_err(|_| expected())
}

/// The agent's name in a captured trajectory: the command's file name.
pub(crate) fn capture_for(program: &str) -> CaptureOptions {
    let name = Path::new(program)
        .file_name()
        .map_or_else(|| program.to_owned(), |name| name.to_string_lossy().into_owned());
    CaptureOptions::new(name, "unknown")
}

impl DriftArgs {
    fn apply(&self, options: &mut Options) {
        options.set_drift(self.policy());
    }

    /// The policy the flag names.
    pub(crate) fn policy(&self) -> DriftPolicy {
        match self.drift {
            Drift::Strict => DriftPolicy::Strict,
            Drift::Warn => DriftPolicy::Warn,
            Drift::Off => DriftPolicy::Off,
        }
    }
}

/// Runs `atif record`: CMD's status when it fails, else 1 when the recording was not exact (an
/// upstream down, a stream cut), else 0; 2 when the server or CMD could not start.
pub(crate) fn record(args: &RecordArgs) -> anyhow::Result<ExitCode> {
    refuse_overwrite_on_ci(&args.script)?;
    let mut options = Options::record(&args.script);
    if let Some(upstream) = &args.upstream {
        options.set_upstream(upstream.clone());
    }
    options.set_replay_tools(args.replay_tools.clone());
    args.timeouts.apply(&mut options);
    args.server.apply(&mut options);
    run_around(&options, &args.command, args.server.trajectory.as_deref())
}

/// Runs `atif replay`: CMD's status when it fails, else 1 when the replay was not exact, else 0;
/// 1 when the script is not a valid script; 2 when the script cannot be read or the server or
/// CMD could not start.
pub(crate) fn replay(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let mut options = Options::replay(&args.script);
    args.server.apply(&mut options);
    args.drift.apply(&mut options);
    run_around(&options, &args.command, args.server.trajectory.as_deref())
}

/// Runs `atif serve` until SIGINT or SIGTERM: 0 when the run was exact, 1 when not, 2 when it
/// could not run.
pub(crate) fn serve(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let options = serve_options(args)?;
    runtime()?.block_on(async {
        let proxy = start(&options).await?;
        // The handlers are in place before anyone learns the URL, so a client that stops the
        // server right after its requests is never met by the default action of SIGTERM.
        let interrupted = interrupted().context("cannot wait for SIGINT or SIGTERM")?;
        output::out(|out| {
            writeln!(out, "listening on {}", proxy.url())?;
            writeln!(out, "control token: {}", proxy.token())
        })?;
        interrupted.await;
        conclude(proxy, &options, args.server.trajectory.as_deref()).await
    })
}

/// The server options `atif serve` runs with; `atif harness` starts one server per test from
/// the same arguments.
pub(crate) fn serve_options(args: &ServeArgs) -> anyhow::Result<Options> {
    let mut options = if args.record {
        refuse_overwrite_on_ci(&args.script)?;
        let mut options = Options::record(&args.script);
        if let Some(upstream) = &args.upstream {
            options.set_upstream(upstream.clone());
        }
        options.set_replay_tools(args.replay_tools.clone());
        args.timeouts.apply(&mut options);
        options
    } else {
        Options::replay(&args.script)
    };
    args.server.apply(&mut options);
    args.drift.apply(&mut options);
    Ok(options)
}

/// Starts the server, runs `command` pointed at it, and concludes from both.
fn run_around(
    options: &Options,
    command: &[String],
    trajectory: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let Some((program, program_args)) = command.split_first() else {
        anyhow::bail!("no command given after `--`");
    };
    let mut options = options.clone();
    options.set_capture(capture_for(program));
    let options = &options;
    runtime()?.block_on(async {
        let proxy = start(options).await?;
        let interrupted = interrupted().context("cannot wait for SIGINT or SIGTERM")?;
        let mut child = tokio::process::Command::new(program);
        child.args(program_args).kill_on_drop(true);
        for (name, value) in agent_env(&proxy, options.operation()) {
            child.env(name, value);
        }
        let mut child = match child.spawn() {
            Ok(child) => child,
            Err(err) => {
                let _ = proxy.abandon().await;
                return Err(anyhow::Error::new(err).context(format!("cannot run `{program}`")));
            }
        };
        let status = tokio::select! {
            status = child.wait() => status.with_context(|| format!("cannot wait for `{program}`"))?,
            () = interrupted => {
                let _ = child.kill().await;
                let how = format!("`{program}` was stopped: atif was interrupted");
                if let Some(path) = trajectory {
                    let _ = write_failed_run(&proxy, options, path, &how);
                }
                match proxy.finish_failed().await.ok().and_then(|(_, saved)| saved) {
                    Some(saved) => anyhow::bail!(
                        "interrupted: `{program}` was stopped; the script was left as it was; \
                         wrote {}",
                        saved.display()
                    ),
                    None => anyhow::bail!(
                        "interrupted: `{program}` was stopped and the script was not saved"
                    ),
                }
            }
        };
        if status.success() {
            return conclude(proxy, options, trajectory).await;
        }
        let how = match (status.code(), signal_of(&status)) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            (None, None) => "failed".to_owned(),
        };
        if let Some(path) = trajectory {
            // CMD's status is the run's status whatever happens to the trajectory.
            let _ = write_failed_run(&proxy, options, path, &format!("`{program}` {how}"));
        }
        let (verdict, saved) = proxy.finish_failed().await.context("the server failed")?;
        let mode = mode_name(options);
        // An error keeps its own status even when standard error cannot say it (docs/cli.md).
        let _ = match (options.operation(), saved) {
            (atif_proxy::Operation::Record, Some(saved)) => output::error(|out| {
                writeln!(
                    out,
                    "atif {mode}: `{program}` {how}; the script was left as it was; wrote {}",
                    saved.display()
                )
            }),
            (atif_proxy::Operation::Record, None) => output::error(|out| {
                writeln!(out, "atif {mode}: `{program}` {how}; the script was not saved")
            }),
            _ => output::error(|out| {
                writeln!(out, "atif {mode}: `{program}` {how}; {}", verdict.summary_after_failed_run())
            }),
        };
        let code = status.code().or_else(|| signal_of(&status).map(|signal| 128 + signal));
        Ok(ExitCode::from(code.and_then(|code| u8::try_from(code).ok()).unwrap_or(1).max(1)))
    })
}

/// Stops the server, saves a recording, prints the verdict, and writes the trajectory (when
/// asked): exit 0 when exact, 1 when not; 2 when the trajectory could not be written.
///
/// A recording that is not exact replaces neither the script nor the trajectory: both go
/// beside them, as `atif_proxy::failed_path` names them.
pub(crate) async fn conclude(
    proxy: Proxy,
    options: &Options,
    trajectory: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let mode = mode_name(options);
    let recording = options.operation() == atif_proxy::Operation::Record;
    let captured = trajectory.map(|path| (path, proxy.trajectory()));
    let exact = match proxy.finish().await {
        Ok(verdict) => {
            output::note(|out| {
                writeln!(out, "atif {mode}: {}", verdict.summary())?;
                if recording {
                    writeln!(out, "atif {mode}: wrote {}", options.script().display())?;
                }
                Ok(())
            })?;
            true
        }
        Err(atif_proxy::Error::NotExact { verdict, saved }) => {
            let script = options.script().display();
            // The status says "not exact" even when standard error cannot (docs/cli.md).
            let _ = output::error(|out| {
                writeln!(out, "atif {mode}: {}", verdict.summary())?;
                match (recording, saved) {
                    (false, _) => Ok(()),
                    (true, Some(saved)) => writeln!(
                        out,
                        "atif {mode}: wrote {} instead of {script}, which was left as it was",
                        saved.display()
                    ),
                    (true, None) => {
                        writeln!(out, "atif {mode}: nothing written; {script} was left as it was")
                    }
                }
            });
            false
        }
        Err(err) => return Err(err.into()),
    };
    let code = if exact { ExitCode::SUCCESS } else { ExitCode::from(1) };
    let Some((path, captured)) = captured else { return Ok(code) };
    let target = trajectory_target(options, path, exact);
    let written = match captured {
        Ok(trajectory) => save_trajectory(&trajectory, &target),
        // A recording that failed says why above; no trajectory is one more consequence.
        Err(err) if recording && !exact => {
            let _ = output::error(|out| {
                writeln!(out, "atif {mode}: no trajectory written to {}: {err}", path.display())
            });
            return Ok(code);
        }
        Err(err) => Err(anyhow::Error::new(err)
            .context(format!("cannot write the trajectory {}", target.display()))),
    };
    match written {
        Ok(target) => {
            output::note(|out| writeln!(out, "atif {mode}: wrote {}", target.display()))?;
            Ok(code)
        }
        Err(err) => {
            output::error(|out| writeln!(out, "error: {err:#}"))?;
            Ok(ExitCode::from(2))
        }
    }
}

/// Where the trajectory of a run goes: `path`, except for a recording that was not exact,
/// which never replaces what is there.
fn trajectory_target(options: &Options, path: &Path, exact: bool) -> PathBuf {
    match options.operation() == atif_proxy::Operation::Record && !exact {
        true => atif_proxy::failed_path(path),
        false => path.to_owned(),
    }
}

/// Writes the trajectory of a run whose command failed, was killed or was stopped: whatever
/// traffic there was, marked `extra.crashed` with `failure` as `extra.error` (as
/// `atif_replay::capture` marks a failed agent), and says so on standard error.
fn write_failed_run(
    proxy: &Proxy,
    options: &Options,
    path: &Path,
    failure: &str,
) -> anyhow::Result<()> {
    let mode = mode_name(options);
    let mut trajectory = match proxy.trajectory() {
        Ok(trajectory) => trajectory,
        Err(err) => {
            output::error(|out| {
                writeln!(out, "atif {mode}: no trajectory written to {}: {err}", path.display())
            })?;
            return Ok(());
        }
    };
    let extra = trajectory.extra.get_or_insert_with(Default::default);
    extra.insert("crashed".to_owned(), serde_json::Value::Bool(true));
    extra.insert("error".to_owned(), serde_json::Value::String(failure.to_owned()));
    let target = trajectory_target(options, path, false);
    match save_trajectory(&trajectory, &target) {
        Ok(path) => output::error(|out| {
            writeln!(out, "atif {mode}: wrote {} (the run failed: {failure})", path.display())
        }),
        Err(err) => output::error(|out| writeln!(out, "error: {err:#}")),
    }
}

/// Writes `trajectory` to `path` as pretty JSON, atomically.
fn save_trajectory<'a>(
    trajectory: &atif_schema::Trajectory,
    path: &'a Path,
) -> anyhow::Result<&'a Path> {
    let context = || format!("cannot write the trajectory {}", path.display());
    let mut text = serde_json::to_string_pretty(trajectory).with_context(context)?;
    text.push('\n');
    atif_fs::write_atomic(path, text.as_bytes()).with_context(context)?;
    Ok(path)
}

/// Starts the server; a script that is not a valid script is invalid input (exit 1), like an
/// invalid trajectory (docs/cli.md).
pub(crate) async fn start(options: &Options) -> anyhow::Result<Proxy> {
    atif_proxy::start(options).await.map_err(|err| match err {
        atif_proxy::Error::Script(
            err @ (atif_replay::Error::Io { .. } | atif_replay::Error::Pattern { .. }),
        ) => anyhow::Error::new(err),
        // Over the limit is the command's doing (exit 2, as for `atif script show`), binary
        // data is invalid input (exit 1): `exit_status` reads that from atif-schema's error.
        atif_proxy::Error::Script(atif_replay::Error::Load { path, source }) => {
            anyhow::Error::new(*source)
                .context(format!("cannot load the script {}", path.display()))
        }
        atif_proxy::Error::Script(err) => invalid(err),
        err => anyhow::Error::new(err),
    })
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn mode_name(options: &Options) -> &'static str {
    match options.operation() {
        atif_proxy::Operation::Record => "record",
        _ => "replay",
    }
}

/// Refuses to overwrite a script on CI, where a recording must never replace the committed one.
fn refuse_overwrite_on_ci(script: &std::path::Path) -> anyhow::Result<()> {
    if atif_fs::is_ci(std::env::var("CI").ok().as_deref()) && script.exists() {
        anyhow::bail!(
            "refusing to overwrite {} on CI (CI is set): record on your machine and commit the \
             script, or delete it first",
            script.display()
        );
    }
    Ok(())
}

/// The environment that points an agent at the server: each SDK's base URL variable, the
/// control token, and in a replay a dummy API key where the agent has none, so SDKs that
/// insist on one start.
pub(crate) fn agent_env(proxy: &Proxy, operation: atif_proxy::Operation) -> Vec<(String, String)> {
    let url = proxy.url();
    let mut env: Vec<(String, String)> = [
        ("OPENAI_BASE_URL", format!("{url}/v1")),
        ("OPENAI_API_BASE", format!("{url}/v1")),
        ("ANTHROPIC_BASE_URL", url.to_owned()),
        ("GOOGLE_GEMINI_BASE_URL", url.to_owned()),
        ("GEMINI_API_BASE_URL", url.to_owned()),
        ("ATIF_PROXY_URL", url.to_owned()),
        ("ATIF_PROXY_TOKEN", proxy.token().to_owned()),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    if operation == atif_proxy::Operation::Replay {
        for key in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"] {
            if std::env::var_os(key).is_none_or(|value| value.is_empty()) {
                env.push((key.to_owned(), "atif-replay-dummy-key".to_owned()));
            }
        }
    }
    env
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// A future resolving at the first SIGINT or SIGTERM, the handlers installed at once.
#[cfg(unix)]
pub(crate) fn interrupted() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}

/// A future resolving at the first Ctrl-C.
#[cfg(not(unix))]
pub(crate) fn interrupted() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_with_their_units() {
        let check = |text: &str| parse_duration(text).map(|d| d.as_millis());
        assert_eq!(check("30s"), Ok(30_000));
        assert_eq!(check("30"), Ok(30_000));
        assert_eq!(check("500ms"), Ok(500));
        assert_eq!(check("1.5s"), Ok(1_500));
        assert_eq!(check("10m"), Ok(600_000));
        assert_eq!(check("1h"), Ok(3_600_000));
        assert!(check("soon").is_err());
        assert!(check("10 days").is_err());
        assert!(check("-1s").is_err());
    }
}
