//! `ReplayClient`: in-order replay, strict in both directions, drift detection.

use std::sync::Arc;
use std::time::Duration;

use atif_replay::{
    CaptureOptions, DriftPolicy, Error, FakeClient, LlmClient, LlmRequest, LlmResponse, Message,
    RecordOptions, RecordingClient, ReplayClient, ReplayOptions, capture,
};

use crate::{ask, calls, echo_model, record_to};

fn replay_with(path: &std::path::Path, check: DriftPolicy) -> ReplayClient {
    let mut options = ReplayOptions::default();
    options.set_drift(check);
    ReplayClient::from_file_with(path, options).unwrap()
}

#[tokio::test]
async fn replay_serves_recorded_replies_in_order_under_the_recorded_model_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("a"), ask("b")]).await;
    let replay = ReplayClient::from_file(&path).unwrap();
    assert_eq!(replay.model(), Some("echo-1"), "a replay never calls itself a fake model");
    assert_eq!(replay.complete(ask("a")).await.unwrap().text(), "reply to a");
    assert_eq!(replay.complete(ask("b")).await.unwrap().text(), "reply to b");
    assert_eq!(replay.calls(), 2);
    replay.finish().unwrap();
}

#[tokio::test]
async fn one_call_too_many_names_the_regression_and_what_the_request_carried() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let model = FakeClient::from_responses(
        Some("m"),
        vec![calls("call_1", "add"), LlmResponse::from_text("a"), LlmResponse::from_text("b")],
    );
    let requests = [ask("1"), ask("2"), ask("3")];
    record_to(&path, model, &requests).await;
    let replay = ReplayClient::from_file(&path).unwrap();
    for request in requests {
        replay.complete(request).await.unwrap();
    }
    let extra = LlmRequest::new(vec![
        Message::user("add 2 and 2"),
        Message::assistant(&calls("call_1", "add")),
        Message::tool_result("call_1", "4"),
    ]);
    let err = replay.complete(extra).await.unwrap_err();
    assert!(matches!(err, Error::ScriptExhausted { requested: 4, recorded: 3, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "agent requested reply #4 but the recorded script has only 3. The agent is making more \
         model calls than when this script was recorded — that is the regression. If it is \
         intended, re-record the script.\nThe extra request carried as its last message (tool): \
         \"4\"; tool results: call_1 = \"4\""
    );
}

#[tokio::test]
async fn replies_never_requested_make_finish_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("a"), ask("b"), ask("c")]).await;
    let replay = ReplayClient::from_file(&path).unwrap();
    replay.complete(ask("a")).await.unwrap();
    let err = replay.finish().unwrap_err();
    assert!(matches!(err, Error::UnusedReplies { unused: 2, recorded: 3, first_unused: 2, .. }));
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "2 of the 3 recorded replies in {} were never requested (#2 is the first).",
            path.display()
        )),
        "{message}"
    );
    assert!(message.contains("fewer model calls"), "{message}");
}

#[tokio::test]
async fn strict_replay_names_the_drifted_call_and_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("a"), ask("b")]).await;
    let replay = ReplayClient::from_file(&path).unwrap();
    replay.complete(ask("a")).await.unwrap();
    let changed = ask("B, rephrased").with_param("temperature", serde_json::json!(0.5));
    let err = replay.complete(changed).await.unwrap_err();
    assert!(matches!(err, Error::RequestDrift { call: 2, reply: 2, .. }), "{err:?}");
    let message = err.to_string();
    let first_line = message.lines().next().unwrap();
    assert_eq!(
        first_line,
        "request drift at call #2: the request differs from the one recorded for reply #2."
    );
    let fingerprints = message.lines().find(|line| line.starts_with("request fingerprints"));
    let hex = |word: &&str| word.len() == 64 && word.chars().all(|c| c.is_ascii_hexdigit());
    assert_eq!(
        fingerprints.map(|line| line.split([' ', ',']).filter(hex).count()),
        Some(2),
        "{message}"
    );
    assert!(!message.contains("to re-record"), "a bare replay knows no command: {message}");
    assert!(message.contains("/messages/0/content: \"b\" -> \"B, rephrased\""), "{message}");
    assert!(message.contains("/params: added {\"temperature\":0.5}"), "{message}");
}

