//! A real model in the loop (issue 29): Gemma 3 270M served by llama-cpp-python
//! (`tests::e2e::real_model`), which samples as a live model does and has the quirks our fake
//! provider lacks.
//!
//! - A Python agent on the `openai` SDK (`tests/e2e/python/weather_agent.py`: forced
//!   `get_weather` then `add`, a wrong argument gets an error result and a retry) is recorded
//!   with `atif record` against the server, replayed with `atif replay` once the server is
//!   stopped, and the replay's trajectory equals the golden written from the recording,
//!   streamed and not.
//! - `HttpClient::openai_chat`, streamed and not, is recorded with `RecordingClient` and
//!   replayed with the server stopped.
//! - The live verdict on real sampling: `atif live` builds an envelope golden from 14 runs of an
//!   agent that asks again when the model names the wrong city (`tests/e2e/python/where_agent.py`),
//!   14 more runs of the same prompt are `no clear change`, and 14 runs of an edited prompt are
//!   `changed`, naming the LLM calls, steps and tool sequence (it retries less), each batch run
//!   one at a time on a fresh server with its own seed: the commands of docs/live.md's worked
//!   example on the real model.
//! - The server's quirks: a stream carries no usage unless asked, and the Shape of its
//!   trajectory says its tokens are `unknown`, not 0; it repeats the function name in every delta of a streamed tool call
//!   (read as one name by capture and `parse_stream`), and it refuses an assistant message with
//!   `"content": null` (the issue saw 422; 0.3.36 answers 500 with its validation errors),
//!   which is recorded and replayed as it was.
//!
//! The tests take the model one at a time (`MODEL`): each server's answers depend only on its
//! seed and the requests it was sent in order, and two servers sharing 2 cores would only slow
//! each other down.
//!
//! Skipped with a notice where `cargo xtask e2e-setup` has not installed the model; required
//! under `ATIF_E2E_REQUIRED=1` (`.ci/run`). A test runs one of these against an empty cache to hold both.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex, MutexGuard};

use atif_replay::{
    HttpClient, LlmClient, LlmRequest, LlmResponse, Message, RecordingClient, ReplayClient,
    ToolDefinition,
};
use atif_wire::Protocol;
use serde_json::{Value, json};
use tests::e2e;

/// One real model at a time.
static MODEL: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    MODEL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The seed of the servers these tests start.
const SEED: u64 = 42;

#[test]
fn the_python_agent_records_from_the_real_model_and_replays_offline_equal_to_its_golden() {
    let Some(python) = e2e::python() else { return };
    let _model = one_at_a_time();
    for stream in [false, true] {
        let Some(model) = e2e::real_model(SEED) else { return };
        let dir = tempfile::tempdir().unwrap();
        let mut agent = agent_argv(&python, &[]);
        if stream {
            agent.push("--stream".into());
        }
        let recorded = dir.path().join("recorded.json");
        let live = record(dir.path(), model.url(), &recorded, &agent);
        model.stop();
        let functions = function_names(&read_json(&recorded));
        assert_eq!(functions.first().map(String::as_str), Some("get_weather"), "{functions:?}");
        assert!(functions.iter().any(|name| name == "add"), "stream {stream}: {functions:?}");
        assert!(
            functions.iter().all(|name| name == "get_weather" || name == "add"),
            "stream {stream}: each call has one name, as sent: {functions:?}"
        );

        let replayed = dir.path().join("replayed.json");
        let replay = replay(dir.path(), &replayed, &agent);
        assert_eq!(
            String::from_utf8_lossy(&replay.stdout),
            String::from_utf8_lossy(&live.stdout),
            "stream {stream}: the agent saw other replies in the replay"
        );
        let golden = dir.path().join("golden.json");
        let update = atif(
            dir.path(),
            &["check".into(), "--update".into(), golden.clone().into(), recorded.clone().into()],
        );
        assert!(update.status.success(), "{}", e2e::describe(&update));
        let check = atif(dir.path(), &["check".into(), golden.into(), replayed.into()]);
        assert!(check.status.success(), "stream {stream}: {}", e2e::describe(&check));
        if stream {
            check_repeated_names_in_stream(&dir.path().join("agent.script.json"));
        }
        // The server sends usage in whole replies, and in a stream only when asked
        // (`stream_options.include_usage`, which the agent does not send): unknown, not 0.
        let shape = atif(dir.path(), &["shape".into(), recorded.clone().into()]);
        let shape = String::from_utf8_lossy(&shape.stdout).into_owned();
        let unknown =
            shape.lines().any(|line| line.contains("prompt_tokens") && line.contains("unknown"));
        assert_eq!(unknown, stream, "stream {stream}: {shape}");
    }
}

