//! Claude Code and Codex recorded through `atif record` against the fake provider, then
//! replayed offline by `atif replay` in another directory, under another HOME, as if on
//! another day (the recording's dates are shifted):
//!
//! 1. the recorded run completes its tool loop;
//! 2. the replay exits 0 and its tool runs again with the same result;
//! 3. `atif import` of each run's own session log, normalised with the agent's preset, checks
//!    equal between the two runs;
//! 4. the trajectory captured from the traffic (`--trajectory`) of each run checks equal to
//!    its golden (`tests/tests/golden/`), with the run's directories and the dates masked;
//! 5. a changed prompt fails with the drift diff; a run needing one more reply than recorded
//!    fails with the exhaustion message.
//!
//! Skipped with a notice where `cargo xtask e2e-setup` has not installed the CLIs; required
//! under `ATIF_E2E_REQUIRED=1` (`.ci/run`).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use atif_fake_provider::{Config, FakeProvider};
use serde_json::Value;
use tests::agents::{Agent, AgentRun, Sandbox};
use tests::e2e;

const PROMPT: &str = "Run the scripted command and report what it printed.";

/// The date the recording is shifted to, so that the replay happens on another day.
const OTHER_DAY: &str = "2001-02-03";

struct Recording {
    dir: tempfile::TempDir,
    program: PathBuf,
    agent: Agent,
    live: AgentRun,
    sandbox: Sandbox,
}

impl Recording {
    fn script(&self) -> PathBuf {
        self.dir.path().join("agent.script.json")
    }

    /// A copy of the script changed by `edit`, for a replay of another day or a shorter tape.
    fn edited_script(&self, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
        let mut script: Value =
            serde_json::from_str(&std::fs::read_to_string(self.script()).unwrap()).unwrap();
        edit(&mut script);
        let path = self.dir.path().join(name);
        std::fs::write(&path, serde_json::to_string_pretty(&script).unwrap()).unwrap();
        path
    }

    /// Replays `script` in a fresh sandbox named `name`, with `prompt`.
    fn replay(&self, name: &str, script: &Path, prompt: &str) -> (Sandbox, AgentRun) {
        run_on_free_port(self.agent, &self.dir.path().join(name), |sandbox, port| {
            let mut argv: Vec<OsString> =
                vec![e2e::atif_binary().into(), "replay".into(), "--script".into(), script.into()];
            argv.extend([
                "--listen".into(),
                format!("127.0.0.1:{port}").into(),
                "--trajectory".into(),
            ]);
            argv.push(sandbox.cwd().parent().unwrap().join("trajectory.json").into());
            argv.push("--".into());
            argv.extend(sandbox.argv(&self.program, prompt));
            argv
        })
    }
}

/// Runs the `atif` command line `argv` builds for a sandbox at `root` and a port, with the
/// sandbox configured for that port.
///
/// The port is found free and released before `atif` binds it, so another process may take
/// it in between; `atif` then says `cannot listen on 127.0.0.1:PORT` before it starts the
/// agent, and the run is tried again on another port, three times at most. Any other outcome
/// is returned as it is.
fn run_on_free_port(
    agent: Agent,
    root: &Path,
    argv: impl Fn(&Sandbox, u16) -> Vec<OsString>,
) -> (Sandbox, AgentRun) {
    let mut tries = 0;
    loop {
        let port = free_port();
        let sandbox = Sandbox::new(agent, root, &format!("http://127.0.0.1:{port}")).unwrap();
        let run = sandbox.run(sandbox.command_for(&argv(&sandbox, port))).unwrap();
        tries += 1;
        let taken = run.stderr.contains(&format!("cannot listen on 127.0.0.1:{port}"));
        if !taken || tries == 3 {
            return (sandbox, run);
        }
    }
}

fn record(agent: Agent) -> Option<Recording> {
    let program = agent.program()?;
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (sandbox, live) = run_on_free_port(agent, &dir.path().join("record"), |sandbox, port| {
        let mut argv: Vec<OsString> =
            vec![e2e::atif_binary().into(), "record".into(), "--script".into()];
        argv.push(dir.path().join("agent.script.json").into());
        argv.extend([
            "--upstream".into(),
            provider.url().into(),
            "--listen".into(),
            format!("127.0.0.1:{port}").into(),
        ]);
        for mask in masks(agent) {
            argv.extend(["--mask".into(), OsString::from(mask)]);
        }
        argv.push("--trajectory".into());
        argv.push(dir.path().join("record").join("trajectory.json").into());
        argv.push("--".into());
        argv.extend(sandbox.argv(&program, PROMPT));
        argv
    });
    assert!(live.status.success(), "record: {}", describe(&live));
    assert!(
        tool_result(agent, &live.stdout).is_some(),
        "record: the tool never ran: {}",
        describe(&live)
    );
    assert!(provider.request_count() >= 2, "record: {} requests", provider.request_count());
    provider.stop();
    Some(Recording { dir, program, agent, live, sandbox })
}

