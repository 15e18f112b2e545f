//! The reference agents recorded once and replayed strictly: byte-identical goldens, loud
//! failures when the agent makes more or fewer model calls, and no leak of subagent order.
//!
//! The scripts under `tests/scripts/` were recorded from the deterministic fake models in
//! `tests/src/lib.rs` through `atif_replay::ScriptClient`, as any Rust test records its own:
//! `ATIF_RECORD=1 cargo test -p tests --test reference_agents` re-records them (never on CI). The goldens under `tests/golden/` follow the atif-golden protocol:
//! `ATIF_GOLDEN=update cargo test -p tests --test reference_agents` (or `cargo xtask golden-update reference_agents`) rewrites them.
#![allow(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use atif_golden::assert_golden;
use atif_normalize::{NormalizeOptions, normalize, shape, to_canonical_string};
use atif_replay::{
    CaptureOptions, Error, FakeClient, LlmClient, RecordingClient, ReplayClient, ScriptClient,
    capture, read_script, script_options,
};
use serde_json::Value;
use tests::{
    ToolLoopOptions, ToolLoopOutcome, calculator_model, classifier_model, fan_out_agent,
    tool_loop_agent,
};

const TASK: &str = "What is (2 + 3) * 4?";
const ITEMS: [&str; 5] = ["42", "is it raining?", "the sky is blue", "7", "why not?"];

fn tool_loop_options() -> CaptureOptions {
    CaptureOptions::new("calculator-loop", "1.0.0")
}

fn fan_out_options() -> CaptureOptions {
    CaptureOptions::new("fan-out-classifier", "1.0.0")
}

/// Runs the tool loop against `client` and returns the trajectory, checked to be valid ATIF
/// whatever happened, and the outcome.
async fn run_tool_loop(
    client: Arc<dyn LlmClient>,
    options: ToolLoopOptions,
) -> (Value, atif_replay::Result<ToolLoopOutcome>) {
    let (trajectory, result) = capture(client, &tool_loop_options(), move |handle| {
        tool_loop_agent(handle, TASK.to_owned(), options)
    })
    .await
    .into_parts();
    assert_valid(&trajectory);
    (trajectory, result)
}

/// Runs the fan-out agent against `client` and returns the trajectory.
async fn run_fan_out(client: Arc<dyn LlmClient>) -> Value {
    let items = ITEMS.iter().map(|item| (*item).to_owned()).collect();
    let (trajectory, result) =
        capture(client, &fan_out_options(), move |handle| fan_out_agent(handle, items))
            .await
            .into_parts();
    assert_valid(&trajectory);
    let labels = result.unwrap();
    assert_eq!(labels.len(), ITEMS.len());
    trajectory
}

fn canonical(trajectory: &Value) -> String {
    assert_valid(trajectory);
    to_canonical_string(&normalize(trajectory, &NormalizeOptions::default()).unwrap())
}

fn assert_valid(trajectory: &Value) {
    let report = atif_schema::validate(trajectory, &atif_schema::ValidateOptions::default());
    let errors: Vec<String> = report.errors().map(|finding| format!("{finding:?}")).collect();
    assert!(errors.is_empty(), "captured trajectory is not valid ATIF: {errors:#?}");
}

fn script_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts").join(format!("{name}.script.json"))
}

/// The committed script `name`, recorded through the fake model first when the record mode
/// asks for it (`ATIF_RECORD=1`, or a missing script locally; never on CI): the rule every
/// Rust test's `ScriptClient` follows, with the fake model as the live client.
async fn committed_script(name: &str, record: impl AsyncRecord) -> PathBuf {
    let mut options = script_options!();
    options.set_dir("scripts");
    let model = record.model();
    let client = ScriptClient::open(&format!("{name}.script"), &options, || Ok::<_, Error>(model));
    let client = Arc::new(client.unwrap_or_else(|err| panic!("{err}")));
    if client.is_recording() {
        record.drive(client.clone()).await;
        client.finish().unwrap();
    }
    script_path(name)
}

/// A reference agent's run with a fake model standing in for the live one.
trait AsyncRecord {
    /// The fake model.
    fn model(&self) -> FakeClient;

