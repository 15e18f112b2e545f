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

/// A replay of one exchange, its connections timed with `header_read` and `idle`.
async fn timed_replay(dir: &std::path::Path, header_read: u64, idle: u64) -> Proxy {
    let path = crate::write(dir, vec![crate::chat_exchange("hi", "hello")]);
    let mut options = quiet(Options::replay(&path));
    options
        .set_header_read_timeout(Duration::from_millis(header_read))
        .set_idle_timeout(Duration::from_millis(idle));
    start(&options).await.unwrap()
}

/// Waits for the server to close `stream`, reading (and dropping) what it sends: how long
/// that took, failing the test after 10 s.
async fn closed_after(stream: &mut tokio::net::TcpStream, started: Instant) -> Duration {
    use tokio::io::AsyncReadExt;
    let mut sink = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut sink)).await;
    assert!(read.is_ok(), "the server kept the connection open for 10 s");
    started.elapsed()
}

#[tokio::test]
async fn headers_sent_one_byte_a_second_are_cut_off_at_the_header_timeout() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let proxy = timed_replay(dir.path(), 500, 60_000).await;
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n",
        proxy.addr()
    );
    let started = Instant::now();
    let stream = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for byte in head.bytes() {
            if write.write_all(&[byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let mut sink = Vec::new();
    let read = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::io::AsyncReadExt::read_to_end(&mut read, &mut sink),
    )
    .await;
    trickle.abort();
    assert!(read.is_ok(), "the server kept the connection open for 10 s");
    assert!(started.elapsed() < Duration::from_secs(3), "closed after {:?}", started.elapsed());
    // A connection that never sends a byte is closed as well.
    let mut silent = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap();
    let after = closed_after(&mut silent, Instant::now()).await;
    assert!(after < Duration::from_secs(3), "closed after {after:?}");
    // The agent's own request is still answered.
    assert_eq!(
        crate::post(proxy.url(), "/v1/chat/completions", &crate::chat_request("hi")).await.status,
        200
    );
    // The head cut off was a request lost, which fails the run; the silent connection is only
    // counted.
    let verdict = proxy.verdict();
    assert_eq!((verdict.connections_closed_slow_head, verdict.connections_closed_idle), (1, 1));
    assert_eq!(
        errors(proxy.finish().await.unwrap_err()),
        ["a connection was closed because a request's head did not arrive in full within 0.5 s \
          (--header-read-timeout); that request was lost"]
    );
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_at_the_idle_timeout_and_not_before() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    // A header timeout shorter than the idle one: an idle connection is not cut at 0.3 s.
    let proxy = timed_replay(dir.path(), 300, 1_500).await;
    let request = |content: &str| {
        let body = crate::chat_request(content).to_string();
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            proxy.addr(),
            body.len()
        )
    };
    let mut stream = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap();
    stream.write_all(request("hi").as_bytes()).await.unwrap();
    let mut reply = vec![0; 4096];
    let n = stream.read(&mut reply).await.unwrap();
    assert!(reply[..n].starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&reply[..n]));
    // Idle for 0.8 s, longer than the header timeout: still open, and still answering.
    tokio::time::sleep(Duration::from_millis(800)).await;
    stream.write_all(request("again").as_bytes()).await.unwrap();
    let n = stream.read(&mut reply).await.unwrap();
    assert!(reply[..n].starts_with(b"HTTP/1.1 400"), "{}", String::from_utf8_lossy(&reply[..n]));
    // Then idle for good: closed about 1.5 s after that reply.
    let idle_from = Instant::now();
    let after = closed_after(&mut stream, idle_from).await;
    assert!(after >= Duration::from_millis(1_000), "closed too early, after {after:?}");
    assert!(after < Duration::from_secs(4), "closed after {after:?}");
    // Closing an idle connection is counted, and is not a failure of the run: the replay's
    // one failure is the second request, which the script does not hold.
    let verdict = proxy.verdict();
    assert_eq!((verdict.connections_closed_slow_head, verdict.connections_closed_idle), (0, 1));
    assert_eq!(verdict.errors.len(), 1, "{:?}", verdict.errors);
    assert!(verdict.errors[0].contains("made request #2"), "{:?}", verdict.errors);
    let _ = proxy.finish().await;
}
