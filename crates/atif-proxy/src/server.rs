//! The server: start and finish, and the request handler shared by record and replay.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::ops::ControlFlow::{self, Break, Continue};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use atif_replay::{DriftPolicy, Recording};
use atif_schema::{LoadOptions, error_chain};
use atif_wire::{CaptureOptions, HttpExchange, Protocol};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, oneshot};
use tokio::task::JoinHandle;

use crate::access::{Access, content_type_text, is_json_content_type, new_token};
use crate::journal::{Journal, Logged, body_failure, not_json};
use crate::limits::{BodyError, Budget, read_body};
use crate::mcp_http::McpHttpFront;
use crate::mcp_hybrid::HybridTools;
use crate::mcp_state::McpState;
use crate::mcp_tape::McpTape;
use crate::normalize::Normalizer;
use crate::options::Options;
use crate::protocol::{Endpoint, SUPPORTED, error_body, guess, strip_credentials};
use crate::record::{Forward, Payload, Recorder};
use crate::reply::{is_hop_header, json_reply, seconds};
use crate::serve::{Closed, serve};
use crate::tape::{Answer, Body as ReplyBody, Reply, Tape};
use crate::tool_drift::changed_tool_results;
use crate::upload::{UploadLimits, upload};
use crate::verdict::{Counts, MAX_KEPT};
use crate::{Error, Operation, Result, Verdict};

/// How long [`Proxy::finish`] waits for replies still in flight.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A running server. Point the agent at [`url`](Self::url), then call
/// [`finish`](Self::finish) for the verdict.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    url: String,
    token: String,
    shared: Arc<Shared>,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

/// Where a recording to `path` that was not exact is saved instead, so the file at `path` is
/// left as it was: `run.json` becomes `run.failed.json`, and a name without the `.json`
/// extension gets `.failed.json` appended.
pub fn failed_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|name| name.to_string_lossy()).unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    path.with_file_name(format!("{stem}.failed.json"))
}

/// Starts a server with `options`: reads the script (replay) or checks it can be written
/// (record), and listens.
///
/// # Errors
///
/// [`Error::Remote`] for an address other machines can reach without
/// [`Options::set_allow_remote`], [`Error::Script`] when the script to replay cannot be read,
/// is over the input limit, is binary or is not valid,
/// [`Error::ScriptIsDirectory`], [`Error::Mask`] for an invalid mask, [`Error::Upstream`] for
/// an upstream that is not an http(s) URL, [`Error::Listen`] when the address cannot be bound.
pub async fn start(options: &Options) -> Result<Proxy> {
    if !options.listen.ip().is_loopback() && !options.allow_remote {
        return Err(Error::Remote { addr: options.listen });
    }
    if options.script.is_dir() {
        return Err(Error::ScriptIsDirectory { path: options.script.clone() });
    }
    let (engine, mcp) = engines(options)?;
    let mcp_http = McpHttpFront::new(&options.mcp_http, !mcp.answers_from_tape())?;
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|source| Error::Listen { addr: options.listen, source })?;
    let addr =
        listener.local_addr().map_err(|source| Error::Listen { addr: options.listen, source })?;
    let token = new_token()?;
    let shared = Arc::new(Shared {
        access: Access::new(addr, token.clone()),
        limits: Limits {
            max_body_bytes: options.max_body_bytes,
            body_read_timeout: options.body_read_timeout,
            budget: Budget::new(options.max_buffered_bytes),
        },
        refused: AtomicUsize::new(0),
        slow_heads: AtomicUsize::new(0),
        idle_closed: AtomicUsize::new(0),
        header_read_timeout: options.connection_timeouts.header_read,
        engine,
        mcp,
        mcp_http,
        script: options.script.clone(),
        capture: options.capture.clone(),
        journal: Arc::new(Journal::new(options.quiet)),
    });
    let (shutdown, signal) = oneshot::channel::<()>();
    let handler = {
        let shared = shared.clone();
        move |request| handle(State(shared.clone()), request)
    };
    let closed = {
        let shared = shared.clone();
        move |closed| shared.closed(closed)
    };
    let task =
        tokio::spawn(serve(listener, (handler, closed), options.connection_timeouts, signal));
    if !addr.ip().is_loopback() {
        shared.journal.say(&format!(
            "warning: listening on {addr}, which other machines can reach (--allow-remote): \
             anyone who can connect to it is answered from the script, or recorded and sent \
             upstream with the keys they send; only the control endpoints need the token"
        ));
    }
    Ok(Proxy { addr, url: base_url(addr), token, shared, shutdown, task })
}

