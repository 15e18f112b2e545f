//! Recording: each request is forwarded to the upstream and its reply streamed back to the
//! agent as it arrives, while a copy is parsed (as JSON or as server-sent events) and saved.

use std::collections::BTreeMap;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use atif_replay::{McpMessage, Recording, Script};
use atif_schema::error_chain;
use atif_wire::{HttpExchange, SseEvent, SseParser};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;
use futures_util::Stream;
use serde_json::Value;

use crate::clean::Cleaner;
use crate::journal::{Journal, Logged, body_failure, not_json};
use crate::normalize::Normalizer;
use crate::protocol::{Endpoint, error_body, public_origin, strip_credentials};
use crate::reply::{is_hop_header, json_reply, seconds};
use crate::upload::{Upload, UploadError, Uploaded};
use crate::{Error, Result};

/// The recording side of the server: the upstream client and what the recording notes.
#[derive(Debug)]
pub(crate) struct Recorder {
    client: reqwest::Client,
    upstream: Option<String>,
    recording: Recording,
    timeouts: UpstreamTimeouts,
}

/// How long the upstream may keep the agent waiting.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UpstreamTimeouts {
    /// From sending the request to the reply's status and headers.
    pub(crate) first_byte: Duration,
    /// Between two chunks of the reply's body (a stream's events).
    pub(crate) idle: Duration,
}

/// A request to forward.
#[derive(Debug)]
pub(crate) struct Forward {
    pub(crate) endpoint: Endpoint,
    pub(crate) method: Method,
    pub(crate) path_and_query: String,
    pub(crate) headers: HeaderMap,
    pub(crate) payload: Payload,
}

/// A forwarded request's body.
#[derive(Debug)]
pub(crate) enum Payload {
    /// Read whole first (a `GET` or `HEAD` has no JSON: `null`).
    Whole { body: Bytes, json: Value },
    /// Forwarded as it arrives, its JSON read on the side (a model call's body, which may be
    /// hundreds of megabytes).
    Streamed { upload: Upload, uploaded: Uploaded },
}

/// Why the upstream's reply did not begin.
enum SendError {
    /// Nothing within the first-byte timeout.
    Silent,
    /// The request failed (the upstream unreachable, or the body's upload aborted).
    Failed(reqwest::Error),
}

