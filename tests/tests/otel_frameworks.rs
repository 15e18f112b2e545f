//! Agent frameworks' own OpenTelemetry traces, imported: small agents with a local shell tool
//! (in `tests/e2e/python/`, in the cache's `otel-venv`) run against the fake provider and write
//! their spans as OTLP protobuf. One `atif import` turns a run into a golden; the next run,
//! streamed or not, checks equal; a changed tool call fails naming the step.
//!
//! What each framework covers of the issue's cases: pydantic-ai (built-in instrumentation)
//! streaming and parallel tool calls (the fake provider's `set_parallel_calls`); the OpenAI Agents SDK (through OpenInference) a handoff and a subagent (an agent
//! called as a tool), streamed too; the
//! Vercel AI SDK (through `@ai-sdk/otel`, on Node.js, `tests/e2e/js/`) streaming and a tool
//! error; Google ADK (its own instrumentation, in the cache's `adk-venv`) content on and off,
//! and a structure-only check of a run without content; LangGraph (through OpenInference's
//! LangChain instrumentation) tool spans without call ids.
//!
//! Skipped with a notice where `cargo xtask e2e-setup` has not made the venv; required under
//! `ATIF_E2E_REQUIRED=1` (`.ci/run`).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use atif_fake_provider::{Config, DEFAULT_COMMAND, FakeProvider, ScriptedCall};
use serde_json::{Value, json};
use tests::e2e;

/// Runs the agent `script` with `interpreter` (Python, or Node.js) against `provider` and
/// returns the trace file it wrote in `dir`.
fn run_agent(
    interpreter: &Path,
    agent: &Path,
    provider: &FakeProvider,
    dir: &Path,
    name: &str,
    stream: bool,
) -> PathBuf {
    let args: &[&str] = if stream { &["--stream"] } else { &[] };
    run_agent_with(interpreter, agent, provider, dir, name, args)
}

/// [`run_agent`], with `args` after the base URL and the trace file.
fn run_agent_with(
    interpreter: &Path,
    agent: &Path,
    provider: &FakeProvider,
    dir: &Path,
    name: &str,
    args: &[&str],
) -> PathBuf {
    let trace = dir.join(name);
    let mut command = Command::new(interpreter);
    command.arg(agent).arg(provider.url()).arg(&trace).args(args);
    let output =
        command.env_remove("OPENAI_API_KEY").env_remove("OPENAI_BASE_URL").output().unwrap();
    assert!(output.status.success(), "the agent failed: {}", e2e::describe(&output));
    // The fake model's last answer quotes the tool's result: the run went through the tool.
    let answer = String::from_utf8_lossy(&output.stdout);
    assert!(answer.starts_with("The command printed: "), "{}", e2e::describe(&output));
    trace
}

const PYDANTIC: &str = "pydantic_otel_agent.py";
const OPENAI_AGENTS: &str = "openai_agents_otel_agent.py";

/// The agent `script` of `tests/e2e/python/`.
fn python_agent(script: &str) -> PathBuf {
    atif_test_support::workspace_path("tests/e2e/python").join(script)
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
    let first = run_agent(&python, &python_agent(PYDANTIC), &provider, dir, "run1.pb", false);
    let trajectory = import(dir, &first, &golden);
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
    assert_valid_in_both_profiles(dir, &golden);

    // The next runs, with new trace ids, span ids, times and ports, streamed or not.
    for (name, stream) in [("run2.pb", false), ("run3.pb", true)] {
        let trace = run_agent(&python, &python_agent(PYDANTIC), &provider, dir, name, stream);
        let run = dir.join(format!("{name}.json"));
        import(dir, &trace, &run);
        let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
        assert!(output.status.success(), "{name}: {}", e2e::describe(&output));
    }

    // The model calls the tool with another command: the check fails, naming the step.
    let mut config = Config::default();
    config.set_command("printf 'atif-e2e-%d\\n' 42; true");
    let changed = FakeProvider::start(config).unwrap();
    let trace = run_agent(&python, &python_agent(PYDANTIC), &changed, dir, "changed.pb", false);
    let run = dir.join("changed.json");
    import(dir, &trace, &run);
    let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{}", e2e::describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        report.contains("step 3 (agent) changed: arguments of bash changed"),
        "{}",
        e2e::describe(&output)
    );
}

