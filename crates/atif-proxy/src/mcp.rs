//! `atif mcp`: a stdio MCP relay between an agent and one MCP server, which records their
//! JSON-RPC traffic line for line, or answers the agent from the tape without the server.
//!
//! Alone (`--script`), the relay keeps its own tape in the script file; run under a
//! record/replay server (`ATIF_PROXY_URL` and `ATIF_PROXY_TOKEN`), it hands every message to
//! that server, so the model's exchanges and every MCP server's traffic go on one tape.

use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use atif_replay::{McpMessage, McpSide, Script};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use crate::clean::Cleaner;
use crate::mcp_tape::{McpAnswer, McpTape, Output};
use crate::normalize::Normalizer;
use crate::{DriftPolicy, Error, Operation, Result};

/// How long a server may take to exit once its standard input is closed, before it is killed.
const SERVER_EXIT_GRACE: Duration = Duration::from_secs(5);

/// How long a relay waits for the record/replay server to answer one of its reports.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(60);

/// How `atif mcp` runs: which server, which command starts it, and where its tape is.
#[derive(Debug, Clone)]
pub struct McpOptions {
    name: String,
    command: Vec<OsString>,
    tape: McpTarget,
    drift: DriftPolicy,
    masks: Vec<String>,
    cwd: Option<PathBuf>,
    home: Option<PathBuf>,
}

/// Where a relay's tape is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpTarget {
    /// A script file of its own, recorded or replayed as its operation says.
    Script {
        /// The script file.
        path: PathBuf,
        /// Record or replay.
        operation: Operation,
    },
    /// The record/replay server of the run (`atif record`, `replay`, `serve`), at its base URL
    /// with its control token: it keeps the one tape and says whether to record or replay.
    Server {
        /// The server's base URL (`ATIF_PROXY_URL`).
        url: String,
        /// The run's control token (`ATIF_PROXY_TOKEN`).
        token: String,
    },
}

