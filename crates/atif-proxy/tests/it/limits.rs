//! Every input is bounded: a request body by its size, all bodies at once by a budget, and a
//! client that pauses while sending one by a timeout.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use atif_proxy::{Error, Options, Proxy, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::{chat_exchange, chat_request, quiet, write};

/// A replay of one exchange asked `content`, with `configure` applied to its options.
async fn replay_with(dir: &std::path::Path, configure: impl FnOnce(&mut Options)) -> Proxy {
    let path = write(dir, vec![chat_exchange("hi", "hello")]);
    let mut options = quiet(Options::replay(&path));
    configure(&mut options);
    start(&options).await.unwrap()
}

/// Opens a connection and sends the head of a Chat Completions POST whose body is
/// `content_length` bytes long, with `first` of it.
async fn begin(addr: SocketAddr, content_length: usize, first: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {content_length}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(first).await.unwrap();
    stream
}

/// Reads the reply to its end, failing the test after `within`: status and body.
async fn reply(stream: &mut TcpStream, within: Duration) -> (u16, String) {
    let mut reply = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut reply))
        .await
        .expect("the server answered and closed in time")
        .unwrap();
    let reply = String::from_utf8(reply).unwrap();
    let status = reply.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let body = reply.split_once("\r\n\r\n").map_or("", |(_, body)| body).to_owned();
    (status, body)
}

/// The request the exchange was recorded with, padded with spaces to `len` bytes.
fn padded_request(len: usize) -> Vec<u8> {
    let mut body = chat_request("hi").to_string().into_bytes();
    body.resize(len, b' ');
    body
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = replay_with(dir.path(), |options| {
        options.set_max_body_bytes(1024);
    })
    .await;
    // Ten gigabytes announced, none sent: refused at once.
    let mut stream = begin(proxy.addr(), 10 << 30, b"").await;
    let (status, body) = reply(&mut stream, Duration::from_secs(5)).await;
    assert_eq!(status, 413, "{body}");
    assert!(
        body.contains(
            "cannot read the request body of POST /v1/chat/completions: it is larger than the \
             limit of 1024 bytes (--max-body-bytes)"
        ),
        "{body}"
    );
    // Without a length (chunked), it is stopped where it passes the limit.
    let response = reqwest::Client::new()
        .post(format!("{}/v1/chat/completions", proxy.url()))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            (0..8).map(|_| Ok::<_, std::io::Error>(vec![b' '; 512])),
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    let recorded = crate::post(proxy.url(), "/v1/chat/completions", &chat_request("hi")).await;
    assert_eq!(recorded.status, 200, "{}", recorded.body);
    let Error::NotExact { verdict, .. } = proxy.finish().await.unwrap_err() else { unreachable!() };
    assert_eq!((verdict.requests_served, verdict.errors.len()), (1, 2));
}

#[tokio::test]
async fn bodies_in_flight_share_one_budget_and_give_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = replay_with(dir.path(), |options| {
        options.set_max_buffered_bytes(8 * 1024);
    })
    .await;
    let body = padded_request(6 * 1024);
    // The first holds 6 KiB of the 8 while it is sent.
    let mut first = begin(proxy.addr(), body.len(), &body[..10]).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut second = begin(proxy.addr(), 4 * 1024, b"").await;
    let (status, text) = reply(&mut second, Duration::from_secs(5)).await;
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("already hold the limit of 8192 bytes (--max-buffered-bytes)"), "{text}");
    first.write_all(&body[10..]).await.unwrap();
    let (status, text) = reply(&mut first, Duration::from_secs(5)).await;
    assert_eq!(status, 200, "{text}");
    // Given back: a body of the same size fits again.
    let mut third = begin(proxy.addr(), body.len(), &body).await;
    let (status, text) = reply(&mut third, Duration::from_secs(5)).await;
    assert_eq!(status, 400, "served before, so one request too many, not 503: {text}");
}

#[tokio::test]
async fn a_body_trickled_slower_than_the_timeout_is_cut_off_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = replay_with(dir.path(), |options| {
        options.set_body_read_timeout(Duration::from_millis(300));
    })
    .await;
    let body = padded_request(100);
    let started = Instant::now();
    let stream = begin(proxy.addr(), body.len(), &body[..1]).await;
    let (mut read, mut write) = stream.into_split();
    // One byte a second, while the server waits at most 0.3 s for the next; the 99 bytes
    // would take 99 s.
    let trickle = tokio::spawn(async move {
        for byte in &body[1..] {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if write.write_all(&[*byte]).await.is_err() {
                break;
            }
        }
    });
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), read.read_to_end(&mut reply))
        .await
        .expect("the server answered and closed")
        .unwrap();
    let closed_after = started.elapsed();
    trickle.abort();
    assert!(closed_after < Duration::from_secs(2), "closed after {closed_after:?}");
    let text = String::from_utf8(reply).unwrap();
    assert!(text.starts_with("HTTP/1.1 408 "), "{text}");
    assert!(text.contains("the client sent nothing for 0.3 s (--body-read-timeout)"), "{text}");
    let Error::NotExact { verdict, .. } = proxy.finish().await.unwrap_err() else { unreachable!() };
    assert_eq!(verdict.requests_served, 0);
}
