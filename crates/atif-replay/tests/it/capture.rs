//! `capture`: a run becomes an ATIF trajectory, crashes included.

use std::sync::Arc;

use atif_replay::{
    CaptureOptions, Captured, Error, FakeClient, LlmClient, LlmRequest, LlmResponse, Message,
    ToolCall, ToolDefinition, Usage, capture,
};
use serde_json::{Value, json};

use crate::ask;

fn options() -> CaptureOptions {
    CaptureOptions::new("test-agent", "0.1.0")
}

/// Fails with every finding when `trajectory` is not valid ATIF.
fn assert_valid(trajectory: &Value) {
    let report = atif_schema::validate(trajectory, &atif_schema::ValidateOptions::default());
    let errors: Vec<String> = report.errors().map(|finding| format!("{finding:?}")).collect();
    assert!(errors.is_empty(), "not valid ATIF: {errors:#?}\n{trajectory:#}");
}

/// Every captured trajectory, whatever the agent did, is valid ATIF and fits the typed model
/// field for field.
fn assert_captured_well<T>(captured: &Captured<T>) {
    assert_valid(&captured.trajectory);
    let typed = captured.typed_trajectory().unwrap();
    assert_eq!(typed.to_value(), captured.trajectory, "the typed model holds every field");
}

fn tool_then_answer() -> Arc<dyn LlmClient> {
    Arc::new(FakeClient::from_responses(
        Some("model-x"),
        vec![
            LlmResponse::from_tool_calls(vec![
                ToolCall::new("call_a", "add", json!({"a": 1, "b": 2})),
                ToolCall::new("call_b", "mul", json!({"a": 3, "b": 4})),
            ])
            .with_reasoning("compute both")
            .with_usage(Usage::new(100, 10, 40)),
            LlmResponse::from_text("3 and 12").with_usage(Usage::new(150, 5, 0)),
        ],
    ))
}