impl McpOptions {
    /// A relay for the server the agent calls `name`, started (when recording) with `command`,
    /// its tape at `tape`.
    pub fn new(name: impl Into<String>, command: Vec<OsString>, tape: McpTarget) -> McpOptions {
        McpOptions {
            name: name.into(),
            command,
            tape,
            drift: DriftPolicy::Strict,
            masks: Vec::new(),
            cwd: std::env::current_dir().ok(),
            home: std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from),
        }
    }

    /// What a replay does with a call that differs from every recorded one (default strict).
    pub fn set_drift(&mut self, drift: DriftPolicy) -> &mut Self {
        self.drift = drift;
        self
    }

    /// Masks a regex's matches wherever they appear, for matching (repeatable).
    pub fn add_mask(&mut self, regex: impl Into<String>) -> &mut Self {
        self.masks.push(regex.into());
        self
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What a relay saw, once the agent closed the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpOutcome {
    /// Record or replay.
    pub operation: Operation,
    /// How many messages were recorded or answered.
    pub messages: usize,
    /// The failures, each of which makes the run not exact: unrecorded calls, recorded calls
    /// never made, lines that were not JSON.
    pub errors: Vec<String>,
    /// Drifts served anyway under `--drift warn`.
    pub warnings: Vec<String>,
    /// Where a standalone recording was saved.
    pub saved: Option<PathBuf>,
}

/// A future that ends the relay early (a signal), as the CLI gives it.
pub type Stop = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Runs the relay on this process's standard input and output until the agent closes its
/// side (or the server ends, or `stop` resolves), then saves a standalone recording.
///
/// # Errors
///
/// [`Error::Script`] when the script cannot be read or written, [`Error::Mask`] for an invalid
/// mask, [`Error::McpServer`] when the server cannot be started, [`Error::McpRelay`] when the
/// record/replay server cannot be reached or reading standard input fails.
pub async fn relay_mcp(options: &McpOptions, stop: Stop) -> Result<McpOutcome> {
    let dir_text = |dir: Option<&Path>| dir.map(|dir| dir.to_string_lossy().into_owned());
    let (cwd, home) = (dir_text(options.cwd.as_deref()), dir_text(options.home.as_deref()));
    match &options.tape {
        McpTarget::Script { path, operation: Operation::Replay } => {
            let script = atif_replay::read_script(path)?;
            let mut masks = script.recording.as_ref().map(|r| r.masks.clone()).unwrap_or_default();
            masks.extend(options.masks.iter().cloned());
            let normalizer = Normalizer::new(cwd, home, &masks)?;
            let tape = McpTape::new(&script.mcp, &normalizer);
            let answerer = Answerer::Local { tape, normalizer, drift: options.drift };
            replay(options, answerer, stop).await
        }
        McpTarget::Script { path, .. } => {
            let normalizer = Normalizer::new(cwd, home, &options.masks)?;
            let log = Log::Local(Arc::new(Mutex::new(Vec::new())));
            let mut outcome = record(options, &log, &normalizer, stop).await?;
            if let Log::Local(messages) = log {
                let messages =
                    std::mem::take(&mut *messages.lock().unwrap_or_else(PoisonError::into_inner));
                // A recording that failed never replaces a good script: it goes beside it, as
                // `atif record` keeps one.
                let target = match outcome.errors.is_empty() {
                    true => path.clone(),
                    false => crate::failed_path(path),
                };
                save(&target, path, &options.name, messages, &options.masks)?;
                outcome.saved = Some(target);
            }
            Ok(outcome)
        }
        McpTarget::Server { url, token } => {
            let remote = Remote::new(url, token, &options.name)?;
            let (operation, opening) = remote.start().await?;
            match operation {
                Operation::Replay => {
                    let answerer = Answerer::Remote { remote: remote.clone(), opening };
                    let outcome = replay(options, answerer, stop).await;
                    // A relay that could not go on (the agent's side unreadable) fails the run.
                    if let Err(err) = &outcome {
                        remote.fail(&err.to_string()).await;
                    }
                    outcome
                }
                Operation::Record => {
                    let normalizer = Normalizer::new(cwd, home, &options.masks)?;
                    let (sender, posting) = remote.sender();
                    let log = Log::Remote(sender);
                    let outcome = record(options, &log, &normalizer, stop).await;
                    // Every message reaches the server before the relay ends.
                    drop(log);
                    let _ = posting.await;
                    // And what went wrong in the relay, for the run's verdict.
                    match &outcome {
                        Ok(outcome) => {
                            for error in &outcome.errors {
                                remote.fail(error).await;
                            }
                        }
                        Err(err) => remote.fail(&err.to_string()).await,
                    }
                    outcome
                }
            }
        }
    }
}

/// Where a recording relay puts each message.
enum Log {
    Local(Arc<Mutex<Vec<McpMessage>>>),
    /// Sent, in order, to the record/replay server; a message that comes with a sender is
    /// answered on it once posted.
    Remote(mpsc::UnboundedSender<(McpMessage, Option<oneshot::Sender<()>>)>),
}

impl Log {
    fn push(&self, message: McpMessage) {
        match self {
            Log::Local(messages) => {
                messages.lock().unwrap_or_else(PoisonError::into_inner).push(message)
            }
            Log::Remote(sender) => {
                let _ = sender.send((message, None));
            }
        }
    }

    /// Logs `message` and returns once it is on the tape: the record/replay server has it (and
    /// every message before it), so an agent that reads the server's reply and ends cannot
    /// end the run before the reply is recorded.
    async fn push_and_wait(&self, message: McpMessage) {
        match self {
            Log::Local(_) => self.push(message),
            Log::Remote(sender) => {
                let (posted, wait) = oneshot::channel();
                if sender.send((message, Some(posted))).is_ok() {
                    let _ = wait.await;
                }
            }
        }
    }
}

/// Starts the server and relays both ways, logging every line, until either side ends.
async fn record(
    options: &McpOptions,
    log: &Log,
    normalizer: &Normalizer,
    stop: Stop,
) -> Result<McpOutcome> {
    let mut child = spawn_server(options)?;
    let (Some(mut server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Error::McpServer {
            name: options.name.clone(),
            command: command_text(options),
            source: std::io::Error::other("its standard input or output could not be piped"),
        });
    };
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let errors = Arc::new(Mutex::new(Vec::new()));
    let failed = |reading: &str, err: std::io::Error| {
        let mut errors = errors.lock().unwrap_or_else(PoisonError::into_inner);
        errors.push(format!("reading {reading} failed: {err}"));
    };
    let entry = |from: McpSide, line: &str| {
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        recorded_line(&options.name, from, line, normalizer)
    };
    let to_server = async {
        let mut lines = Lines::new(tokio::io::stdin());
        loop {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    log.push(entry(McpSide::Client, &line));
                    if server_in.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                        break;
                    }
                    let _ = server_in.flush().await;
                }
                Ok(None) => break,
                Err(err) => {
                    failed("the agent's messages", err);
                    break;
                }
            }
        }
        // The agent closed its side: so does the relay, and the server may end.
        drop(server_in);
    };
    let to_client = async {
        let mut stdout = tokio::io::stdout();
        let mut lines = Lines::new(server_out);
        loop {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    log.push_and_wait(entry(McpSide::Server, &line)).await;
                    if stdout.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                        break;
                    }
                    let _ = stdout.flush().await;
                }
                Ok(None) => break,
                Err(err) => {
                    failed("the server's output", err);
                    break;
                }
            }
        }
    };
    tokio::select! {
        () = until_either_ends(to_server, to_client) => {}
        () = stop => {}
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
    let errors = std::mem::take(&mut *errors.lock().unwrap_or_else(PoisonError::into_inner));
    let messages = count.load(std::sync::atomic::Ordering::Relaxed);
    Ok(McpOutcome::recorded(messages, errors))
}

