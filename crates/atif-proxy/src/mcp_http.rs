//! Streamable-HTTP MCP servers fronted by the record/replay server (`--mcp NAME=URL`): the
//! agent's MCP client talks to `http://127.0.0.1:PORT/mcp/NAME`, and each JSON-RPC message
//! goes on the run's one tape under server `NAME`, as the stdio relay's do.
//!
//! Recording, every `POST`, `GET` and `DELETE` is forwarded to the server's URL with the
//! agent's headers (its credentials are never saved) and the reply passed back unchanged (an
//! event stream as it arrives, a JSON body once whole), while the messages of the POSTed body
//! (one or a batch) and of the reply are kept with how they travelled ([`McpVia`]); a request
//! whose response never comes fails the recording. Replaying, and in a hybrid recording
//! (`--replay-tools`), the server is not contacted: each POSTed message is answered from the
//! tape by the same matcher as the stdio relay's, in a JSON body or an event stream as
//! recorded; the server's own messages recorded on the `GET` stream go out on the agent's
//! `GET` stream; the session id (`Mcp-Session-Id`), volatile, is never kept and a replay hands
//! out a new one.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use atif_replay::{McpHttp, McpMessage, McpSide, McpVia};
use axum::body::{Body, Bytes};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::{Notify, OwnedSemaphorePermit, watch};

use crate::access::new_token;
use crate::journal::Journal;
use crate::mcp::MAX_LINE_BYTES;
use crate::mcp_state::McpState;
use crate::mcp_tape::{Output, is_response};
use crate::normalize::Normalizer;
use crate::reply::is_hop_header;
use crate::{Error, Result};

/// The path prefix of the fronted servers: `/mcp/NAME`.
pub(crate) const PREFIX: &str = "/mcp/";

/// How long the front waits to connect to a server it fronts.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The session header of Streamable HTTP.
const SESSION: &str = "mcp-session-id";

/// The JSON-RPC error code of a request the front cannot pass on (an implementation-defined
/// server error).
const FRONT_ERROR_CODE: i64 = -32002;

/// What the front needs of the run's server: its access rules, limits, tape and verdict.
pub(crate) trait Run: Send + Sync + 'static {
    /// The servers fronted.
    fn front(&self) -> &McpHttpFront;
    /// The MCP half of the tape, which says whether the servers run or are answered from it.
    fn tape(&self) -> &McpState;
    /// The reply to a request that is not the agent's, if it is not.
    fn refused(&self, parts: &Parts) -> Option<Response>;
    /// A request's body, read within the run's limits, with its share of the buffer budget
    /// (held until the permit is dropped), or why it cannot be read.
    #[allow(clippy::type_complexity, reason = "one use, named by its doc")]
    fn read_body(
        &self,
        parts: &Parts,
        body: Body,
    ) -> impl std::future::Future<
        Output = std::result::Result<(Bytes, Option<OwnedSemaphorePermit>), String>,
    > + Send;
    /// The run's directories and masks.
    fn normalizer(&self) -> &Normalizer;
    /// What the run saw and what went wrong.
    fn journal(&self) -> &Journal;
}

/// The Streamable-HTTP servers a run fronts, by name.
#[derive(Debug)]
pub(crate) struct McpHttpFront {
    servers: HashMap<String, Front>,
    client: reqwest::Client,
    /// Set when the server stops, which ends every event stream still open.
    closing: watch::Sender<bool>,
    /// The tasks reading servers' event streams, which the run waits for when it stops.
    streams: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

#[derive(Debug, Default)]
struct Front {
    /// The server's URL; `None` in a replay that was given only the name.
    url: Option<String>,
    /// Replaying: the recorded messages of the `GET` stream not yet sent.
    pushed: Mutex<VecDeque<String>>,
    more: Notify,
    /// Replaying: the session id handed out at the last `initialize`.
    session: Mutex<Option<String>>,
}

impl McpHttpFront {
    /// The front for `servers` (name, URL); when it `forwards` to them (a recording whose tools
    /// are not answered from a tape), it needs every URL.
    pub(crate) fn new(
        servers: &[(String, Option<String>)],
        forwards: bool,
    ) -> Result<McpHttpFront> {
        let mut fronts = HashMap::new();
        for (name, url) in servers {
            check_server(name, url.as_deref(), forwards)?;
            if fronts.contains_key(name) {
                return Err(Error::McpHttp {
                    name: name.clone(),
                    message: "is given twice; give each server one --mcp".to_owned(),
                });
            }
            fronts.insert(name.clone(), Front { url: url.clone(), ..Front::default() });
        }
        // No timeout past connecting: a tool may run for minutes before its reply starts.
        let client = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|source| Error::Client { source })?;
        Ok(McpHttpFront {
            servers: fronts,
            client,
            closing: watch::channel(false).0,
            streams: Mutex::new(Vec::new()),
        })
    }

