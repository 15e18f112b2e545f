//! A Streamable-HTTP MCP server fronted at `/mcp/NAME`, against a hand-driven server that
//! answers in every framing the transport allows: a JSON reply with a session id, an event
//! stream, a batch, `202` for a notification, and a message of its own on the `GET` stream.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atif_proxy::{Error, Options, start};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::{chat_request, quiet};

/// The session id the hand-driven server hands out.
const SESSION: &str = "sess-0c0ffee";

/// Starts the hand-driven MCP server; its URL.
async fn mcp_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (pushed, stream) = mpsc::unbounded_channel::<String>();
    let stream = Arc::new(Mutex::new(Some(stream)));
    let app = axum::Router::new().fallback(move |method: Method, _: HeaderMap, body: Bytes| {
        let (pushed, stream) = (pushed.clone(), stream.clone());
        async move {
            let reply = axum::response::Response::builder();
            if method == Method::GET {
                let mut receiver = stream.lock().unwrap().take().unwrap();
                let events = async_stream(move || {
                    let next = receiver.try_recv().ok();
                    next.map(|text| format!("id: e-get\nevent: message\ndata: {text}\n\n"))
                });
                return reply.header("content-type", "text/event-stream").body(events).unwrap();
            }
            if method == Method::DELETE {
                return reply.body(Body::empty()).unwrap();
            }
            let json: Value = serde_json::from_slice(&body).unwrap();
            if let Value::Array(batch) = &json {
                // Keys in an order a JSON object would not keep: the replay must.
                let replies: Vec<String> = batch
                    .iter()
                    .map(|m| format!(r#"{{"result":{{}},"jsonrpc":"2.0","id":{}}}"#, m["id"]))
                    .collect();
                let body = Body::from(format!("[{}]", replies.join(",")));
                return reply.header("content-type", "application/json").body(body).unwrap();
            }
            let id = json["id"].clone();
            match json["method"].as_str().unwrap() {
                "initialize" => {
                    let body = json!({"jsonrpc": "2.0", "id": id, "result": {"serverInfo": {"name": "fake"}}});
                    reply
                        .header("content-type", "application/json")
                        .header("mcp-session-id", SESSION)
                        .body(Body::from(body.to_string()))
                        .unwrap()
                }
                "tools/call" => {
                    let own = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "from the get stream"}});
                    pushed.send(own.to_string()).unwrap();
                    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"message":"key sk-proj-AAAAbbbbCCCCddddEEEEffff"}}"#;
                    let result = format!(
                        r#"{{"result":{{"content":[{{"type":"text","text":"ok"}}]}},"jsonrpc":"2.0","id":{id}}}"#
                    );
                    let events = format!(
                        "id: e1\ndata: \n\nid: e2\nevent: message\ndata: {progress}\n\nid: e3\nevent: message\ndata: {result}\n\n"
                    );
                    let reply = reply.header("content-type", "text/event-stream");
                    reply.header("mcp-session-id", SESSION).body(Body::from(events)).unwrap()
                }
                _ => reply.status(202).body(Body::empty()).unwrap(),
            }
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// An event stream that polls `next` every 10 ms and stays open.
fn async_stream(mut next: impl FnMut() -> Option<String> + Send + 'static) -> Body {
    let stream = futures_util::stream::unfold((), move |()| {
        let item = next();
        async move {
            match item {
                Some(text) => Some((Ok::<Bytes, std::io::Error>(Bytes::from(text)), ())),
                None => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    Some((Ok(Bytes::new()), ()))
                }
            }
        }
    });
    Body::from_stream(stream)
}