/// One line as the tape keeps it, with the run's directories as placeholders; a server's keeps
/// its text, since what the agent reads back in a replay is the server's line, byte for byte.
fn recorded_line(server: &str, from: McpSide, line: &str, normalizer: &Normalizer) -> McpMessage {
    let mut message =
        serde_json::from_str::<Value>(line).unwrap_or_else(|_| Value::String(line.to_owned()));
    normalizer.insert_placeholders(&mut message);
    let recorded = McpMessage::new(server, from, message);
    match from {
        McpSide::Server => recorded.with_line(&normalizer.place_dirs_in(line)),
        McpSide::Client => recorded,
    }
}

/// Runs both copies of a relay until one side ends. The agent closed its side: the server gets
/// a moment, from then, to answer what is in flight and exit, as its standard input is closed.
/// The server ended: so does the relay, and the agent reads the end of its output.
async fn until_either_ends(
    to_server: impl Future<Output = ()>,
    to_client: impl Future<Output = ()>,
) {
    tokio::pin!(to_server, to_client);
    tokio::select! {
        () = &mut to_server => {
            let _ = tokio::time::timeout(SERVER_EXIT_GRACE, &mut to_client).await;
        }
        () = &mut to_client => {}
    }
}

impl McpOutcome {
    /// The outcome of a relay that recorded `messages` into the run's server, which saves them.
    fn recorded(messages: usize, errors: Vec<String>) -> McpOutcome {
        McpOutcome {
            operation: Operation::Record,
            messages,
            errors,
            warnings: Vec::new(),
            saved: None,
        }
    }
}

/// Starts the real server with the relay's environment as it is, its credentials included;
/// only the run's own token for the record/replay server is kept from it.
fn spawn_server(options: &McpOptions) -> Result<tokio::process::Child> {
    let Some((program, args)) = options.command.split_first() else {
        return Err(Error::McpServer {
            name: options.name.clone(),
            command: String::new(),
            source: std::io::Error::other("no server command was given after `--`"),
        });
    };
    tokio::process::Command::new(program)
        .args(args)
        .env_remove("ATIF_PROXY_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| Error::McpServer {
            name: options.name.clone(),
            command: command_text(options),
            source,
        })
}

/// The server's command line as an error names it, its secrets (a key given as an argument)
/// redacted.
fn command_text(options: &McpOptions) -> String {
    let text = options.command.iter().map(|arg| arg.to_string_lossy()).collect::<Vec<_>>();
    Cleaner::new().clean(text.join(" "))
}