    /// Ends every event stream still open, so the server can stop.
    pub(crate) fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Keeps the task reading a server's event stream, for [`McpHttpFront::finished`].
    fn track(&self, task: tokio::task::JoinHandle<()>) {
        let mut streams = self.streams.lock().unwrap_or_else(PoisonError::into_inner);
        streams.retain(|task| !task.is_finished());
        streams.push(task);
    }

    /// Waits, at most until `deadline`, for the tasks reading event streams to end once the
    /// front is closed, so that what they keep and what they fail is in the verdict; a task
    /// still running then is stopped, and `false` says so.
    pub(crate) async fn finished(&self, deadline: tokio::time::Instant) -> bool {
        let tasks =
            std::mem::take(&mut *self.streams.lock().unwrap_or_else(PoisonError::into_inner));
        let mut all = true;
        for mut task in tasks {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                task.abort();
                all = false;
            }
        }
        all
    }

    /// Resolves when the server stops.
    fn closed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut closing = self.closing.subscribe();
        async move {
            let _ = closing.wait_for(|closing| *closing).await;
        }
    }
}

fn check_server(name: &str, url: Option<&str>, forwards: bool) -> Result<()> {
    let fail = |message: String| Err(Error::McpHttp { name: name.to_owned(), message });
    let name_ok = !name.is_empty()
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-_.".contains(&byte));
    if !name_ok {
        return fail("is not a server name: use letters, digits, `-`, `_` and `.`".to_owned());
    }
    match url {
        Some(url) if !(url.starts_with("http://") || url.starts_with("https://")) => fail(format!(
            "has the URL `{}`; expected an http:// or https:// URL such as http://127.0.0.1:3001/mcp",
            crate::clean::Cleaner::new().clean(url.to_owned())
        )),
        None if forwards => fail(
            "has no URL: a recording forwards to the server, so give --mcp NAME=URL".to_owned(),
        ),
        _ => Ok(()),
    }
}

/// Answers a request to `/mcp/NAME`, recording or replaying as the run does.
pub(crate) async fn handle<R: Run>(shared: &Arc<R>, parts: Parts, body: Body) -> Response {
    if let Some(refused) = shared.refused(&parts) {
        return refused;
    }
    let path = parts.uri.path();
    let name = path.strip_prefix(PREFIX).unwrap_or_default().trim_end_matches('/').to_owned();
    if !shared.front().servers.contains_key(&name) {
        let known: Vec<&str> = shared.front().servers.keys().map(String::as_str).collect();
        let message = format!(
            "{} {path}: no MCP server is named `{name}` (this run fronts: {}); give the agent \
             http://ADDR/mcp/NAME for a server given as --mcp NAME=URL",
            parts.method,
            match known.is_empty() {
                true => "none".to_owned(),
                false => known.join(", "),
            }
        );
        return failure(shared, StatusCode::NOT_FOUND, message);
    }
    match (parts.method.clone(), shared.tape().answers_from_tape()) {
        (Method::POST, false) => record_post(shared, &name, parts, body).await,
        (Method::POST, true) => replay_post(shared, &name, parts, body).await,
        (Method::GET | Method::DELETE, false) => forward(shared, &name, parts).await,
        (Method::GET, true) => replay_get(shared, &name),
        // The session ends; the tape has nothing to say about it.
        (Method::DELETE, true) => Response::new(Body::empty()),
        (method, _) => {
            let mut response = failure(
                shared,
                StatusCode::METHOD_NOT_ALLOWED,
                format!("{method} {path}: an MCP server answers POST, GET and DELETE"),
            );
            let allow = HeaderValue::from_static("GET, POST, DELETE");
            response.headers_mut().insert(header::ALLOW, allow);
            response
        }
    }
}