#[tokio::test]
async fn each_model_call_becomes_an_agent_step_with_its_observation() {
    let captured = capture(tool_then_answer(), &options(), |handle| async move {
        handle.user_message("add 1+2 and multiply 3*4");
        let client = handle.client();
        let tools = vec![ToolDefinition::new("add", "adds", json!({"type": "object"}))];
        // The request repeats the reported task: it is not captured twice.
        let first = client.complete(ask("add 1+2 and multiply 3*4").with_tools(tools)).await?;
        // Report out of call order: the observation still lists results in call order.
        handle.tool_result("call_b", "12")?;
        handle.tool_result("call_a", "3")?;
        let second = client.complete(LlmRequest::new(vec![Message::assistant(&first)])).await?;
        Ok::<_, Error>(second.text())
    })
    .await;
    assert_captured_well(&captured);
    assert_eq!(captured.result.unwrap(), "3 and 12");
    let trajectory = captured.trajectory;
    assert_eq!(trajectory["schema_version"], "ATIF-v1.8");
    assert_eq!(trajectory["agent"]["name"], "test-agent");
    assert_eq!(trajectory["agent"]["model_name"], "model-x");
    assert_eq!(trajectory["agent"]["tool_definitions"][0]["function"]["name"], "add");
    let steps = trajectory["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0]["source"], "user");
    let agent = &steps[1];
    assert_eq!(agent["source"], "agent");
    assert_eq!(agent["step_id"], 2);
    assert_eq!(agent["model_name"], "model-x");
    assert_eq!(agent["reasoning_content"], "compute both");
    assert_eq!(agent["llm_call_count"], 1);
    assert_eq!(
        agent["metrics"],
        json!({"prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 40})
    );
    assert_eq!(
        agent["tool_calls"][1],
        json!({"tool_call_id": "call_b", "function_name": "mul", "arguments": {"a": 3, "b": 4}})
    );
    assert_eq!(
        agent["observation"],
        json!({"results": [{"source_call_id": "call_a", "content": "3"}, {"source_call_id": "call_b", "content": "12"}]})
    );
    assert_eq!(steps[2]["message"], "3 and 12");
    assert_eq!(
        trajectory["final_metrics"],
        json!({"total_prompt_tokens": 250, "total_completion_tokens": 15, "total_cached_tokens": 40, "total_steps": 3})
    );
    assert!(trajectory.get("extra").is_none(), "a run that succeeded is not marked");
}

#[tokio::test]
async fn prompts_and_results_the_agent_sent_are_captured_without_being_reported() {
    let captured = capture(tool_then_answer(), &options(), |handle| async move {
        let client = handle.client();
        let mut messages = vec![Message::system("Be exact."), Message::user("add and multiply")];
        let request = LlmRequest::new(messages.clone())
            .with_param("temperature", json!(0))
            .with_param("tool_choice", json!("auto"));
        let first = client.complete(request).await?;
        messages.push(Message::assistant(&first));
        messages.push(Message::tool_result("call_a", "3"));
        messages.push(Message::tool_result("call_b", "12"));
        messages.push(Message::user("Now both together."));
        client.complete(LlmRequest::new(messages)).await?;
        Ok::<_, Error>(())
    })
    .await;
    assert_captured_well(&captured);
    captured.result.unwrap();
    let steps = captured.trajectory["steps"].as_array().unwrap();
    let summary: Vec<(&str, &str)> = steps
        .iter()
        .map(|step| (step["source"].as_str().unwrap(), step["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summary,
        [
            ("system", "Be exact."),
            ("user", "add and multiply"),
            ("agent", ""),
            ("user", "Now both together."),
            ("agent", "3 and 12"),
        ]
    );
    assert_eq!(
        steps[2]["extra"],
        json!({"request_params": {"temperature": 0, "tool_choice": "auto"}})
    );
    assert_eq!(
        steps[2]["observation"],
        json!({"results": [{"source_call_id": "call_a", "content": "3"}, {"source_call_id": "call_b", "content": "12"}]}),
        "tool results sent back are the observation"
    );
    assert!(steps[4].get("extra").is_none(), "a request without parameters");
}

#[tokio::test]
async fn a_panicking_agent_still_yields_its_trajectory_marked_crashed() {
    let captured = capture(tool_then_answer(), &options(), |handle| async move {
        handle.client().complete(ask("go")).await?;
        if handle.tool_result("call_a", "3").is_ok() {
            panic!("tool exploded");
        }
        Ok::<(), Error>(())
    })
    .await;
    assert_captured_well(&captured);
    let err = captured.result.unwrap_err();
    assert!(
        matches!(&err, Error::AgentPanicked { message } if message == "tool exploded"),
        "{err:?}"
    );
    assert_eq!(
        captured.trajectory["extra"],
        json!({"crashed": true, "error": "agent panicked: tool exploded"})
    );
    assert_eq!(
        captured.trajectory["steps"].as_array().unwrap().len(),
        2,
        "steps before the panic (the request's user message and the reply) are kept"
    );
}

#[tokio::test]
async fn a_failing_agent_is_rethrown_alongside_its_trajectory() {
    let model: Arc<dyn LlmClient> = Arc::new(FakeClient::from_responses(Some("m"), vec![]));
    let captured = capture(model, &options(), |handle| async move {
        handle.client().complete(ask("go")).await?;
        Ok::<(), Error>(())
    })
    .await;
    assert_captured_well(&captured);
    let (trajectory, result) = captured.into_parts();
    let err = result.unwrap_err();
    assert_eq!(err.to_string(), "agent failed");
    assert!(
        crate::chain(&err).starts_with(
            "agent failed: agent requested reply #1 but the recorded script has only 0."
        ),
        "{}",
        crate::chain(&err)
    );
    let Error::AgentFailed { source, .. } = err else { panic!("expected AgentFailed") };
    assert!(matches!(source.downcast_ref::<Error>(), Some(Error::ScriptExhausted { .. })));
    assert_eq!(trajectory["extra"]["crashed"], true);
    // The trajectory keeps the cause, which the error itself leaves to `source()`.
    let recorded_error = trajectory["extra"]["error"].as_str().unwrap();
    assert!(
        recorded_error.starts_with(
            "agent failed: agent requested reply #1 but the recorded script has only 0."
        ),
        "{recorded_error}"
    );
    let steps = trajectory["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "a run with no steps gets one explaining why");
    assert_eq!(steps[0]["source"], "system");
    let message = steps[0]["message"].as_str().unwrap();
    assert_eq!(message, format!("the agent crashed before its first step: {recorded_error}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagents_become_embedded_trajectories_with_resolving_refs() {
    let model: Arc<dyn LlmClient> = Arc::new(FakeClient::from_fn(Some("m"), |_, request| {
        let last = request.last_message().map(|m| m.content.clone()).unwrap_or_default();
        if last == "plan" {
            return Ok(LlmResponse::from_tool_calls(vec![
                ToolCall::new("c1", "delegate", json!({"item": "x"})),
                ToolCall::new("c2", "delegate", json!({"item": "y"})),
            ]));
        }
        Ok(LlmResponse::from_text(format!("done {last}")))
    }));
    let captured = capture(model, &options(), |handle| async move {
        handle.client().complete(ask("plan")).await?;
        let mut tasks = Vec::new();
        for (call_id, item) in [("c1", "x"), ("c2", "y")] {
            let child = handle.subagent("worker", Some(call_id))?;
            tasks.push(tokio::spawn(async move {
                child.user_message(item);
                child.client().complete(ask(item)).await.map(|reply| reply.text())
            }));
        }
        for (task, call_id) in tasks.into_iter().zip(["c1", "c2"]) {
            let text = task.await.map_err(Error::provider)??;
            handle.tool_result(call_id, text)?;
        }
        let unlinked = handle.subagent("helper", None)?;
        unlinked.user_message("side job");
        Ok::<(), Error>(())
    })
    .await;
    assert_captured_well(&captured);
    captured.result.unwrap();
    let trajectory = captured.trajectory;
    let subagents = trajectory["subagent_trajectories"].as_array().unwrap();
    assert_eq!(subagents.len(), 3);
    let ids: Vec<&str> = subagents.iter().map(|s| s["trajectory_id"].as_str().unwrap()).collect();
    assert_eq!(trajectory["steps"][0]["message"], "plan", "the request's user message");
    let results = trajectory["steps"][1]["observation"]["results"].as_array().unwrap();
    assert_eq!(results[0]["source_call_id"], "c1");
    assert_eq!(results[0]["content"], "done x");
    assert_eq!(results[0]["subagent_trajectory_ref"][0]["trajectory_id"], ids[0]);
    assert_eq!(results[1]["subagent_trajectory_ref"][0]["trajectory_id"], ids[1]);
    assert_eq!(subagents[0]["agent"]["name"], "worker");
    assert_eq!(subagents[0]["steps"][1]["message"], "done x");
    assert_eq!(subagents[0]["session_id"], trajectory["session_id"], "one run, one session");
    let delegation = &trajectory["steps"][2];
    assert_eq!(delegation["source"], "system");
    assert_eq!(
        delegation["observation"]["results"][0]["subagent_trajectory_ref"][0]["trajectory_id"],
        ids[2]
    );
}

#[tokio::test]
async fn a_tool_result_for_an_unknown_call_is_an_error() {
    let captured =
        capture(
            tool_then_answer(),
            &options(),
            |handle| async move { handle.tool_result("nope", "x") },
        )
        .await;
    assert_captured_well(&captured);
    let err = captured.result.unwrap_err();
    assert_eq!(
        crate::chain(&err),
        "agent failed: no step of trajectory test-agent made tool call `nope`"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_call_is_captured_like_any_other() {
    let captured = capture(tool_then_answer(), &options(), |handle| async move {
        let stream = handle.client().complete_stream(ask("go")).await?;
        let chunks = stream.collect_chunks().await?;
        Ok::<usize, Error>(chunks.len())
    })
    .await;
    assert_captured_well(&captured);
    assert_eq!(captured.result.unwrap(), 4, "reasoning, two tool calls and the finish chunk");
    let step = &captured.trajectory["steps"][1];
    assert_eq!(step["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(step["metrics"]["prompt_tokens"], 100);
}

#[tokio::test]
async fn capturing_writes_nothing_into_the_working_directory() {
    let cwd = std::env::current_dir().unwrap();
    let list = || -> Vec<std::path::PathBuf> {
        let mut names: Vec<_> =
            std::fs::read_dir(&cwd).unwrap().map(|e| e.unwrap().path()).collect();
        names.sort();
        names
    };
    let before = list();
    let captured = capture(tool_then_answer(), &options(), |handle| async move {
        handle.client().complete(ask("go")).await?;
        Ok::<(), Error>(())
    })
    .await;
    assert_captured_well(&captured);
    captured.result.unwrap();
    assert_eq!(list(), before);
}

#[tokio::test]
async fn the_capture_model_name_can_be_overridden() {
    let mut options = options();
    options.set_model_name(Some("pinned".to_owned()));
    let captured = capture(tool_then_answer(), &options, |handle| async move {
        handle.client().complete(ask("go")).await?;
        Ok::<(), Error>(())
    })
    .await;
    assert_captured_well(&captured);
    let trajectory: Value = captured.trajectory;
    assert_eq!(trajectory["agent"]["model_name"], "pinned");
    assert_eq!(trajectory["steps"][1]["model_name"], "pinned");
}

#[tokio::test]
async fn a_subagent_for_an_unknown_call_is_an_error_and_leaves_no_orphan() {
    let captured = capture(tool_then_answer(), &options(), |handle| async move {
        handle.subagent("worker", Some("missing")).map(|_| ())
    })
    .await;
    assert_captured_well(&captured);
    let err = captured.result.unwrap_err();
    assert_eq!(
        crate::chain(&err),
        "agent failed: no step of trajectory test-agent made tool call `missing`"
    );
    assert!(captured.trajectory.get("subagent_trajectories").is_none());
}

#[tokio::test]
async fn a_client_without_a_model_name_takes_each_requests_model_and_a_replay_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let agent = |handle: atif_replay::CaptureHandle| async move {
        let mut request = ask("go");
        request.model = Some("gpt-4o-mini".to_owned());
        handle.client().complete(request).await?;
        Ok::<(), Error>(())
    };
    let live = FakeClient::from_responses(None, vec![LlmResponse::from_text("ok")]);
    let recorder = Arc::new(atif_replay::RecordingClient::new(live));
    let recorded = capture(recorder.clone(), &options(), agent).await;
    assert_captured_well(&recorded);
    recorded.result.unwrap();
    recorder.save(&path).unwrap();
    let replay = Arc::new(atif_replay::ReplayClient::from_file(&path).unwrap());
    let replayed = capture(replay.clone(), &options(), agent).await;
    replayed.result.unwrap();
    replay.finish().unwrap();
    for trajectory in [&recorded.trajectory, &replayed.trajectory] {
        assert_eq!(trajectory["agent"]["model_name"], "gpt-4o-mini");
        assert_eq!(trajectory["steps"][1]["model_name"], "gpt-4o-mini");
    }
}

#[tokio::test]
async fn a_capture_dropped_by_a_timeout_stops_its_agent() {
    let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = Arc::clone(&finished);
    let options = options();
    let run = capture(tool_then_answer(), &options, |_handle| async move {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok::<(), Error>(())
    });
    let timed_out = tokio::time::timeout(std::time::Duration::from_millis(20), run).await;
    assert!(timed_out.is_err(), "the agent sleeps longer than the timeout");
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    assert!(!finished.load(std::sync::atomic::Ordering::SeqCst), "the agent ran on detached");
}

#[tokio::test]
async fn token_totals_that_overflow_saturate_instead_of_panicking() {
    let model = Arc::new(FakeClient::from_responses(
        Some("model-x"),
        vec![
            LlmResponse::from_text("one").with_usage(Usage::new(u64::MAX, u64::MAX, u64::MAX)),
            LlmResponse::from_text("two").with_usage(Usage::new(1, 2, 3)),
        ],
    ));
    let captured = capture(model, &options(), |handle| async move {
        let client = handle.client();
        client.complete(ask("first")).await?;
        client.complete(ask("second")).await?;
        Ok::<_, Error>(())
    })
    .await;
    assert!(captured.result.is_ok(), "{:?}", captured.result);
    assert_eq!(
        captured.trajectory["final_metrics"],
        json!({
            // ATIF's integers are 64-bit signed: counts beyond stop at the largest.
            "total_prompt_tokens": i64::MAX,
            "total_completion_tokens": i64::MAX,
            "total_cached_tokens": i64::MAX,
            "total_steps": 4
        })
    );
}