/// The line of the agent's stdout reporting its shell tool's output, when it holds the
/// scripted command's output.
fn tool_result(agent: Agent, stdout: &str) -> Option<String> {
    let marker = match agent {
        Agent::ClaudeCode => "\"tool_result\"",
        _ => "\"aggregated_output\"",
    };
    stdout
        .lines()
        .find(|line| line.contains(marker) && line.contains("atif-e2e-42"))
        .map(str::to_owned)
}

fn check(agent: Agent) {
    let Some(recording) = record(agent) else { return };
    if agent == Agent::ClaudeCode {
        // Run as users run it, Claude Code probes its base URL first: the probe is recorded
        // (the recording above was exact all the same) and the replays below answer it.
        let text = std::fs::read_to_string(recording.script()).unwrap();
        assert!(text.contains("\"path\": \"/api/hello\""), "no probe recorded:\n{text}");
    }

    // Another day: every date of the recording moves to OTHER_DAY.
    let today = first_date(&std::fs::read_to_string(recording.script()).unwrap());
    let other_day = recording.edited_script("other-day.script.json", |script| {
        if let Some(today) = &today {
            replace_in_strings(script, today, OTHER_DAY);
        }
    });
    let (sandbox, replayed) = recording.replay("replay", &other_day, PROMPT);
    assert!(replayed.status.success(), "replay: {}", describe(&replayed));
    assert!(
        tool_result(agent, &replayed.stdout).is_some(),
        "replay: the tool never ran: {}",
        describe(&replayed)
    );
    assert_ne!(sandbox.home(), recording.sandbox.home());

    // The agent's own logs, imported and normalised, are equal.
    let (preset, recorded_logs, replayed_logs) =
        (preset(agent), &recording.live.session_files, &replayed.session_files);
    assert_eq!(
        (recorded_logs.len(), replayed_logs.len()),
        (1, 1),
        "session files: {recorded_logs:?} {replayed_logs:?}"
    );
    let imported: Vec<PathBuf> = [&recorded_logs[0], &replayed_logs[0]]
        .iter()
        .enumerate()
        .map(|(idx, log)| {
            let output = atif(&["import".into(), log.into()]);
            assert!(
                output.status.success(),
                "import {}: {}",
                log.display(),
                e2e::describe(&output)
            );
            let path = recording.dir.path().join(format!("imported-{idx}.json"));
            std::fs::write(&path, &output.stdout).unwrap();
            path
        })
        .collect();
    let golden = recording.dir.path().join("imported.golden.json");
    let normalized =
        atif(&["normalize".into(), "--preset".into(), preset.into(), imported[0].clone().into()]);
    assert!(normalized.status.success(), "{}", e2e::describe(&normalized));
    std::fs::write(&golden, &normalized.stdout).unwrap();
    let checked = atif(&[
        "check".into(),
        "--preset".into(),
        preset.into(),
        golden.into(),
        imported[1].clone().into(),
    ]);
    assert!(checked.status.success(), "the imported logs differ: {}", e2e::describe(&checked));

    // The trajectories captured from the traffic check equal to the committed golden, with
    // each run's directories and the dates masked.
    let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
        .join(format!("agent_replay__{}_capture.json", agent.name().replace('-', "_")));
    for (run, sandbox) in [("record", &recording.sandbox), ("replay", &sandbox)] {
        let trajectory = sandbox.cwd().parent().unwrap().join("trajectory.json");
        let mut args: Vec<OsString> = vec!["check".into(), "--update-command".into()];
        args.push("cargo xtask golden-update agent_replay".into());
        for (dir, placeholder) in [(sandbox.cwd(), "<cwd>"), (sandbox.home(), "<home>")] {
            let dir = dir.display().to_string();
            let slug: String =
                dir.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
            args.extend(["--mask".into(), format!("{}={placeholder}", regex::escape(&dir)).into()]);
            args.extend([
                "--mask".into(),
                format!("{}={placeholder}-slug", regex::escape(&slug)).into(),
            ]);
        }
        args.extend(["--mask".into(), r"\d{4}-\d{2}-\d{2}=<date>".into()]);
        // Claude Code names the kernel release, which another machine may not share.
        args.extend(["--mask".into(), r"OS Version: [^\n]*=OS Version: <os>".into()]);
        for mask in masks(agent) {
            args.extend(["--mask".into(), format!("{mask}=<masked>").into()]);
        }
        args.extend([golden.clone().into(), trajectory.into()]);
        let checked = atif(&args);
        assert!(
            checked.status.success(),
            "{run} trajectory against {}: {}",
            golden.display(),
            e2e::describe(&checked)
        );
    }

    // A changed prompt: the drift diff.
    let changed = "Do something else entirely.";
    let (_, drifted) = recording.replay("drift", &recording.script(), changed);
    assert!(!drifted.status.success(), "drift: {}", describe(&drifted));
    assert!(drifted.stderr.contains("request #1"), "drift: {}", describe(&drifted));
    let added = drifted
        .stderr
        .lines()
        .any(|line| line.trim_start().starts_with('+') && line.contains(changed));
    assert!(added, "drift: no diff line with the new prompt: {}", describe(&drifted));

    // One reply fewer on the tape: the run needs one more than recorded.
    let shorter = recording.edited_script("shorter.script.json", |script| {
        script["exchanges"].as_array_mut().unwrap().pop();
    });
    // The message counts the exchanges of the endpoint asked for (a probe is not one).
    let exchanges = serde_json::from_str::<Value>(&std::fs::read_to_string(&shorter).unwrap())
        .unwrap()["exchanges"]
        .clone();
    let endpoint = |exchange: &Value| {
        let path = exchange["path"].as_str().unwrap_or_default();
        path.split('?').next().unwrap_or_default().to_owned()
    };
    let exchanges = exchanges.as_array().unwrap();
    let last = endpoint(exchanges.last().unwrap());
    let recorded = exchanges.iter().filter(|exchange| endpoint(exchange) == last).count();
    let (_, exhausted) = recording.replay("exhausted", &shorter, PROMPT);
    assert!(!exhausted.status.success(), "exhaustion: {}", describe(&exhausted));
    let message = format!("but the script recorded {recorded}");
    assert!(
        exhausted.stderr.contains(&message),
        "exhaustion: no `{message}`: {}",
        describe(&exhausted)
    );
}