#[tokio::test]
async fn after_a_drift_finish_blames_the_drift_not_fewer_model_calls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("a"), ask("b"), ask("c")]).await;
    let replay = ReplayClient::from_file(&path).unwrap();
    replay.complete(ask("a")).await.unwrap();
    replay.complete(ask("changed")).await.unwrap_err();
    let err = replay.finish().unwrap_err();
    assert!(matches!(err, Error::UnusedReplies { stopped_at: Some(2), unused: 1, .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("The replay already failed at call #2 (request drift)"), "{message}");
    assert!(!message.contains("fewer model calls"), "{message}");
}

#[tokio::test]
async fn after_an_agent_crash_finish_blames_the_crash_not_fewer_model_calls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("a"), ask("b"), ask("c")]).await;
    let replay = Arc::new(ReplayClient::from_file(&path).unwrap());
    let options = CaptureOptions::new("crashing-agent", "1.0.0");
    let captured = capture(replay.clone(), &options, |handle| async move {
        handle.client().complete(ask("a")).await?;
        Err::<(), Error>(Error::AgentPanicked { message: "tool `grep` exited 2".to_owned() })
    })
    .await;
    assert!(matches!(captured.result, Err(Error::AgentFailed { .. })));
    let err = replay.finish().unwrap_err();
    assert!(
        matches!(err, Error::UnusedReplies { agent_failed_after: Some(1), unused: 2, .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains(
            "The agent's run failed after 1 model call (see the error its run returned), so it \
             stopped asking: that failure is the one to fix"
        ),
        "{message}"
    );
    assert!(!message.contains("fewer model calls"), "{message}");
    assert!(!message.contains("regression"), "{message}");
}

#[tokio::test]
async fn a_crash_behind_a_recording_client_reaches_the_replay_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("a"), ask("b")]).await;
    let replay = Arc::new(ReplayClient::from_file(&path).unwrap());
    // A wrapper that forwards: a replay recorded again, as a test might do to compare.
    let wrapped: Arc<dyn LlmClient> = Arc::new(RecordingClient::new(replay.clone()));
    let captured = capture(wrapped, &CaptureOptions::new("a", "1"), |_handle| async move {
        Err::<(), Error>(Error::provider("the agent gave up before asking"))
    })
    .await;
    assert!(captured.result.is_err());
    let err = replay.finish().unwrap_err();
    assert!(err.to_string().contains("failed after 0 model calls"), "{err}");
}

#[test]
fn debug_prints_the_message_and_its_causes_for_tests_that_return_errors() {
    let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
    let err = Error::Io { action: "read", path: "s.json".into(), source: io };
    assert_eq!(format!("{err:?}"), "cannot read s.json\n\ncaused by:\n    no such file");
    let agent: Box<dyn std::error::Error + Send + Sync> = "tool `grep` exited 2".into();
    let failed = Error::AgentFailed { message: agent.to_string(), source: agent };
    assert_eq!(format!("{failed:?}"), "agent failed\n\ncaused by:\n    tool `grep` exited 2");
}

#[tokio::test]
async fn drift_without_stored_requests_still_fails_and_says_why_it_cannot_show_more() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut options = RecordOptions::default();
    options.set_store_requests(false);
    let recorder = RecordingClient::with_options(echo_model(), options).unwrap();
    recorder.complete(ask("a")).await.unwrap();
    recorder.save(&path).unwrap();
    let replay = ReplayClient::from_file(&path).unwrap();
    let err = replay.complete(ask("z")).await.unwrap_err();
    assert!(err.to_string().contains("the script holds only request fingerprints"), "{err}");
}

#[tokio::test]
async fn warn_mode_serves_the_reply_and_keeps_the_drift() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("a")]).await;
    let replay = replay_with(&path, DriftPolicy::Warn);
    assert_eq!(replay.complete(ask("changed")).await.unwrap().text(), "reply to a");
    let drifts = replay.drifts();
    assert_eq!(drifts.len(), 1);
    assert_eq!((drifts[0].call, drifts[0].reply), (1, 1));
    assert!(drifts[0].changes.contains("\"a\" -> \"changed\""), "{}", drifts[0].changes);
    replay.finish().unwrap();
}

#[tokio::test]
async fn off_mode_serves_in_order_without_comparing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("a")]).await;
    let replay = replay_with(&path, DriftPolicy::Off);
    assert_eq!(replay.complete(ask("anything")).await.unwrap().text(), "reply to a");
    assert!(replay.drifts().is_empty());
}