/// What the agent sees of one session: each reply's status, content type, session header and
/// body, and what its `GET` stream carried.
async fn session(base: &str) -> Vec<String> {
    let client = reqwest::Client::new();
    let url = format!("{base}/mcp/fake");
    let post = |body: Value, session: Option<String>| {
        let mut request = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let describe = |reply: &reqwest::Response| {
        let header = |name: &str| {
            reply.headers().get(name).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
        };
        format!(
            "{} {} {}",
            reply.status().as_u16(),
            header("content-type"),
            header("mcp-session-id")
        )
    };
    let mut seen = Vec::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let reply = post(init, None).await.unwrap();
    let session_id = reply.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    seen.push(describe(&reply).replace(session_id.as_deref().unwrap_or("-"), "<session>"));
    seen.push(reply.text().await.unwrap());
    let mut stream = client.get(&url).header("mcp-session-id", session_id.clone().unwrap());
    stream = stream.header("accept", "text/event-stream");
    let mut stream = stream.send().await.unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {}}});
    let reply = post(call, session_id.clone()).await.unwrap();
    seen.push(describe(&reply).replace(session_id.as_deref().unwrap_or("-"), "<session>"));
    seen.push(events(&reply.text().await.unwrap()));
    let mut pushed = String::new();
    while !pushed.contains("\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await;
        pushed.push_str(&String::from_utf8_lossy(&chunk.unwrap().unwrap().unwrap()));
    }
    seen.push(events(&pushed));
    let batch = json!([{"jsonrpc": "2.0", "id": 3, "method": "ping"}, {"jsonrpc": "2.0", "id": 4, "method": "ping"}]);
    let reply = post(batch, session_id.clone()).await.unwrap();
    seen.push(describe(&reply));
    seen.push(reply.text().await.unwrap());
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post(note, session_id.clone()).await.unwrap();
    seen.push(describe(&reply));
    let reply = client.delete(&url).header("mcp-session-id", session_id.unwrap()).send();
    seen.push(describe(&reply.await.unwrap()));
    seen
}

/// The messages of an event stream, one a line, as sent: the data of each event that has any
/// (event ids, which a replay does not keep, and a resumable stream's empty first event left
/// out).
fn events(stream: &str) -> String {
    let data = stream.lines().filter_map(|line| line.strip_prefix("data:")).map(str::trim);
    data.filter(|data| !data.is_empty()).collect::<Vec<_>>().join("\n")
}

/// Records one [`session`] with the hand-driven server, and a model call, into `path`; what
/// the agent saw.
async fn record_session(path: &Path) -> Vec<String> {
    let provider =
        atif_fake_provider::FakeProvider::start(atif_fake_provider::Config::default()).unwrap();
    let server = mcp_server().await;
    let mut options = quiet(Options::record(path));
    options.set_upstream(provider.url()).add_mcp_http("fake", Some(server));
    let proxy = start(&options).await.unwrap();
    let recorded = session(proxy.url()).await;
    assert_eq!(
        crate::post(proxy.url(), "/v1/chat/completions", &chat_request("hi")).await.status,
        200
    );
    proxy.finish().await.unwrap();
    recorded
}

/// What the agent saw recording, with the secret the tape holds redacted: what it sees from
/// the tape.
fn as_taped(recorded: &[String]) -> Vec<String> {
    let secret =
        |text: &String| text.replace("sk-proj-AAAAbbbbCCCCddddEEEEffff", "<redacted:openai-key>");
    recorded.iter().map(secret).collect()
}

/// Replays the [`session`] and the model call recorded in `path`, the server gone; what the
/// agent saw. The replay must be exact.
async fn replay_session(path: &Path) -> Vec<String> {
    let mut options = quiet(Options::replay(path));
    options.add_mcp_http("fake", None);
    let proxy = start(&options).await.unwrap();
    let replayed = session(proxy.url()).await;
    assert_eq!(
        crate::post(proxy.url(), "/v1/chat/completions", &chat_request("hi")).await.status,
        200
    );
    let verdict = proxy.finish().await.unwrap();
    assert!(verdict.ok, "{verdict:?}");
    replayed
}

#[tokio::test]
async fn a_streamable_http_server_replays_every_framing_as_recorded_without_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.script.json");
    let recorded = record_session(&path).await;
    assert_eq!(recorded[0], "200 application/json <session>", "{recorded:?}");
    assert!(recorded[3].contains("notifications/progress"), "{recorded:?}");
    assert!(recorded[4].contains("from the get stream"), "{recorded:?}");

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(SESSION), "the session id is never kept: {text}");
    assert!(!text.contains("sk-proj-AAAA"), "the secret scanner saw the event stream: {text}");
    assert!(text.contains("key <redacted:"), "{text}");
    let script: Value = serde_json::from_str(&text).unwrap();
    let via = |method: &str| -> Vec<Value> {
        let mcp = script["mcp"].as_array().unwrap();
        mcp.iter()
            .filter(|m| m["message"].to_string().contains(method))
            .map(|m| m["http"].clone())
            .collect()
    };
    assert_eq!(via("serverInfo"), [json!({"via": "reply", "session": true})]);
    assert_eq!(via("notifications/progress"), [json!({"via": "reply-stream", "session": true})]);
    assert_eq!(via("from the get stream"), [json!({"via": "get-stream"})]);

    // The server gone: the tape answers in the same framing, with a session id of its own.
    let replayed = replay_session(&path).await;
    // What the tape holds, the secret redacted, is what the agent gets.
    assert_eq!(replayed, as_taped(&recorded));
}