/// What an agent's requests carry that changes from run to run beyond the proxy's built-in
/// masks: Codex sends its shell tool's output back with a random chunk id and the measured
/// wall time. Given to `atif record`, which keeps them in the script for the replay.
fn masks(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::Codex => &[r"Chunk ID: [0-9a-f]+", r"Wall time: [0-9.]+ seconds"],
        _ => &[],
    }
}

fn preset(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "claude-code",
        Agent::Codex => "codex",
        Agent::GeminiCli => "gemini-cli",
        Agent::OpenCode => "opencode",
        Agent::Pi => "pi",
    }
}

/// The first `YYYY-MM-DD` date in a text.
fn first_date(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(10)).find_map(|at| {
        let candidate = &text.get(at..at + 10)?;
        let shape = candidate.bytes().enumerate().all(|(idx, byte)| match idx {
            4 | 7 => byte == b'-',
            _ => byte.is_ascii_digit(),
        });
        (shape && candidate.starts_with("20")).then(|| candidate.to_string())
    })
}

fn replace_in_strings(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(text) => *text = text.replace(from, to),
        Value::Array(items) => items.iter_mut().for_each(|item| replace_in_strings(item, from, to)),
        Value::Object(map) => map.values_mut().for_each(|item| replace_in_strings(item, from, to)),
        _ => {}
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn atif(args: &[OsString]) -> Output {
    Command::new(e2e::atif_binary())
        .args(args)
        .env_remove("CI")
        .env_remove("ATIF_GOLDEN")
        .output()
        .unwrap()
}

fn describe(run: &AgentRun) -> String {
    format!("{}\nstdout:\n{}\nstderr:\n{}", run.status, run.stdout, run.stderr)
}

#[test]
fn claude_code_replays_offline_elsewhere_and_fails_loudly_on_change() {
    check(Agent::ClaudeCode);
}

#[test]
fn codex_replays_offline_elsewhere_and_fails_loudly_on_change() {
    check(Agent::Codex);
}