impl Recorder {
    /// A recorder sending every request to `upstream` (or each provider's public API).
    pub(crate) fn new(
        upstream: Option<&str>,
        recording: Recording,
        timeouts: UpstreamTimeouts,
    ) -> Result<Recorder> {
        if let Some(url) = upstream {
            let valid = ["http://", "https://"]
                .into_iter()
                .any(|scheme| url.strip_prefix(scheme).is_some_and(|rest| !rest.is_empty()));
            if !valid {
                return Err(Error::Upstream { url: Cleaner::new().clean(url.to_owned()) });
            }
        }
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|source| Error::Client { source })?;
        Ok(Recorder {
            client,
            upstream: upstream.map(|url| url.trim_end_matches('/').to_owned()),
            recording,
            timeouts,
        })
    }

    /// Saves `exchanges` and the MCP relays' messages atomically, with secrets redacted.
    pub(crate) fn save(
        &self,
        path: &Path,
        exchanges: Vec<HttpExchange>,
        mcp: Vec<McpMessage>,
    ) -> Result<()> {
        let mut script = Script::new(None);
        script.recording = Some(self.recording.clone());
        script.exchanges = exchanges;
        script.mcp = mcp;
        atif_replay::support::write_script_owned(path, script, &[])?;
        Ok(())
    }

    /// Forwards `request` upstream and streams the reply back, saving a copy when it ends.
    pub(crate) async fn forward(
        &self,
        journal: &Arc<Journal>,
        normalizer: &Normalizer,
        request: Forward,
    ) -> Response {
        let seq = journal.next_seq();
        let what = format!(
            "{} {}",
            request.method,
            request.path_and_query.split('?').next().unwrap_or("")
        );
        let Forward { endpoint, method, path_and_query, headers, payload } = request;
        let (body, uploaded) = match payload {
            Payload::Whole { body, json } => (reqwest::Body::from(body), Err(json)),
            Payload::Streamed { upload, uploaded } => {
                (reqwest::Body::wrap_stream(upload), Ok(uploaded))
            }
        };
        let sent = self.send(endpoint, &method, &path_and_query, &headers, body).await;
        // A body that broke a limit or is not JSON was never forwarded whole: that is the
        // agent's failure, whatever the upstream made of the aborted request.
        let json = match uploaded {
            Err(json) => json,
            Ok(uploaded) => match uploaded.json().await {
                Ok(json) => json,
                Err(err) => {
                    return upload_failure(journal, endpoint, &method, &path_and_query, err);
                }
            },
        };
        let reply = match sent {
            Ok(reply) => reply,
            Err(err) => return self.send_failure(journal, endpoint, &what, err),
        };
        let status = reply.status();
        let (response, kept) = pass_on_headers(&reply);
        let is_stream =
            kept.get("content-type").is_some_and(|ct| ct.starts_with("text/event-stream"));
        let mut saved_request = json;
        normalizer.insert_placeholders(&mut saved_request);
        let mut exchange = HttpExchange::new(
            method.as_str(),
            strip_credentials(&path_and_query),
            saved_request,
            status.as_u16(),
        );
        exchange.headers = kept;
        journal.served();
        if method == Method::HEAD {
            // No body follows, and the server never reads one for a HEAD reply.
            journal.log(seq, Logged::Recorded(exchange));
            return response.body(Body::empty()).unwrap_or_else(|_| Response::new(Body::empty()));
        }
        let pending = Some(Pending {
            seq,
            what,
            exchange,
            parser: is_stream.then(SseParser::new),
            bytes: Vec::new(),
            normalizer: normalizer.clone(),
        });
        let tee = Tee {
            upstream: Box::pin(reply.bytes_stream()),
            journal: journal.clone(),
            pending,
            cut: None,
            idle: self.timeouts.idle,
            deadline: Box::pin(tokio::time::sleep(self.timeouts.idle)),
        };
        response.body(Body::from_stream(tee)).unwrap_or_else(|_| Response::new(Body::empty()))
    }

    /// Sends the request upstream and waits for its reply to begin.
    async fn send(
        &self,
        endpoint: Endpoint,
        method: &Method,
        path_and_query: &str,
        headers: &HeaderMap,
        body: reqwest::Body,
    ) -> Result<reqwest::Response, SendError> {
        let url = format!("{}{path_and_query}", self.origin(endpoint));
        let mut upstream_request = self.client.request(method.clone(), &url);
        for (name, value) in headers {
            // Without `accept-encoding` the upstream replies uncompressed, so the copy can be
            // read as it passes.
            if !is_hop_header(name.as_str()) && name != header::ACCEPT_ENCODING {
                upstream_request = upstream_request.header(name, value);
            }
        }
        let sent = upstream_request.body(body).send();
        match tokio::time::timeout(self.timeouts.first_byte, sent).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(err)) => Err(SendError::Failed(err)),
            Err(_) => Err(SendError::Silent),
        }
    }

    /// Where requests to `endpoint` go: `--upstream`, or the provider's public API.
    fn origin(&self, endpoint: Endpoint) -> &str {
        self.upstream.as_deref().unwrap_or(public_origin(endpoint.protocol()))
    }

    /// Answers the agent when the upstream's reply did not begin: the upstream unreachable
    /// (502) or silent past the first-byte timeout (504).
    fn send_failure(
        &self,
        journal: &Journal,
        endpoint: Endpoint,
        what: &str,
        err: SendError,
    ) -> Response {
        let protocol = endpoint.protocol();
        let origin = self.origin(endpoint);
        let err = match err {
            SendError::Failed(err) => err,
            SendError::Silent => {
                let message = format!(
                    "the upstream {origin} sent no reply to {what} within {} \
                     (--upstream-first-byte-timeout)",
                    seconds(self.timeouts.first_byte)
                );
                let message = journal.clean(message);
                return journal.failure(protocol, StatusCode::GATEWAY_TIMEOUT, message);
            }
        };
        let message = format!(
            "cannot reach the upstream {origin} for {what}: {}; is it running, and is \
             --upstream right?",
            error_chain(&err)
        );
        let message = journal.clean(message);
        if endpoint == Endpoint::Probe {
            // A probe that fails is the agent's business: the model calls that follow say
            // whether the upstream is there.
            let response = json_reply(
                StatusCode::BAD_GATEWAY,
                &error_body(protocol, StatusCode::BAD_GATEWAY.as_u16(), &message),
            );
            journal.warn(message);
            return response;
        }
        journal.failure(protocol, StatusCode::BAD_GATEWAY, message)
    }
}