/// What answers the agent's requests, as `options` say: the script's tape (replay) or the
/// recorder (record), each with its half for the MCP relays.
fn engines(options: &Options) -> Result<(Engine, McpState)> {
    let dir_text = |dir: Option<&Path>| dir.map(|dir| dir.to_string_lossy().into_owned());
    let (cwd, home) = (dir_text(options.cwd()), dir_text(options.home()));
    let engines = match options.operation {
        Operation::Replay => {
            let mut load = LoadOptions::new();
            load.set_max_bytes(options.max_input_bytes);
            let script = atif_replay::support::read_script_with(&options.script, &load)?;
            let mut masks = script.recording.as_ref().map(|r| r.masks.clone()).unwrap_or_default();
            masks.extend(options.masks.iter().cloned());
            let normalizer = Normalizer::new(cwd, home, &masks)?;
            let mcp = McpTape::new(&script.mcp, &normalizer);
            let mcp = McpState::Replay {
                tape: Mutex::new(mcp),
                normalizer: normalizer.clone(),
                drift: options.drift,
                tools: crate::mcp_tape::tool_servers(&script.mcp),
            };
            let tape = Tape::new(script.exchanges, &normalizer);
            (Engine::Replay { tape: Mutex::new(tape), drift: options.drift, normalizer }, mcp)
        }
        Operation::Record => {
            let normalizer = Normalizer::new(cwd.clone(), home.clone(), &options.masks)?;
            // The directories are `<cwd>` and `<home>` in the exchanges, and nowhere else.
            let recording = Recording { cwd: None, home: None, masks: options.masks.clone() };
            let recorder =
                Recorder::new(options.upstream.as_deref(), recording, options.upstream_timeouts)?;
            let mcp = match &options.replay_tools {
                Some(tape) => hybrid_tools(tape, options, cwd, home)?,
                None => McpState::Record(Mutex::new(Vec::new())),
            };
            (Engine::Record { recorder, normalizer }, mcp)
        }
    };
    Ok(engines)
}

/// The MCP half of a hybrid recording: the tools tape at `tape`, matched with its own masks
/// and the recording's.
fn hybrid_tools(
    tape: &Path,
    options: &Options,
    cwd: Option<String>,
    home: Option<String>,
) -> Result<McpState> {
    let mut load = LoadOptions::new();
    load.set_max_bytes(options.max_input_bytes);
    let script = atif_replay::support::read_script_with(tape, &load)?;
    let mut masks = script.recording.as_ref().map(|r| r.masks.clone()).unwrap_or_default();
    masks.extend(options.masks.iter().cloned());
    let normalizer = Normalizer::new(cwd, home, &masks)?;
    Ok(McpState::Hybrid(HybridTools::new(tape, &script.mcp, normalizer)))
}

impl Proxy {
    /// The server's base URL, `http://127.0.0.1:PORT` (no trailing slash; OpenAI SDKs want
    /// `/v1` after it); a loopback address when the server listens on every interface.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The run's control token, random for each server: the control endpoints
    /// (`GET /_atif/verdict`, `GET /_atif/trajectory`) answer only requests that carry it, as
    /// `x-atif-token: TOKEN` or `Authorization: Bearer TOKEN`.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// What the server has seen so far.
    pub fn verdict(&self) -> Verdict {
        self.shared.verdict()
    }

    /// The exchanges so far, in the order their requests arrived: in a recording, what the
    /// script will hold; in a replay, the agent's own requests with the replies served. The
    /// working and home directories are written `<cwd>` and `<home>`, and secrets are
    /// redacted, so the two modes give the same traffic for the same behaviour.
    ///
    /// # Errors
    ///
    /// [`Error::Script`] when the redacted traffic no longer reads as exchanges (a secret
    /// pattern that matched a word of the format itself).
    pub fn traffic(&self) -> Result<Vec<HttpExchange>> {
        redacted(self.shared.traffic())
    }