#[test]
fn a_refusal_of_null_content_with_tool_calls_is_recorded_and_replayed_as_it_was() {
    let Some(python) = e2e::python() else { return };
    let _model = one_at_a_time();
    let Some(model) = e2e::real_model(SEED) else { return };
    let dir = tempfile::tempdir().unwrap();
    let agent = agent_argv(&python, &["--null-content"]);
    let live = record(dir.path(), model.url(), &dir.path().join("recorded.json"), &agent);
    model.stop();
    let stdout = String::from_utf8_lossy(&live.stdout).into_owned();
    let script = atif_replay::read_script(&dir.path().join("agent.script.json")).unwrap();
    let refused = script.exchanges.last().unwrap();
    // The server's request validation refuses the message (the issue saw 422; 0.3.36 answers
    // 500 with the validation errors): whatever it answered is what a replay must answer.
    assert!(refused.status >= 400, "{}", e2e::describe(&live));
    assert!(stdout.contains(&format!("refused {} ", refused.status)), "{}", e2e::describe(&live));
    let assistant = refused.request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["content"], Value::Null, "the refused request held content null");

    let replay = replay(dir.path(), &dir.path().join("replayed.json"), &agent);
    assert_eq!(
        String::from_utf8_lossy(&replay.stdout),
        stdout,
        "the refusal was replayed otherwise"
    );
}

#[test]
fn the_rust_http_client_records_the_real_model_and_replays_it_with_the_server_stopped() {
    let _model = one_at_a_time();
    let Some(model) = e2e::real_model(SEED) else { return };
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("http.script.json");
    let live = HttpClient::openai_chat(&format!("{}/v1", model.url()), "sk-atif-e2e-not-a-key")
        .unwrap()
        .with_model("gemma-3-270m");
    let recorder = Arc::new(RecordingClient::new(live));
    let recorded: Vec<LlmResponse> = runtime.block_on(async {
        let mut recorded = Vec::new();
        for stream in [false, true] {
            recorded.push(call(recorder.as_ref(), stream).await);
        }
        recorded
    });
    recorder.save(&script).unwrap();
    model.stop();
    for (reply, stream) in recorded.iter().zip([false, true]) {
        let call = reply.tool_calls.first().unwrap_or_else(|| panic!("stream {stream}: {reply:?}"));
        assert_eq!(call.name, "get_weather", "stream {stream}: one name, as sent");
    }

    let replay = ReplayClient::from_file(&script).unwrap();
    runtime.block_on(async {
        for (reply, stream) in recorded.iter().zip([false, true]) {
            let replayed = call(&replay, stream).await;
            // The live reply keeps the provider's raw body for the agent; a script never does.
            let live = LlmResponse { raw: None, ..reply.clone() };
            assert_eq!(replayed, live, "stream {stream}");
        }
    });
    replay.finish().unwrap();
}

/// Runs per batch of the live verdict: the fewest with which a verdict of no change is
/// conclusive (seeing a rate move from 10% to 60% with 80% power takes 14 runs per side).
const LIVE_RUNS: &str = "14";

/// The live verdict's three batches, in order: whether it writes the envelope, the prompt, the
/// seed of the fresh server it runs on, and how its verdict line starts.
const LIVE_BATCHES: [(bool, &str, u64, &str); 3] = [
    (true, "vague", 1, "atif live: wrote "),
    (false, "vague", 2, "no clear change: "),
    (false, "clear", 3, "changed: "),
];

