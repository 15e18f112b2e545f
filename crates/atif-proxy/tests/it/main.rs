//! Integration tests of atif-proxy: real tokio runtimes, real HTTP between a reqwest client,
//! the proxy and an upstream (the fake provider, or a hand-driven one), real script files.
#![allow(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]

mod access;
mod limits;
mod mcp_http;
mod probes;
mod record;
mod replay;
mod secrets;
mod timeouts;

use std::path::{Path, PathBuf};

use atif_proxy::{Options, Proxy, start};
use atif_replay::{HttpExchange, Script, write_script};
use serde_json::{Value, json};

/// What a client got back: status, content type, body text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

/// POSTs `body` as JSON to `base` + `path`.
pub(crate) async fn post(base: &str, path: &str, body: &Value) -> Reply {
    send(base, path, &body.to_string(), &[]).await
}

/// POSTs raw `body` text with `headers` to `base` + `path`, as JSON unless `headers` name
/// another content type.
pub(crate) async fn send(base: &str, path: &str, body: &str, headers: &[(&str, &str)]) -> Reply {
    let mut request = reqwest::Client::new().post(format!("{base}{path}")).body(body.to_owned());
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("content-type")) {
        request = request.header("content-type", "application/json");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    read(request.send().await.unwrap()).await
}

pub(crate) async fn read(response: reqwest::Response) -> Reply {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.text().await.unwrap();
    Reply { status, content_type, body }
}

/// Sends `request` (a whole HTTP/1.1 request, which should say `Connection: close`) over a raw
/// TCP connection to `addr`, and reads the reply to its end: status, headers, body.
pub(crate) async fn raw(addr: std::net::SocketAddr, request: &str) -> (u16, String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).await.unwrap();
    let reply = String::from_utf8(reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

/// A Chat Completions request whose user message is `content`.
pub(crate) fn chat_request(content: &str) -> Value {
    json!({"model": "gpt-test", "messages": [{"role": "user", "content": content}]})
}

/// A Chat Completions reply saying `text`.
pub(crate) fn chat_reply(text: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
           "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
}

/// A recorded Chat Completions exchange: `content` asked, `text` answered.
pub(crate) fn chat_exchange(content: &str, text: &str) -> HttpExchange {
    HttpExchange::new("POST", "/v1/chat/completions", chat_request(content), 200)
        .with_body(chat_reply(text))
}

/// Writes a script holding `exchanges` into `dir`.
pub(crate) fn write(dir: &Path, exchanges: Vec<HttpExchange>) -> PathBuf {
    let path = dir.join("run.script.json");
    let mut script = Script::new(None);
    script.exchanges = exchanges;
    write_script(&path, &script, &[]).unwrap();
    path
}

/// Options with failures kept off the test's standard error, and fixed directories.
pub(crate) fn quiet(mut options: Options) -> Options {
    options.set_quiet(true).set_cwd(Some("/work/run".into())).set_home(Some("/home/tester".into()));
    options
}

/// Starts a replay of `path`.
pub(crate) async fn replay(path: &Path) -> Proxy {
    start(&quiet(Options::replay(path))).await.unwrap()
}

pub(crate) use atif_schema::error_chain as chain;
