//! Replay: matching by content, strictness both ways, error shapes, placeholders, concurrency.

use atif_proxy::{DriftPolicy, Error, Options, start};
use atif_replay::{HttpExchange, Recording, Script, SseEvent, write_script};
use serde_json::json;

use crate::{chat_exchange, chat_request, post, quiet, replay, send, write};

#[tokio::test]
async fn identical_repeated_requests_get_the_recorded_replies_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        vec![
            chat_exchange("again", "first"),
            chat_exchange("other", "unrelated"),
            chat_exchange("again", "second"),
        ],
    );
    let proxy = replay(&path).await;
    let mut texts = Vec::new();
    for content in ["again", "again", "other"] {
        let reply = post(proxy.url(), "/v1/chat/completions", &chat_request(content)).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.content_type, "application/json");
        texts.push(reply.json()["choices"][0]["message"]["content"].as_str().unwrap().to_owned());
    }
    assert_eq!(texts, ["first", "second", "unrelated"]);
    let verdict = proxy.finish().await.unwrap();
    assert_eq!((verdict.requests_served, verdict.exchanges_recorded), (3, 3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_concurrent_agents_each_get_their_own_replies() {
    let dir = tempfile::tempdir().unwrap();
    let exchanges: Vec<HttpExchange> = (0..32)
        .flat_map(|agent| {
            [1, 2].map(|turn| {
                chat_exchange(
                    &format!("agent {agent} turn {turn}"),
                    &format!("reply {agent}.{turn}"),
                )
            })
        })
        .collect();
    let path = write(dir.path(), exchanges);
    let proxy = replay(&path).await;
    let url = proxy.url().to_owned();
    let agents: Vec<_> = (0..32)
        .rev()
        .map(|agent| {
            let url = url.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                for turn in [1, 2] {
                    let request = chat_request(&format!("agent {agent} turn {turn}"));
                    let reply = post(&url, "/v1/chat/completions", &request).await;
                    got.push(reply.json()["choices"][0]["message"]["content"].clone());
                }
                (agent, got)
            })
        })
        .collect();
    for agent in agents {
        let (agent, got) = agent.await.unwrap();
        assert_eq!(got, [json!(format!("reply {agent}.1")), json!(format!("reply {agent}.2"))]);
    }
    let verdict = proxy.finish().await.unwrap();
    assert_eq!(verdict.requests_served, 64);
}

#[tokio::test]
async fn one_request_too_many_fails_naming_the_count_in_the_providers_error_shape() {
    let dir = tempfile::tempdir().unwrap();
    let request = json!({"model": "claude-test", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
    let exchange = HttpExchange::new("POST", "/v1/messages?beta=true", request.clone(), 200)
        .with_body(json!({"type": "message", "content": [{"type": "text", "text": "hello"}]}));
    let path = write(dir.path(), vec![exchange.clone(), exchange.clone(), exchange]);
    let proxy = replay(&path).await;
    for _ in 0..3 {
        assert_eq!(post(proxy.url(), "/v1/messages?beta=true", &request).await.status, 200);
    }
    let reply = post(proxy.url(), "/v1/messages?beta=true", &request).await;
    assert_eq!(reply.status, 400);
    let expected = "the agent made request #4 to /v1/messages, but the script recorded 3. The \
                    agent is making more model calls than when it was recorded: that is the \
                    regression; re-record if intended";
    assert_eq!(
        reply.json(),
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": expected}})
    );
    let err = proxy.finish().await.unwrap_err();
    assert_eq!(err.to_string(), format!("replay not exact:\n- {expected}"));
    let Error::NotExact { verdict, .. } = err else { panic!("not a verdict") };
    assert_eq!(verdict.errors, [expected]);
}

#[tokio::test]
async fn a_changed_request_fails_with_a_diff_against_the_next_unused_exchange() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        vec![chat_exchange("What is 2 + 2?", "4"), chat_exchange("thanks", "welcome")],
    );
    let proxy = replay(&path).await;
    let reply = post(proxy.url(), "/v1/chat/completions", &chat_request("What is 2 + 3?")).await;
    assert_eq!(reply.status, 400);
    let message = reply.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with(
            "request #1 to /v1/chat/completions matches no unused recorded exchange; against the \
             next unused one of that endpoint (exchange #1), the normalised request changed \
             (- recorded, + now):\n--- exchange #1 (recorded)\n+++ request #1 (now)\n"
        ),
        "{message}"
    );
    assert!(message.contains("\n-        \"content\": \"What is 2 + 2?\",\n"), "{message}");
    assert!(message.contains("\n+        \"content\": \"What is 2 + 3?\",\n"), "{message}");
    assert_eq!(reply.json()["error"]["type"], "invalid_request_error");
    let err = proxy.finish().await.unwrap_err().to_string();
    // The drifting request failed, and both exchanges stayed unused.
    assert!(err.contains("- request #1 to /v1/chat/completions matches no unused"), "{err}");
    assert!(
        err.ends_with(
            "- 2 of the 2 recorded exchanges were never requested: #1 POST /v1/chat/completions \
             (gpt-test), #2 POST /v1/chat/completions (gpt-test). The replay already failed above, \
             so the agent stopped asking: that failure is the one to fix"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn drift_warn_serves_the_next_exchange_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("What is 2 + 2?", "4")]);
    let mut options = quiet(Options::replay(&path));
    options.set_drift(DriftPolicy::Warn);
    let proxy = start(&options).await.unwrap();
    let reply = post(proxy.url(), "/v1/chat/completions", &chat_request("What is 2 + 3?")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["choices"][0]["message"]["content"], "4");
    let verdict = proxy.finish().await.unwrap();
    assert_eq!(verdict.warnings.len(), 1);
    assert!(verdict.warnings[0].contains("+        \"content\": \"What is 2 + 3?\""));
}