    /// The run so far as an ATIF-v1.8 trajectory captured from the [`traffic`](Self::traffic)
    /// alone (see `atif_wire::trajectory_from_traffic`): each reply an agent step, tool
    /// results joined to their calls, independent conversations as subagents.
    ///
    /// # Errors
    ///
    /// [`Error::Script`] when no exchange is a successful model call yet, or one does not read
    /// as its protocol.
    pub fn trajectory(&self) -> Result<atif_schema::Trajectory> {
        self.shared.trajectory()
    }

    /// Stops the server (waiting a few seconds for replies in flight), saves the recording
    /// (record), and returns the verdict.
    ///
    /// A recording replaces the script only when it is exact and holds at least one exchange,
    /// so a failed recording never destroys a good script: one that is not exact is saved
    /// beside it instead, as [`failed_path`] names it, and one without any exchange (the agent
    /// made no model request, or none reached the upstream) is not exact and saved nowhere.
    ///
    /// # Errors
    ///
    /// [`Error::NotExact`] naming every failure when the run was not exact (extra, missing or
    /// changed requests in a replay; upstream failures, cut streams or no exchange at all in a
    /// recording; unknown endpoints or invalid JSON in either), with where the recording was
    /// saved. [`Error::Script`] when the recording cannot be saved, [`Error::Serve`] when the
    /// server failed.
    pub async fn finish(self) -> Result<Verdict> {
        let shared = self.stop_server().await?;
        let Engine::Record { recorder, .. } = &shared.engine else {
            if let Some(unused) = shared.mcp.unused() {
                shared.journal.fail(unused);
            }
            let verdict = shared.verdict();
            return match verdict.ok {
                true => Ok(verdict),
                false => Err(Error::NotExact { verdict: Box::new(verdict), saved: None }),
            };
        };
        let only_probes = shared.recorded_only_probes();
        if only_probes {
            shared.journal.fail(
                "no exchange was recorded: no model request reached the server, or none got a \
                 reply from the upstream"
                    .to_owned(),
            );
        }
        let verdict = shared.verdict();
        if verdict.ok {
            // The recording moves into the script: a large one is never held twice for this.
            recorder.save(&shared.script, shared.take_recorded(), shared.mcp.take_recorded())?;
            return Ok(verdict);
        }
        let saved = shared.save_failed(recorder, only_probes)?;
        Err(Error::NotExact { verdict: Box::new(verdict), saved })
    }

    /// Stops the server after the agent failed: a recording of at least one exchange is saved
    /// to [`failed_path`] beside the script, never over it, for a look at what the agent did;
    /// returns the verdict and where the recording went.
    ///
    /// # Errors
    ///
    /// [`Error::Script`] when the recording cannot be saved, [`Error::Serve`] when the server
    /// failed.
    pub async fn finish_failed(self) -> Result<(Verdict, Option<PathBuf>)> {
        let shared = self.stop_server().await?;
        let verdict = shared.verdict();
        let Engine::Record { recorder, .. } = &shared.engine else { return Ok((verdict, None)) };
        let saved = shared.save_failed(recorder, shared.recorded_only_probes())?;
        Ok((verdict, saved))
    }

    /// Stops the server without saving anything, and returns the verdict.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when the server failed.
    pub async fn abandon(self) -> Result<Verdict> {
        let shared = self.stop_server().await?;
        Ok(shared.verdict())
    }

    async fn stop_server(self) -> Result<Arc<Shared>> {
        // Event streams of MCP servers stay open until the agent closes them: end them here.
        self.shared.mcp_http.close();
        let _ = self.shutdown.send(());
        let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
        let mut task = self.task;
        match tokio::time::timeout(DRAIN_TIMEOUT, &mut task).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(source))) => return Err(Error::Serve { source }),
            Ok(Err(join)) => {
                return Err(Error::Serve { source: std::io::Error::other(join.to_string()) });
            }
            Err(_) => {
                task.abort();
                self.shared.journal.fail(format!(
                    "replies were still in flight {} s after the run ended; they were cut off",
                    DRAIN_TIMEOUT.as_secs()
                ));
            }
        }
        if !self.shared.mcp_http.finished(deadline).await {
            self.shared.journal.fail(format!(
                "an MCP server's event stream was still being read {} s after the run ended; \
                 it was cut off",
                DRAIN_TIMEOUT.as_secs()
            ));
        }
        Ok(self.shared)
    }
}