#[test]
fn the_live_verdict_on_real_sampling_calls_the_same_prompt_unchanged_and_a_prompt_edit_changed() {
    let Some(python) = e2e::python() else { return };
    let _model = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    // A run that retries sends a conversation that depends on the answer before it, and the
    // server draws every answer from one sequence seeded by its --seed (it ignores a request's
    // seed): a batch repeats when its runs go one at a time on a fresh server.
    let mut outputs = Vec::new();
    for (update, prompt, seed, _) in LIVE_BATCHES {
        let Some(model) = e2e::real_model(seed) else { return };
        outputs.push(live_batch(&python, dir.path(), model.url(), prompt, update));
        model.stop();
    }
    let [built, same, edited] = &outputs[..] else { unreachable!() };
    assert!(built.status.success(), "{}", e2e::describe(built));
    let envelope = read_json(&dir.path().join("where.envelope.json"));
    assert_eq!(envelope["runs"], 14, "{envelope}");
    let calls: Vec<u64> =
        envelope["llm_calls"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect();
    assert!(
        calls.contains(&1) && calls.contains(&2),
        "the vague prompt retries sometimes: {calls:?}"
    );

    let stdout = String::from_utf8_lossy(&same.stdout).into_owned();
    assert!(same.status.success(), "the same prompt again: {}", e2e::describe(same));
    assert!(stdout.starts_with("no clear change: "), "{}", e2e::describe(same));

    let stdout = String::from_utf8_lossy(&edited.stdout).into_owned();
    assert_eq!(edited.status.code(), Some(1), "the prompt edit: {}", e2e::describe(edited));
    assert!(stdout.starts_with("changed: "), "{stdout}");
    for field in ["llm_calls: ", "step_count: ", "tool_sequence: "] {
        assert!(
            stdout.lines().any(|line| line.trim_start().starts_with(field)),
            "the verdict does not name `{field}`, which the edit moved (fewer retries): {stdout}"
        );
    }
}

/// `atif live --runs LIVE_RUNS --jobs 1` of `where_agent.py --prompt PROMPT` against the real
/// model at `upstream`, checking `dir/where.envelope.json` (or writing it, with `update`): the
/// commands of docs/live.md's worked example on the real model.
fn live_batch(python: &Path, dir: &Path, upstream: &str, prompt: &str, update: bool) -> Output {
    let agent = e2e::assets_dir().join("python").join("where_agent.py");
    let args = live_args(update, upstream, &[python.as_os_str(), agent.as_os_str()], prompt);
    atif(dir, &args)
}

/// The arguments of `atif live` for one batch of the worked example, `program` being the
/// agent's command line before `--prompt PROMPT`.
fn live_args(update: bool, upstream: &str, program: &[&OsStr], prompt: &str) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["live".into(), "--runs".into(), LIVE_RUNS.into()];
    args.extend(["--jobs", "1", "--golden", "where.envelope.json"].map(OsString::from));
    if update {
        args.push("--update".into());
    }
    args.extend(["--upstream".into(), upstream.into(), "--".into()]);
    args.extend(program.iter().map(OsString::from));
    args.extend(["--prompt".into(), prompt.into()]);
    args
}

/// Item 2: with the model missing, a real-model test is skipped with a notice naming the setup
/// command, and under `ATIF_E2E_REQUIRED=1` it fails instead. This binary runs one of its own
/// tests again against an empty cache, once each way.
#[test]
fn a_missing_model_skips_naming_the_setup_command_and_fails_when_required() {
    let empty = tempfile::tempdir().unwrap();
    let run = |required: bool| {
        let mut test = std::process::Command::new(std::env::current_exe().unwrap());
        test.args([
            "the_rust_http_client_records_the_real_model_and_replays_it_with_the_server_stopped",
            "--exact",
            "--nocapture",
        ])
        .env("ATIF_E2E_CACHE", empty.path());
        match required {
            true => test.env("ATIF_E2E_REQUIRED", "1"),
            false => test.env_remove("ATIF_E2E_REQUIRED"),
        };
        let output = test.output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        (output.status.success(), text)
    };
    let (passed, text) = run(false);
    assert!(passed, "{text}");
    assert!(text.contains("skipped: the real model's venv is not installed"), "{text}");
    assert!(text.contains("run `cargo xtask e2e-setup`"), "{text}");
    let (passed, text) = run(true);
    assert!(!passed, "{text}");
    assert!(text.contains("ATIF_E2E_REQUIRED is set but the real model's venv"), "{text}");
    assert!(text.contains("run `cargo xtask e2e-setup`"), "{text}");
}

#[test]
fn the_real_model_example_in_live_md_shows_the_servers_and_commands_the_live_test_runs() {
    let page =
        std::fs::read_to_string(atif_test_support::workspace_root().join("docs/live.md")).unwrap();
    let program = [OsStr::new("python3"), OsStr::new("where_agent.py")];
    let mut rest = page.as_str();
    for (update, prompt, seed, verdict) in LIVE_BATCHES {
        let server = format!(
            "$ model-venv/bin/python -m llama_cpp.server --model gemma-3-270m-q4_k_m.gguf --chat_format chatml-function-calling --seed {seed} --port 4002 &\n"
        );
        let args = live_args(update, "http://127.0.0.1:4002", &program, prompt);
        let args: Vec<String> = args.iter().map(|arg| arg.to_string_lossy().into_owned()).collect();
        let command = format!("$ atif {}\n", args.join(" "));
        for shown in [&server, &command] {
            let Some(at) = rest.find(shown.as_str()) else {
                panic!("docs/live.md does not show, after the batch before it: {shown}")
            };
            rest = &rest[at + shown.len()..];
        }
        let next = rest.find("\n$ ").unwrap_or(rest.len());
        assert!(
            rest[..next].lines().any(|line| line.starts_with(verdict)),
            "docs/live.md shows no line starting `{verdict}` after {command}"
        );
        assert!(rest.contains("$ kill %1\n"), "docs/live.md does not stop the server of {command}");
    }
}

