//! The official Python SDKs (`openai` Chat Completions and Responses, `anthropic`,
//! `google-genai`), streamed and not, run a small tool-using agent
//! (`tests/e2e/python/sdk_agent.py`) under `atif record` against the fake provider, then under
//! `atif replay` with the provider gone: the SDK must parse the replay exactly as it parsed the
//! live reply (the agent prints every object it parsed). A changed prompt fails with the drift
//! diff; one call more than recorded fails with the exhaustion message.
//!
//! Skipped with a notice where `cargo xtask e2e-setup` has not made the venv; required under
//! `ATIF_E2E_REQUIRED=1` (`.ci/run`).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use atif_fake_provider::{Config, FakeProvider};
use tests::e2e;

/// One recorded run of the SDK agent, ready to replay.
struct Recorded {
    dir: tempfile::TempDir,
    python: PathBuf,
    provider: FakeProvider,
    sdk: &'static str,
    stream: bool,
    live: Output,
}

impl Recorded {
    fn script(&self) -> PathBuf {
        self.dir.path().join("agent.script.json")
    }

    fn replay(&self, extra: &[&str]) -> Output {
        let before = self.provider.request_count();
        let mut args: Vec<OsString> = ["replay", "--script"].map(OsString::from).to_vec();
        args.push(self.script().into());
        args.push("--".into());
        args.extend(agent_argv(&self.python, self.sdk, self.stream, extra));
        let output = atif(self.dir.path(), &args);
        assert_eq!(self.provider.request_count(), before, "a replay reached the provider");
        output
    }
}

fn record(sdk: &'static str, stream: bool) -> Option<Recorded> {
    record_with(sdk, stream, &[])
}

fn record_with(sdk: &'static str, stream: bool, extra: &[&str]) -> Option<Recorded> {
    let python = e2e::python()?;
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("agent.script.json");
    let mut args: Vec<OsString> = ["record", "--script"].map(OsString::from).to_vec();
    args.push(script.clone().into());
    args.extend(["--upstream".into(), provider.url().into(), "--".into()]);
    args.extend(agent_argv(&python, sdk, stream, extra));
    let live = atif(dir.path(), &args);
    assert!(live.status.success(), "record failed: {}", e2e::describe(&live));
    assert!(script.exists(), "record wrote no script");
    if extra.is_empty() {
        let stdout = String::from_utf8_lossy(&live.stdout);
        let done = stdout.ends_with("final \"The command printed: atif-e2e-42\"\n");
        assert!(done, "{}", e2e::describe(&live));
    }
    assert!(
        provider.request_count() >= 2,
        "the tool loop made {} requests",
        provider.request_count()
    );
    Some(Recorded { dir, python, provider, sdk, stream, live })
}

fn check(sdk: &'static str, stream: bool) {
    let Some(recorded) = record(sdk, stream) else { return };
    let replayed = recorded.replay(&[]);
    assert!(replayed.status.success(), "replay failed: {}", e2e::describe(&replayed));
    assert_eq!(
        String::from_utf8_lossy(&replayed.stdout),
        String::from_utf8_lossy(&recorded.live.stdout),
        "the SDK parsed the replay differently from the live reply"
    );
}

fn agent_argv(python: &Path, sdk: &str, stream: bool, extra: &[&str]) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![
        python.into(),
        e2e::assets_dir().join("python").join("sdk_agent.py").into(),
        sdk.into(),
    ];
    if stream {
        argv.push("--stream".into());
    }
    argv.extend(extra.iter().map(OsString::from));
    argv
}

/// Runs `atif ARGS` in `dir` with a clean environment: no real keys, no proxies, no CI.
fn atif(dir: &Path, args: &[OsString]) -> Output {
    e2e::atif_in_clean_env(dir, std::env::var_os("PATH").unwrap_or_default())
        .args(args)
        .env("ANTHROPIC_API_KEY", "sk-ant-atif-e2e-not-a-key")
        .env("GEMINI_API_KEY", "atif-e2e-not-a-key")
        .output()
        .unwrap()
}

#[test]
fn openai_chat_completions_replays_as_recorded() {
    check("openai-chat", false);
}