/// Records a `POST`: the agent's messages, then the server's reply as it streams through.
async fn record_post<R: Run>(shared: &Arc<R>, name: &str, parts: Parts, body: Body) -> Response {
    // The body's share of the run's buffer budget is held until the server's reply is under
    // way, as the model routes hold theirs.
    let (bytes, json, _held) = match read_messages(shared, name, &parts, body).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    let line = std::str::from_utf8(&bytes).ok().map(str::trim);
    let messages = split(&json, line);
    // Armed as the requests go on the tape: an agent that gives up before the server answers
    // (this handler is then dropped) leaves a request without its response, which fails.
    let mut awaited = Awaited::new(shared, name, Awaited::<R>::requests(&messages));
    for (message, line) in messages {
        keep(shared, name, McpSide::Client, message, line, McpHttp::new(McpVia::Post));
    }
    let Some(url) = shared.front().servers.get(name).and_then(|front| front.url.clone()) else {
        awaited.iter_mut().for_each(Awaited::settle);
        return failure(shared, StatusCode::BAD_GATEWAY, format!("MCP server `{name}` has no URL"));
    };
    let request = shared.front().client.post(&url).headers(forwarded(&parts.headers)).body(bytes);
    let reply = match request.send().await {
        Ok(reply) => reply,
        Err(err) => {
            // This one failure says what the requests lack.
            awaited.iter_mut().for_each(Awaited::settle);
            return unreachable_server(shared, name, &url, err);
        }
    };
    // The reply is under way: the body's share of the budget goes back.
    drop(_held);
    relay_reply(shared, name, reply, Some(McpVia::Reply), awaited).await
}

/// Records a `GET` (the server's own event stream) or a `DELETE` (the session's end).
async fn forward<R: Run>(shared: &Arc<R>, name: &str, parts: Parts) -> Response {
    let Some(url) = shared.front().servers.get(name).and_then(|front| front.url.clone()) else {
        return failure(shared, StatusCode::BAD_GATEWAY, format!("MCP server `{name}` has no URL"));
    };
    let request = shared
        .front()
        .client
        .request(parts.method.clone(), &url)
        .headers(forwarded(&parts.headers));
    // What a `DELETE` answers ends the session; it carries no message of the server's.
    let via = (parts.method == Method::GET).then_some(McpVia::GetStream);
    match request.send().await {
        Ok(reply) => relay_reply(shared, name, reply, via, None).await,
        Err(err) => unreachable_server(shared, name, &url, err),
    }
}

/// The server's reply, passed to the agent as it arrives while its messages are kept, `via`
/// a JSON body ([`McpVia::Reply`] for a POST) or an event stream ([`McpVia::ReplyStream`]
/// for a POST, [`McpVia::GetStream`] for a GET); `via` `None`, or a GET the server refused
/// (405: it offers no stream), keeps nothing. The requests `awaited` whose responses never
/// come, because the reply ended, broke or was cut first, fail the run.
async fn relay_reply<R: Run>(
    shared: &Arc<R>,
    name: &str,
    reply: reqwest::Response,
    via: Option<McpVia>,
    awaited: Option<Awaited<R>>,
) -> Response {
    let status = reply.status();
    let session = reply.headers().contains_key(SESSION);
    let mut builder = Response::builder().status(status.as_u16());
    for (key, value) in reply.headers() {
        if !is_hop_header(key.as_str()) && key != header::CONTENT_ENCODING {
            builder = builder.header(key, value);
        }
    }
    let is_stream = reply
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("text/event-stream"));
    let via = via.filter(|via| *via != McpVia::GetStream || status.is_success());
    let via = via.map(|via| match (via, is_stream) {
        (McpVia::GetStream, _) => McpVia::GetStream,
        (_, true) => McpVia::ReplyStream,
        (_, false) => McpVia::Reply,
    });
    let http = via.map(|via| McpHttp::new(via).with_status(status.as_u16()).with_session(session));
    let body = match is_stream {
        true => relay_stream(shared, name, reply, via, http, awaited),
        false => match relay_json(shared, name, reply, http, awaited).await {
            Ok(body) => body,
            Err(response) => return response,
        },
    };
    builder.body(body).unwrap_or_else(|_| Response::new(Body::empty()))
}

