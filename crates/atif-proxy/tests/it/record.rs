//! Record: forwarding to a real upstream (the fake provider), saving each exchange, streams
//! passing through live, an upstream that is down or cuts a stream.

use std::sync::{Arc, Mutex};

use atif_fake_provider::{Config, FakeProvider, Fault, unreachable_url};
use atif_proxy::{Error, Options, Proxy, start};
use atif_replay::{Script, SseEvent, read_script};
use axum::body::{Body, Bytes};
use axum::http::HeaderMap;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::{Reply, post, quiet, replay, send};

/// Starts a recording into a new script `name` in a temp dir, forwarding to `upstream`.
async fn record_to(upstream: &str, name: &str) -> (tempfile::TempDir, std::path::PathBuf, Proxy) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let mut options = quiet(Options::record(&path));
    options.set_upstream(upstream);
    let proxy = start(&options).await.unwrap();
    (dir, path, proxy)
}

/// One request of each protocol, streamed and not.
fn every_protocol() -> Vec<(&'static str, Value)> {
    let chat = |stream: bool| json!({"model": "fake-model", "stream": stream, "messages": [{"role": "user", "content": "hi"}]});
    let responses = |stream: bool| json!({"model": "fake-model", "stream": stream, "input": "hi"});
    let messages = |stream: bool| json!({"model": "fake-model", "max_tokens": 64, "stream": stream, "messages": [{"role": "user", "content": "hi"}]});
    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    vec![
        ("/v1/chat/completions", chat(false)),
        ("/v1/chat/completions", chat(true)),
        ("/v1/responses", responses(false)),
        ("/v1/responses", responses(true)),
        ("/v1/messages", messages(false)),
        ("/v1/messages?beta=true", messages(true)),
        (
            "/v1/messages/count_tokens",
            json!({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}),
        ),
        ("/v1beta/models/fake-model:generateContent", gemini.clone()),
        ("/v1beta/models/fake-model:streamGenerateContent?alt=sse", gemini),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protocol_replays_byte_for_byte_what_was_recorded() {
    let script = record_then_replay_every_protocol(Config::default()).await;
    let streamed = &script.exchanges[1];
    assert_eq!(streamed.path, "/v1/chat/completions");
    assert_eq!(streamed.content_type(), Some("text/event-stream"));
    let events = streamed.events.as_ref().unwrap();
    assert_eq!(events.last().unwrap().data, json!("[DONE]"));
    assert!(events[0].data.is_object(), "events are stored as JSON: {:?}", events[0]);
    let anthropic = &script.exchanges[5];
    assert_eq!(anthropic.path, "/v1/messages?beta=true");
    assert_eq!(anthropic.events.as_ref().unwrap()[0].event.as_deref(), Some("message_start"));
    assert!(script.exchanges[8].crlf, "Gemini's CRLF framing is kept");
    assert_eq!(script.exchanges[0].body.as_ref().unwrap()["object"], "chat.completion");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comments_and_retry_in_a_stream_are_recorded_and_replayed_in_place() {
    let mut config = Config::default();
    config.set_keepalives(true);
    let script = record_then_replay_every_protocol(config).await;
    let events = script.exchanges[1].events.as_ref().unwrap();
    assert_eq!(events[0].comments, [" connected"]);
    assert_eq!(events[0].retry.as_deref(), Some("3000"));
    assert!(!events[0].has_data());
    assert_eq!(events[1].comments, [" first event"]);
    assert!(events[1].data.is_object(), "{:?}", events[1]);
    assert_eq!(events[2], SseEvent::comment(vec![" ping".to_owned()]));
    let gemini = script.exchanges[8].events.as_ref().unwrap();
    assert_eq!(gemini[2], SseEvent::comment(vec![" ping".to_owned()]));
}

/// Records one request of each protocol and a model listing from the fake provider started
/// with `config`, replays them offline, checks that every reply and the traffic are the same,
/// and returns the script.
async fn record_then_replay_every_protocol(mut config: Config) -> Script {
    config.set_models(vec!["listed-a".to_owned(), "listed-b".to_owned()]);
    let provider = FakeProvider::start(config).unwrap();
    let (_dir, path, proxy) = record_to(provider.url(), "all.script.json").await;
    let mut recorded: Vec<Reply> = Vec::new();
    for (route, body) in every_protocol() {
        let reply = post(proxy.url(), route, &body).await;
        assert_eq!(reply.status, 200, "{route}: {}", reply.body);
        recorded.push(reply);
    }
    let listing = get(proxy.url(), "/v1/models").await;
    assert_eq!(listing.json()["data"][1]["id"], "listed-b", "{}", listing.body);
    let recorded_traffic = proxy.traffic().unwrap();
    let recorded_trajectory = serde_json::to_value(proxy.trajectory().unwrap()).unwrap();
    assert_eq!(recorded_trajectory["agent"]["name"], "agent");
    let agent_steps = recorded_trajectory["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|step| step["source"] == "agent")
        .count();
    assert!(agent_steps >= 1, "{recorded_trajectory:#}");
    let verdict = proxy.finish().await.unwrap();
    assert_eq!((verdict.requests_served, verdict.exchanges_recorded), (10, 10));
    assert_eq!(provider.request_count(), 10);
    let script = read_script(&path).unwrap();
    assert_eq!(script.exchanges[9].path, "/v1/models");
    assert_eq!(script.exchanges[9].method, "GET");

    // Offline, in another working directory: the provider is gone.
    provider.stop();
    let proxy = replay(&path).await;
    for ((route, body), live) in every_protocol().into_iter().zip(&recorded) {
        let replayed = post(proxy.url(), route, &body).await;
        assert_eq!(&replayed, live, "{route}");
    }
    // The listing answers what was recorded, as often as it is asked.
    assert_eq!(get(proxy.url(), "/v1/models").await, listing);
    // The traffic a replay saw is what the recording saw: the same trajectory comes of it.
    assert_eq!(proxy.traffic().unwrap(), recorded_traffic);
    let trajectory = serde_json::to_value(proxy.trajectory().unwrap()).unwrap();
    assert_eq!(trajectory, recorded_trajectory);
    assert_eq!(recorded_traffic, script.exchanges);
    assert_eq!(get(proxy.url(), "/v1/models").await, listing);
    let verdict = proxy.finish().await.unwrap();
    assert_eq!(verdict.requests_served, 11);
    script
}

/// GETs `base` + `path`.
async fn get(base: &str, path: &str) -> Reply {
    crate::read(reqwest::Client::new().get(format!("{base}{path}")).send().await.unwrap()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_credentials_reach_the_upstream_and_never_the_script() {
    let provider = FakeProvider::start(Config::default()).unwrap();
    let (_dir, path, proxy) = record_to(provider.url(), "creds.script.json").await;
    let body = json!({"model": "fake-model", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]});
    let key = "sk-ant-api03-secretsecretsecret";
    let reply = send(
        proxy.url(),
        "/v1/messages",
        &body.to_string(),
        &[
            ("x-api-key", key),
            ("anthropic-version", "2023-06-01"),
            ("cookie", "session=cookievalue123"),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let gemini_key = "AIzaSyD-gemini-key-in-the-query-0123456";
    let reply = send(
        proxy.url(),
        &format!("/v1beta/models/fake-model:generateContent?key={gemini_key}"),
        &json!({"contents": [{"parts": [{"text": "hi"}]}]}).to_string(),
        &[("x-goog-api-key", "AIzaSyD-gemini-header-key-0123456")],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    proxy.finish().await.unwrap();

    let seen = provider.requests();
    assert_eq!(seen[0].header("x-api-key"), Some(key));
    assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen[1].header("x-goog-api-key"), Some("AIzaSyD-gemini-header-key-0123456"));
    assert!(seen[1].path.ends_with(&format!("?key={gemini_key}")));
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in [key, "cookievalue123", gemini_key, "gemini-header-key"] {
        assert!(!text.contains(secret), "{secret} reached the script:\n{text}");
    }
    assert!(text.contains("\"path\": \"/v1beta/models/fake-model:generateContent\""), "{text}");
}

#[tokio::test]
async fn an_upstream_that_is_down_is_a_502_naming_it() {
    let down = unreachable_url().unwrap();
    let (_dir, _path, proxy) = record_to(&down, "down.script.json").await;
    let reply = post(proxy.url(), "/v1/chat/completions", &crate::chat_request("hi")).await;
    assert_eq!(reply.status, 502);
    let message = reply.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with(&format!(
            "cannot reach the upstream {down} for POST /v1/chat/completions: "
        )),
        "{message}"
    );
    let err = proxy.finish().await.unwrap_err();
    assert!(
        err.to_string().starts_with("recording not exact:\n- cannot reach the upstream"),
        "{err}"
    );
    let Error::NotExact { saved, .. } = &err else { panic!("not a verdict: {err:?}") };
    assert_eq!(*saved, None, "nothing was recorded, so nothing is saved");
}

#[test]
fn a_failed_recording_is_kept_beside_its_script() {
    use std::path::Path;
    for (script, failed) in [
        ("dir/run.script.json", "dir/run.script.failed.json"),
        ("s.json", "s.failed.json"),
        ("script", "script.failed.json"),
    ] {
        assert_eq!(atif_proxy::failed_path(Path::new(script)), Path::new(failed));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_midway_is_recorded_as_cut_and_replayed_cut() {
    let mut config = Config::default();
    config.set_fault(Some(Fault::CutStream { after_events: 2 }));
    let provider = FakeProvider::start(config).unwrap();
    let (_dir, path, proxy) = record_to(provider.url(), "cut.script.json").await;
    let body = json!({"model": "fake-model", "max_tokens": 64, "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let response = reqwest::Client::new()
        .post(format!("{}/v1/messages", proxy.url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(response.text().await.is_err(), "the agent sees the cut too");
    let err = proxy.finish().await.unwrap_err();
    let Error::NotExact { saved, .. } = &err else { panic!("not a verdict: {err:?}") };
    // Not exact: kept beside the script, never in its place.
    let failed = atif_proxy::failed_path(&path);
    assert_eq!(saved.as_deref(), Some(failed.as_path()));
    assert!(!path.exists());
    let err = err.to_string();
    assert!(err.contains("POST /v1/messages: the reply was cut off midway (the upstream"), "{err}");
    let path = failed;
    let script = read_script(&path).unwrap();
    let exchange = &script.exchanges[0];
    assert_eq!(exchange.events.as_ref().unwrap().len(), 2);
    assert!(exchange.cut.is_some());

    let proxy = replay(&path).await;
    let response = reqwest::Client::new()
        .post(format!("{}/v1/messages", proxy.url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(response.text().await.is_err(), "the replay cuts the stream at the same place");
    proxy.finish().await.unwrap();
}

/// An upstream driven by the test: it sends `first`, waits for `gate`, then sends `rest`.
pub(crate) async fn gated_upstream(
    first: &'static str,
    rest: &'static str,
    gate: oneshot::Receiver<()>,
) -> (String, Arc<Mutex<Vec<HeaderMap>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let gate = Arc::new(Mutex::new(Some(gate)));
    let app = axum::Router::new().fallback({
        let seen = seen.clone();
        move |headers: HeaderMap| {
            seen.lock().unwrap().push(headers);
            let gate = gate.lock().unwrap().take();
            let (sender, mut receiver) = mpsc::channel::<Result<Bytes, std::io::Error>>(4);
            tokio::spawn(async move {
                sender.send(Ok(Bytes::from(first))).await.unwrap();
                if let Some(gate) = gate {
                    let _ = gate.await;
                }
                let _ = sender.send(Ok(Bytes::from(rest))).await;
            });
            async move {
                let body = Body::from_stream(futures_util::stream::poll_fn(move |cx| {
                    receiver.poll_recv(cx)
                }));
                axum::response::Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(body)
                    .unwrap()
            }
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_reaches_the_agent_before_the_upstream_has_finished_it() {
    let (release, gate) = oneshot::channel();
    let (upstream, _) = gated_upstream(
        "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        gate,
    )
    .await;
    let (_dir, path, proxy) = record_to(&upstream, "live.script.json").await;
    let mut response = reqwest::Client::new()
        .post(format!("{}/v1/messages", proxy.url()))
        .header("content-type", "application/json")
        .body(json!({"model": "m", "stream": true, "messages": []}).to_string())
        .send()
        .await
        .unwrap();
    // The upstream is still waiting for the gate: this first chunk can only come through if
    // the proxy passes the stream on as it arrives. (The timeout turns a hang into a failure.)
    let first = tokio::time::timeout(std::time::Duration::from_secs(60), response.chunk())
        .await
        .expect("the first event passes through before the upstream finishes")
        .unwrap()
        .unwrap();
    assert_eq!(&first[..], b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n");
    assert_eq!(proxy.verdict().exchanges_recorded, 0, "the exchange is still in flight");
    release.send(()).unwrap();
    let mut rest = Vec::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        rest.extend_from_slice(&chunk);
    }
    assert_eq!(rest, b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    proxy.finish().await.unwrap();
    let script = read_script(&path).unwrap();
    assert_eq!(script.exchanges[0].events.as_ref().unwrap().len(), 2);
}

#[tokio::test]
async fn a_recording_saves_nothing_when_abandoned_and_refuses_a_bad_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("never.script.json");
    let proxy = start(&quiet(Options::record(&path))).await.unwrap();
    proxy.abandon().await.unwrap();
    assert!(!path.exists());
    let mut options = quiet(Options::record(&path));
    options.set_upstream("ftp://example.com");
    let err = start(&options).await.unwrap_err();
    assert!(matches!(err, Error::Upstream { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "invalid upstream `ftp://example.com`: expected an http:// or https:// URL such as https://api.openai.com"
    );
}

/// Streams `body` to `path` through `proxy` and drops the response as soon as the event
/// holding `until` has arrived whole; returns what was read.
async fn read_until(base: &str, path: &str, body: Value, until: &str) -> String {
    let mut response = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        text.push_str(&String::from_utf8_lossy(&chunk));
        let whole = text.find(until).is_some_and(|at| {
            let rest = &text[at..];
            rest.contains("\n\n") || rest.contains("\r\n\r\n")
        });
        if whole {
            return text;
        }
    }
    panic!("the stream ended without {until}: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_the_agent_closes_after_its_terminal_event_is_complete_however_late_it_ends() {
    // The provider leaves its end of body a second behind its last event, and the agent,
    // like the OpenAI SDK at `data: [DONE]`, stops reading at the terminal event.
    let mut config = Config::default();
    config.set_end_delay(std::time::Duration::from_secs(1));
    let provider = FakeProvider::start(config).unwrap();
    let (_dir, path, proxy) = record_to(provider.url(), "late.script.json").await;
    let chat = json!({"model": "fake-model", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let messages = json!({"model": "fake-model", "max_tokens": 64, "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let responses = json!({"model": "fake-model", "stream": true, "input": "hi"});
    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let url = proxy.url().to_owned();
    let started = std::time::Instant::now();
    let read = futures_util::future::join_all([
        read_until(&url, "/v1/chat/completions", chat, "data: [DONE]"),
        read_until(&url, "/v1/messages", messages, "event: message_stop"),
        read_until(&url, "/v1/responses", responses, "event: response.completed"),
        read_until(
            &url,
            "/v1beta/models/fake-model:streamGenerateContent?alt=sse",
            gemini,
            "\"finishReason\"",
        ),
    ])
    .await;
    assert_eq!(read.len(), 4);
    assert!(started.elapsed() < std::time::Duration::from_secs(1), "nobody waited for the end");
    let verdict = proxy.finish().await.unwrap();
    assert_eq!(verdict.exchanges_recorded, 4);
    let script = read_script(&path).unwrap();
    for exchange in &script.exchanges {
        assert_eq!(exchange.cut, None, "{}", exchange.path);
        assert!(!exchange.events.as_ref().unwrap().is_empty(), "{}", exchange.path);
    }

    // A stream the agent closes before its terminal event is cut, whenever the body ends.
    let mut config = Config::default();
    config.set_event_delay(std::time::Duration::from_millis(300));
    let provider = FakeProvider::start(config).unwrap();
    let (_dir, path, proxy) = record_to(provider.url(), "early.script.json").await;
    let body = json!({"model": "fake-model", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let mut response = reqwest::Client::new()
        .post(format!("{}/v1/chat/completions", proxy.url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let first = response.chunk().await.unwrap().unwrap();
    assert!(!String::from_utf8_lossy(&first).contains("[DONE]"));
    drop(response);
    let err = proxy.finish().await.unwrap_err().to_string();
    assert!(err.contains("the agent closed the connection before the reply ended"), "{err}");
    let failed = atif_proxy::failed_path(&path);
    assert!(read_script(&failed).unwrap().exchanges[0].cut.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_agents_act_on_are_recorded_and_replayed_and_no_other() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(|| async {
        axum::response::Response::builder()
            .status(429)
            .header("content-type", "application/json")
            .header("retry-after", "7")
            .header("x-ratelimit-remaining-requests", "0")
            .header("x-ratelimit-reset-requests", "6s")
            .header("anthropic-ratelimit-tokens-remaining", "0")
            .header("request-id", "req_0123")
            .header("openai-processing-ms", "12")
            .header("set-cookie", "session=cookievalue123")
            .header("x-envoy-upstream-service-time", "5")
            .body(Body::from(r#"{"error":{"message":"slow down","type":"rate_limit"}}"#))
            .unwrap()
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let (_dir, path, proxy) = record_to(&upstream, "limited.script.json").await;
    let chat = crate::chat_request("hi");
    let kept = [
        ("retry-after", "7"),
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", "6s"),
        ("anthropic-ratelimit-tokens-remaining", "0"),
        ("request-id", "req_0123"),
        ("openai-processing-ms", "12"),
    ];
    let send = |base: String| {
        let chat = chat.clone();
        async move {
            reqwest::Client::new()
                .post(format!("{base}/v1/chat/completions"))
                .header("content-type", "application/json")
                .body(chat.to_string())
                .send()
                .await
                .unwrap()
        }
    };
    let live = send(proxy.url().to_owned()).await;
    assert_eq!(live.status(), 429);
    proxy.finish().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("cookievalue123") && !text.contains("envoy"), "{text}");

    let proxy = replay(&path).await;
    let replayed = send(proxy.url().to_owned()).await;
    assert_eq!(replayed.status(), 429);
    for (name, value) in kept {
        assert_eq!(
            replayed.headers().get(name).map(|v| v.to_str().unwrap()),
            Some(value),
            "{name}"
        );
    }
    assert!(replayed.headers().get("set-cookie").is_none());
    assert_eq!(replayed.headers()["content-type"], "application/json");
    proxy.finish().await.unwrap();
}

/// An upstream that reads each request body to its end and answers a Chat Completion; the
/// bodies it received whole, in order.
async fn body_keeping_upstream() -> (String, Arc<Mutex<Vec<Bytes>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let whole = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new().fallback({
        let whole = whole.clone();
        move |body: Body| async move {
            // A body the server aborted arrives as an error, never as a whole request.
            if let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await {
                whole.lock().unwrap().push(bytes);
            }
            axum::response::Response::builder()
                .header("content-type", "application/json")
                .body(Body::from(crate::chat_reply("read it").to_string()))
                .unwrap()
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, whole)
}

/// Posts `pieces` as one chunked body to the Chat Completions endpoint of `base`.
async fn post_chunked(base: &str, pieces: Vec<Vec<u8>>) -> crate::Reply {
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            pieces.into_iter().map(Ok::<_, std::io::Error>),
        )))
        .send()
        .await
        .unwrap();
    crate::read(response).await
}

#[tokio::test]
async fn a_recorded_body_reaches_the_upstream_byte_for_byte_and_only_when_it_is_json() {
    let (upstream, whole) = body_keeping_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("streamed.script.json");
    let mut options = quiet(Options::record(&path));
    options.set_upstream(&upstream).set_max_body_bytes(2_000_000);
    let proxy = start(&options).await.unwrap();

    // A 1 MB prompt with escapes, in odd-sized chunks, as an SDK sends it: forwarded as sent.
    let prompt = "line one\n\t\"quoted\" \u{e9}\u{1f980} ".repeat(25_000);
    let text = format!(
        "{{ \"model\" : \"m\", \"messages\": [{{\"role\": \"user\", \"content\": {}}}], \"n\": 1.50 }}",
        serde_json::to_string(&prompt).unwrap()
    );
    let pieces: Vec<Vec<u8>> = text.as_bytes().chunks(7_919).map(<[u8]>::to_vec).collect();
    let reply = post_chunked(proxy.url(), pieces).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(whole.lock().unwrap().as_slice(), [Bytes::from(text.clone())]);

    // Not JSON: the agent is told where, and the upstream never gets the whole body.
    let broken = format!("{}, ]}}", &text[..text.len() - 1]);
    let pieces: Vec<Vec<u8>> = broken.as_bytes().chunks(65_536).map(<[u8]>::to_vec).collect();
    let reply = post_chunked(proxy.url(), pieces).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    let message = reply.json()["error"]["message"].as_str().unwrap().to_owned();
    let expected_at = serde_json::from_str::<Value>(&broken).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "the request body of POST /v1/chat/completions is not valid JSON ({expected_at}); \
             the agent must send a JSON body"
        )
    );
    // Over --max-body-bytes without a Content-Length: stopped where it passes the limit.
    let reply = post_chunked(proxy.url(), vec![vec![b' '; 1_500_000], vec![b' '; 1_500_000]]).await;
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert_eq!(whole.lock().unwrap().len(), 1, "only the JSON body reached the upstream");

    let Error::NotExact { verdict, .. } = proxy.finish().await.unwrap_err() else {
        panic!("two failed requests make the recording inexact")
    };
    assert_eq!(verdict.errors.len(), 2, "{:?}", verdict.errors);
    let failed = atif_proxy::failed_path(&path);
    let script = read_script(&failed).unwrap();
    assert_eq!(script.exchanges.len(), 1);
    assert_eq!(script.exchanges[0].request, serde_json::from_str::<Value>(&text).unwrap());
}