/// The agent's reply with the upstream's status and headers (those of the connection and the
/// encoding aside), and the headers the recording keeps.
fn pass_on_headers(
    reply: &reqwest::Response,
) -> (axum::http::response::Builder, BTreeMap<String, String>) {
    let mut response = Response::builder().status(reply.status().as_u16());
    let mut kept = BTreeMap::new();
    for (name, value) in reply.headers() {
        if is_hop_header(name.as_str()) || name == header::CONTENT_ENCODING {
            continue;
        }
        response = response.header(name, value);
        if is_kept_header(name.as_str()) {
            kept.insert(name.as_str().to_owned(), value.to_str().unwrap_or_default().to_owned());
        }
    }
    (response, kept)
}

/// Answers the agent when its body broke a limit or is not JSON, as a body read whole is.
fn upload_failure(
    journal: &Journal,
    endpoint: Endpoint,
    method: &Method,
    path_and_query: &str,
    err: UploadError,
) -> Response {
    let path = path_and_query.split('?').next().unwrap_or_default();
    match err {
        UploadError::Body(err) => body_failure(journal, endpoint.protocol(), method, path, err),
        UploadError::NotJson(err) => not_json(journal, endpoint.protocol(), method, path, &err),
    }
}

/// An exchange whose reply is still arriving.
struct Pending {
    seq: u64,
    what: String,
    exchange: HttpExchange,
    parser: Option<SseParser>,
    bytes: Vec<u8>,
    normalizer: Normalizer,
}