#[tokio::test]
async fn drift_off_serves_the_next_exchange_without_a_word() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("What is 2 + 2?", "4")]);
    let mut options = quiet(Options::replay(&path));
    options.set_drift(DriftPolicy::Off);
    let proxy = start(&options).await.unwrap();
    let reply = post(proxy.url(), "/v1/chat/completions", &chat_request("What is 2 + 3?")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["choices"][0]["message"]["content"], "4");
    // One request more than recorded still fails: `off` waives the comparison, not the count.
    let extra = post(proxy.url(), "/v1/chat/completions", &chat_request("What is 2 + 4?")).await;
    assert_eq!(extra.status, 400);
    let err = proxy.finish().await.unwrap_err().to_string();
    assert!(err.contains("the agent made request #2"), "{err}");
    assert!(!err.contains("normalised request changed"), "{err}");
}

#[tokio::test]
async fn exchanges_never_requested_fail_the_finish_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("one", "1"), chat_exchange("two", "2")]);
    let proxy = replay(&path).await;
    post(proxy.url(), "/v1/chat/completions", &chat_request("one")).await;
    let mid_run = proxy.verdict();
    assert!(!mid_run.ok);
    assert_eq!(mid_run.unused_exchanges.len(), 1);
    // Had the agent's run failed, the failure would be blamed, not fewer model calls.
    assert!(
        mid_run.summary_after_failed_run().ends_with(
            "#2 POST /v1/chat/completions (gpt-test). The agent's run failed before requesting \
             them: that failure is the one to fix"
        ),
        "{}",
        mid_run.summary_after_failed_run()
    );
    let err = proxy.finish().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "replay not exact:\n- 1 of the 2 recorded exchanges were never requested: #2 POST \
         /v1/chat/completions (gpt-test). The agent is making fewer model calls than when it was \
         recorded: that is the regression; re-record if intended"
    );
}

#[tokio::test]
async fn what_changes_between_runs_is_masked_and_placeholders_are_filled() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = json!({
        "model": "gpt-test",
        "user": "session-recorded",
        "messages": [{"role": "user", "content":
            "It is 2025-01-02T03:04:05Z, run 123e4567-e89b-12d3-a456-426614174000 in <cwd>, \
             build 111, config <home>/.rc"}],
    });
    let reply = json!({"choices": [{"message": {"role": "assistant", "content": "ls <cwd>/src"}}]});
    let mut script = Script::new(None);
    script.recording = Some(Recording {
        cwd: Some("/rec/dir".into()),
        home: Some("/home/rec".into()),
        masks: vec!["build [0-9]+".into()],
    });
    script.exchanges =
        vec![HttpExchange::new("POST", "/v1/chat/completions", recorded, 200).with_body(reply)];
    let path = dir.path().join("run.script.json");
    write_script(&path, &script, &[]).unwrap();
    let proxy = replay(&path).await;
    let now = json!({
        "model": "gpt-test",
        "user": "session-now",
        "messages": [{"role": "user", "content":
            "It is 2026-12-01T22:53:52Z, run 0f8fad5b-d9cb-469f-a165-70867728950e in /work/run, \
             build 222, config /home/tester/.rc"}],
    });
    let answer = post(proxy.url(), "/v1/chat/completions", &now).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["choices"][0]["message"]["content"], "ls /work/run/src");
    proxy.finish().await.unwrap();
}