/// The fake provider calling `bash` with `first` and `second` at once, as parallel tool calls.
fn parallel_script(first: &str, second: &str) -> Config {
    let bash = |command: &str| ScriptedCall {
        name: "bash".to_owned(),
        arguments: json!({"command": command}),
    };
    let mut config = Config::default();
    config.set_calls(vec![bash(first), bash(second)]);
    config.set_parallel_calls(true);
    config
}

#[test]
fn a_pydantic_ai_run_with_parallel_tool_calls_imports_both_in_one_step_and_checks_equal() {
    let Some(python) = e2e::otel_python() else { return };
    let provider = FakeProvider::start(parallel_script("echo one", "echo two")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let golden = dir.join("golden.json");
    let first = run_agent(&python, &python_agent(PYDANTIC), &provider, dir, "run1.pb", false);
    let trajectory = import(dir, &first, &golden);
    assert_valid_in_both_profiles(dir, &golden);
    // One model call made both calls; pydantic-ai ran them concurrently, and each result is
    // joined to its own call, in the order the model gave them.
    let step = &trajectory["steps"][2];
    let calls: Vec<(&Value, &Value)> = step["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| (&call["tool_call_id"], &call["arguments"]["command"]))
        .collect();
    assert_eq!(calls.len(), 2, "{step}");
    assert_eq!((calls[0].1, calls[1].1), (&json!("echo one"), &json!("echo two")), "{step}");
    let results = step["observation"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "each call has its result: {step}");
    for (result, (id, command)) in results.iter().zip(&calls) {
        assert_eq!(&result["source_call_id"], *id, "{step}");
        let printed = command.as_str().unwrap().trim_start_matches("echo ");
        assert_eq!(result["content"], format!("{printed}\n"), "{step}");
    }

    // The next runs, streamed or not, whichever call finishes first.
    for (name, stream) in [("run2.pb", false), ("run3.pb", true)] {
        let trace = run_agent(&python, &python_agent(PYDANTIC), &provider, dir, name, stream);
        let run = dir.join(format!("{name}.json"));
        import(dir, &trace, &run);
        let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
        assert!(output.status.success(), "{name}: {}", e2e::describe(&output));
    }

    // The second of the parallel calls changes: the check fails, naming the step.
    let changed = FakeProvider::start(parallel_script("echo one", "echo three")).unwrap();
    let trace = run_agent(&python, &python_agent(PYDANTIC), &changed, dir, "changed.pb", false);
    let run = dir.join("changed.json");
    import(dir, &trace, &run);
    let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{}", e2e::describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("step 3 (agent) changed"), "{}", e2e::describe(&output));
}

/// Imports `trace` to `out` (the format detected) and returns the trajectory.
fn import(dir: &Path, trace: &Path, out: &Path) -> Value {
    let output = atif(dir, &["import".as_ref(), trace.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert!(output.status.success(), "{}", e2e::describe(&output));
    serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap()
}

/// `atif validate` passes `trajectory` under the strict and the harbor profile.
fn assert_valid_in_both_profiles(dir: &Path, trajectory: &Path) {
    for profile in ["strict", "harbor"] {
        let output = atif(
            dir,
            &["validate".as_ref(), "--profile".as_ref(), profile.as_ref(), trajectory.as_os_str()],
        );
        assert!(output.status.success(), "{profile}: {}", e2e::describe(&output));
    }
}

/// The values of `key` in each step that has one (`key` a JSON pointer below the step).
fn step_values<'a>(trajectory: &'a Value, pointer: &str) -> Vec<&'a Value> {
    trajectory["steps"].as_array().unwrap().iter().filter_map(|s| s.pointer(pointer)).collect()
}

/// The fake provider's script for the OpenAI Agents run: the triage agent hands off, the shell
/// agent runs `command`, then asks the helper agent (whose model, offered no tool, answers the
/// plain text); past the script the model quotes the last tool's result.
fn handoff_script(command: &str) -> Config {
    let mut config = Config::default();
    let call = |name: &str, arguments: Value| ScriptedCall { name: name.to_owned(), arguments };
    config.set_calls(vec![
        call("transfer_to_shell_agent", json!({})),
        call("bash", json!({ "command": command })),
        call("ask_helper", json!({ "input": "say hi" })),
    ]);
    config
}

#[test]
fn an_openai_agents_handoff_and_subagent_import_and_the_next_run_checks_equal() {
    let Some(python) = e2e::otel_python() else { return };
    let provider = FakeProvider::start(handoff_script(DEFAULT_COMMAND)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let golden = dir.join("golden.json");

    let first = run_agent(&python, &python_agent(OPENAI_AGENTS), &provider, dir, "run1.pb", false);
    let trajectory = import(dir, &first, &golden);
    let sources: Vec<&str> =
        step_values(&trajectory, "/source").iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(sources, ["user", "agent", "agent", "agent", "agent"]);
    // The handoff stays in one trajectory; each model call names the agent that made it.
    let shell = json!("shell_agent");
    assert_eq!(
        step_values(&trajectory, "/extra/agent"),
        [&json!("triage_agent"), &shell, &shell, &shell]
    );
    assert_eq!(
        step_values(&trajectory, "/tool_calls/0/function_name"),
        [&json!("transfer_to_shell_agent"), &json!("bash"), &json!("ask_helper")]
    );
    assert_eq!(trajectory["steps"][2]["observation"]["results"][0]["content"], "atif-e2e-42\n");
    // The agent called as a tool is a subagent: its own trajectory, linked from the call.
    let helper = &trajectory["subagent_trajectories"][0];
    assert_eq!(helper["agent"]["name"], "helper_agent");
    assert_eq!(helper["steps"][0]["message"], "say hi");
    let result = &trajectory["steps"][3]["observation"]["results"][0];
    assert_eq!(result["subagent_trajectory_ref"][0]["trajectory_id"], helper["trajectory_id"]);
    // OpenInference writes the answer both as content and as a content part: it is one text.
    let answer = "The command printed: Hello from the atif fake provider.";
    assert_eq!(trajectory["steps"][4]["message"], answer);
    // The OpenInference bridge loses the agents' instructions, and the capture says so.
    assert_eq!(
        trajectory["extra"]["capture"],
        json!({"content": "partial", "missing": ["system instructions"]})
    );
    assert_valid_in_both_profiles(dir, &golden);

    for (name, stream) in [("run2.pb", false), ("run3.pb", true)] {
        let trace = run_agent(&python, &python_agent(OPENAI_AGENTS), &provider, dir, name, stream);
        let run = dir.join(format!("{name}.json"));
        import(dir, &trace, &run);
        let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
        assert!(output.status.success(), "{name}: {}", e2e::describe(&output));
    }

    // The shell agent runs another command: the check fails, naming the step.
    let changed = FakeProvider::start(handoff_script("printf 'atif-e2e-%d\\n' 42; true")).unwrap();
    let trace =
        run_agent(&python, &python_agent(OPENAI_AGENTS), &changed, dir, "changed.pb", false);
    let run = dir.join("changed.json");
    import(dir, &trace, &run);
    let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{}", e2e::describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        report.contains("step 3 (agent) changed: arguments of bash changed"),
        "{}",
        e2e::describe(&output)
    );
}

/// The Vercel AI SDK agent, copied into `dir` beside a link to the cache's `otel-js` packages
/// (Node resolves a script's imports from the folders above it), or `None` after a skip notice.
fn vercel_agent(dir: &Path) -> Option<PathBuf> {
    let packages = e2e::cached(
        "otel-js/node_modules/@ai-sdk/otel",
        "the Vercel AI SDK tracing packages of tests/e2e/otel-js.txt",
    )?;
    let node_modules = packages.parent().and_then(Path::parent).unwrap();
    std::os::unix::fs::symlink(node_modules, dir.join("node_modules")).unwrap();
    let agent = dir.join("vercel_otel_agent.mjs");
    let source = atif_test_support::workspace_path("tests/e2e/js/vercel_otel_agent.mjs");
    std::fs::copy(source, &agent).unwrap();
    Some(agent)
}

#[test]
fn a_vercel_ai_sdk_run_traced_by_ai_sdk_otel_checks_equal_streamed_and_a_tool_error_fails() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let Some(agent) = vercel_agent(dir) else { return };
    let node = Path::new("node");
    let provider = FakeProvider::start(Config::default()).unwrap();
    let golden = dir.join("golden.json");

    let first = run_agent(node, &agent, &provider, dir, "run1.json", false);
    let trajectory = import(dir, &first, &golden);
    let sources: Vec<&str> =
        step_values(&trajectory, "/source").iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(sources, ["system", "user", "agent", "agent"]);
    assert_eq!(trajectory["agent"]["tool_definitions"][0]["name"], "bash");
    assert_eq!(trajectory["extra"]["capture"]["content"], "full");
    // The result as the tool returned it, not encoded twice.
    assert_eq!(trajectory["steps"][2]["observation"]["results"][0]["content"], "atif-e2e-42\n");
    assert_valid_in_both_profiles(dir, &golden);

    for (name, stream) in [("run2.json", false), ("run3.json", true)] {
        let trace = run_agent(node, &agent, &provider, dir, name, stream);
        let run = dir.join(format!("{name}.atif.json"));
        import(dir, &trace, &run);
        let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
        assert!(output.status.success(), "{name}: {}", e2e::describe(&output));
    }

    // Another command, which fails: the check names the step, the changed call and the error.
    let mut config = Config::default();
    config.set_command("printf 'atif-e2e-%d\\n' 42; exit 3");
    let changed = FakeProvider::start(config).unwrap();
    let trace = run_agent(node, &agent, &changed, dir, "failed.json", false);
    let run = dir.join("failed.atif.json");
    let failed = import(dir, &trace, &run);
    let result = &failed["steps"][2]["observation"]["results"][0];
    assert!(
        result["extra"]["error"]["message"].as_str().unwrap().contains("Command failed"),
        "{result}"
    );
    let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{}", e2e::describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        report.contains("step 3 (agent) changed: arguments of bash changed"),
        "{}",
        e2e::describe(&output)
    );
}