/// What record and replay share, behind the handler.
#[derive(Debug)]
pub(crate) struct Shared {
    access: Access,
    limits: Limits,
    /// How many requests were refused as not coming from the agent.
    refused: AtomicUsize,
    /// How many connections the watchdog closed in a request's head, and unused or idle.
    slow_heads: AtomicUsize,
    idle_closed: AtomicUsize,
    /// The header-read timeout, for the message of a connection closed in its head.
    header_read_timeout: Duration,
    engine: Engine,
    /// The MCP relays' half of the tape.
    mcp: McpState,
    /// The Streamable-HTTP MCP servers the run fronts.
    mcp_http: McpHttpFront,
    script: PathBuf,
    capture: CaptureOptions,
    /// What the run saw and what went wrong, which the recorder writes to as well.
    pub(crate) journal: Arc<Journal>,
}

/// The bounds on request bodies.
#[derive(Debug)]
struct Limits {
    max_body_bytes: u64,
    body_read_timeout: Duration,
    budget: Budget,
}

impl Limits {
    /// Reads a request's body whole within these limits: a `Content-Length` over the limit fails
    /// before a byte is read.
    async fn read(
        &self,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<(Bytes, Option<OwnedSemaphorePermit>), BodyError> {
        let content_length = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
        read_body(body, content_length, self.max_body_bytes, self.body_read_timeout, &self.budget)
            .await
    }
}

#[derive(Debug)]
enum Engine {
    Replay { tape: Mutex<Tape>, drift: DriftPolicy, normalizer: Normalizer },
    Record { recorder: Recorder, normalizer: Normalizer },
}

impl Shared {
    fn operation(&self) -> Operation {
        match self.engine {
            Engine::Replay { .. } => Operation::Replay,
            Engine::Record { .. } => Operation::Record,
        }
    }