#[tokio::test]
async fn a_hybrid_recording_answers_a_streamable_http_server_from_the_tape_and_counts_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.script.json");
    let recorded = record_session(&tools).await;
    let provider =
        atif_fake_provider::FakeProvider::start(atif_fake_provider::Config::default()).unwrap();
    // The model live, the server given no URL: it could not be reached if the front tried.
    let hybrid = |path: &Path| {
        let mut options = quiet(Options::record(path));
        options.set_upstream(provider.url()).set_replay_tools(Some(tools.clone()));
        options.add_mcp_http("fake", None);
        options
    };
    let path = dir.path().join("hybrid.script.json");
    let proxy = start(&hybrid(&path)).await.unwrap();
    let served = session(proxy.url()).await;
    assert_eq!(
        crate::post(proxy.url(), "/v1/chat/completions", &chat_request("hi")).await.status,
        200
    );
    let verdict = proxy.finish().await.unwrap();
    assert_eq!(served, as_taped(&recorded), "the tape answers in the recorded framing");
    assert_eq!((verdict.mcp_calls_from_tape, verdict.mcp_call_misses), (Some(1), Some(0)));
    assert_eq!(verdict.exchanges_recorded, 1, "{verdict:?}");

    // The new recording keeps the tool traffic as served, with how it travelled: it replays.
    let script: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let result = script["mcp"].as_array().unwrap().iter().find(|m| m["message"]["id"] == 2);
    assert_eq!(result.unwrap()["http"], json!({"via": "post"}));
    let replayed = replay_session(&path).await;
    assert_eq!(replayed, served);

    // A call with new arguments misses: a tool error the model can read, counted, and the
    // recording is saved beside the script, not over it.
    let path = dir.path().join("missed.script.json");
    let proxy = start(&hybrid(&path)).await.unwrap();
    let url = format!("{}/mcp/fake", proxy.url());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "new"}}});
    let client = reqwest::Client::new();
    let mut replies = Vec::new();
    for message in [init, call] {
        let reply = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(message.to_string())
            .send()
            .await
            .unwrap();
        let content_type = reply.headers()["content-type"].to_str().unwrap().to_owned();
        replies.push((content_type, reply.text().await.unwrap()));
    }
    assert_eq!(
        crate::post(proxy.url(), "/v1/chat/completions", &chat_request("hi")).await.status,
        200
    );
    let Error::NotExact { verdict, saved } = proxy.finish().await.unwrap_err() else {
        panic!("a miss makes the recording not exact")
    };
    assert_eq!((verdict.mcp_calls_from_tape, verdict.mcp_call_misses), (Some(0), Some(1)));
    assert_eq!(replies[1].0, "application/json", "{replies:?}");
    let error: Value = serde_json::from_str(&replies[1].1).unwrap();
    assert_eq!(error["id"], 2);
    assert_eq!(error["result"]["isError"], true);
    let text = error["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("tool miss (not on the tools tape tools.script.json"), "{text}");
    assert!(verdict.errors[0].contains("`echo`"), "{verdict:?}");
    assert_eq!(saved.as_deref(), Some(atif_proxy::failed_path(&path).as_path()));
    assert!(!path.exists());
}

#[tokio::test]
async fn a_reply_or_an_event_over_the_bound_fails_the_recording_naming_the_server() {
    let provider =
        atif_fake_provider::FakeProvider::start(atif_fake_provider::Config::default()).unwrap();
    // Each a message one byte over 64 MiB: a JSON reply, then an event stream.
    for (content_type, framing) in
        [("application/json", "{}"), ("text/event-stream", "data: {}\n\n")]
    {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let app = axum::Router::new().fallback(move || async move {
            let message = format!("\"{}\"", "a".repeat((64 << 20) - 1));
            let body = framing.replace("{}", &message);
            axum::response::Response::builder()
                .header("content-type", content_type)
                .body(Body::from(body))
                .unwrap()
        });
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let dir = tempfile::tempdir().unwrap();
        let mut options = quiet(Options::record(dir.path().join("run.script.json")));
        options.set_upstream(provider.url()).add_mcp_http("big", Some(url));
        let proxy = start(&options).await.unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
        let reply = reqwest::Client::new()
            .post(format!("{}/mcp/big", proxy.url()))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string())
            .send()
            .await
            .unwrap();
        // A JSON reply is read whole first: the agent gets an error naming the bound. An event
        // stream's head has gone out already: the agent's reply breaks.
        let status = reply.status().as_u16();
        match (content_type, reply.bytes().await) {
            ("application/json", Ok(body)) => {
                let body = String::from_utf8_lossy(&body);
                assert_eq!(status, 502, "{body}");
                assert!(body.contains("longer than 67108864 bytes"), "{body}");
            }
            (_, body) => assert!(body.is_err(), "{content_type}: the agent's reply breaks"),
        }
        let err = proxy.finish().await.unwrap_err();
        let Error::NotExact { verdict, .. } = err else { panic!("{content_type}: {err}") };
        // A stream's message is over the bound as a line still open or as the event's data,
        // depending on where the chunks end.
        let named = |e: &String| {
            e.starts_with("MCP server `big` sent ") && e.contains("longer than 67108864 bytes")
        };
        assert!(verdict.errors.iter().any(named), "{content_type}: {verdict:?}");
    }
}