/// The upstream's reply body on its way to the agent, copied into the recording as it passes.
struct Tee {
    upstream: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    journal: Arc<Journal>,
    pending: Option<Pending>,
    /// The upstream's error, passed on one poll after it came so that the server flushes what
    /// was sent before it cuts the agent's connection.
    cut: Option<std::io::Error>,
    /// The longest the upstream may send nothing, and when that runs out.
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl Stream for Tee {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(err) = self.cut.take() {
            return Poll::Ready(Some(Err(err)));
        }
        match self.upstream.as_mut().poll_next(cx) {
            Poll::Pending => {
                if self.deadline.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                let reason = format!(
                    "the upstream sent nothing for {} (--upstream-idle-timeout)",
                    seconds(self.idle)
                );
                self.end(Ending::Cut(reason.clone()));
                self.cut = Some(std::io::Error::other(reason));
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Poll::Ready(Some(Ok(bytes))) => {
                let next = tokio::time::Instant::now() + self.idle;
                self.deadline.as_mut().reset(next);
                if let Some(pending) = &mut self.pending {
                    match &mut pending.parser {
                        Some(parser) => parser.feed(&bytes),
                        None => pending.bytes.extend_from_slice(&bytes),
                    }
                }
                Poll::Ready(Some(Ok(bytes)))
            }
            Poll::Ready(Some(Err(err))) => {
                let reason = format!("the upstream cut the reply off: {}", error_chain(&err));
                self.end(Ending::Cut(reason));
                self.cut = Some(std::io::Error::other(err));
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Poll::Ready(None) => {
                self.end(Ending::Complete);
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for Tee {
    fn drop(&mut self) {
        if self.pending.is_some() {
            self.end(Ending::AgentClosed);
        }
    }
}

/// How a reply's way to the agent ended.
enum Ending {
    /// The upstream ended the body.
    Complete,
    /// The upstream cut it off, for this reason.
    Cut(String),
    /// The agent closed the connection first.
    AgentClosed,
}

impl Tee {
    /// Saves the exchange: its whole reply, or what arrived before it was cut.
    ///
    /// A reply is judged by its content, not by when its body ended: one the agent closed after
    /// its protocol's last event (a stream's terminal event, a whole JSON body) is complete, as
    /// SDKs that stop reading at `data: [DONE]` close it before a late end of body.
    fn end(&mut self, ending: Ending) {
        let Some(pending) = self.pending.take() else { return };
        let Pending { seq, what, mut exchange, parser, bytes, normalizer } = pending;
        let agent_closed = matches!(ending, Ending::AgentClosed);
        let mut cut = match ending {
            Ending::Complete => None,
            Ending::Cut(reason) => Some(reason),
            Ending::AgentClosed => {
                Some("the agent closed the connection before the reply ended".to_owned())
            }
        };
        match parser {
            Some(mut parser) => {
                let partial = parser.has_partial_event();
                let mut events = parser.take_events();
                if agent_closed && events.iter().any(ends_stream) {
                    cut = None;
                } else if cut.is_none() && partial {
                    cut = Some("the upstream ended the stream inside an event".to_owned());
                }
                for event in &mut events {
                    normalizer.insert_placeholders(&mut event.data);
                }
                exchange.events = Some(events);
                exchange.crlf = parser.crlf();
            }
            None => match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut body) if cut.is_none() || agent_closed => {
                    cut = None;
                    normalizer.insert_placeholders(&mut body);
                    exchange.body = Some(body);
                }
                _ if bytes.is_empty() => {}
                _ => {
                    let mut text = Value::String(String::from_utf8_lossy(&bytes).into_owned());
                    normalizer.insert_placeholders(&mut text);
                    exchange.text = text.as_str().map(str::to_owned);
                }
            },
        }
        if let Some(reason) = &cut {
            self.journal.fail(format!(
                "{what}: the reply was cut off midway ({reason}); it is recorded as cut"
            ));
        }
        exchange.cut = cut;
        self.journal.log(seq, Logged::Recorded(exchange));
    }
}

/// Whether `event` is its protocol's last: `data: [DONE]` (OpenAI Chat Completions),
/// `message_stop` (Anthropic), `response.completed`, `response.incomplete` or
/// `response.failed` (OpenAI Responses), or a Gemini chunk whose candidate has a
/// `finishReason`.
fn ends_stream(event: &SseEvent) -> bool {
    match &event.data {
        Value::String(text) => text.trim() == "[DONE]",
        Value::Object(data) => {
            let kind = data.get("type").and_then(Value::as_str);
            let finished =
                data.get("candidates").and_then(Value::as_array).is_some_and(|candidates| {
                    candidates.iter().any(|candidate| candidate.get("finishReason").is_some())
                });
            finished
                || matches!(
                    kind,
                    Some(
                        "message_stop"
                            | "response.completed"
                            | "response.incomplete"
                            | "response.failed"
                    )
                )
        }
        _ => false,
    }
}

/// Whether a reply header is saved in the script and sent again by a replay: the content type,
/// and what agents and SDKs act on (when to retry, how much of a rate limit is left, the
/// request id they log and report). Every other header (cookies, dates, the provider's
/// routing) stays out of the script.
pub(crate) fn is_kept_header(name: &str) -> bool {
    matches!(
        name,
        "content-type"
            | "retry-after"
            | "retry-after-ms"
            | "x-should-retry"
            | "request-id"
            | "x-request-id"
            | "openai-processing-ms"
    ) || name.starts_with("x-ratelimit-")
        || name.starts_with("anthropic-ratelimit-")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_protocol_s_terminal_event_ends_its_stream_and_no_other_does() {
        let check = |event: SseEvent, expected: bool| {
            assert_eq!(ends_stream(&event), expected, "{event:?}");
        };
        check(SseEvent::from_text(None, "[DONE]"), true);
        check(SseEvent::new(Some("message_stop"), json!({"type": "message_stop"})), true);
        check(SseEvent::new(None, json!({"type": "response.completed", "response": {}})), true);
        check(SseEvent::new(None, json!({"type": "response.incomplete"})), true);
        check(SseEvent::new(None, json!({"candidates": [{"finishReason": "STOP"}]})), true);
        check(SseEvent::from_text(None, "[DONE"), false);
        check(SseEvent::new(None, json!({"type": "message_delta"})), false);
        check(SseEvent::new(None, json!({"type": "response.output_text.delta"})), false);
        check(SseEvent::new(None, json!({"candidates": [{"content": {}}]})), false);
        check(SseEvent::new(None, json!({"choices": [{"finish_reason": "stop"}]})), false);
        check(SseEvent::comment(vec![" ping".to_owned()]), false);
    }
}