#[tokio::test]
async fn a_different_api_key_in_a_prompt_is_not_drift() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("use key sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA")]).await;
    let replay = ReplayClient::from_file(&path).unwrap();
    let reply = replay.complete(ask("use key sk-proj-BBBBBBBBBBBBBBBBBBBBBBBB")).await.unwrap();
    assert_eq!(
        reply.text(),
        "reply to use key <redacted:openai-key>",
        "the recorded reply is redacted too"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_in_any_order_get_the_reply_recorded_for_their_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let items: Vec<String> = (0..8).map(|n| format!("item {n}")).collect();
    let requests: Vec<LlmRequest> = items.iter().map(|item| ask(item)).collect();
    record_to(&path, echo_model(), &requests).await;

    for _ in 0..5 {
        let replay = Arc::new(ReplayClient::from_file(&path).unwrap());
        let mut tasks = Vec::new();
        for (n, request) in requests.iter().cloned().enumerate().rev() {
            let replay = Arc::clone(&replay);
            tasks.push(tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis((n as u64 * 7) % 5)).await;
                let expected = format!("reply to {}", request.messages[0].content);
                assert_eq!(replay.complete(request).await.unwrap().text(), expected);
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        replay.finish().unwrap();
    }
}

#[tokio::test]
async fn a_stored_request_edited_by_hand_is_named_as_such_on_drift() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("old prompt")]).await;
    // "Fix" the drift by editing the stored request instead of re-recording.
    let edited =
        std::fs::read_to_string(&path).unwrap().replace("\"old prompt\"", "\"new prompt\"");
    std::fs::write(&path, edited).unwrap();
    let replay = ReplayClient::from_file(&path).unwrap();
    let err = replay.complete(ask("new prompt")).await.unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains(
            "\nthe stored request of reply #1 does not hash to its request_sha256: the script was \
             edited by hand, or is replayed with other secret patterns than it was recorded with; \
             re-record it\nthe stored request and this one are the same\nrequest fingerprints"
        ),
        "{message}"
    );
}

/// A first script written by hand, without a live model: no `request_sha256` anywhere.
const HAND_WRITTEN: &str = r#"{
  "format": "atif-replay-script",
  "version": 2,
  "model": "hand-1",
  "calls": [
    {"response": {"tool_calls": [{"id": "call_1", "name": "calculator", "arguments": {"expression": "2 + 2"}}], "finish_reason": "tool_calls"}},
    {"response": {"content": {"text": "4"}, "finish_reason": "stop"}}
  ]
}"#;

#[tokio::test]
async fn a_hand_written_script_without_fingerprints_replays_strictly_without_drift_checks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("first.script.json");
    std::fs::write(&path, HAND_WRITTEN).unwrap();
    // Strict (the default) has nothing to compare an unfingerprinted entry with.
    let replay = ReplayClient::from_file(&path).unwrap();
    let first = replay.complete(ask("whatever the agent asks")).await.unwrap();
    assert_eq!(first.tool_calls[0].name, "calculator");
    assert_eq!(replay.complete(ask("anything else")).await.unwrap().text(), "4");
    replay.finish().unwrap();
    // Still strict about the number of calls, both ways.
    let err = replay.complete(ask("one more")).await.unwrap_err();
    assert!(matches!(err, Error::ScriptExhausted { requested: 3, recorded: 2, .. }), "{err:?}");
    let short = ReplayClient::from_file(&path).unwrap();
    short.complete(ask("only one")).await.unwrap();
    assert!(matches!(short.finish(), Err(Error::UnusedReplies { unused: 1, .. })));
}

#[tokio::test]
async fn fingerprinted_and_hand_written_entries_mix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("a")]).await;
    let mut script = atif_replay::read_script(&path).unwrap();
    let mut extra = script.calls[0].clone();
    extra.request_sha256 = None;
    extra.response = Some(LlmResponse::from_text("hand-written"));
    script.calls.push(extra);
    atif_replay::write_script(&path, &script, &[]).unwrap();
    let replay = ReplayClient::from_file(&path).unwrap();
    let err = replay.complete(ask("not a")).await.unwrap_err();
    assert!(matches!(err, Error::RequestDrift { call: 1, .. }), "the recorded entry is checked");
    let replay = ReplayClient::from_file(&path).unwrap();
    assert_eq!(replay.complete(ask("a")).await.unwrap().text(), "reply to a");
    assert_eq!(replay.complete(ask("free")).await.unwrap().text(), "hand-written");
    replay.finish().unwrap();
}
