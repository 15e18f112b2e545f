//! Agent frameworks' own OpenTelemetry traces, imported: a pydantic-ai agent with a local shell
//! tool (`tests/e2e/python/pydantic_otel_agent.py`, pydantic-ai's built-in instrumentation, in
//! the cache's `otel-venv`) runs against the fake provider and writes its spans as OTLP
//! protobuf. One `atif import` turns a run into a golden; the next run, streamed or not, checks
//! equal; a changed tool call fails naming the step.
//!
//! Skipped with a notice where `cargo xtask e2e-setup` has not made the venv; required under
//! `ATIF_E2E_REQUIRED=1` (`.ci/run`).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use atif_fake_provider::{Config, FakeProvider};
use tests::e2e;

/// Runs the agent against `provider` and returns the trace file it wrote in `dir`.
fn run_agent(
    python: &Path,
    provider: &FakeProvider,
    dir: &Path,
    name: &str,
    stream: bool,
) -> PathBuf {
    let agent = atif_test_support::workspace_path("tests/e2e/python/pydantic_otel_agent.py");
    let trace = dir.join(name);
    let mut command = Command::new(python);
    command.arg(&agent).arg(provider.url()).arg(&trace);
    if stream {
        command.arg("--stream");
    }
    let output =
        command.env_remove("OPENAI_API_KEY").env_remove("OPENAI_BASE_URL").output().unwrap();
    assert!(output.status.success(), "the agent failed: {}", e2e::describe(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "The command printed: atif-e2e-42");
    trace
}

fn atif(dir: &Path, args: &[&OsStr]) -> Output {
    e2e::atif_output(dir, args)
}

#[test]
fn a_pydantic_ai_run_becomes_a_golden_with_one_command_and_the_next_run_checks_equal() {
    let Some(python) = e2e::otel_python() else { return };
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let golden = dir.join("golden.json");

    // The one command: the trace file to a golden.
    let first = run_agent(&python, &provider, dir, "run1.pb", false);
    let output =
        atif(dir, &["import".as_ref(), first.as_os_str(), "-o".as_ref(), golden.as_os_str()]);
    assert!(output.status.success(), "{}", e2e::describe(&output));
    let trajectory: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&golden).unwrap()).unwrap();
    assert_eq!(trajectory["agent"]["name"], "shell_agent");
    assert_eq!(trajectory["extra"]["capture"]["content"], "full");
    let sources: Vec<&str> = trajectory["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["system", "user", "agent", "agent"]);
    let result = &trajectory["steps"][2]["observation"]["results"][0]["content"];
    assert_eq!(result, "atif-e2e-42\n", "the local tool's real output");
    for profile in ["strict", "harbor"] {
        let output = atif(
            dir,
            &["validate".as_ref(), "--profile".as_ref(), profile.as_ref(), golden.as_os_str()],
        );
        assert!(output.status.success(), "{profile}: {}", e2e::describe(&output));
    }

    // The next runs, with new trace ids, span ids, times and ports, streamed or not.
    for (name, stream) in [("run2.pb", false), ("run3.pb", true)] {
        let trace = run_agent(&python, &provider, dir, name, stream);
        let run = dir.join(format!("{name}.json"));
        let output =
            atif(dir, &["import".as_ref(), trace.as_os_str(), "-o".as_ref(), run.as_os_str()]);
        assert!(output.status.success(), "{}", e2e::describe(&output));
        let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
        assert!(output.status.success(), "{name}: {}", e2e::describe(&output));
    }

    // The model calls the tool with another command: the check fails, naming the step.
    let mut config = Config::default();
    config.set_command("printf 'atif-e2e-%d\\n' 42; true");
    let changed = FakeProvider::start(config).unwrap();
    let trace = run_agent(&python, &changed, dir, "changed.pb", false);
    let run = dir.join("changed.json");
    let output = atif(dir, &["import".as_ref(), trace.as_os_str(), "-o".as_ref(), run.as_os_str()]);
    assert!(output.status.success(), "{}", e2e::describe(&output));
    let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{}", e2e::describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        report.contains("step 3 (agent) changed: arguments of bash changed"),
        "{}",
        e2e::describe(&output)
    );
}