    pub(crate) fn verdict(&self) -> Verdict {
        let (recorded, unused) = match &self.engine {
            Engine::Replay { tape, .. } => {
                let tape = tape.lock().unwrap_or_else(PoisonError::into_inner);
                (tape.len(), tape.unused())
            }
            Engine::Record { .. } => (
                self.journal.traffic.lock().unwrap_or_else(PoisonError::into_inner).len(),
                Vec::new(),
            ),
        };
        let counts = Counts {
            requests_served: self.journal.served.load(Ordering::Relaxed),
            requests_refused: self.refused.load(Ordering::Relaxed),
            connections_closed_slow_head: self.slow_heads.load(Ordering::Relaxed),
            connections_closed_idle: self.idle_closed.load(Ordering::Relaxed),
            exchanges_recorded: recorded,
            mcp_calls_from_tape: self.mcp.hybrid_counts().map(|(served, _)| served),
            mcp_call_misses: self.mcp.hybrid_counts().map(|(_, misses)| misses),
        };
        Verdict::new(
            self.operation(),
            counts,
            unused,
            &self.journal.errors.lock().unwrap_or_else(PoisonError::into_inner),
            &self.journal.warnings.lock().unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn trajectory(&self) -> Result<atif_schema::Trajectory> {
        let traffic = redacted(self.traffic())?;
        // As `Error::Script`, wrapped as atif-replay wraps it, like every error of the traffic.
        let mut trajectory = atif_wire::trajectory_from_traffic(&traffic, &self.capture)
            .map_err(|err| Error::Script(err.into()))?;
        crate::mcp_tape::mark_mcp_results(&mut trajectory, &self.mcp.tool_servers());
        Ok(trajectory)
    }

    /// Whether a recording holds nothing but probes (or nothing at all).
    fn recorded_only_probes(&self) -> bool {
        let traffic = self.journal.traffic.lock().unwrap_or_else(PoisonError::into_inner);
        traffic.iter().all(|(_, logged)| match logged {
            Logged::Recorded(exchange) => {
                Endpoint::of(&exchange.method, exchange.endpoint()) == Some(Endpoint::Probe)
            }
            Logged::Replayed { .. } => false,
        })
    }

    /// A recording's exchanges in order of arrival, taken out of the traffic log (which is
    /// empty afterwards).
    /// Saves a recording that must not replace the script to [`failed_path`] beside it, and
    /// says where; a recording of probes alone (no model exchange) is saved nowhere.
    fn save_failed(&self, recorder: &Recorder, only_probes: bool) -> Result<Option<PathBuf>> {
        if only_probes {
            return Ok(None);
        }
        let failed = failed_path(&self.script);
        recorder.save(&failed, self.take_recorded(), self.mcp.take_recorded())?;
        Ok(Some(failed))
    }

    fn take_recorded(&self) -> Vec<HttpExchange> {
        let mut traffic = std::mem::take(
            &mut *self.journal.traffic.lock().unwrap_or_else(PoisonError::into_inner),
        );
        traffic.sort_by_key(|(seq, _)| *seq);
        traffic
            .into_iter()
            .filter_map(|(_, logged)| match logged {
                Logged::Recorded(exchange) => Some(exchange),
                Logged::Replayed { .. } => None,
            })
            .collect()
    }

    /// The exchanges so far, in order of arrival.
    pub(crate) fn traffic(&self) -> Vec<HttpExchange> {
        let mut traffic =
            self.journal.traffic.lock().unwrap_or_else(PoisonError::into_inner).clone();
        traffic.sort_by_key(|(seq, _)| *seq);
        let replay = match &self.engine {
            Engine::Replay { tape, normalizer, .. } => {
                Some((tape.lock().unwrap_or_else(PoisonError::into_inner), normalizer))
            }
            Engine::Record { .. } => None,
        };
        traffic
            .into_iter()
            .filter_map(|(_, logged)| match logged {
                Logged::Recorded(exchange) => Some(exchange),
                Logged::Replayed { index, path, body } => {
                    let (tape, normalizer) = replay.as_ref()?;
                    // It was read as JSON when it arrived (a GET has no body: null).
                    let mut json = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    normalizer.insert_placeholders(&mut json);
                    Some(tape.exchange(index, path, json))
                }
            })
            .collect()
    }
}

/// Answers one request: the handler shared by record and replay.
async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if parts.uri.path() == "/_atif/mcp" && parts.method == Method::POST {
        return mcp_report(&shared, &parts, body).await;
    }
    if parts.uri.path().starts_with(crate::mcp_http::PREFIX) {
        return crate::mcp_http::handle(&shared, parts, body).await;
    }
    answer(shared, parts, body).await
}

/// Answers a request to a model route or a control endpoint.
async fn answer(shared: Arc<Shared>, parts: Parts, body: Body) -> Response {
    let endpoint = match admit(&shared, &parts) {
        Continue(endpoint) => endpoint,
        Break(response) => return response,
    };
    if let Engine::Record { recorder, normalizer } = &shared.engine {
        if !endpoint.is_get() {
            return record_streamed(&shared, parts, endpoint, body, recorder, normalizer).await;
        }
    }
    // The body's share of the budget is held until the reply is under way.
    let (body, json, _held) = match read_json(&shared, &parts, endpoint, body).await {
        Continue(read) => read,
        Break(response) => return response,
    };
    let (method, headers, path) = (parts.method, parts.headers, parts.uri.path().to_owned());
    let path_and_query =
        parts.uri.path_and_query().map_or(path.clone(), |pq| pq.as_str().to_owned());
    let protocol = endpoint.protocol();
    match &shared.engine {
        Engine::Replay { tape, drift, normalizer } => {
            let journal = &shared.journal;
            let seq = journal.next_seq();
            let path_and_query = strip_credentials(&path_and_query);
            if endpoint.is_repeatable() {
                let tape = tape.lock().unwrap_or_else(PoisonError::into_inner);
                journal.served();
                let reply = match tape.listing(endpoint, &path_and_query) {
                    Some(index) => {
                        journal.log(seq, Logged::Replayed { index, path: path_and_query, body });
                        replay_reply(tape.reply(index))
                    }
                    None if endpoint == Endpoint::Models => {
                        json_reply(StatusCode::OK, &model_list(&tape.models()))
                    }
                    // A script recorded without the probe: the provider's answer to a probe
                    // is a success without a body.
                    None => Response::new(Body::empty()),
                };
                return match method == Method::HEAD {
                    true => without_body(reply),
                    false => reply,
                };
            }
            let normalized = normalizer.normalize(&path_and_query, &json);
            let mut tape = tape.lock().unwrap_or_else(PoisonError::into_inner);
            let explain = |recorded: &Value| {
                let tools = shared.mcp.tool_servers();
                changed_tool_results(protocol, &recorded["body"], &normalized["body"], &tools)
            };
            match tape.answer(method.as_str(), &path, &normalized, *drift, &explain) {
                Answer::Serve { index, drift } => {
                    if let Some(drift) = drift {
                        journal.warn(drift);
                    }
                    journal.served();
                    journal.log(seq, Logged::Replayed { index, path: path_and_query, body });
                    replay_reply(tape.reply(index))
                }
                Answer::Fail(message) => {
                    drop(tape);
                    journal.failure(protocol, StatusCode::BAD_REQUEST, message)
                }
            }
        }
        Engine::Record { recorder, normalizer } => {
            let payload = Payload::Whole { body, json };
            let forward = Forward { endpoint, method, path_and_query, headers, payload };
            recorder.forward(&shared.journal, normalizer, forward).await
        }
    }
}

/// Records a model call: its body is forwarded upstream as it arrives and read as JSON on
/// the side (see `upload.rs`), never held whole beside its JSON.
async fn record_streamed(
    shared: &Arc<Shared>,
    parts: Parts,
    endpoint: Endpoint,
    body: Body,
    recorder: &Recorder,
    normalizer: &Normalizer,
) -> Response {
    let content_length = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    let limits = UploadLimits {
        max_bytes: shared.limits.max_body_bytes,
        idle: shared.limits.body_read_timeout,
        budget: shared.limits.budget.clone(),
    };
    let (upload, uploaded) = match upload(body, content_length, &limits) {
        Ok(streams) => streams,
        Err(err) => {
            let path = parts.uri.path();
            return body_failure(&shared.journal, endpoint.protocol(), &parts.method, path, err);
        }
    };
    let path_and_query =
        parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_owned(), |pq| pq.to_string());
    let payload = Payload::Streamed { upload, uploaded };
    let forward =
        Forward { endpoint, method: parts.method, path_and_query, headers: parts.headers, payload };
    recorder.forward(&shared.journal, normalizer, forward).await
}

/// Decides whether a request is answered, and by which endpoint: a request that is not the
/// agent's is refused, a control endpoint answered at once, an unknown endpoint or a body not
/// declared JSON failed (all as the `Break` reply).
fn admit(shared: &Shared, parts: &Parts) -> ControlFlow<Response, Endpoint> {
    let (method, path, headers) = (&parts.method, parts.uri.path(), &parts.headers);
    if let Some(reason) = shared.access.refusal(headers, &parts.uri) {
        return Break(shared.refuse(guess(path), StatusCode::FORBIDDEN, method, &reason));
    }
    if let Some(control) = path.strip_prefix("/_atif/") {
        if let Some(reason) = shared.access.control_refusal(headers) {
            return Break(shared.refuse(
                Protocol::OpenAiChat,
                StatusCode::UNAUTHORIZED,
                method,
                &reason,
            ));
        }
        return Break(control_reply(shared, control));
    }
    let Some(endpoint) = Endpoint::of(method.as_str(), path) else {
        let message = format!("unknown endpoint {method} {path}: this server answers {SUPPORTED}");
        return Break(shared.journal.failure(guess(path), StatusCode::NOT_FOUND, message));
    };
    let content_type = headers.get(header::CONTENT_TYPE);
    if !endpoint.is_get() && !is_json_content_type(content_type) {
        let message = format!(
            "the request to {method} {path} has {}; this endpoint accepts only JSON bodies \
             (Content-Type: application/json)",
            content_type_text(content_type)
        );
        return Break(shared.journal.failure(
            endpoint.protocol(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            message,
        ));
    }
    Continue(endpoint)
}

/// Reads a request's body and its JSON (`null` for a `GET` or `HEAD`), with the share of the
/// budget its bytes hold, or the failure reply.
async fn read_json(
    shared: &Shared,
    parts: &Parts,
    endpoint: Endpoint,
    body: Body,
) -> ControlFlow<Response, (Bytes, Value, Option<OwnedSemaphorePermit>)> {
    let (method, path, protocol) = (&parts.method, parts.uri.path(), endpoint.protocol());
    let (body, held) = match shared.limits.read(&parts.headers, body).await {
        Ok(read) => read,
        Err(err) => return Break(body_failure(&shared.journal, protocol, method, path, err)),
    };
    if endpoint.is_get() {
        return Continue((body, Value::Null, held));
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(json) => Continue((body, json, held)),
        Err(err) => Break(not_json(&shared.journal, protocol, method, path, &err.to_string())),
    }
}

impl Shared {
    /// Counts a connection the watchdog closed; one closed in a request's head lost that
    /// request, which fails the run.
    fn closed(&self, closed: Closed) {
        match closed {
            Closed::Idle => {
                self.idle_closed.fetch_add(1, Ordering::Relaxed);
            }
            Closed::SlowHead => {
                self.slow_heads.fetch_add(1, Ordering::Relaxed);
                self.journal.fail(format!(
                    "a connection was closed because a request's head did not arrive in full \
                     within {} (--header-read-timeout); that request was lost",
                    seconds(self.header_read_timeout)
                ));
            }
        }
    }

    /// A request refused as not coming from the agent (a web page, another host): counted and
    /// printed, never logged as traffic nor as a failure of the run, and answered 403 with a
    /// non-retryable error in the provider's shape.
    fn refuse(
        &self,
        protocol: Protocol,
        status: StatusCode,
        method: &Method,
        reason: &str,
    ) -> Response {
        let count = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        let message = self.journal.clean(format!("refused a {method} request: {reason}"));
        if count <= MAX_KEPT {
            self.journal.say(&message);
        } else if count == MAX_KEPT + 1 {
            self.journal.say("further refused requests are only counted in the verdict");
        }
        let body = error_body(protocol, status.as_u16(), &message);
        let mut response = json_reply(status, &body);
        response.headers_mut().insert("x-should-retry", HeaderValue::from_static("false"));
        response
    }
}

/// What the Streamable-HTTP front needs of the run: the access rules and body limits of the
/// model routes, the tape, the journal.
impl crate::mcp_http::Run for Shared {
    fn front(&self) -> &McpHttpFront {
        &self.mcp_http
    }

    fn tape(&self) -> &McpState {
        &self.mcp
    }

    fn refused(&self, parts: &Parts) -> Option<Response> {
        let reason = self.access.refusal(&parts.headers, &parts.uri)?;
        let protocol = guess(parts.uri.path());
        Some(self.refuse(protocol, StatusCode::FORBIDDEN, &parts.method, &reason))
    }

    async fn read_body(
        &self,
        parts: &Parts,
        body: Body,
    ) -> Result<(Bytes, Option<OwnedSemaphorePermit>), String> {
        self.limits.read(&parts.headers, body).await.map_err(|err| err.to_string())
    }

    fn normalizer(&self) -> &Normalizer {
        match &self.engine {
            Engine::Replay { normalizer, .. } | Engine::Record { normalizer, .. } => normalizer,
        }
    }

    fn journal(&self) -> &Journal {
        &self.journal
    }
}

/// Takes an MCP relay's report (`POST /_atif/mcp`, with the run's token): a message to
/// record, or one to answer from the tape.
async fn mcp_report(shared: &Shared, parts: &Parts, body: Body) -> Response {
    let headers = &parts.headers;
    let refusal = shared.access.refusal(headers, &parts.uri);
    if let Some(reason) = refusal.or_else(|| shared.access.control_refusal(headers)) {
        let status = match shared.access.refusal(headers, &parts.uri) {
            Some(_) => StatusCode::FORBIDDEN,
            None => StatusCode::UNAUTHORIZED,
        };
        return shared.refuse(Protocol::OpenAiChat, status, &parts.method, &reason);
    }
    let bytes = match shared.limits.read(headers, body).await {
        Ok((bytes, _held)) => bytes,
        Err(err) => {
            // A report lost is a message missing from the tape: the run fails.
            let why = format!("an MCP relay's report could not be read: {err}");
            shared.journal.fail(why.clone());
            return json_reply(err.status(), &json!({"error": why}));
        }
    };
    match shared.mcp.report(&bytes) {
        Ok(reply) => {
            if let Some(failure) = reply.failure {
                shared.journal.fail(failure);
            }
            if let Some(warning) = reply.warning {
                shared.journal.warn(warning);
            }
            json_reply(StatusCode::OK, &reply.body)
        }
        Err(why) => {
            json_reply(StatusCode::BAD_REQUEST, &json!({"error": shared.journal.clean(why)}))
        }
    }
}

fn control_reply(shared: &Shared, control: &str) -> Response {
    match control {
        "verdict" => json_reply(StatusCode::OK, &json!(shared.verdict())),
        "trajectory" => match shared.trajectory() {
            Ok(trajectory) => json_reply(StatusCode::OK, &json!(trajectory)),
            Err(err) => json_reply(StatusCode::CONFLICT, &json!({"error": error_chain(&err)})),
        },
        _ => json_reply(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("unknown control endpoint /_atif/{control}; this server has /_atif/verdict and /_atif/trajectory")}),
        ),
    }
}