#[tokio::test]
async fn a_mask_given_to_the_replay_is_used_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("seed 1", "ok")]);
    let mut options = quiet(Options::replay(&path));
    options.add_mask("seed [0-9]+");
    let proxy = start(&options).await.unwrap();
    assert_eq!(
        post(proxy.url(), "/v1/chat/completions", &chat_request("seed 2")).await.status,
        200
    );
    proxy.finish().await.unwrap();
}

#[tokio::test]
async fn events_are_served_in_order_with_their_framing_and_a_cut_stream_is_cut_again() {
    let dir = tempfile::tempdir().unwrap();
    let request = json!({"model": "claude-test", "stream": true, "messages": []});
    let events = vec![
        SseEvent::from_raw(Some("message_start".into()), None, r#"{"type":"message_start"}"#),
        SseEvent::from_raw(Some("message_stop".into()), None, r#"{"type":"message_stop"}"#),
    ];
    let whole =
        HttpExchange::new("POST", "/v1/messages", request.clone(), 200).with_events(events.clone());
    let chat_events = vec![
        SseEvent::from_raw(None, None, r#"{"choices":[{"delta":{"content":"hi"}}]}"#),
        SseEvent::from_raw(None, None, "[DONE]"),
    ];
    let chat = HttpExchange::new("POST", "/v1/chat/completions", chat_request("s"), 200)
        .with_events(chat_events);
    let mut cut = HttpExchange::new("POST", "/v1/messages", request.clone(), 200)
        .with_events(events[..1].to_vec());
    cut.cut = Some("the upstream cut the reply off".into());
    let path = write(dir.path(), vec![whole, chat, cut]);
    let proxy = replay(&path).await;

    let reply = post(proxy.url(), "/v1/messages", &request).await;
    assert_eq!(reply.content_type, "text/event-stream");
    assert_eq!(
        reply.body,
        "event: message_start\ndata: {\"type\":\"message_start\"}\n\n\
         event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    );
    let reply = post(proxy.url(), "/v1/chat/completions", &chat_request("s")).await;
    assert_eq!(
        reply.body,
        "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"
    );

    let response = reqwest::Client::new()
        .post(format!("{}/v1/messages", proxy.url()))
        .header("content-type", "application/json")
        .body(request.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.text().await.is_err(), "a cut stream must end in an error");
    proxy.finish().await.unwrap();
}

#[tokio::test]
async fn unknown_endpoints_and_invalid_json_get_clear_errors_in_the_providers_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![]);
    let proxy = replay(&path).await;
    let reply = post(proxy.url(), "/v1/embeddings", &json!({})).await;
    assert_eq!(reply.status, 404);
    let message = reply.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.starts_with("unknown endpoint POST /v1/embeddings: this server answers POST /v1/chat/completions, POST /v1/responses, POST /v1/messages,"), "{message}");

    let reply = send(proxy.url(), "/v1/messages", "{not json", &[]).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["type"], "error");
    let message = reply.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.starts_with("the request body of POST /v1/messages is not valid JSON (key must be a string at line 1 column 2)"), "{message}");

    let reply = send(proxy.url(), "/v1beta/models/gemini-x:generateContent", "", &[]).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["status"], "INVALID_ARGUMENT");
    assert_eq!(reply.json()["error"]["code"], 400);

    let err = proxy.finish().await.unwrap_err();
    let Error::NotExact { verdict, .. } = err else { panic!("not a verdict") };
    assert_eq!(verdict.errors.len(), 3);
}

#[tokio::test]
async fn the_model_list_names_the_recorded_models() {
    let dir = tempfile::tempdir().unwrap();
    let gemini =
        HttpExchange::new("POST", "/v1beta/models/gemini-x:generateContent", json!({}), 200)
            .with_body(json!({}));
    let path = write(dir.path(), vec![chat_exchange("a", "b"), gemini]);
    let proxy = replay(&path).await;
    let reply = crate::read(
        reqwest::Client::new().get(format!("{}/v1/models", proxy.url())).send().await.unwrap(),
    )
    .await;
    let ids: Vec<_> =
        reply.json()["data"].as_array().unwrap().iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids, [json!("gpt-test"), json!("gemini-x")]);
    // Listing models is not a model call: the two exchanges are still owed.
    assert_eq!(proxy.verdict().unused_exchanges.len(), 2);
}