    /// Runs the agent against `client`.
    async fn drive(&self, client: Arc<dyn LlmClient>);

    /// Records a run against the fake model into the script at `path`.
    async fn record(self, path: &Path)
    where
        Self: Sized,
    {
        let recorder = Arc::new(RecordingClient::new(self.model()));
        self.drive(recorder.clone()).await;
        recorder.save(path).unwrap();
    }
}

struct ToolLoopRecording(usize);

impl AsyncRecord for ToolLoopRecording {
    fn model(&self) -> FakeClient {
        calculator_model(self.0)
    }

    async fn drive(&self, client: Arc<dyn LlmClient>) {
        let (_, result) = run_tool_loop(client, ToolLoopOptions::default()).await;
        result.unwrap();
    }
}

struct FanOutRecording;

impl AsyncRecord for FanOutRecording {
    fn model(&self) -> FakeClient {
        classifier_model()
    }

    async fn drive(&self, client: Arc<dyn LlmClient>) {
        run_fan_out(client).await;
    }
}

async fn replay_tool_loop(script: &Path, options: ToolLoopOptions) -> (Value, Arc<ReplayClient>) {
    let replay = Arc::new(ReplayClient::from_file(script).unwrap());
    let (trajectory, result) = run_tool_loop(replay.clone(), options).await;
    result.unwrap();
    (trajectory, replay)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_recorded_from_a_fake_client_replays_to_a_byte_identical_trajectory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loop.script.json");
    let live = Arc::new(calculator_model(3));
    let recorder = Arc::new(RecordingClient::new(live.clone()));
    let (recorded, result) = run_tool_loop(recorder.clone(), ToolLoopOptions::default()).await;
    assert_eq!(result.unwrap(), ToolLoopOutcome { answer: Some("20".to_owned()), model_calls: 3 });
    recorder.save(&path).unwrap();

    let (replayed, replay) = replay_tool_loop(&path, ToolLoopOptions::default()).await;
    replay.finish().unwrap();
    assert_ne!(recorded, replayed, "raw runs differ (timestamps, session ids)");
    assert_eq!(canonical(&recorded), canonical(&replayed));
    assert_eq!(
        replayed["agent"]["model_name"], "calc-model-1",
        "the replay reports the recorded model"
    );
    let agent_steps: Vec<&Value> = replayed["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|step| step["source"] == "agent")
        .collect();
    assert_eq!(agent_steps.len(), 3);
    for step in agent_steps {
        assert_eq!(
            step["model_name"], "calc-model-1",
            "every replayed step names the recorded model"
        );
    }

    // What the agent sent is a contract too: the second request carried the calculator result.
    let seen = live.seen();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[1].messages.last().unwrap().content, "5");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_replays_of_the_committed_script_are_identical() {
    let script = committed_script("tool_loop_3_turns", ToolLoopRecording(3)).await;
    let mut texts = BTreeSet::new();
    let mut last = Value::Null;
    for _ in 0..20 {
        let (trajectory, replay) = replay_tool_loop(&script, ToolLoopOptions::default()).await;
        replay.finish().unwrap();
        texts.insert(canonical(&trajectory));
        last = trajectory;
    }
    assert_eq!(texts.len(), 1, "twenty replays produced {} different trajectories", texts.len());
    assert_golden!(name: "tool_loop_3_turns", last);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_more_model_call_than_recorded_fails_with_the_exhaustion_message() {
    let script = committed_script("tool_loop_1_turn", ToolLoopRecording(1)).await;
    let replay = Arc::new(ReplayClient::from_file(&script).unwrap());
    let options = ToolLoopOptions { confirm_result: true, ..ToolLoopOptions::default() };
    let (trajectory, result) = run_tool_loop(replay.clone(), options).await;
    let err = result.unwrap_err();
    let Error::AgentFailed { source, .. } = &err else {
        panic!("expected AgentFailed, got {err:?}")
    };
    let cause = source.downcast_ref::<Error>().unwrap();
    assert!(matches!(cause, Error::ScriptExhausted { requested: 2, recorded: 1, .. }), "{cause:?}");
    assert_eq!(
        cause.to_string().lines().next().unwrap(),
        "agent requested reply #2 but the recorded script has only 1. The agent is making more \
         model calls than when this script was recorded — that is the regression. If it is \
         intended, re-record the script."
    );
    assert!(
        cause.to_string().contains("(user): \"Are you sure? Confirm the result.\""),
        "the message shows what the extra request carried: {cause}"
    );
    assert_pasted_in_docs(&cause.to_string());
    // The run still yields its trajectory, marked as crashed.
    assert_eq!(trajectory["extra"]["crashed"], true);
    assert_eq!(shape(&normalize(&trajectory, &NormalizeOptions::default()).unwrap()).llm_calls, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shorter_run_than_recorded_fails_finish() {
    let script = committed_script("tool_loop_3_turns", ToolLoopRecording(3)).await;
    let options = ToolLoopOptions { max_iterations: 2, ..ToolLoopOptions::default() };
    let (_, replay) = replay_tool_loop(&script, options).await;
    let err = replay.finish().unwrap_err();
    assert!(matches!(err, Error::UnusedReplies { unused: 1, recorded: 3, first_unused: 3, .. }));
    assert!(
        err.to_string().starts_with(&format!(
            "1 of the 3 recorded replies in {} were never requested (#3 is the first).",
            script.display()
        )),
        "{err}"
    );
    let relative = format!("{}/", workspace_root().display());
    assert_pasted_in_docs(&err.to_string().replace(&relative, ""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fan_out_completion_order_never_leaks_into_the_golden() {
    let script = committed_script("fan_out_5_items", FanOutRecording).await;

    let mut raw_orders = BTreeSet::new();
    let mut texts = BTreeSet::new();
    let mut last = Value::Null;
    for _ in 0..12 {
        let replay = Arc::new(ReplayClient::from_file(&script).unwrap());
        let trajectory = run_fan_out(replay.clone()).await;
        replay.finish().unwrap();
        raw_orders.insert(subagent_items(&trajectory));
        texts.insert(canonical(&trajectory));
        last = trajectory;
    }
    assert!(
        raw_orders.len() > 1,
        "the subagents should finish in varying order, or this test proves nothing: {raw_orders:?}"
    );
    assert_eq!(texts.len(), 1, "the normalised trajectories differ between replays");

    // A fresh run against the fake live model (new provider call ids) normalises the same way.
    let live = run_fan_out(Arc::new(classifier_model())).await;
    assert_eq!(canonical(&live), texts.into_iter().next().unwrap());
    assert_golden!(name: "fan_out_5_items", last);
}

/// The items of the embedded subagents, in the order they appear in the raw trajectory.
fn subagent_items(trajectory: &Value) -> Vec<String> {
    trajectory["subagent_trajectories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|subagent| {
            // The item is in the subagent's task, its first user step (its system prompt,
            // captured from its request, comes first).
            let steps = subagent["steps"].as_array().unwrap();
            let task = steps.iter().find(|step| step["source"] == "user").unwrap();
            task["message"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_and_three_turn_runs_differ_in_the_expected_shape_fields() {
    let one = committed_script("tool_loop_1_turn", ToolLoopRecording(1)).await;
    let three = committed_script("tool_loop_3_turns", ToolLoopRecording(3)).await;
    let (one_turn, replay) = replay_tool_loop(&one, ToolLoopOptions::default()).await;
    replay.finish().unwrap();
    let (three_turns, replay) = replay_tool_loop(&three, ToolLoopOptions::default()).await;
    replay.finish().unwrap();

    let options = NormalizeOptions::default();
    let one_shape = shape(&normalize(&one_turn, &options).unwrap());
    let three_shape = shape(&normalize(&three_turns, &options).unwrap());
    let changed: Vec<String> = one_shape
        .fields()
        .into_iter()
        .zip(three_shape.fields())
        .filter(|(a, b)| a.1 != b.1)
        .map(|(a, _)| a.0)
        .collect();
    assert_eq!(
        changed,
        [
            "step_count",
            "sources",
            "llm_calls",
            "functions",
            "prompt_tokens",
            "completion_tokens",
            "content_hash"
        ]
    );
    assert_eq!((one_shape.step_count, three_shape.step_count), (3, 5));
    assert_eq!((one_shape.llm_calls, three_shape.llm_calls), (1, 3));
    assert_eq!(one_shape.functions, ["return_result"]);
    assert_eq!(three_shape.functions, ["calculator", "calculator", "return_result"]);
    assert_eq!(one_shape.models, ["calc-model-1"]);
    assert_golden!(name: "tool_loop_1_turn", one_turn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_committed_tool_loop_scripts_are_what_the_fake_model_records() {
    for (name, turns) in [("tool_loop_1_turn", 1), ("tool_loop_3_turns", 3)] {
        let path = committed_script(name, ToolLoopRecording(turns)).await;
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("fresh.json");
        ToolLoopRecording(turns).record(&fresh).await;
        assert_eq!(
            read_script(&fresh).unwrap(),
            read_script(&path).unwrap(),
            "{name} is stale; re-record with ATIF_RECORD=1 cargo test -p tests --test reference_agents"
        );
    }
}

#[tokio::test]
async fn a_fake_client_alone_drives_the_loop_without_any_file() {
    let model: Arc<dyn LlmClient> = Arc::new(FakeClient::from_responses(
        Some("m"),
        vec![atif_replay::LlmResponse::from_text("I will not use tools.")],
    ));
    let (_, result) = run_tool_loop(model, ToolLoopOptions::default()).await;
    let outcome = result.unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("I will not use tools."));
    assert_eq!(outcome.model_calls, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_prompt_fails_at_the_first_call_showing_what_changed() {
    // Pretend the script was recorded when the system prompt was shorter: rewrite the recorded
    // requests (and their fingerprints) of a copy of the committed script.
    let committed = committed_script("tool_loop_3_turns", ToolLoopRecording(3)).await;
    let mut script = read_script(&committed).unwrap();
    for call in &mut script.calls {
        let request = call.request.as_mut().unwrap();
        request.messages[0].content = "You solve arithmetic tasks.".to_owned();
        call.request_sha256 = Some(atif_replay::request_fingerprint(request, &[]).unwrap());
    }
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.script.json");
    atif_replay::write_script(&old, &script, &[]).unwrap();

    let replay = Arc::new(ReplayClient::from_file(&old).unwrap());
    let (trajectory, result) = run_tool_loop(replay, ToolLoopOptions::default()).await;
    let err = result.unwrap_err();
    let Error::AgentFailed { source, .. } = &err else {
        panic!("expected AgentFailed, got {err:?}")
    };
    let cause = source.downcast_ref::<Error>().unwrap();
    assert!(matches!(cause, Error::RequestDrift { call: 1, reply: 1, .. }), "{cause:?}");
    let message = cause.to_string();
    let expected_change = "what changed (recorded -> now):\n  /messages/0/content: \
        \"… solve arithmetic tasks.\" -> \"… solve arithmetic tasks. Use the calculator tool for every \
        computation, then call return_result with the final value.\"";
    let first_line =
        "request drift at call #1: the request differs from the one recorded for reply #1.";
    assert!(message.starts_with(&format!("{first_line}\n{expected_change}\n")), "{message}");
    assert!(message.lines().nth(3).unwrap().starts_with("request fingerprints (SHA-256): "));
    assert_pasted_in_docs(&message);
    assert_eq!(trajectory["extra"]["crashed"], true);
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// Fails unless every line of `message` is a line of `docs/replay.md` (indentation aside), so
/// the failure messages the walk-through pastes stay real and current.
fn assert_pasted_in_docs(message: &str) {
    let docs = std::fs::read_to_string(workspace_root().join("docs/replay.md")).unwrap();
    let doc_lines: BTreeSet<&str> = docs.lines().map(str::trim).collect();
    for line in message.lines() {
        assert!(
            doc_lines.contains(line.trim()),
            "docs/replay.md no longer shows this line of the real message; paste the new one:\n{line}\n\nwhole message:\n{message}"
        );
    }
}