/// Writes a standalone recording: the script at `path` keeps its model exchanges and the
/// other servers' messages, and this server's are replaced. The `--mask` regexes are kept
/// with the recording, as `atif record` keeps them, for a replay to match by; they redact
/// nothing.
///
/// The script is written to `target` from the one at `base`: a failed recording goes beside
/// the script, made from it, never from an older failed one.
fn save(
    target: &Path,
    base: &Path,
    name: &str,
    messages: Vec<McpMessage>,
    masks: &[String],
) -> Result<()> {
    let _lock = lock_folder(target, name)?;
    let mut script = match base.exists() {
        true => atif_replay::read_script(base)?,
        false => Script::new(None),
    };
    script.mcp.retain(|message| message.server != name);
    script.mcp.extend(messages);
    if !masks.is_empty() {
        let recording = script.recording.get_or_insert_with(|| atif_replay::Recording {
            cwd: None,
            home: None,
            masks: Vec::new(),
        });
        for mask in masks {
            if !recording.masks.contains(mask) {
                recording.masks.push(mask.clone());
            }
        }
    }
    atif_replay::support::write_script_owned(target, script, &[])?;
    Ok(())
}

/// Holds the lock on the folder of a script that relays write, until dropped: relays of one
/// agent run side by side on one script (`--script S` for each server), and each reads,
/// changes and writes it, so without the lock one could write over what another just saved.
/// The kernel releases it when the process ends, however it ends.
#[cfg(unix)]
fn lock_folder(path: &Path, name: &str) -> Result<std::fs::File> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let fail = |err: &dyn std::fmt::Display| Error::McpRelay {
        name: name.to_owned(),
        message: format!("cannot lock the folder {} to save the script: {err}", folder.display()),
    };
    let dir = std::fs::File::open(folder).map_err(|err| fail(&err))?;
    rustix::fs::flock(&dir, rustix::fs::FlockOperation::LockExclusive).map_err(|err| fail(&err))?;
    Ok(dir)
}

/// Windows has no `flock`: relays there save without a lock (one script per server is safe).
#[cfg(not(unix))]
fn lock_folder(_path: &Path, _name: &str) -> Result<()> {
    Ok(())
}

/// What a replaying relay writes for one of the agent's messages, and what it says of it.
struct Served {
    lines: Vec<String>,
    failure: Option<String>,
    warning: Option<String>,
}

impl From<McpAnswer> for Served {
    fn from(answer: McpAnswer) -> Served {
        let McpAnswer { replies, failure, warning } = answer;
        Served { lines: texts(replies), failure, warning }
    }
}

fn texts(outputs: Vec<Output>) -> Vec<String> {
    outputs.iter().map(Output::text).collect()
}

/// Where a replaying relay gets its answers.
enum Answerer {
    Local { tape: McpTape, normalizer: Normalizer, drift: DriftPolicy },
    Remote { remote: Remote, opening: Vec<String> },
}