#[tokio::test]
async fn a_recorded_model_listing_is_served_as_often_as_asked_and_never_owed() {
    let dir = tempfile::tempdir().unwrap();
    let listing = json!({"object": "list", "data": [{"id": "recorded-model", "object": "model"}]});
    let models =
        HttpExchange::new("GET", "/v1/models", json!(null), 200).with_body(listing.clone());
    let path = write(dir.path(), vec![models, chat_exchange("a", "b")]);
    let proxy = replay(&path).await;
    for _ in 0..2 {
        let reply = crate::read(
            reqwest::Client::new().get(format!("{}/v1/models", proxy.url())).send().await.unwrap(),
        )
        .await;
        assert_eq!((reply.status, reply.json()), (200, listing.clone()));
    }
    assert_eq!(post(proxy.url(), "/v1/chat/completions", &chat_request("a")).await.status, 200);
    let verdict = proxy.finish().await.unwrap();
    assert_eq!((verdict.requests_served, verdict.exchanges_recorded), (3, 2));
}

#[tokio::test]
async fn the_verdict_is_served_as_json_while_running() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("a", "b")]);
    let proxy = replay(&path).await;
    let reply = crate::read(
        reqwest::Client::new()
            .get(format!("{}/_atif/verdict", proxy.url()))
            .header("x-atif-token", proxy.token())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        reply.json(),
        json!({"ok": false, "operation": "replay", "requests_served": 0, "requests_refused": 0,
               "connections_closed_slow_head": 0, "connections_closed_idle": 0, "exchanges_recorded": 1,
               "unused_exchanges": [{"number": 1, "method": "POST", "path": "/v1/chat/completions", "model": "gpt-test"}],
               "errors": [], "errors_omitted": 0, "warnings": [], "warnings_omitted": 0})
    );
}

#[tokio::test]
async fn the_trajectory_is_served_once_there_is_a_model_call() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("a", "b")]);
    let proxy = replay(&path).await;
    let get = || async {
        crate::read(
            reqwest::Client::new()
                .get(format!("{}/_atif/trajectory", proxy.url()))
                .header("x-atif-token", proxy.token())
                .send()
                .await
                .unwrap(),
        )
        .await
    };
    let before = get().await;
    assert_eq!(before.status, 409);
    assert!(
        before.json()["error"].as_str().unwrap().contains("no exchange")
            || before.json()["error"].as_str().unwrap().contains("none of the 0 exchanges"),
        "{}",
        before.body
    );
    post(proxy.url(), "/v1/chat/completions", &chat_request("a")).await;
    let after = get().await;
    assert_eq!(after.status, 200);
    let steps = after.json()["steps"].as_array().unwrap().clone();
    let last = steps.last().unwrap();
    assert_eq!(last["source"], "agent");
    assert_eq!(last["message"], "b");
    proxy.finish().await.unwrap();
}

#[tokio::test]
async fn a_missing_script_or_a_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let err = start(&quiet(Options::replay(&missing))).await.unwrap_err();
    assert_eq!(
        crate::chain(&err),
        format!("cannot read {}: No such file or directory (os error 2)", missing.display())
    );
    let err = start(&quiet(Options::replay(dir.path()))).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{} is a directory; give the path of a script file", dir.path().display())
    );
}

#[tokio::test]
async fn a_port_in_use_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![]);
    let first = replay(&path).await;
    let mut options = quiet(Options::replay(&path));
    options.set_listen(first.addr());
    let err = start(&options).await.unwrap_err();
    assert_eq!(err.to_string(), format!("cannot listen on {}", first.addr()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_half_closes_after_sending_gets_its_reply() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let dir = tempfile::tempdir().unwrap();
    let exchanges = (0..5).map(|_| crate::chat_exchange("hi", "hello, half-closed")).collect();
    let path = crate::write(dir.path(), exchanges);
    let proxy = crate::replay(&path).await;
    let body = crate::chat_request("hi").to_string();
    for attempt in 0..5 {
        let mut stream = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap();
        let request = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n{body}",
            proxy.addr(),
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        // The client says it has nothing more to send, and waits for the reply.
        stream.shutdown().await.unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).await.unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "attempt {attempt}: {reply:?}");
        assert!(reply.contains("hello, half-closed"), "attempt {attempt}: {reply:?}");
    }
    let verdict = proxy.finish().await.unwrap();
    assert_eq!(verdict.requests_served, 5);
}
