//! Each real agent CLI completes one tool-using loop against the fake provider, in a fresh
//! working directory and HOME: it calls its shell tool with the scripted command, runs it, and
//! ends with the provider's final text quoting the command's output. It asks npm's registry for
//! nothing: the sandbox names the fake provider as the registry, which sees no such request.
//!
//! Skipped with a notice where `cargo xtask e2e-setup` has not installed the CLIs; required
//! under `ATIF_E2E_REQUIRED=1` (`.ci/run`).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use atif_fake_provider::{Config, FakeProvider};
use tests::agents::{Agent, Sandbox, asks_npm_registry};

fn check(agent: Agent) {
    let Some(program) = agent.program() else { return };
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(agent, dir.path(), provider.url()).unwrap();
    let run = sandbox.run(sandbox.command(&program, "Run the scripted command.")).unwrap();
    let context = format!(
        "{}: {}\nstdout:\n{}\nstderr:\n{}",
        agent.name(),
        run.status,
        run.stdout,
        run.stderr
    );
    assert!(run.status.success(), "{context}");
    assert!(printed(agent, &run.stdout).contains("The command printed: atif-e2e-42"), "{context}");

    let requests = provider.requests();
    let called =
        requests.iter().any(|request| request.body.to_string().contains(agent.shell_tool()));
    assert!(called, "no request offered {}: {context}", agent.shell_tool());
    let answered =
        requests.iter().filter(|request| request.body.to_string().contains("atif-e2e-42")).count();
    assert!(answered >= 1, "no request carried the tool result back: {context}");
    // atif-proxy answers 415 to a model request whose body is not declared JSON.
    let not_json: Vec<String> = requests
        .iter()
        .filter(|request| request.method == "POST")
        .filter_map(|request| {
            let content_type = request
                .headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
                .map(|(_, value)| value.to_ascii_lowercase());
            let json = content_type.as_deref().is_some_and(|value| {
                let media_type = value.split(';').next().unwrap_or_default().trim();
                media_type == "application/json" || media_type.ends_with("+json")
            });
            (!json).then(|| format!("{} {}: {content_type:?}", request.method, request.path))
        })
        .collect();
    assert!(not_json.is_empty(), "a model request not declared JSON: {not_json:?}: {context}");
    let registry: Vec<&str> = requests
        .iter()
        .map(|request| request.path.as_str())
        .filter(|path| asks_npm_registry(path))
        .collect();
    assert!(registry.is_empty(), "asked npm's registry for {registry:?}: {context}");
    // What the CLI sends its base URL besides model calls, as users run it: each such probe
    // must be one `atif record` answers and records without owing it in a replay
    // (atif-proxy's `Endpoint::Probe`), so a new one here needs a look there.
    let probes: Vec<String> = requests
        .iter()
        .filter(|request| !is_model_call(&request.method, &request.path))
        .filter(|request| !asks_npm_registry(&request.path))
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    let expected: &[&str] = match agent {
        Agent::ClaudeCode => &["HEAD /api/hello"],
        Agent::Codex | Agent::GeminiCli | Agent::OpenCode | Agent::Pi => &[],
    };
    assert_eq!(probes, expected, "{context}");
    assert!(
        !run.session_files.is_empty(),
        "no session file under {}: {context}",
        sandbox.home().display()
    );
}

/// The agent's standard output with Gemini CLI's assistant deltas joined into one text.
fn printed(agent: Agent, stdout: &str) -> String {
    if agent != Agent::GeminiCli {
        return stdout.to_owned();
    }
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["type"] == "message" && event["role"] == "assistant")
        .filter_map(|event| event["content"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn claude_code_completes_a_tool_loop() {
    check(Agent::ClaudeCode);
}

#[test]
fn codex_completes_a_tool_loop() {
    check(Agent::Codex);
}

#[test]
fn gemini_cli_completes_a_tool_loop() {
    check(Agent::GeminiCli);
}

#[test]
fn opencode_completes_a_tool_loop() {
    check(Agent::OpenCode);
}

#[test]
fn pi_completes_a_tool_loop() {
    check(Agent::Pi);
}

/// Whether a request is a model call of one of the providers' protocols (its query aside).
fn is_model_call(method: &str, path: &str) -> bool {
    let path = path.split('?').next().unwrap_or_default();
    let gemini = path.starts_with("/v1beta/models/")
        && (path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent"));
    method == "POST"
        && (gemini || matches!(path, "/v1/messages" | "/v1/chat/completions" | "/v1/responses"))
}