/// Answers the agent from the tape, line by line, without starting the server.
async fn replay(options: &McpOptions, mut answerer: Answerer, stop: Stop) -> Result<McpOutcome> {
    let mut outcome = McpOutcome {
        operation: Operation::Replay,
        messages: 0,
        errors: Vec::new(),
        warnings: Vec::new(),
        saved: None,
    };
    let mut stdout = tokio::io::stdout();
    let opening = match &mut answerer {
        Answerer::Local { tape, .. } => texts(tape.opening(&options.name)),
        Answerer::Remote { opening, .. } => std::mem::take(opening),
    };
    write_lines(&mut stdout, &opening).await;
    let serve = async {
        let mut lines = Lines::new(tokio::io::stdin());
        let mut number = 0usize;
        while let Some(line) = lines.next_line().await.map_err(|err| Error::McpRelay {
            name: options.name.clone(),
            message: format!("cannot read the agent's messages: {err}"),
        })? {
            number += 1;
            if line.trim().is_empty() {
                continue;
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                let error = format!(
                    "line {number} from the agent is not JSON; MCP over stdio is one JSON-RPC message a line"
                );
                if let Answerer::Remote { remote, .. } = &answerer {
                    remote.fail(&error).await;
                }
                outcome.errors.push(format!("MCP server `{}`: {error}", options.name));
                continue;
            };
            outcome.messages += 1;
            let answer = match &mut answerer {
                Answerer::Local { tape, normalizer, drift } => {
                    Served::from(tape.answer(&options.name, &message, normalizer, *drift))
                }
                Answerer::Remote { remote, .. } => remote.answer(&message).await?,
            };
            outcome.errors.extend(answer.failure);
            outcome
                .warnings
                .extend(answer.warning.inspect(|warning| say(&format!("warning: {warning}"))));
            write_lines(&mut stdout, &answer.lines).await;
        }
        Ok::<(), Error>(())
    };
    tokio::select! {
        served = serve => served?,
        () = stop => {}
    }
    if let Answerer::Local { tape, .. } = &answerer {
        let unused = tape.unused();
        if !unused.is_empty() {
            outcome.errors.push(format!(
                "{} of the {} recorded MCP calls were never made: {}. The agent is making fewer tool calls than when it was recorded",
                unused.len(),
                tape.calls(),
                unused.join(", ")
            ));
        }
    }
    Ok(outcome)
}

/// The longest line a relay reads from either side: far beyond any MCP message, and a bound
/// on what a broken peer that never ends its line can make the relay hold.
pub(crate) const MAX_LINE_BYTES: u64 = 64 << 20;

/// Lines of a reader, each at most `max` bytes long ([`MAX_LINE_BYTES`]).
struct Lines<R> {
    reader: BufReader<R>,
    max: u64,
}

impl<R: tokio::io::AsyncRead + Unpin> Lines<R> {
    fn new(reader: R) -> Lines<R> {
        Lines { reader: BufReader::new(reader), max: MAX_LINE_BYTES }
    }

    /// The next line without its line end, `None` at the end; a line over the bound or not
    /// UTF-8 is an error.
    async fn next_line(&mut self) -> std::io::Result<Option<String>> {
        let mut bytes = Vec::new();
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                break;
            }
            let (taken, ended) = match buf.iter().position(|byte| *byte == b'\n') {
                Some(end) => (end + 1, true),
                None => (buf.len(), false),
            };
            bytes.extend_from_slice(&buf[..taken]);
            self.reader.consume(taken);
            let content = bytes.len() as u64 - u64::from(ended);
            if content > self.max {
                let message = format!(
                    "a line longer than {} bytes; MCP over stdio is one JSON-RPC message a line",
                    self.max
                );
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, message));
            }
            if ended {
                break;
            }
        }
        if bytes.is_empty() {
            return Ok(None);
        }
        while matches!(bytes.last(), Some(b'\n' | b'\r')) {
            bytes.pop();
        }
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidData, err))
    }
}

async fn write_lines(stdout: &mut tokio::io::Stdout, messages: &[String]) {
    for message in messages {
        let _ = stdout.write_all(format!("{message}\n").as_bytes()).await;
    }
    let _ = stdout.flush().await;
}

#[allow(clippy::print_stderr, reason = "a relay's failures go to the agent's log of the server")]
fn say(line: &str) {
    eprintln!("atif mcp: {line}");
}

/// The record/replay server a relay reports to.
#[derive(Debug, Clone)]
struct Remote {
    client: reqwest::Client,
    endpoint: String,
    token: String,
    name: String,
}

impl Remote {
    fn new(url: &str, token: &str, name: &str) -> Result<Remote> {
        // The record/replay server answers a relay at once; one that does not within this
        // time is gone or wedged, and the relay says so rather than wait for ever.
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(REMOTE_TIMEOUT)
            .build()
            .map_err(|source| Error::Client { source })?;
        let endpoint = format!("{}/_atif/mcp", url.trim_end_matches('/'));
        Ok(Remote { client, endpoint, token: token.to_owned(), name: name.to_owned() })
    }