/// The base URL an agent on this machine uses for a server listening on `addr`: a loopback
/// address in place of an unspecified one (`0.0.0.0`, `::`), which is no address to connect to.
fn base_url(addr: SocketAddr) -> String {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}", SocketAddr::new(ip, addr.port()))
}

/// `exchanges` with every secret redacted, as a script would hold them.
fn redacted(exchanges: Vec<HttpExchange>) -> Result<Vec<HttpExchange>> {
    let mut value = serde_json::to_value(exchanges)
        .map_err(|source| atif_replay::Error::Serialize { what: "traffic", source })?;
    atif_replay::support::redact_json(&mut value, &[])?;
    let exchanges = serde_json::from_value(value)
        .map_err(|source| atif_replay::Error::Serialize { what: "redacted traffic", source })?;
    Ok(exchanges)
}

/// `response` as the answer to a `HEAD` request: the same status and headers, no body.
fn without_body(response: Response) -> Response {
    let (parts, _) = response.into_parts();
    Response::from_parts(parts, Body::empty())
}

/// A recorded reply, as the tape wrote it out when the script was loaded.
fn replay_reply(reply: &Reply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    let mut builder = Response::builder().status(status);
    builder = builder.header(header::CONTENT_TYPE, reply.content_type.as_str());
    for (name, value) in reply.headers() {
        // A header edited by hand into something HTTP cannot carry is left out, not an error.
        let name = header::HeaderName::from_bytes(name.as_bytes());
        let value = HeaderValue::from_str(value);
        if let (Ok(name), Ok(value)) = (name, value) {
            if !is_hop_header(name.as_str()) {
                builder = builder.header(name, value);
            }
        }
    }
    let body = match &reply.body {
        ReplyBody::Events(events) if reply.cut.is_none() => Body::from(events.clone()),
        ReplyBody::Events(events) => {
            let cut = reply.cut.clone();
            Body::from_stream(futures_util::stream::unfold(
                (Some(events.clone()), cut),
                |(events, cut)| async move {
                    if let Some(events) = events {
                        return Some((Ok(events), (None, cut)));
                    }
                    let cut = cut?;
                    // Let the server flush what was sent before the connection is cut, as the
                    // upstream's was: the agent sees the events, then the cut.
                    tokio::task::yield_now().await;
                    let err = std::io::Error::other(format!("recorded as cut: {cut}"));
                    Some((Err(err), (None, None)))
                },
            ))
        }
        ReplyBody::Whole(bytes) => Body::from(bytes.clone()),
        ReplyBody::Empty => Body::empty(),
    };
    builder.body(body).unwrap_or_else(|_| Response::new(Body::empty()))
}