/// The agent's side of an event stream, read by a task of its own that keeps its messages and
/// passes each chunk on as it comes: a POST's reply is read to its end even when the agent has
/// gone (a probe it gave up on), so that what the server answered is kept; an agent still
/// connected but not reading holds it back. The server's own stream (GET) is read while the
/// agent listens. Both end when the run stops, which waits for them.
fn relay_stream<R: Run>(
    shared: &Arc<R>,
    name: &str,
    reply: reqwest::Response,
    via: Option<McpVia>,
    http: Option<McpHttp>,
    awaited: Option<Awaited<R>>,
) -> Body {
    let (shared, name) = (shared.clone(), name.to_owned());
    let closed = shared.front().closed();
    let to_the_end = via != Some(McpVia::GetStream);
    let (sender, mut receiver) = tokio::sync::mpsc::channel(16);
    let front = shared.clone();
    let task = tokio::spawn(async move {
        let mut awaited = awaited;
        let mut events = EventSplitter::new(MAX_MESSAGE_BYTES);
        let mut stream = std::pin::pin!(reply.bytes_stream().take_until(closed));
        let mut agent = Some(sender);
        let closing = shared.front().closed();
        tokio::pin!(closing);
        while let Some(chunk) = stream.next().await {
            let item = match chunk.map_err(std::io::Error::other) {
                Ok(bytes) => match events.feed(&bytes) {
                    Ok(done) => {
                        for data in &done {
                            keep_text(&shared, &name, data, http.as_ref(), &mut awaited);
                        }
                        Ok(bytes)
                    }
                    Err(too_long) => Err(too_big(&shared, &name, &too_long, &mut awaited)),
                },
                Err(err) => Err(err),
            };
            let ends = item.is_err();
            if let Some(sender) = &agent {
                // An agent that does not read holds the stream back, until the run stops.
                let sent = tokio::select! {
                    sent = sender.send(item) => sent.is_ok(),
                    () = &mut closing => break,
                };
                if !sent {
                    agent = None;
                }
            }
            if ends || (agent.is_none() && !to_the_end) {
                break;
            }
        }
        // What the requests lack is said before the agent reads the end of the stream, so
        // that a run that stops on it has it in its verdict.
        drop(awaited);
        drop(agent);
    });
    front.front().track(task);
    let chunks = futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx));
    Body::from_stream(chunks)
}

/// A JSON reply, read whole and kept before the agent gets it, so that it is kept even when
/// the agent does not read it (a client that stops at an error status); one over the bound,
/// or that breaks, fails the run and is an error for the agent.
async fn relay_json<R: Run>(
    shared: &Arc<R>,
    name: &str,
    reply: reqwest::Response,
    http: Option<McpHttp>,
    awaited: Option<Awaited<R>>,
) -> std::result::Result<Body, Response> {
    let mut awaited = awaited;
    let bytes = match read_capped(reply, MAX_MESSAGE_BYTES).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            let too_long = format!("a reply longer than {MAX_MESSAGE_BYTES} bytes");
            let err = too_big(shared, name, &too_long, &mut awaited);
            return Err(front_error(shared, StatusCode::BAD_GATEWAY, &err.to_string()));
        }
        Err(err) => {
            // This one failure says what the requests still awaited lack.
            awaited.iter_mut().for_each(Awaited::settle);
            let message = format!("MCP server `{name}`: its reply broke: {err}");
            return Err(failure(shared, StatusCode::BAD_GATEWAY, message));
        }
    };
    if let Ok(text) = std::str::from_utf8(&bytes) {
        if !text.trim().is_empty() {
            keep_text(shared, name, text.trim(), http.as_ref(), &mut awaited);
        }
    }
    Ok(Body::from(bytes))
}

/// The requests of a recorded `POST` whose responses have not come back yet. Dropped with
/// some still missing (the reply ended, broke, or was cut when the run stopped), it fails the
/// run: the tape would hold a request without its response, and a replay could not answer it.
struct Awaited<R: Run> {
    shared: Arc<R>,
    name: String,
    /// Each request's id, as JSON text, and method.
    pending: Vec<(String, String)>,
}

