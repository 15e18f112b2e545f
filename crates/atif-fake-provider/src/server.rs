//! The HTTP server: routing of the four protocols, the request log, simulated failures, and the
//! handle that owns the server's thread.

use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::thread::JoinHandle;

use atif_wire::Protocol;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::sampling::{Sampled, Sampler};
use crate::turn::{Reply, Turn, read_turn};
use crate::wire::{Payload, count_tokens, encode, error_body, model_list};
use crate::{Config, Error, Fault, Result};

/// The largest request body read; a larger one is answered 413.
const MAX_REQUEST_BYTES: usize = 64 << 20;

/// The endpoints served, named in the 404 reply.
const ENDPOINTS: &str = "POST /v1/chat/completions, POST /v1/responses, POST /v1/messages, \
     POST /v1/messages/count_tokens, POST /v1beta/models/{model}:generateContent, \
     POST /v1beta/models/{model}:streamGenerateContent, POST /v1beta/models/{model}:countTokens, \
     GET /v1/models, GET or HEAD /api/hello, GET /_fake/requests";

/// A running fake provider. It serves on its own thread until dropped.
///
/// Start one with [`FakeProvider::start`]; it works the same from synchronous tests and from
/// inside a tokio runtime, because it runs its own.
///
/// It answers:
///
/// - OpenAI Chat Completions, `POST /v1/chat/completions`;
/// - OpenAI Responses, `POST /v1/responses`;
/// - Anthropic Messages, `POST /v1/messages` (query strings such as `?beta=true` included) and
///   `POST /v1/messages/count_tokens`;
/// - Gemini, `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` (with
///   `?alt=sse`, or a JSON array without it) and `:countTokens`;
/// - `GET /v1/models` (in Anthropic's shape when the request has an `anthropic-version` header,
///   in Gemini's under `/v1beta`);
/// - `GET` or `HEAD /api/hello`, Claude Code's connectivity probe: 200 without a body;
/// - `GET /_fake/requests`: every request received so far, as JSON (`count`, `requests`).
///
/// Each model request is answered streamed (SSE, framed like the real provider: OpenAI Chat's
/// `data:` lines ending with `data: [DONE]`, the named events of Responses and Anthropic,
/// Gemini's CRLF-separated `data:` chunks) or not, as the request asks, with usage figures.
#[derive(Debug)]
pub struct FakeProvider {
    addr: SocketAddr,
    url: String,
    log: Arc<Mutex<Vec<RecordedRequest>>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// One request the fake provider received (control requests under `/_fake/` excluded).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The HTTP method, e.g. `POST`.
    pub method: String,
    /// The path with its query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// The request headers, names in lowercase, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body as JSON; `Null` when empty, a JSON string when it was not JSON.
    pub body: Value,
}

impl RecordedRequest {
    /// The value of the first header with this name (compared without case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    fn to_json(&self) -> Value {
        let headers: serde_json::Map<String, Value> =
            self.headers.iter().map(|(key, value)| (key.clone(), json!(value))).collect();
        json!({"method": self.method, "path": self.path, "headers": headers, "body": self.body})
    }
}