/// One forced `get_weather` call, streamed or not.
async fn call(client: &dyn LlmClient, stream: bool) -> LlmResponse {
    let weather = ToolDefinition::new(
        "get_weather",
        "The current weather in a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    );
    let request = LlmRequest::new(vec![Message::user("What is the weather in Paris?")])
        .with_tools(vec![weather])
        .with_param("tool_choice", json!({"type": "function", "function": {"name": "get_weather"}}))
        .with_param("max_tokens", json!(32))
        .with_param("temperature", json!(0.8));
    if stream {
        client.complete_stream(request).await.unwrap().collect().await.unwrap()
    } else {
        client.complete(request).await.unwrap()
    }
}

/// The server repeats the function name in every delta of a streamed tool call: the recorded
/// stream shows it, and `parse_stream` reads each call with its name once.
fn check_repeated_names_in_stream(script: &Path) {
    let script = atif_replay::read_script(script).unwrap();
    let mut repeated = false;
    for exchange in &script.exchanges {
        let Some(events) = &exchange.events else { continue };
        let names: Vec<String> = events
            .iter()
            .filter_map(|event| serde_json::from_str::<Value>(&event.data_text()).ok())
            .filter_map(|data| data.pointer("/choices/0/delta/tool_calls/0/function/name").cloned())
            .filter_map(|name| name.as_str().map(str::to_owned))
            .collect();
        repeated |= names.len() > 1;
        let parsed = atif_wire::parse_stream(Protocol::OpenAiChat, events).unwrap();
        for call in &parsed.tool_calls {
            assert!(
                call.name == "get_weather" || call.name == "add",
                "parse_stream read {:?}",
                call.name
            );
        }
        if let Some(first) = names.first() {
            assert_eq!(parsed.tool_calls.first().map(|call| &call.name), Some(first));
        }
    }
    assert!(repeated, "no streamed tool call repeated its name: the quirk this checks is gone");
}

fn agent_argv(python: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut argv: Vec<OsString> =
        vec![python.into(), e2e::assets_dir().join("python").join("weather_agent.py").into()];
    argv.extend(extra.iter().map(OsString::from));
    argv
}

/// `atif record` of `agent` against `upstream` into `dir/agent.script.json`, with its
/// trajectory in `trajectory`; asserts that it succeeded.
fn record(dir: &Path, upstream: &str, trajectory: &Path, agent: &[OsString]) -> Output {
    let mut args: Vec<OsString> = vec!["record".into(), "--script".into()];
    args.push(dir.join("agent.script.json").into());
    args.extend(["--trajectory".into(), trajectory.into(), "--upstream".into(), upstream.into()]);
    args.push("--".into());
    args.extend(agent.iter().cloned());
    let output = atif(dir, &args);
    assert!(output.status.success(), "record failed: {}", e2e::describe(&output));
    output
}

/// `atif replay` of `dir/agent.script.json`; asserts that it was exact.
fn replay(dir: &Path, trajectory: &Path, agent: &[OsString]) -> Output {
    let mut args: Vec<OsString> = vec!["replay".into(), "--script".into()];
    args.push(dir.join("agent.script.json").into());
    args.extend(["--trajectory".into(), trajectory.into(), "--".into()]);
    args.extend(agent.iter().cloned());
    let output = atif(dir, &args);
    assert!(output.status.success(), "replay failed: {}", e2e::describe(&output));
    output
}

fn read_json(path: &PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every root step's tool calls' function names, in order.
fn function_names(trajectory: &Value) -> Vec<String> {
    let steps = trajectory["steps"].as_array().unwrap();
    steps
        .iter()
        .flat_map(|step| step["tool_calls"].as_array().into_iter().flatten())
        .map(|call| call["function_name"].as_str().unwrap().to_owned())
        .collect()
}

/// Runs `atif ARGS` in `dir` with a clean environment: no real keys, no proxies, no CI.
fn atif(dir: &Path, args: &[OsString]) -> Output {
    e2e::atif_output(dir, args)
}
