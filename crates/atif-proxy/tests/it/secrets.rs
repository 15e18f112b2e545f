//! Secrets: every kind of credential, planted in headers, query, request and reply, is absent
//! from the saved script.

use atif_proxy::{Options, start};
use axum::http::HeaderMap;
use serde_json::json;

use crate::{quiet, send};

/// Every kind of secret, as `(kind, value)`.
const PLANTED: &[(&str, &str)] = &[
    ("anthropic key", "sk-ant-api03-AAAAbbbbCCCCddddEEEE"),
    ("openai key", "sk-proj-AAAAbbbbCCCCddddEEEEffff"),
    ("aws key id", "AKIAIOSFODNN7EXAMPLE"),
    ("github token", "ghp_AAAAbbbbCCCCddddEEEEffff0123"),
    ("github pat", "github_pat_AAAAbbbbCCCCddddEEEEffff0123"),
    ("bearer token", "Bearer abcdefghijklmnop.qrstuv"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_planted_secret_survives_into_the_script() {
    // The upstream answers with every secret too, in JSON and in an event stream.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    let everything: Vec<String> =
        PLANTED.iter().map(|(kind, value)| format!("{kind}: {value}")).collect();
    let reply_text = everything.join("; ");
    let app = axum::Router::new().fallback(move |_headers: HeaderMap, body: String| {
        let reply_text = reply_text.clone();
        async move {
            let streamed = body.contains("\"stream\":true");
            let reply = json!({"content": reply_text, "api_key": "plainvalue123", "password": "hunter2hunter2"});
            if streamed {
                axum::response::Response::builder()
                    .header("content-type", "text/event-stream")
                    .header("set-cookie", "session=setcookie-secret-123")
                    .body(axum::body::Body::from(format!("data: {reply}\n\ndata: [DONE]\n\n")))
                    .unwrap()
            } else {
                axum::response::Response::builder()
                    .header("content-type", "application/json")
                    .header("set-cookie", "session=setcookie-secret-123")
                    .body(axum::body::Body::from(reply.to_string()))
                    .unwrap()
            }
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.script.json");
    let mut options = quiet(Options::record(&path));
    options.set_upstream(&upstream);
    let proxy = start(&options).await.unwrap();
    let prompt = format!(
        "{}; config: api_key=plainvalue456, Authorization: Basic dXNlcjpwYXNzd29yZA==",
        PLANTED.iter().map(|(_, value)| *value).collect::<Vec<_>>().join(" ")
    );
    let headers = [
        ("authorization", "Bearer sk-proj-HeaderHeaderHeaderHeader"),
        ("x-api-key", "sk-ant-api03-HeaderHeaderHeader"),
        ("x-goog-api-key", "AIzaSyHeaderGoogleKey0123456789"),
        ("cookie", "session=cookie-secret-456"),
    ];
    for stream in [false, true] {
        let body = json!({
            "model": "m",
            "stream": stream,
            "messages": [{"role": "user", "content": prompt}],
            "client_secret": "client-secret-789",
            "metadata": {"password": "pw-in-metadata-000"},
        });
        let path = "/v1beta/models/m:generateContent?key=AIzaSyQueryGoogleKey0123456789";
        let reply = send(proxy.url(), path, &body.to_string(), &headers).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        // The agent itself gets the reply untouched.
        assert!(reply.body.contains(PLANTED[0].1));
    }
    proxy.finish().await.unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    let mut survivors: Vec<&str> = PLANTED.iter().map(|(_, value)| *value).collect();
    survivors.extend([
        "plainvalue123",
        "plainvalue456",
        "hunter2hunter2",
        "dXNlcjpwYXNzd29yZA",
        "HeaderHeader",
        "AIzaSyHeaderGoogleKey",
        "AIzaSyQueryGoogleKey",
        "cookie-secret",
        "setcookie-secret",
        "client-secret-789",
        "pw-in-metadata",
        "abcdefghijklmnop",
    ]);
    for secret in survivors {
        assert!(!text.contains(secret), "`{secret}` reached the script:\n{text}");
    }
    // What was redacted is still there as a marker, so the script stays reviewable.
    assert!(text.contains("<redacted:"), "{text}");
    assert_eq!(atif_replay::read_script(&path).unwrap().exchanges.len(), 2);
}
