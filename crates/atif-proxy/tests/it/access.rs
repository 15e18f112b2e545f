//! Who may talk to the server: requests from web pages (a foreign `Host` after DNS rebinding,
//! a cross-site `Origin`) are refused and never recorded; model endpoints take JSON only.

use atif_fake_provider::{Config, FakeProvider};
use atif_proxy::{Error, Options, start};
use atif_replay::read_script;
use serde_json::json;

use crate::{chat_exchange, chat_request, post, quiet, raw, replay, send, write};

/// The reproducer: a "simple" cross-site POST, which a browser sends without a
/// preflight, after DNS rebinding.
fn cross_site_post(host: &str, origin: &str) -> String {
    let body =
        json!({"model": "m", "messages": [{"role": "user", "content": "INJECTED BY A WEB PAGE"}]})
            .to_string();
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n\
         Content-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_cannot_write_into_a_recording() {
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.script.json");
    let mut options = quiet(Options::record(&path));
    options.set_upstream(provider.url());
    let proxy = start(&options).await.unwrap();
    let port = proxy.addr().port();

    let agent = json!({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(post(proxy.url(), "/v1/chat/completions", &agent).await.status, 200);
    let attacks = [
        cross_site_post(&format!("rebind.attacker.test:{port}"), "http://rebind.attacker.test"),
        // Without rebinding the page names the real address, and its Origin gives it away.
        cross_site_post(&format!("127.0.0.1:{port}"), "http://rebind.attacker.test"),
        cross_site_post(&format!("localhost:{port}"), "null"),
    ];
    for attack in &attacks {
        let (status, head, body) = raw(proxy.addr(), attack).await;
        assert_eq!(status, 403, "{head}\n{body}");
        assert!(head.to_ascii_lowercase().contains("x-should-retry: false"), "{head}");
        let message = serde_json::from_str::<serde_json::Value>(&body).unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.starts_with("refused a POST request: its "), "{message}");
    }

    let verdict = proxy.finish().await.unwrap();
    assert!(verdict.ok, "a refused request is not the agent's doing: {verdict:?}");
    assert_eq!(
        (verdict.requests_served, verdict.requests_refused, verdict.exchanges_recorded),
        (1, 3, 1)
    );
    assert!(
        verdict.summary().ends_with(
            "; 3 requests refused as not from the agent (a foreign Host, a web page's Origin or no control token)"
        ),
        "{}",
        verdict.summary()
    );
    assert_eq!(provider.requests().len(), 1, "a refused request never reaches the upstream");
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(!saved.contains("INJECTED"), "{saved}");
    assert_eq!(read_script(&path).unwrap().exchanges.len(), 1);
}

#[tokio::test]
async fn a_rebound_page_cannot_read_the_run_or_take_a_reply() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("secret plan", "the reply")]);
    let proxy = replay(&path).await;
    let port = proxy.addr().port();
    assert_eq!(
        post(proxy.url(), "/v1/chat/completions", &chat_request("secret plan")).await.status,
        200
    );
    for control in ["/_atif/trajectory", "/_atif/verdict"] {
        let (status, _, body) = raw(
            proxy.addr(),
            &format!(
                "GET {control} HTTP/1.1\r\nHost: rebind.attacker.test:{port}\r\n\
                 Origin: http://rebind.attacker.test:{port}\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        assert_eq!(status, 403, "{body}");
        assert!(!body.contains("secret plan") && !body.contains("the reply"), "{body}");
    }
    let verdict = proxy.finish().await.unwrap();
    assert_eq!((verdict.requests_served, verdict.requests_refused), (1, 2));
}

#[tokio::test]
async fn a_refused_request_takes_no_recorded_reply() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("hi", "hello")]);
    let proxy = replay(&path).await;
    let port = proxy.addr().port();
    let (status, _, _) =
        raw(proxy.addr(), &cross_site_post(&format!("evil.test:{port}"), "http://evil.test")).await;
    assert_eq!(status, 403);
    let reply = post(proxy.url(), "/v1/chat/completions", &chat_request("hi")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let verdict = proxy.finish().await.unwrap();
    assert_eq!((verdict.requests_served, verdict.requests_refused), (1, 1));
}

#[tokio::test]
async fn a_body_that_is_not_declared_json_is_refused_in_the_providers_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("hi", "hello")]);
    let proxy = replay(&path).await;
    let body = chat_request("hi").to_string();
    let plain = send(proxy.url(), "/v1/messages", &body, &[("content-type", "text/plain")]).await;
    assert_eq!(plain.status, 415, "{}", plain.body);
    assert_eq!(plain.json()["type"], "error");
    assert_eq!(plain.json()["error"]["type"], "invalid_request_error");
    assert_eq!(
        plain.json()["error"]["message"],
        "the request to POST /v1/messages has Content-Type `text/plain`; this endpoint accepts \
         only JSON bodies (Content-Type: application/json)"
    );
    let json_with_charset = send(
        proxy.url(),
        "/v1/chat/completions",
        &body,
        &[("content-type", "application/json; charset=utf-8")],
    )
    .await;
    assert_eq!(json_with_charset.status, 200, "{}", json_with_charset.body);
    let err = proxy.finish().await.unwrap_err();
    let Error::NotExact { verdict, .. } = err else { panic!("{err}") };
    assert_eq!(verdict.requests_served, 1);
    assert_eq!(verdict.errors.len(), 1, "the agent's own malformed request fails the run");
}

#[tokio::test]
async fn the_control_endpoints_answer_only_with_the_runs_token() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![chat_exchange("secret plan", "the reply")]);
    let proxy = replay(&path).await;
    assert_eq!(
        post(proxy.url(), "/v1/chat/completions", &chat_request("secret plan")).await.status,
        200
    );
    let get = |control: &'static str, header: Option<(&'static str, String)>| {
        let mut request = reqwest::Client::new().get(format!("{}{control}", proxy.url()));
        if let Some((name, value)) = header {
            request = request.header(name, value);
        }
        async move { crate::read(request.send().await.unwrap()).await }
    };
    for control in ["/_atif/trajectory", "/_atif/verdict"] {
        for header in [
            None,
            Some(("x-atif-token", "0".repeat(32))),
            Some(("authorization", "Bearer wrong".to_owned())),
        ] {
            let reply = get(control, header.clone()).await;
            assert_eq!(reply.status, 401, "{control} {header:?}: {}", reply.body);
            assert!(!reply.body.contains("secret plan"), "{}", reply.body);
        }
        let with_header = get(control, Some(("x-atif-token", proxy.token().to_owned()))).await;
        assert_eq!(with_header.status, 200, "{}", with_header.body);
        let bearer =
            get(control, Some(("authorization", format!("Bearer {}", proxy.token())))).await;
        assert_eq!(bearer.status, 200, "{}", bearer.body);
    }
    let verdict = proxy.finish().await.unwrap();
    assert_eq!((verdict.requests_served, verdict.requests_refused), (1, 6));
}

#[tokio::test]
async fn an_address_other_machines_can_reach_needs_allow_remote() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), vec![]);
    let mut options = quiet(Options::replay(&path));
    options.set_listen("0.0.0.0:0".parse().unwrap());
    let err = start(&options).await.unwrap_err();
    assert!(matches!(err, Error::Remote { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "refusing to listen on 0.0.0.0:0: other machines could reach it, be served the script's \
         replies and record through the server; listen on 127.0.0.1, or pass --allow-remote \
         (Options::set_allow_remote) if that is intended"
    );
    // Loopback needs no permission.
    options.set_listen("127.0.0.1:0".parse().unwrap());
    start(&options).await.unwrap().finish().await.unwrap();
}
