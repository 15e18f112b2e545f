//! `atif live` against the fake provider: N runs of a real agent command through the recording
//! server, the envelope they make, the verdict, the token budget and the refusal on CI.

use std::path::Path;

use atif_fake_provider::{Config, FakeProvider};

use crate::{atif_command, stderr, stdout};

/// An agent that asks the model one question offering a shell tool, then exits with `$1`.
const AGENT: &str = r#"curl -sS -o /dev/null "$OPENAI_BASE_URL/chat/completions" -H 'content-type: application/json' -d '{"model": "m", "messages": [{"role": "user", "content": "list files"}], "tools": [{"type": "function", "function": {"name": "shell", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]}' && exit "${1:-0}""#;

fn live(dir: &Path, provider: &FakeProvider, flags: &[&str], status: &str) -> std::process::Output {
    let mut args = vec!["live"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&[
        "--upstream",
        provider.url(),
        "--",
        "sh",
        "-c",
        AGENT,
        "agent",
        status,
    ]);
    let mut command = atif_command(&args);
    command.current_dir(dir).env_remove("CI").env_remove("ATIF_LIVE");
    command.output().unwrap()
}

#[test]
fn live_runs_write_an_envelope_and_the_same_agent_shows_no_clear_change() {
    let dir = tempfile::tempdir().unwrap();
    let provider = FakeProvider::start(Config::default()).unwrap();
    let flags =
        ["--runs", "14", "--jobs", "2", "--golden", "g.json", "--update", "--trajectories", "runs"];
    let made = live(dir.path(), &provider, &flags, "0");
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    assert!(
        stderr(&made).contains("atif live: 14 run(s) finished, 14 passed\n"),
        "{}",
        stderr(&made)
    );
    assert_eq!(provider.request_count(), 14, "one model call per run");
    let envelope: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("g.json")).unwrap()).unwrap();
    assert_eq!(envelope["runs"], 14);
    assert_eq!(envelope["passed_runs"], 14);
    assert_eq!(envelope["tool_runs"], serde_json::json!({"shell": 14}));
    assert!(dir.path().join("runs/run-14.json").is_file());

    let again =
        live(dir.path(), &provider, &["--runs", "14", "--jobs", "2", "--golden", "g.json"], "0");
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stdout(&again).starts_with("no clear change: "), "{}", stdout(&again));
    assert!(stdout(&again).contains("pass@1 1.00"), "{}", stdout(&again));
}

#[test]
fn a_failing_agent_moves_the_pass_rate_and_is_changed() {
    let dir = tempfile::tempdir().unwrap();
    let provider = FakeProvider::start(Config::default()).unwrap();
    let made = live(
        dir.path(),
        &provider,
        &["--runs", "10", "--jobs", "2", "--golden", "g.json", "--update"],
        "0",
    );
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let failing =
        live(dir.path(), &provider, &["--runs", "10", "--jobs", "2", "--golden", "g.json"], "3");
    assert_eq!(failing.status.code(), Some(1), "{}", stderr(&failing));
    assert!(
        stdout(&failing).contains("pass_rate: passed 0/10 runs, was 10/10"),
        "{}",
        stdout(&failing)
    );
}

#[test]
fn max_cost_tokens_stops_early_and_the_verdict_is_inconclusive() {
    let dir = tempfile::tempdir().unwrap();
    let provider = FakeProvider::start(Config::default()).unwrap();
    live(dir.path(), &provider, &["--runs", "3", "--golden", "g.json", "--update"], "0");
    let before = provider.request_count();
    // Each run uses 121 tokens: the budget is spent after two.
    let flags = ["--runs", "20", "--golden", "g.json", "--max-cost-tokens", "200"];
    let output = live(dir.path(), &provider, &flags, "0");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(provider.request_count() - before, 2);
    assert!(
        stderr(&output).contains(
            "atif live: stopped after 2 of 20 runs: they used 242 tokens, over --max-cost-tokens"
        ),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).starts_with("inconclusive: "), "{}", stdout(&output));
}

#[test]
fn live_runs_are_refused_on_ci_unless_atif_live_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let provider = FakeProvider::start(Config::default()).unwrap();
    let args = [
        "live",
        "--runs",
        "1",
        "--golden",
        "g.json",
        "--update",
        "--upstream",
        provider.url(),
        "--",
        "sh",
        "-c",
        AGENT,
    ];
    let refused = atif_command(&args)
        .current_dir(dir.path())
        .env("CI", "true")
        .env_remove("ATIF_LIVE")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        stderr(&refused),
        "error: refusing to run live on CI (CI is set): live runs call the model and cost money; set ATIF_LIVE=1 to run them anyway\n"
    );
    assert_eq!(provider.request_count(), 0);
    let asked = atif_command(&args)
        .current_dir(dir.path())
        .env("CI", "true")
        .env("ATIF_LIVE", "1")
        .output()
        .unwrap();
    assert_eq!(asked.status.code(), Some(0), "{}", stderr(&asked));
    assert_eq!(provider.request_count(), 1);
}