const ADK: &str = "adk_otel_agent.py";

/// The fake provider's script for a run that calls the shell tool twice.
fn two_calls_script() -> Config {
    let mut config = Config::default();
    let call =
        ScriptedCall { name: "bash".to_owned(), arguments: json!({ "command": DEFAULT_COMMAND }) };
    config.set_calls(vec![call.clone(), call]);
    config
}

#[test]
fn a_google_adk_run_with_content_on_becomes_a_golden_and_the_next_run_checks_equal() {
    let Some(python) = e2e::adk_python() else { return };
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let golden = dir.join("golden.json");
    let content = ["--content"];

    let first = run_agent_with(&python, &python_agent(ADK), &provider, dir, "run1.pb", &content);
    let trajectory = import(dir, &first, &golden);
    assert_eq!(trajectory["agent"]["name"], "shell_agent");
    assert_eq!(trajectory["extra"]["capture"]["content"], "full");
    let sources: Vec<&str> =
        step_values(&trajectory, "/source").iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(sources, ["system", "user", "agent", "agent"]);
    // ADK answers the model with the tool's value wrapped as `{"result": …}`, and gives the
    // call a second id of its own on the tool span, which the result keeps.
    let result = &trajectory["steps"][2]["observation"]["results"][0];
    assert_eq!(result["content"], r#"{"result": "atif-e2e-42\n"}"#);
    assert!(result["extra"]["span_call_id"].as_str().unwrap().starts_with("adk-"), "{result}");
    assert_valid_in_both_profiles(dir, &golden);

    let trace = run_agent_with(&python, &python_agent(ADK), &provider, dir, "run2.pb", &content);
    let run = dir.join("run2.json");
    import(dir, &trace, &run);
    let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
    assert!(output.status.success(), "{}", e2e::describe(&output));

    // The model calls the tool with another command: the check fails, naming the step.
    let mut config = Config::default();
    config.set_command("printf 'atif-e2e-%d\\n' 42; true");
    let changed = FakeProvider::start(config).unwrap();
    let trace = run_agent_with(&python, &python_agent(ADK), &changed, dir, "changed.pb", &content);
    let run = dir.join("changed.json");
    import(dir, &trace, &run);
    let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{}", e2e::describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("step 3 (agent) changed: arguments of bash changed"), "{report}");
}

#[test]
fn a_google_adk_run_without_content_checks_on_structure_against_its_golden_and_one_with_content() {
    let Some(python) = e2e::adk_python() else { return };
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let golden = dir.join("golden.json");
    let check = |golden: &Path, run: &Path, flags: &[&str]| {
        let mut args: Vec<&OsStr> = vec!["check".as_ref(), golden.as_os_str(), run.as_os_str()];
        args.extend(flags.iter().map(OsStr::new));
        atif(dir, &args)
    };

    // ADK's default: no message content, so no system or user step, and no arguments; the
    // model calls, the tool and the tokens are there.
    let first = run_agent_with(&python, &python_agent(ADK), &provider, dir, "run1.pb", &[]);
    let trajectory = import(dir, &first, &golden);
    assert_eq!(trajectory["extra"]["capture"]["content"], "none");
    let sources: Vec<&str> =
        step_values(&trajectory, "/source").iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(sources, ["agent", "agent"]);
    assert_eq!(step_values(&trajectory, "/tool_calls/0/function_name"), [&json!("bash")]);
    assert_eq!(trajectory["final_metrics"]["total_prompt_tokens"], 240);
    assert_valid_in_both_profiles(dir, &golden);

    let trace = run_agent_with(&python, &python_agent(ADK), &provider, dir, "run2.pb", &[]);
    let run = dir.join("run2.json");
    import(dir, &trace, &run);
    let output = check(&golden, &run, &["--no-content"]);
    assert!(output.status.success(), "{}", e2e::describe(&output));

    // Against a golden captured with content it fails, saying why, unless the comparison is
    // structure only.
    let full = dir.join("full.json");
    let trace =
        run_agent_with(&python, &python_agent(ADK), &provider, dir, "full.pb", &["--content"]);
    import(dir, &trace, &full);
    let output = check(&full, &run, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", e2e::describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        report.contains("captured with different content: golden \"full\", actual \"none\""),
        "{report}"
    );
    let output = check(&full, &run, &["--no-content"]);
    assert!(output.status.success(), "{}", e2e::describe(&output));

    // The model calls the tool a second time: without content the arguments are not there to
    // compare, but the calls are, and the check names the step.
    let changed = FakeProvider::start(two_calls_script()).unwrap();
    let trace = run_agent_with(&python, &python_agent(ADK), &changed, dir, "changed.pb", &[]);
    let run = dir.join("changed.json");
    import(dir, &trace, &run);
    let output = check(&golden, &run, &["--no-content"]);
    assert_eq!(output.status.code(), Some(1), "{}", e2e::describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("llm_calls: 2 -> 3"), "{report}");
    assert!(report.contains("functions: step 2 added bash"), "{report}");
}