    async fn post(&self, body: &Value) -> Result<Value> {
        let fail = |message: String| Error::McpRelay { name: self.name.clone(), message };
        let reply = self
            .client
            .post(&self.endpoint)
            .header("x-atif-token", &self.token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|err| {
                fail(format!("cannot reach the record/replay server at {}: {err}", self.endpoint))
            })?;
        let status = reply.status();
        let bytes = reply
            .bytes()
            .await
            .map_err(|err| fail(format!("the record/replay server's reply was cut: {err}")))?;
        let json: Value = serde_json::from_slice(&bytes)
            .map_err(|err| fail(format!("the record/replay server's reply is not JSON: {err}")))?;
        if !status.is_success() {
            let why =
                json.get("error").and_then(Value::as_str).unwrap_or("no reason given").to_owned();
            return Err(fail(format!(
                "the record/replay server refused the relay ({status}): {why}"
            )));
        }
        Ok(json)
    }

    /// Says the relay started; the server's operation (record or replay) and, in a replay, the server's opening.
    async fn start(&self) -> Result<(Operation, Vec<String>)> {
        let reply = self.post(&json!({"server": self.name, "start": true})).await?;
        let operation = match reply.get("operation").and_then(Value::as_str) {
            Some("replay") => Operation::Replay,
            _ => Operation::Record,
        };
        Ok((operation, replies_of(&reply)))
    }

    /// Tells the server what went wrong in the relay itself, for the run's verdict; a server
    /// that cannot be told is gone, and the relay's own exit status says it.
    async fn fail(&self, failure: &str) {
        let report = json!({"server": self.name, "failure": failure});
        if let Err(err) = self.post(&report).await {
            say(&Cleaner::new().clean(err.to_string()));
        }
    }

    async fn answer(&self, message: &Value) -> Result<Served> {
        let reply =
            self.post(&json!({"server": self.name, "from": "client", "message": message})).await?;
        let text = |key: &str| reply.get(key).and_then(Value::as_str).map(str::to_owned);
        Ok(Served { lines: replies_of(&reply), failure: text("failure"), warning: text("warning") })
    }

    /// A channel whose messages are posted to the server one after the other, in order, each
    /// sender given with one told once its message is posted.
    #[allow(clippy::type_complexity, reason = "one use, named by its doc")]
    fn sender(
        &self,
    ) -> (
        mpsc::UnboundedSender<(McpMessage, Option<oneshot::Sender<()>>)>,
        tokio::task::JoinHandle<()>,
    ) {
        let (sender, mut receiver) =
            mpsc::unbounded_channel::<(McpMessage, Option<oneshot::Sender<()>>)>();
        let remote = self.clone();
        let task = tokio::spawn(async move {
            while let Some((message, posted)) = receiver.recv().await {
                let body = json!({"server": remote.name, "from": message.from,
                                  "message": message.message, "line": message.line});
                if let Err(err) = remote.post(&body).await {
                    say(&Cleaner::new().clean(err.to_string()));
                }
                if let Some(posted) = posted {
                    let _ = posted.send(());
                }
            }
        });
        (sender, task)
    }
}

/// The lines a server's reply gives the relay to write, each a whole JSON-RPC message.
fn replies_of(reply: &Value) -> Vec<String> {
    let replies = reply.get("replies").and_then(Value::as_array).map(Vec::as_slice);
    replies.unwrap_or_default().iter().filter_map(Value::as_str).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_end_at_their_line_end_and_a_line_over_the_bound_is_an_error() {
        let input: &[u8] = b"{\"a\": 1}\r\nshort\n0123456789abcdefXYZ\nlast";
        let mut lines = Lines { reader: BufReader::new(input), max: 16 };
        assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("{\"a\": 1}"));
        assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("short"));
        let err = lines.next_line().await.unwrap_err();
        assert!(err.to_string().starts_with("a line longer than 16 bytes"), "{err}");
        let mut lines = Lines { reader: BufReader::new(&b"last"[..]), max: 16 };
        assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("last"));
        assert_eq!(lines.next_line().await.unwrap(), None);
    }
}