impl FakeProvider {
    /// Binds `config.listen()` and starts serving on a thread of its own.
    ///
    /// # Errors
    ///
    /// [`Error::Bind`] when the address cannot be bound (a port in use), [`Error::Runtime`] when
    /// the server's runtime or thread cannot be started.
    pub fn start(config: Config) -> Result<FakeProvider> {
        let listen = config.listen();
        let bind_error = |source| Error::Bind { addr: listen, source };
        let listener = TcpListener::bind(listen).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|source| Error::Runtime { source })?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(bind_error)?
        };
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(State { config, log: Arc::clone(&log), sampler: Sampler::default() });
        let (shutdown, shutdown_rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(format!("atif-fake-provider-{}", addr.port()))
            .spawn(move || runtime.block_on(serve(listener, state, shutdown_rx)))
            .map_err(|source| Error::Runtime { source })?;
        Ok(FakeProvider {
            addr,
            url: format!("http://{addr}"),
            log,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The base URL, `http://127.0.0.1:PORT`, without a trailing slash or `/v1`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// How many requests were received so far.
    pub fn request_count(&self) -> usize {
        self.log.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Stops the server and waits for its thread; open connections are closed.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            // The server may be gone already; nothing to tell it then.
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic in the server thread has been reported on stderr already.
            let _ = thread.join();
        }
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// A URL on the loopback interface where nothing listens: a provider that is down.
///
/// # Errors
///
/// [`Error::Bind`] when no free port can be found.
pub fn unreachable_url() -> Result<String> {
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let listener = TcpListener::bind(any).map_err(|source| Error::Bind { addr: any, source })?;
    let addr = listener.local_addr().map_err(|source| Error::Bind { addr: any, source })?;
    drop(listener);
    Ok(format!("http://{addr}"))
}

struct State {
    config: Config,
    log: Arc<Mutex<Vec<RecordedRequest>>>,
    sampler: Sampler,
}

async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<State>,
    mut shutdown: oneshot::Receiver<()>,
) {
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => accepted,
        };
        // A failed accept (a client that went away) concerns only that client.
        let Ok((stream, _)) = accepted else { continue };
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            let service = service_fn(move |request| handle(Arc::clone(&state), request));
            // Connection errors (a client hanging up, a cut stream) end only this connection.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<ReplyBody>, Infallible> {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let path_and_query =
        request.uri().path_and_query().map_or(path.clone(), |pq| pq.as_str().to_owned());
    let query = request.uri().query().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned())
        })
        .collect();
    let protocol = protocol_of(&path);
    let body = match read_body(request.into_body()).await {
        Ok(body) => body,
        Err(status) => {
            let message = format!("request body over {MAX_REQUEST_BYTES} bytes or unreadable");
            return Ok(json_response(
                status,
                &error_body(protocol.unwrap_or(Protocol::OpenAiChat), status.as_u16(), &message),
            ));
        }
    };
    if method == "GET" && path == "/_fake/requests" {
        let log = state.log.lock().unwrap_or_else(PoisonError::into_inner);
        let requests: Vec<Value> = log.iter().map(RecordedRequest::to_json).collect();
        return Ok(json_response(
            StatusCode::OK,
            &json!({"count": requests.len(), "requests": requests}),
        ));
    }
    let parsed: std::result::Result<Value, _> =
        if body.is_empty() { Ok(Value::Null) } else { serde_json::from_slice(&body) };
    let logged_body = match &parsed {
        Ok(value) => value.clone(),
        Err(_) => Value::String(String::from_utf8_lossy(&body).into_owned()),
    };
    state.log.lock().unwrap_or_else(PoisonError::into_inner).push(RecordedRequest {
        method: method.clone(),
        path: path_and_query,
        headers: headers.clone(),
        body: logged_body,
    });

    // Claude Code's connectivity probe: a success without a body.
    if matches!(method.as_str(), "GET" | "HEAD") && path == "/api/hello" {
        return Ok(Response::new(ReplyBody::Full(None)));
    }
    if method == "GET" && path.ends_with("/models") {
        let anthropic = headers.iter().any(|(name, _)| name == "anthropic-version");
        let list = model_list(state.config.models(), anthropic, path.starts_with("/v1beta"));
        return Ok(json_response(StatusCode::OK, &list));
    }
    let Some(protocol) = protocol.filter(|_| method == "POST") else {
        let message = format!("no endpoint {method} {path}; the fake provider serves {ENDPOINTS}");
        return Ok(json_response(
            StatusCode::NOT_FOUND,
            &error_body(Protocol::OpenAiChat, 404, &message),
        ));
    };
    let body = match parsed {
        Ok(body) => body,
        Err(err) => {
            let message = format!("request body is not JSON: {err}");
            return Ok(json_response(
                StatusCode::BAD_REQUEST,
                &error_body(protocol, 400, &message),
            ));
        }
    };
    Ok(answer_model_request(&state, protocol, &path, &query, &body))
}

/// The answer to a model request of `protocol` whose JSON body is `body`: a token count, a
/// simulated failure, or the reply, streamed or not.
fn answer_model_request(
    state: &State,
    protocol: Protocol,
    path: &str,
    query: &str,
    body: &Value,
) -> Response<ReplyBody> {
    let path_model = (protocol == Protocol::Gemini).then(|| gemini_model(path));
    let turn = read_turn(protocol, body, path_model);
    if path.ends_with("/count_tokens") || path.ends_with(":countTokens") {
        return json_response(StatusCode::OK, &count_tokens(protocol, &turn));
    }
    let fault = state.config.fault();
    if let Some(Fault::Status(code)) = fault {
        return simulated_failure(protocol, code);
    }
    let (reply, turn) = match decide(state, turn, body) {
        Some(decided) => decided,
        None => return simulated_failure(protocol, 500),
    };
    let stream = match protocol {
        Protocol::Gemini => path.ends_with(":streamGenerateContent"),
        _ => body.get("stream") == Some(&Value::Bool(true)),
    };
    let sse = query.split('&').any(|pair| pair == "alt=sse");
    let payload = encode(protocol, &turn, &reply, stream, sse);
    let cut = match fault {
        Some(Fault::CutStream { after_events }) => Some(after_events),
        _ => None,
    };
    send(payload, cut, &state.config)
}

/// The reply to a model request: the scripted one, or a sampled one in the sampling mode
/// (`None` for a sampled failure).
fn decide(state: &State, turn: Turn, body: &Value) -> Option<(Reply, Turn)> {
    let Some(sampling) = state.config.sampling() else {
        return Some((Reply::decide(&turn, &state.config), turn));
    };
    match state.sampler.decide(&sampling, turn, body, &state.config) {
        Sampled::Reply(reply, turn) => Some((reply, *turn)),
        Sampled::Fail => None,
    }
}

/// The protocol's own error body with status `code`.
fn simulated_failure(protocol: Protocol, code: u16) -> Response<ReplyBody> {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let message = format!("simulated failure: the fake provider answers {code}");
    json_response(status, &error_body(protocol, code, &message))
}