const LANGGRAPH: &str = "langgraph_otel_agent.py";

#[test]
fn a_langgraph_run_traced_by_openinference_becomes_a_golden_and_the_next_run_checks_equal() {
    let Some(python) = e2e::otel_python() else { return };
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let golden = dir.join("golden.json");

    let first = run_agent(&python, &python_agent(LANGGRAPH), &provider, dir, "run1.pb", false);
    let trajectory = import(dir, &first, &golden);
    assert_eq!(trajectory["agent"]["name"], "shell_agent");
    assert_eq!(trajectory["extra"]["capture"]["content"], "full");
    let sources: Vec<&str> =
        step_values(&trajectory, "/source").iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(sources, ["system", "user", "agent", "agent"]);
    assert_eq!(step_values(&trajectory, "/tool_calls/0/function_name"), [&json!("bash")]);
    // OpenInference writes the tool's whole `ToolMessage` as its output; the result is the
    // content the model received.
    assert_eq!(trajectory["steps"][2]["observation"]["results"][0]["content"], "atif-e2e-42\n");
    assert_valid_in_both_profiles(dir, &golden);

    let trace = run_agent(&python, &python_agent(LANGGRAPH), &provider, dir, "run2.pb", false);
    let run = dir.join("run2.json");
    import(dir, &trace, &run);
    let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
    assert!(output.status.success(), "{}", e2e::describe(&output));

    // The model calls the tool with another command: the check fails, naming the step.
    let mut config = Config::default();
    config.set_command("printf 'atif-e2e-%d\\n' 42; true");
    let changed = FakeProvider::start(config).unwrap();
    let trace = run_agent(&python, &python_agent(LANGGRAPH), &changed, dir, "changed.pb", false);
    let run = dir.join("changed.json");
    import(dir, &trace, &run);
    let output = atif(dir, &["check".as_ref(), golden.as_os_str(), run.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{}", e2e::describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("step 3 (agent) changed: arguments of bash changed"), "{report}");
}
