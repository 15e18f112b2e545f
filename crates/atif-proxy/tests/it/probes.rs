//! Probes: Claude Code's `HEAD /api/hello` and `HEAD` on the `GET` endpoints, recorded as what
//! the upstream answered, replayed as often as asked, and never owed.

use atif_fake_provider::{Config, FakeProvider, unreachable_url};
use atif_proxy::{Error, Options, start};
use atif_replay::read_script;

use crate::{chat_exchange, chat_request, post, quiet, replay, write};

/// Sends `method path` with no body and returns the status and the body's length.
async fn probe(base: &str, method: &str, path: &str) -> (u16, usize) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let response = reqwest::Client::new().request(method, format!("{base}{path}")).send().await;
    let response = response.unwrap();
    let status = response.status().as_u16();
    (status, response.bytes().await.unwrap().len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_is_recorded_replayed_as_often_as_asked_and_never_owed() {
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probe.script.json");
    let mut options = quiet(Options::record(&path));
    options.set_upstream(provider.url());
    let proxy = start(&options).await.unwrap();
    assert_eq!(probe(proxy.url(), "HEAD", "/api/hello").await, (200, 0));
    let body =
        serde_json::json!({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(post(proxy.url(), "/v1/chat/completions", &body).await.status, 200);
    let verdict = proxy.finish().await.unwrap();
    assert!(verdict.ok, "{verdict:?}");
    let script = read_script(&path).unwrap();
    let methods: Vec<_> =
        script.exchanges.iter().map(|e| (e.method.as_str(), e.path.as_str())).collect();
    assert_eq!(methods, [("HEAD", "/api/hello"), ("POST", "/v1/chat/completions")]);
    assert!(provider.requests().iter().any(|request| request.path == "/api/hello"), "forwarded");

    // The replay answers the probe as recorded, as often as asked, and does not owe it.
    let proxy = replay(&path).await;
    for _ in 0..3 {
        assert_eq!(probe(proxy.url(), "HEAD", "/api/hello").await, (200, 0));
    }
    assert_eq!(post(proxy.url(), "/v1/chat/completions", &body).await.status, 200);
    proxy.finish().await.unwrap();
    let proxy = replay(&path).await;
    assert_eq!(post(proxy.url(), "/v1/chat/completions", &body).await.status, 200);
    let verdict = proxy.finish().await.unwrap();
    assert!(verdict.unused_exchanges.is_empty(), "a probe never asked is not owed: {verdict:?}");
}

#[tokio::test]
async fn head_on_a_get_endpoint_answers_like_get_without_a_body() {
    let dir = tempfile::tempdir().unwrap();
    // A script recorded without a probe or a listing (say, before either was asked for).
    let path = write(dir.path(), vec![chat_exchange("hi", "hello")]);
    let proxy = replay(&path).await;
    let (status, listed) = probe(proxy.url(), "GET", "/v1/models").await;
    assert_eq!(status, 200);
    assert!(listed > 0);
    assert_eq!(probe(proxy.url(), "HEAD", "/v1/models").await, (200, 0));
    assert_eq!(probe(proxy.url(), "HEAD", "/api/hello").await, (200, 0));
    assert_eq!(probe(proxy.url(), "GET", "/api/hello").await, (200, 0));
    // HEAD on an endpoint that has no GET is as unknown as GET there.
    assert_eq!(probe(proxy.url(), "HEAD", "/v1/chat/completions").await.0, 404);
    assert_eq!(post(proxy.url(), "/v1/chat/completions", &chat_request("hi")).await.status, 200);
    let err = proxy.finish().await.unwrap_err();
    let Error::NotExact { verdict, .. } = err else { panic!("not a verdict") };
    assert_eq!(verdict.errors.len(), 1, "only the HEAD without a GET failed: {verdict:?}");
    assert!(verdict.errors[0].starts_with("unknown endpoint HEAD /v1/chat/completions"));
}

#[tokio::test]
async fn a_probe_the_upstream_cannot_answer_is_a_warning_not_a_failure() {
    let down = unreachable_url().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("down.script.json");
    let mut options = quiet(Options::record(&path));
    options.set_upstream(down);
    let proxy = start(&options).await.unwrap();
    assert_eq!(probe(proxy.url(), "HEAD", "/api/hello").await.0, 502);
    let verdict = proxy.verdict();
    assert!(verdict.errors.is_empty(), "{verdict:?}");
    assert!(verdict.warnings[0].starts_with("cannot reach the upstream"), "{verdict:?}");
    // With nothing but the probe, the recording has no exchange: not exact, and not saved.
    let err = proxy.finish().await.unwrap_err();
    let Error::NotExact { verdict, saved } = err else { panic!("not a verdict") };
    assert_eq!(saved, None);
    assert_eq!(verdict.errors.len(), 1, "{verdict:?}");
    assert!(verdict.errors[0].starts_with("no exchange was recorded"));
    assert!(!path.exists());
}