impl<R: Run> Awaited<R> {
    /// The requests (messages with a method and an id) among `messages`, as (id, method).
    fn requests(messages: &[(Value, Option<&str>)]) -> Vec<(String, String)> {
        messages
            .iter()
            .filter_map(|(message, _)| {
                let method = message.get("method")?.as_str()?;
                let id = message.get("id").filter(|id| !id.is_null())?;
                Some((id.to_string(), method.to_owned()))
            })
            .collect()
    }

    /// The `requests` now awaited from `name`; `None` when there is none (notifications and
    /// responses alone get no response).
    fn new(shared: &Arc<R>, name: &str, requests: Vec<(String, String)>) -> Option<Awaited<R>> {
        (!requests.is_empty()).then(|| Awaited {
            shared: shared.clone(),
            name: name.to_owned(),
            pending: requests,
        })
    }

    /// Nothing more is awaited: a failure already says what the requests lack.
    fn settle(&mut self) {
        self.pending.clear();
    }

    /// The responses with these ids came; an error of id `null` (a server refusing what it
    /// cannot place, such as a request before `initialize`) answers every request of the POST.
    fn answered(&mut self, ids: &[String]) {
        if ids.iter().any(|id| id == "null") {
            self.pending.clear();
        }
        self.pending.retain(|(id, _)| !ids.contains(id));
    }
}

impl<R: Run> Drop for Awaited<R> {
    fn drop(&mut self) {
        for (id, method) in std::mem::take(&mut self.pending) {
            self.shared.journal().fail(format!(
                "MCP server `{}`: the reply to the agent's {method} (id {id}) ended before its \
                 response came, so the recording lacks it",
                self.name
            ));
        }
    }
}

/// The longest reply or event the front reads from a server, as the stdio relay bounds a
/// line: far beyond any MCP message, and a bound on what a broken server can make it hold.
const MAX_MESSAGE_BYTES: usize = MAX_LINE_BYTES as usize;