/// Which protocol a path belongs to, by its ending (so `/v1` may be missing or doubled).
fn protocol_of(path: &str) -> Option<Protocol> {
    if path.ends_with("/chat/completions") {
        Some(Protocol::OpenAiChat)
    } else if path.ends_with("/responses") {
        Some(Protocol::OpenAiResponses)
    } else if path.ends_with("/messages") || path.ends_with("/messages/count_tokens") {
        Some(Protocol::AnthropicMessages)
    } else if path.contains("/models/")
        && [":generateContent", ":streamGenerateContent", ":countTokens"]
            .iter()
            .any(|verb| path.ends_with(verb))
    {
        Some(Protocol::Gemini)
    } else {
        None
    }
}

/// The model of a Gemini path `/v1beta/models/{model}:verb`.
fn gemini_model(path: &str) -> &str {
    let after = path.rsplit_once("/models/").map_or(path, |(_, after)| after);
    after.split_once(':').map_or(after, |(model, _)| model)
}

async fn read_body(mut body: Incoming) -> std::result::Result<Vec<u8>, StatusCode> {
    let mut bytes = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|_| StatusCode::BAD_REQUEST)?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_REQUEST_BYTES {
                return Err(StatusCode::PAYLOAD_TOO_LARGE);
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

fn json_response(status: StatusCode, body: &Value) -> Response<ReplyBody> {
    let mut response = Response::new(ReplyBody::Full(Some(Bytes::from(body.to_string()))));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The response for a payload; with `cut`, the body stops after that many events (or half of a
/// JSON body) and the connection is dropped.
fn send(payload: Payload, cut: Option<usize>, config: &Config) -> Response<ReplyBody> {
    let (content_type, chunks) = match payload {
        Payload::Json(value) => {
            if cut.is_none() {
                return json_response(StatusCode::OK, &value);
            }
            let text = Bytes::from(value.to_string());
            let half = text.slice(..text.len() / 2);
            ("application/json", vec![half, text])
        }
        Payload::Sse(events) if config.keepalives() => {
            ("text/event-stream", with_keepalives(events))
        }
        Payload::Sse(events) => ("text/event-stream", events),
    };
    let cut = cut.map(|after| if content_type == "application/json" { 1 } else { after });
    let delay = config.event_delay();
    let end_delay = config.end_delay();
    let (sender, receiver) = mpsc::channel(16);
    tokio::spawn(async move {
        for (idx, chunk) in chunks.into_iter().enumerate() {
            if cut == Some(idx) {
                // Let the connection write what was sent before it is dropped: hyper drops its
                // unflushed buffer with the connection.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                let _ = sender.send(Err(io::Error::other("simulated cut of the stream"))).await;
                return;
            }
            if idx > 0 && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if sender.send(Ok(chunk)).await.is_err() {
                return;
            }
        }
        // The body ends when the sender is dropped: after the pause, if any.
        if !end_delay.is_zero() {
            tokio::time::sleep(end_delay).await;
        }
    });
    let mut response = Response::new(ReplyBody::Channel(receiver));
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    if content_type == "text/event-stream" {
        response.headers_mut().insert("cache-control", HeaderValue::from_static("no-cache"));
    }
    response
}

/// `events` with a `: connected` / `retry: 3000` block first, a comment line inside the first
/// event, and a `: ping` block after each event, in the events' own line ends.
fn with_keepalives(events: Vec<Bytes>) -> Vec<Bytes> {
    let crlf = events.first().is_some_and(|event| event.windows(2).any(|pair| pair == b"\r\n"));
    let line_end = if crlf { "\r\n" } else { "\n" };
    let mut out =
        vec![Bytes::from(format!(": connected{line_end}retry: 3000{line_end}{line_end}"))];
    for (idx, event) in events.into_iter().enumerate() {
        if idx == 0 {
            let mut first = format!(": first event{line_end}").into_bytes();
            first.extend_from_slice(&event);
            out.push(Bytes::from(first));
        } else {
            out.push(event);
        }
        out.push(Bytes::from(format!(": ping{line_end}{line_end}")));
    }
    out
}

/// A response body: whole, or chunks arriving through a channel (an `Err` aborts the response).
#[derive(Debug)]
enum ReplyBody {
    Full(Option<Bytes>),
    Channel(mpsc::Receiver<io::Result<Bytes>>),
}

impl Body for ReplyBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<io::Result<Frame<Bytes>>>> {
        match self.get_mut() {
            ReplyBody::Full(bytes) => Poll::Ready(bytes.take().map(|bytes| Ok(Frame::data(bytes)))),
            ReplyBody::Channel(receiver) => {
                receiver.poll_recv(cx).map(|chunk| chunk.map(|chunk| chunk.map(Frame::data)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, ReplyBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ReplyBody::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            ReplyBody::Full(None) => SizeHint::with_exact(0),
            ReplyBody::Channel(_) => SizeHint::default(),
        }
    }
}
