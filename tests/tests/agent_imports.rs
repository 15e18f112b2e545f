//! Every log kind of each real agent CLI imports correctly and gives the same golden on every
//! machine: each agent runs the same tool loop twice against the fake provider, in two working
//! directories under two HOMEs, and for its standard output and its session file(s) (OpenCode:
//! `opencode export`), the import validates in both profiles, its Shape lists the shell call,
//! and the two runs normalise to the same bytes with the agent's preset. `atif import --latest`
//! with the run's HOME finds the session file the test imports by path.
//!
//! Skipped with a notice where `cargo xtask e2e-setup` has not installed the CLIs; required
//! under `ATIF_E2E_REQUIRED=1` (`.ci/run`). The logs of such runs are committed as fixtures in
//! `crates/atif-import/tests/fixtures/real/`, so the importers stay tested without the CLIs.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use atif_fake_provider::{Config, FakeProvider};
use atif_import::{ImportOptions, import};
use atif_normalize::{normalize, preset, shape, to_canonical_string};
use atif_schema::{Profile, ValidateOptions, validate};
use serde_json::Value;
use tests::agents::{Agent, Sandbox, asks_npm_registry};
use tests::e2e;

/// One run's logs: a name for messages (`stdout`, a session file name) and the bytes.
fn run_logs(
    agent: Agent,
    program: &std::path::Path,
    root: &std::path::Path,
) -> Vec<(String, Vec<u8>)> {
    let provider = FakeProvider::start(Config::default()).unwrap();
    let sandbox = Sandbox::new(agent, root, provider.url()).unwrap();
    let run = sandbox.run(sandbox.command(program, "Run the scripted command.")).unwrap();
    assert!(run.status.success(), "{}: {}\n{}", agent.name(), run.status, run.stderr);
    let mut logs = vec![("stdout".to_owned(), run.stdout.clone().into_bytes())];
    if agent == Agent::OpenCode {
        let first: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
        let session = first["sessionID"].as_str().unwrap().to_owned();
        let argv = [program.as_os_str().to_owned(), "export".into(), OsString::from(session)];
        let export = sandbox.run(sandbox.command_for(&argv)).unwrap();
        assert!(
            export.status.success(),
            "opencode export {:?}\nstdout:\n{}\nstderr:\n{}",
            export.status,
            export.stdout,
            export.stderr
        );
        logs.push(("opencode export".to_owned(), export.stdout.into_bytes()));
    } else {
        assert!(!run.session_files.is_empty(), "{}: no session file", agent.name());
        for file in &run.session_files {
            logs.push((file.display().to_string(), std::fs::read(file).unwrap()));
        }
        check_latest(&sandbox, &run.session_files);
    }
    // The sandbox names the fake provider as npm's registry: OpenCode must find its config
    // packages in place instead of installing them, in `run` and in `export`.
    let registry: Vec<String> = provider
        .requests()
        .into_iter()
        .map(|request| request.path)
        .filter(|path| asks_npm_registry(path))
        .collect();
    assert!(registry.is_empty(), "{}: asked npm's registry for {registry:?}", agent.name());
    logs
}

/// `atif import --latest AGENT --cwd DIR`, with the sandbox's HOME, names one of the session
/// files the run wrote (the only one, when there is one) and imports it.
fn check_latest(sandbox: &Sandbox, session_files: &[PathBuf]) {
    let agent = sandbox.agent().name();
    let output = Command::new(e2e::atif_binary())
        .args(["import", "--latest", agent, "--cwd"])
        .arg(sandbox.cwd())
        .env("HOME", sandbox.home())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    assert!(output.status.success(), "{agent} --latest: {}", e2e::describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let prefix = format!("atif import: newest {agent} session: ");
    let named = stderr.lines().find_map(|line| line.strip_prefix(&prefix));
    let Some(named) = named.map(PathBuf::from) else {
        panic!("{agent} --latest names no file: {}", e2e::describe(&output));
    };
    assert!(session_files.contains(&named), "{agent} --latest: {named:?} not in {session_files:?}");
    if let [only] = session_files {
        assert_eq!(&named, only, "{agent} --latest");
    }
    let imported: Value = serde_json::from_slice(&output.stdout).unwrap();
    let steps = imported["steps"].as_array().map_or(0, Vec::len);
    assert!(steps > 0, "{agent} --latest imported no steps: {}", e2e::describe(&output));
}

fn check(agent: Agent) {
    let Some(program) = agent.program() else { return };
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let [a, b] = [0, 1].map(|idx| run_logs(agent, &program, dirs[idx].path()));
    assert_eq!(a.len(), b.len(), "{}: the two runs left different logs", agent.name());
    let options = preset(agent.name()).unwrap();
    let mut strict = ImportOptions::new();
    strict.set_strict(true);
    for ((name, log_a), (_, log_b)) in a.iter().zip(&b) {
        let what = format!("{} {name}", agent.name());
        let [text_a, text_b] = [log_a, log_b].map(|log| {
            let imported = import(log, &strict).unwrap_or_else(|err| panic!("{what}: {err}"));
            let trajectory = &imported.trajectory();
            for profile in [Profile::Strict, Profile::Harbor] {
                let report = validate(trajectory, &ValidateOptions::with_profile(profile));
                let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
                assert!(errors.is_empty(), "{what} ({profile:?}): {errors:?}");
            }
            // `codex exec --json` names the item type, not the tool; the importer calls a
            // command item `shell` (see docs/import.md).
            let tool = if agent == Agent::Codex && name == "stdout" {
                "shell"
            } else {
                agent.shell_tool()
            };
            let functions = shape(trajectory).functions;
            assert!(functions.iter().any(|f| f == tool), "{what}: {functions:?}");
            to_canonical_string(&normalize(trajectory, &options).unwrap())
        });
        assert_eq!(text_a, text_b, "{what}: the two runs normalise differently");
    }
}

#[test]
fn claude_code_logs_import_alike_from_two_folders_and_homes() {
    check(Agent::ClaudeCode);
}

#[test]
fn codex_logs_import_alike_from_two_folders_and_homes() {
    check(Agent::Codex);
}

#[test]
fn gemini_cli_logs_import_alike_from_two_folders_and_homes() {
    check(Agent::GeminiCli);
}

#[test]
fn opencode_logs_import_alike_from_two_folders_and_homes() {
    check(Agent::OpenCode);
}

#[test]
fn pi_logs_import_alike_from_two_folders_and_homes() {
    check(Agent::Pi);
}