/// The whole body of `reply`, or `None` once it is longer than `max` bytes.
async fn read_capped(mut reply: reqwest::Response, max: usize) -> std::io::Result<Option<Bytes>> {
    let mut body = Vec::new();
    while let Some(chunk) = reply.chunk().await.map_err(std::io::Error::other)? {
        if body.len() + chunk.len() > max {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(Bytes::from(body)))
}

/// A server's reply or event over the bound: it fails the run (the recording would lack it),
/// and the agent's stream breaks with the same message.
/// (This one failure says what the requests still `awaited` lack.)
fn too_big<R: Run>(
    shared: &Arc<R>,
    name: &str,
    too_long: &str,
    awaited: &mut Option<Awaited<R>>,
) -> std::io::Error {
    let message = format!("MCP server `{name}` sent {too_long}; it is not recorded");
    shared.journal().fail(message.clone());
    awaited.iter_mut().for_each(Awaited::settle);
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

/// Keeps the server's messages in `text` (one, or a batch) when they are to be kept (`http`)
/// and are JSON (an error page is no MCP message), and tells `awaited` which responses came.
fn keep_text<R: Run>(
    shared: &Arc<R>,
    name: &str,
    text: &str,
    http: Option<&McpHttp>,
    awaited: &mut Option<Awaited<R>>,
) {
    let Ok(json) = serde_json::from_str::<Value>(text) else { return };
    let mut answered = Vec::new();
    for (message, line) in split(&json, Some(text)) {
        if is_response(&message) {
            answered.push(message.get("id").unwrap_or(&Value::Null).to_string());
        }
        if let Some(http) = http {
            keep(shared, name, McpSide::Server, message, line, http.clone());
        }
    }
    awaited.iter_mut().for_each(|awaited| awaited.answered(&answered));
}

/// Keeps one message on the tape, with the directories as placeholders, as the stdio relay
/// does; a server's line is kept for its key order.
fn keep<R: Run>(
    shared: &Arc<R>,
    name: &str,
    from: McpSide,
    mut message: Value,
    line: Option<&str>,
    http: McpHttp,
) {
    let normalizer = shared.normalizer();
    normalizer.insert_placeholders(&mut message);
    let mut kept = McpMessage::new(name, from, message).with_http(http);
    if let (McpSide::Server, Some(line)) = (from, line) {
        kept = kept.with_line(&normalizer.place_dirs_in(line));
    }
    shared.tape().keep(kept);
}

/// The messages of a body with their text: a batch's elements, or the one message.
fn split<'a>(json: &Value, line: Option<&'a str>) -> Vec<(Value, Option<&'a str>)> {
    match json {
        Value::Array(batch) => {
            // Each element's own text, for the key order its JSON would lose.
            let texts: Option<Vec<&'a serde_json::value::RawValue>> =
                line.and_then(|line| serde_json::from_str(line).ok());
            let texts = texts.filter(|texts| texts.len() == batch.len());
            let text = |idx: usize| texts.as_ref().map(|texts| texts[idx].get());
            batch.iter().enumerate().map(|(idx, message)| (message.clone(), text(idx))).collect()
        }
        message => vec![(message.clone(), line)],
    }
}

/// Answers a `POST` from the tape: a JSON body or an event stream, as recorded; the server's
/// messages recorded on the `GET` stream wait there for the agent.
async fn replay_post<R: Run>(shared: &Arc<R>, name: &str, parts: Parts, body: Body) -> Response {
    // The body's share of the run's buffer budget is held until the reply is made.
    let (_, json, _held) = match read_messages(shared, name, &parts, body).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    let batch = json.is_array();
    let initializes =
        split(&json, None).iter().any(|(message, _)| message["method"] == "initialize");
    let (mut replies, mut streamed, mut status, mut session) = (Vec::new(), false, None, false);
    for (message, _) in split(&json, None) {
        let Some(answer) = shared.tape().answer(name, &message) else { continue };
        if let Some(failure) = answer.failure {
            shared.journal().fail(failure);
        }
        if let Some(warning) = answer.warning {
            shared.journal().warn(warning);
        }
        for output in answer.replies {
            let http = output.http.clone();
            match http.as_ref().map(|http| http.via) {
                Some(McpVia::GetStream) => push(shared, name, &output),
                via => {
                    streamed |= via == Some(McpVia::ReplyStream);
                    status = status.or(http.as_ref().and_then(|http| http.status));
                    session |= http.is_some_and(|http| http.session);
                    replies.push(output.text());
                }
            }
        }
    }
    let status = status.and_then(|status| StatusCode::from_u16(status).ok());
    let mut response = match (replies.is_empty(), streamed) {
        (true, _) => status_only(status.unwrap_or(StatusCode::ACCEPTED)),
        (false, true) => event_stream(replies.iter().map(|text| event(text)).collect::<String>()),
        (false, false) => {
            let body = match batch {
                true => format!("[{}]", replies.join(",")),
                false => replies.join(","),
            };
            json_body(status.unwrap_or(StatusCode::OK), body)
        }
    };
    if let Some(id) = session.then(|| session_id(shared, name, initializes)).flatten() {
        if let Ok(value) = HeaderValue::from_str(&id) {
            response.headers_mut().insert(SESSION, value);
        }
    }
    response
}

/// The replay's session id for `name`: a new one at each `initialize`, the same one after it.
fn session_id<R: Run>(shared: &Arc<R>, name: &str, initializes: bool) -> Option<String> {
    let front = shared.front().servers.get(name)?;
    let mut session = front.session.lock().unwrap_or_else(PoisonError::into_inner);
    if initializes || session.is_none() {
        *session = new_token().ok();
    }
    session.clone()
}

/// A recorded message of the `GET` stream, for the agent's `GET` stream.
fn push<R: Run>(shared: &Arc<R>, name: &str, output: &Output) {
    if let Some(front) = shared.front().servers.get(name) {
        front.pushed.lock().unwrap_or_else(PoisonError::into_inner).push_back(output.text());
        front.more.notify_waiters();
    }
}

/// Answers a `GET` from the tape: an event stream of the server's own messages, each sent
/// once the agent's message they followed in the recording is answered, open until the
/// agent closes it or the server stops.
fn replay_get<R: Run>(shared: &Arc<R>, name: &str) -> Response {
    let (shared, name) = (shared.clone(), name.to_owned());
    let closed = shared.front().closed();
    let stream = futures_util::stream::unfold((shared, name), |(shared, name)| async move {
        loop {
            let next = {
                let front = shared.front().servers.get(&name)?;
                let more = front.more.notified();
                let next = front.pushed.lock().unwrap_or_else(PoisonError::into_inner).pop_front();
                match next {
                    Some(text) => text,
                    None => {
                        more.await;
                        continue;
                    }
                }
            };
            let chunk = Ok::<Bytes, std::io::Error>(Bytes::from(event(&next)));
            return Some((chunk, (shared, name)));
        }
    });
    let mut response = Response::new(Body::from_stream(stream.take_until(closed)));
    let content_type = HeaderValue::from_static("text/event-stream");
    response.headers_mut().insert(header::CONTENT_TYPE, content_type);
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Reads a POSTed body and its JSON, with the body's share of the buffer budget, or the
/// failure reply (which names the server).
async fn read_messages<R: Run>(
    shared: &Arc<R>,
    name: &str,
    parts: &Parts,
    body: Body,
) -> std::result::Result<(Bytes, Value, Option<OwnedSemaphorePermit>), Response> {
    let (bytes, held) = match shared.read_body(parts, body).await {
        Ok(read) => read,
        Err(why) => {
            let message = format!("MCP server `{name}`: cannot read the agent's POST: {why}");
            return Err(failure(shared, StatusCode::BAD_REQUEST, message));
        }
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(json) => Ok((bytes, json, held)),
        Err(err) => {
            let message = format!(
                "MCP server `{name}`: the agent's POST is not JSON ({err}); Streamable HTTP \
                 carries one JSON-RPC message or a batch in each POST"
            );
            Err(failure(shared, StatusCode::BAD_REQUEST, message))
        }
    }
}

/// The agent's headers to pass on: its credentials and MCP headers, without the ones that
/// describe this hop, its `Origin` (this server's, not the MCP server's) and
/// `Accept-Encoding` (the reply is read as it passes, so it must come uncompressed).
fn forwarded(headers: &HeaderMap) -> HeaderMap {
    let mut forwarded = HeaderMap::new();
    for (key, value) in headers {
        let skip = is_hop_header(key.as_str())
            || key == header::ORIGIN
            || key == header::ACCEPT_ENCODING
            || key.as_str() == "x-atif-token";
        if !skip {
            forwarded.append(key.clone(), value.clone());
        }
    }
    forwarded
}

/// The server at `url` did not answer: the message names its origin only, since a key may
/// sit in the URL's path or query, and reqwest's error without the URL it repeats.
fn unreachable_server<R: Run>(
    shared: &Arc<R>,
    name: &str,
    url: &str,
    err: reqwest::Error,
) -> Response {
    let origin = reqwest::Url::parse(url)
        .map_or_else(|_| "its URL".to_owned(), |url| url.origin().ascii_serialization());
    let message = format!(
        "MCP server `{name}` at {origin} cannot be reached: {}",
        atif_schema::error_chain(&err.without_url())
    );
    failure(shared, StatusCode::BAD_GATEWAY, message)
}

/// A failed request: it fails the run, and the agent gets a JSON-RPC error saying why.
fn failure<R: Run>(shared: &Arc<R>, status: StatusCode, message: String) -> Response {
    let message = shared.journal().clean(message);
    shared.journal().fail(message.clone());
    front_error(shared, status, &message)
}

/// The JSON-RPC error the agent gets for a request the front could not pass on, `message`
/// being a failure the journal holds already.
fn front_error<R: Run>(shared: &Arc<R>, status: StatusCode, message: &str) -> Response {
    let message = shared.journal().clean(message.to_owned());
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": FRONT_ERROR_CODE, "message": message}});
    json_body(status, body.to_string())
}

fn json_body(status: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let content_type = HeaderValue::from_static("application/json");
    response.headers_mut().insert(header::CONTENT_TYPE, content_type);
    response
}

fn event_stream(body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    let content_type = HeaderValue::from_static("text/event-stream");
    response.headers_mut().insert(header::CONTENT_TYPE, content_type);
    response
}

fn status_only(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

/// One message as an event of an MCP event stream: each line of a message that came in
/// several `data:` lines goes out in a `data:` line of its own.
fn event(text: &str) -> String {
    let mut event = String::from("event: message\n");
    for line in text.split('\n') {
        event.push_str("data: ");
        event.push_str(line);
        event.push('\n');
    }
    event.push('\n');
    event
}

/// The data of each event of an event stream, as text, exactly as sent: several `data:` lines
/// joined by newlines, events without data (comments, a `retry:`) left out. A line or an
/// event's data over `max` bytes is an error.
#[derive(Debug)]
struct EventSplitter {
    /// The bytes after the last line end.
    pending: Vec<u8>,
    data: Option<String>,
    max: usize,
}

impl EventSplitter {
    fn new(max: usize) -> EventSplitter {
        EventSplitter { pending: Vec::new(), data: None, max }
    }

    /// Feeds the next bytes; returns the data of the events they complete, or what is over
    /// the bound.
    fn feed(&mut self, bytes: &[u8]) -> std::result::Result<Vec<String>, String> {
        let mut done = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|byte| *byte == b'\n') {
            self.pending.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            let line = std::mem::take(&mut self.pending);
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                // An event without data, or with empty data (a resumable stream's first
                // event), carries no message.
                done.extend(self.data.take().filter(|data| !data.is_empty()));
                continue;
            }
            if let Some(value) = line.strip_prefix("data:") {
                let value = value.strip_prefix(' ').unwrap_or(value);
                match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_owned()),
                }
                if self.data.as_ref().is_some_and(|data| data.len() > self.max) {
                    return Err(format!("an event longer than {} bytes", self.max));
                }
            }
        }
        self.pending.extend_from_slice(rest);
        if self.pending.len() > self.max {
            return Err(format!("a line longer than {} bytes", self.max));
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_give_their_data_as_sent_and_only_once_complete() {
        let mut events = EventSplitter::new(MAX_MESSAGE_BYTES);
        assert!(events.feed(b"id: 1\nevent: message\ndata: {\"b\":1,").unwrap().is_empty());
        assert_eq!(events.feed(b"\"a\":2}\r\n\r\n: ping\n\n").unwrap(), [r#"{"b":1,"a":2}"#]);
        assert_eq!(events.feed(b"data: one\ndata:two\n\n").unwrap(), ["one\ntwo"]);
        assert!(
            events.feed(b"id: 7\ndata: \n\n").unwrap().is_empty(),
            "a priming event holds nothing"
        );
    }

    #[test]
    fn a_line_or_an_event_over_the_bound_is_an_error() {
        let mut events = EventSplitter::new(16);
        assert_eq!(events.feed(b"data: 0123456789abcdef\n\n").unwrap(), ["0123456789abcdef"]);
        assert!(events.feed(b"data: 0123456789").unwrap().is_empty());
        let line = events.feed(b"abc").unwrap_err();
        assert_eq!(line, "a line longer than 16 bytes");
        let mut events = EventSplitter::new(16);
        let event = events.feed(b"data: 0123456789\ndata: 0123456789\n").unwrap_err();
        assert_eq!(event, "an event longer than 16 bytes");
    }

    #[test]
    fn a_recording_needs_each_server_s_url_and_names_are_checked() {
        let record = |name: &str, url: Option<&str>| {
            McpHttpFront::new(&[(name.to_owned(), url.map(str::to_owned))], true)
                .map(|_| ())
                .map_err(|err| err.to_string())
        };
        assert_eq!(record("files", Some("http://127.0.0.1:3001/mcp")), Ok(()));
        let no_url = record("files", None).unwrap_err();
        assert!(no_url.contains("`files` has no URL"), "{no_url}");
        let bad = record("fi/les", Some("http://x")).unwrap_err();
        assert!(bad.contains("is not a server name"), "{bad}");
        let scheme = record("files", Some("ftp://x")).unwrap_err();
        assert!(scheme.contains("expected an http:// or https:// URL"), "{scheme}");
        let replay = McpHttpFront::new(&[("files".to_owned(), None)], false);
        assert!(replay.is_ok(), "a replay, or a hybrid recording, needs no URL");
        let twice = [("a".to_owned(), None), ("a".to_owned(), None)];
        let err = McpHttpFront::new(&twice, false).unwrap_err().to_string();
        assert!(err.contains("is given twice"), "{err}");
    }
}
