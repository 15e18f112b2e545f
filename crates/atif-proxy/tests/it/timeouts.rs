//! Nobody keeps the server waiting for ever: an upstream that never answers, or stops in the
//! middle of a stream, fails the exchange within its timeout and the recording is not exact.

use std::time::{Duration, Instant};

use atif_proxy::{Error, Options, Proxy, start};
use serde_json::json;
use tokio::sync::oneshot;

use crate::quiet;
use crate::record::gated_upstream;

/// A recording into a temp dir forwarding to `upstream`, with both upstream timeouts 0.3 s.
async fn impatient_recording(upstream: &str) -> (tempfile::TempDir, Proxy) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = quiet(Options::record(dir.path().join("run.script.json")));
    options
        .set_upstream(upstream)
        .set_upstream_first_byte_timeout(Duration::from_millis(300))
        .set_upstream_idle_timeout(Duration::from_millis(300));
    (dir, start(&options).await.unwrap())
}

fn errors(err: Error) -> Vec<String> {
    let Error::NotExact { verdict, .. } = err else { panic!("{err}") };
    assert!(!verdict.ok);
    verdict.errors
}

#[tokio::test]
async fn an_upstream_that_never_answers_is_a_504_within_the_timeout() {
    // It accepts the connection and reads nothing, writes nothing.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut connections = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            connections.push(stream);
        }
    });
    let (_dir, proxy) = impatient_recording(&upstream).await;
    let started = Instant::now();
    let request = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let reply = crate::post(proxy.url(), "/v1/chat/completions", &request).await;
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(reply.status, 504, "{}", reply.body);
    let expected = format!(
        "the upstream {upstream} sent no reply to POST /v1/chat/completions within 0.3 s \
         (--upstream-first-byte-timeout)"
    );
    assert_eq!(reply.json()["error"]["message"], expected.as_str());
    assert_eq!(errors(proxy.finish().await.unwrap_err())[0], expected);
    held.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_hangs_after_its_headers_is_cut_within_the_timeout_and_recorded_cut() {
    // The gate is never opened: the upstream sends its first event, then nothing.
    let (_never, gate) = oneshot::channel();
    let (upstream, _) = gated_upstream(
        "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        gate,
    )
    .await;
    let (_dir, proxy) = impatient_recording(&upstream).await;
    let started = Instant::now();
    let mut response = reqwest::Client::new()
        .post(format!("{}/v1/messages", proxy.url()))
        .header("content-type", "application/json")
        .body(json!({"model": "m", "stream": true, "messages": []}).to_string())
        .send()
        .await
        .unwrap();
    let first = response.chunk().await.unwrap().unwrap();
    assert!(first.starts_with(b"event: message_start"));
    let end = tokio::time::timeout(Duration::from_secs(10), response.chunk()).await.unwrap();
    assert!(end.is_err(), "the agent sees the cut: {end:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    let traffic = proxy.traffic().unwrap();
    assert_eq!(
        traffic[0].cut.as_deref(),
        Some("the upstream sent nothing for 0.3 s (--upstream-idle-timeout)")
    );
    assert_eq!(traffic[0].events.as_ref().unwrap().len(), 1);
    let errors = errors(proxy.finish().await.unwrap_err());
    assert_eq!(
        errors,
        ["POST /v1/messages: the reply was cut off midway (the upstream sent nothing for 0.3 s \
          (--upstream-idle-timeout)); it is recorded as cut"]
    );
}