#[test]
fn openai_chat_completions_stream_replays_as_recorded() {
    check("openai-chat", true);
}

#[test]
fn openai_responses_replays_as_recorded() {
    check("openai-responses", false);
}

#[test]
fn openai_responses_stream_replays_as_recorded() {
    check("openai-responses", true);
}

#[test]
fn anthropic_messages_replays_as_recorded() {
    check("anthropic", false);
}

#[test]
fn anthropic_messages_stream_replays_as_recorded() {
    check("anthropic", true);
}

#[test]
fn gemini_replays_as_recorded() {
    check("gemini", false);
}

#[test]
fn gemini_stream_replays_as_recorded() {
    check("gemini", true);
}

#[test]
fn a_changed_prompt_fails_the_replay_with_the_drift_diff() {
    let Some(recorded) = record("anthropic", true) else { return };
    let replayed = recorded.replay(&["--prompt", "Do something else entirely."]);
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert!(!replayed.status.success(), "{}", e2e::describe(&replayed));
    assert!(stderr.contains("request #"), "{}", e2e::describe(&replayed));
    let added = stderr.lines().any(|line| {
        line.trim_start().starts_with('+') && line.contains("Do something else entirely.")
    });
    assert!(added, "no diff line with the new prompt: {}", e2e::describe(&replayed));
}

#[test]
fn one_call_more_than_recorded_fails_the_replay_with_the_exhaustion_message() {
    let Some(recorded) = record("openai-chat", false) else { return };
    let replayed = recorded.replay(&["--extra-call"]);
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert!(!replayed.status.success(), "{}", e2e::describe(&replayed));
    assert!(stderr.contains("but the script recorded 2"), "{}", e2e::describe(&replayed));
    assert!(
        !String::from_utf8_lossy(&replayed.stdout).contains("extra "),
        "the extra call got no answer"
    );
}

#[test]
fn thirty_two_agents_replaying_at_once_each_get_their_own_replies() {
    let threads = ["--threads", "32"];
    let Some(recorded) = record_with("openai-chat", false, &threads) else { return };
    let expected: String = (0..32)
        .map(|idx| format!("agent {idx} \"The command printed: atif-e2e-agent-{idx}\"\n"))
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&recorded.live.stdout),
        expected,
        "{}",
        e2e::describe(&recorded.live)
    );
    assert_eq!(recorded.provider.request_count(), 64);
    let replayed = recorded.replay(&threads);
    assert!(replayed.status.success(), "replay failed: {}", e2e::describe(&replayed));
    assert_eq!(String::from_utf8_lossy(&replayed.stdout), expected, "{}", e2e::describe(&replayed));
}

#[test]
fn streams_read_to_their_terminal_event_record_exactly_however_late_the_body_ends() {
    let Some(python) = e2e::python() else { return };
    // The provider ends each body a second after its last event; the SDK's sync and async
    // clients, and a reader that stops at `data: [DONE]`, close the response before that.
    let mut config = Config::default();
    config.set_end_delay(std::time::Duration::from_secs(1));
    let provider = FakeProvider::start(config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("readers.script.json");
    let mut args: Vec<OsString> = ["record", "--script"].map(OsString::from).to_vec();
    args.push(script.clone().into());
    args.extend(["--upstream".into(), provider.url().into(), "--".into()]);
    args.push(python.into());
    args.push(e2e::assets_dir().join("python").join("stream_readers.py").into());
    args.extend(["50".into(), atif_fake_provider::DEFAULT_TEXT.into()]);
    let live = atif(dir.path(), &args);
    let described = e2e::describe(&live);
    assert!(live.status.success(), "{described}");
    assert_eq!(
        String::from_utf8_lossy(&live.stdout),
        "sync 17 of 17\nasync 17 of 17\nraw 16 of 16\n",
        "{described}"
    );
    assert!(
        String::from_utf8_lossy(&live.stderr)
            .contains("recording exact: 50 requests served, 50 exchanges recorded"),
        "{described}"
    );
    let recorded = atif_replay::read_script(&script).unwrap();
    assert_eq!(recorded.exchanges.len(), 50);
    assert!(recorded.exchanges.iter().all(|exchange| exchange.cut.is_none()), "{described}");
}