/// `GET /v1/models` in a replay of a script that recorded no listing: the models the script's
/// requests asked for, in a shape both OpenAI's and Anthropic's SDKs read.
fn model_list(models: &[String]) -> Value {
    let data: Vec<Value> = models
        .iter()
        .map(|id| {
            json!({
                "id": id,
                "object": "model",
                "type": "model",
                "created": 0,
                "created_at": "1970-01-01T00:00:00Z",
                "display_name": id,
                "owned_by": "atif-replay",
            })
        })
        .collect();
    json!({
        "object": "list",
        "data": data,
        "has_more": false,
        "first_id": models.first(),
        "last_id": models.last(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_address_is_exported_as_loopback() {
        let url = |addr: &str| base_url(addr.parse().unwrap());
        assert_eq!(url("0.0.0.0:4000"), "http://127.0.0.1:4000");
        assert_eq!(url("[::]:4000"), "http://[::1]:4000");
        assert_eq!(url("10.0.0.5:4000"), "http://10.0.0.5:4000");
        assert_eq!(url("127.0.0.1:4000"), "http://127.0.0.1:4000");
    }

    #[test]
    fn tokens_are_random_and_hex() {
        let (first, second) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(first.len(), 32);
        assert!(first.chars().all(|c| c.is_ascii_hexdigit()), "{first}");
        assert_ne!(first, second);
    }
}