/// Starts a server that answers the ways a recording must not take as whole: a `GET` refused
/// with 405 and a JSON-RPC error body (it offers no stream), `tools/call` of `multi` with a
/// progress notification whose message spans two `data:` lines, and `tools/call` of `cut` as a stream that
/// ends before the response. Its URL.
async fn odd_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(|method: Method, body: Bytes| async move {
        let reply = axum::response::Response::builder();
        if method == Method::GET {
            let refused = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Method not allowed."},"id":null}"#;
            let reply = reply.status(405).header("content-type", "application/json");
            return reply.body(Body::from(refused)).unwrap();
        }
        let json: Value = serde_json::from_slice(&body).unwrap();
        let id = json["id"].clone();
        let stream = |events: String| {
            let reply = axum::response::Response::builder();
            reply.header("content-type", "text/event-stream").body(Body::from(events)).unwrap()
        };
        match (json["method"].as_str().unwrap(), json["params"]["name"].as_str()) {
            ("tools/call", Some("multi")) => stream(format!(
                "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\ndata: \"params\":{{\"progress\":1}}}}\n\nevent: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[]}}}}\n\n"
            )),
            ("tools/call", Some("cut")) => stream(
                "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n"
                    .to_owned(),
            ),
            _ => {
                let body = json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string();
                reply.header("content-type", "application/json").body(Body::from(body)).unwrap()
            }
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// POSTs `message` to `url`; the reply's status, content type and body.
async fn post_message(url: &str, message: &Value) -> (u16, String, String) {
    let reply = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(message.to_string())
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let content_type = reply.headers()["content-type"].to_str().unwrap().to_owned();
    (status, content_type, reply.text().await.unwrap())
}

#[tokio::test]
async fn a_reply_cut_before_its_response_fails_the_recording_and_its_replay_and_nothing_else_is_kept()
 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.script.json");
    let provider =
        atif_fake_provider::FakeProvider::start(atif_fake_provider::Config::default()).unwrap();
    let mut options = quiet(Options::record(&path));
    options.set_upstream(provider.url()).add_mcp_http("odd", Some(odd_server().await));
    let proxy = start(&options).await.unwrap();
    let hi = chat_request("hi");
    assert_eq!(crate::post(proxy.url(), "/v1/chat/completions", &hi).await.status, 200);
    let url = format!("{}/mcp/odd", proxy.url());
    let call = |id: u64, name: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}});
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    assert_eq!(post_message(&url, &init).await.0, 200);
    let get = reqwest::Client::new().get(&url).header("accept", "text/event-stream").send();
    assert_eq!(get.await.unwrap().status().as_u16(), 405, "the refusal reaches the agent");
    let multi = post_message(&url, &call(2, "multi")).await;
    assert!(multi.2.contains("data: \"params\""), "{multi:?}");
    post_message(&url, &call(3, "cut")).await;
    let Error::NotExact { verdict, saved } = proxy.finish().await.unwrap_err() else {
        panic!("a request without its response makes the recording not exact")
    };
    assert_eq!(
        verdict.errors,
        [
            "MCP server `odd`: the reply to the agent's tools/call (id 3) ended before its response came, so the recording lacks it"
        ]
    );
    let saved = saved.unwrap();
    let script: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let mcp = script["mcp"].as_array().unwrap();
    assert!(
        mcp.iter().all(|m| m["http"]["via"] != "get-stream" && m["message"].is_object()),
        "the 405's body is no message of the server's: {mcp:?}"
    );

    // Replayed: the message of two data lines goes out as two data lines, and the request
    // recorded without its response fails, with an error the agent can read.
    let mut options = quiet(Options::replay(&saved));
    options.add_mcp_http("odd", None);
    let proxy = start(&options).await.unwrap();
    let hi = chat_request("hi");
    assert_eq!(crate::post(proxy.url(), "/v1/chat/completions", &hi).await.status, 200);
    let url = format!("{}/mcp/odd", proxy.url());
    post_message(&url, &init).await;
    let (_, content_type, events) = post_message(&url, &call(2, "multi")).await;
    assert_eq!(content_type, "text/event-stream");
    assert!(
        events.lines().all(|line| line.is_empty()
            || line.starts_with("event: ")
            || line.starts_with("data: ")),
        "{events}"
    );
    let messages: Vec<Value> = events
        .split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| {
            let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
            serde_json::from_str(&data.join("\n")).unwrap()
        })
        .collect();
    assert_eq!(messages[0]["params"], json!({"progress": 1}), "{events}");
    let result = (messages[1]["id"].clone(), messages[1]["result"].clone());
    assert_eq!(result, (json!(2), json!({"content": []})));
    let (_, _, cut) = post_message(&url, &call(3, "cut")).await;
    let Error::NotExact { verdict, .. } = proxy.finish().await.unwrap_err() else {
        panic!("the replay of a request without its response is not exact")
    };
    let expected = "MCP server `odd`: the tape holds no response to tools/call of `cut` (message 6 of the script); it was recorded without one";
    assert_eq!(verdict.errors, [expected]);
    assert!(cut.contains(r#""id":3"#) && cut.contains(expected), "{cut}");
}

#[tokio::test]
async fn a_server_that_cannot_be_reached_is_named_by_its_origin_alone() {
    let dir = tempfile::tempdir().unwrap();
    let provider =
        atif_fake_provider::FakeProvider::start(atif_fake_provider::Config::default()).unwrap();
    // Nothing listens on the port; the URL's path holds what could be a key.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("http://127.0.0.1:{port}/s/k-0123456789abcdef/mcp?token=t0k3n");
    let mut options = quiet(Options::record(dir.path().join("run.script.json")));
    options.set_upstream(provider.url()).add_mcp_http("remote", Some(url));
    let proxy = start(&options).await.unwrap();
    let hi = chat_request("hi");
    assert_eq!(crate::post(proxy.url(), "/v1/chat/completions", &hi).await.status, 200);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let (status, _, body) = post_message(&format!("{}/mcp/remote", proxy.url()), &init).await;
    assert_eq!(status, 502, "{body}");
    let Error::NotExact { verdict, .. } = proxy.finish().await.unwrap_err() else {
        panic!("an unreachable server fails the recording")
    };
    let error = &verdict.errors[0];
    assert!(
        error.starts_with(&format!(
            "MCP server `remote` at http://127.0.0.1:{port} cannot be reached"
        )),
        "{error}"
    );
    for text in [error.as_str(), body.as_str()] {
        assert!(!text.contains("0123456789abcdef") && !text.contains("t0k3n"), "{text}");
    }
}
