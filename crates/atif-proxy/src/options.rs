//! How to run the server: [`Options`], with their defaults and limits.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use atif_replay::DriftPolicy;
use atif_wire::CaptureOptions;

use crate::Operation;
use crate::limits::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_UPSTREAM_FIRST_BYTE_TIMEOUT,
    DEFAULT_UPSTREAM_IDLE_TIMEOUT,
};
use crate::record::UpstreamTimeouts;
use crate::serve::ConnectionTimeouts;

/// How to run the server: record or replay, the script, where to listen.
///
/// Defaults: listen on `127.0.0.1` on a free port, each provider's public API as the
/// upstream, strict drift, the process's working directory and `$HOME` as the directories
/// replaced by `<cwd>` and `<home>`, failures printed on standard error.
#[derive(Debug, Clone)]
pub struct Options {
    pub(crate) operation: Operation,
    pub(crate) script: PathBuf,
    pub(crate) listen: SocketAddr,
    pub(crate) upstream: Option<String>,
    pub(crate) replay_tools: Option<PathBuf>,
    pub(crate) masks: Vec<String>,
    pub(crate) drift: DriftPolicy,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) home: Option<PathBuf>,
    pub(crate) quiet: bool,
    pub(crate) capture: CaptureOptions,
    pub(crate) max_input_bytes: u64,
    pub(crate) allow_remote: bool,
    pub(crate) max_body_bytes: u64,
    pub(crate) max_buffered_bytes: u64,
    pub(crate) body_read_timeout: Duration,
    pub(crate) upstream_timeouts: UpstreamTimeouts,
    pub(crate) connection_timeouts: ConnectionTimeouts,
    pub(crate) mcp_http: Vec<(String, Option<String>)>,
}

impl Options {
    /// Record into `script`: forward every request upstream and save the exchanges.
    pub fn record(script: impl Into<PathBuf>) -> Options {
        Options::new(Operation::Record, script.into())
    }

    /// Replay `script`: answer every request from it, never opening a network connection.
    pub fn replay(script: impl Into<PathBuf>) -> Options {
        Options::new(Operation::Replay, script.into())
    }

    fn new(operation: Operation, script: PathBuf) -> Options {
        Options {
            operation,
            script,
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            upstream: None,
            replay_tools: None,
            masks: Vec::new(),
            drift: DriftPolicy::Strict,
            cwd: std::env::current_dir().ok(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            quiet: false,
            capture: CaptureOptions::new("agent", "unknown"),
            max_input_bytes: atif_schema::DEFAULT_MAX_INPUT_BYTES,
            allow_remote: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_buffered_bytes: DEFAULT_MAX_BUFFERED_BYTES,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            upstream_timeouts: UpstreamTimeouts {
                first_byte: DEFAULT_UPSTREAM_FIRST_BYTE_TIMEOUT,
                idle: DEFAULT_UPSTREAM_IDLE_TIMEOUT,
            },
            connection_timeouts: ConnectionTimeouts {
                header_read: DEFAULT_HEADER_READ_TIMEOUT,
                idle: DEFAULT_IDLE_TIMEOUT,
            },
            mcp_http: Vec::new(),
        }
    }

    /// Record or replay.
    pub fn operation(&self) -> Operation {
        self.operation
    }

    /// The script file.
    pub fn script(&self) -> &Path {
        &self.script
    }

    /// Listens on `addr` (port 0: a free port).
    pub fn set_listen(&mut self, addr: SocketAddr) -> &mut Self {
        self.listen = addr;
        self
    }

    /// The address to listen on.
    pub fn listen(&self) -> SocketAddr {
        self.listen
    }

    /// Sends every request to the origin `url` (`http://127.0.0.1:8080`) instead of the
    /// provider's public API; paths are forwarded unchanged.
    pub fn set_upstream(&mut self, url: impl Into<String>) -> &mut Self {
        self.upstream = Some(url.into());
        self
    }

    /// Also fronts the Streamable-HTTP MCP server `name` at `http://ADDR/mcp/NAME`
    /// (repeatable): a recording forwards each request to `url` and keeps its messages on the
    /// tape under server `name`; a replay, or a hybrid recording
    /// ([`Options::set_replay_tools`]), answers them from the tape and needs no `url`.
    pub fn add_mcp_http(&mut self, name: impl Into<String>, url: Option<String>) -> &mut Self {
        self.mcp_http.push((name.into(), url));
        self
    }

    /// The Streamable-HTTP MCP servers fronted, by name, with their URLs.
    pub fn mcp_http(&self) -> &[(String, Option<String>)] {
        &self.mcp_http
    }

    /// The upstream origin, when one was set.
    pub fn upstream(&self) -> Option<&str> {
        self.upstream.as_deref()
    }

    /// Makes a recording hybrid: the model is recorded live, while the MCP relays of the run
    /// and the Streamable-HTTP servers it fronts are answered from the MCP messages of the
    /// script `tape`, and their servers are never started or contacted. Tool calls match by tool name and arguments, never by order; a call the tape
    /// cannot answer (a miss) gets a tool error and makes the recording not exact. The new
    /// recording holds the tool traffic as served. A replay ignores it: its script holds its
    /// tools.
    pub fn set_replay_tools(&mut self, tape: Option<PathBuf>) -> &mut Self {
        self.replay_tools = tape;
        self
    }

    /// The tools tape of a hybrid recording, when one was set.
    pub fn replay_tools(&self) -> Option<&Path> {
        self.replay_tools.as_deref()
    }

    /// Ignores what `regex` matches when requests are compared (repeatable). A recording
    /// saves its masks in the script, and a replay uses them together with its own.
    pub fn add_mask(&mut self, regex: impl Into<String>) -> &mut Self {
        self.masks.push(regex.into());
        self
    }

    /// The user's masks.
    pub fn masks(&self) -> &[String] {
        &self.masks
    }

    /// What a replay does with drift.
    pub fn set_drift(&mut self, drift: DriftPolicy) -> &mut Self {
        self.drift = drift;
        self
    }

    /// What a replay does with drift.
    pub fn drift(&self) -> DriftPolicy {
        self.drift
    }

    /// The agent's working directory, written `<cwd>` in a recording and put back in a replay.
    pub fn set_cwd(&mut self, dir: Option<PathBuf>) -> &mut Self {
        self.cwd = dir;
        self
    }

    /// The agent's working directory.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// The agent's home directory, written `<home>` in a recording and put back in a replay.
    pub fn set_home(&mut self, dir: Option<PathBuf>) -> &mut Self {
        self.home = dir;
        self
    }

    /// The agent's home directory.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Whether failures are printed on standard error as they happen (they are in the verdict
    /// either way).
    pub fn set_quiet(&mut self, quiet: bool) -> &mut Self {
        self.quiet = quiet;
        self
    }

    /// Whether failures stay off standard error.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// Who the agent is in the trajectory captured from the traffic
    /// ([`Proxy::trajectory`](crate::Proxy::trajectory)); default `agent`, version `unknown`.
    pub fn set_capture(&mut self, capture: CaptureOptions) -> &mut Self {
        self.capture = capture;
        self
    }

    /// Who the agent is in the captured trajectory.
    pub fn capture(&self) -> &CaptureOptions {
        &self.capture
    }

    /// Reads at most `max_bytes` of the script to replay (default
    /// [`atif_schema::DEFAULT_MAX_INPUT_BYTES`], 4 GiB), through atif-schema's bounded reader:
    /// a larger file is refused before a byte is read, and binary data at its first byte.
    pub fn set_max_input_bytes(&mut self, max_bytes: u64) -> &mut Self {
        self.max_input_bytes = max_bytes;
        self
    }

    /// The most bytes read from the script to replay.
    pub fn max_input_bytes(&self) -> u64 {
        self.max_input_bytes
    }

    /// Allows listening on an address that is not loopback (`0.0.0.0`, a LAN address), which
    /// other machines can reach: they can then be served the script's replies, or have their
    /// requests recorded and sent upstream. Off by default: [`start`](crate::start) refuses such an address.
    /// Requests must still name the address they were sent to in `Host` (a number, or
    /// `localhost`), never a host name.
    pub fn set_allow_remote(&mut self, allow: bool) -> &mut Self {
        self.allow_remote = allow;
        self
    }

    /// Whether an address other machines can reach may be listened on.
    pub fn allow_remote(&self) -> bool {
        self.allow_remote
    }

    /// The largest request body the server reads (default [`DEFAULT_MAX_BODY_BYTES`],
    /// 256 MiB); a larger one gets 413 in the provider's error shape, before it is read when
    /// its `Content-Length` says so.
    pub fn set_max_body_bytes(&mut self, max_bytes: u64) -> &mut Self {
        self.max_body_bytes = max_bytes;
        self
    }

    /// The largest request body the server reads.
    pub fn max_body_bytes(&self) -> u64 {
        self.max_body_bytes
    }

    /// The most bytes of request bodies held at once, across all requests (default
    /// [`DEFAULT_MAX_BUFFERED_BYTES`], 1 GiB); a request whose body would go over it gets 503
    /// in the provider's error shape at once.
    pub fn set_max_buffered_bytes(&mut self, max_bytes: u64) -> &mut Self {
        self.max_buffered_bytes = max_bytes;
        self
    }

    /// The most bytes of request bodies held at once.
    pub fn max_buffered_bytes(&self) -> u64 {
        self.max_buffered_bytes
    }

    /// The longest pause while a client sends a request body (default
    /// [`DEFAULT_BODY_READ_TIMEOUT`], 30 s); after it the request gets 408 in the provider's
    /// error shape.
    pub fn set_body_read_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.body_read_timeout = timeout;
        self
    }

    /// The longest pause while a client sends a request body.
    pub fn body_read_timeout(&self) -> Duration {
        self.body_read_timeout
    }

    /// The longest a client may take to send a request's head, from the connection's opening
    /// or from the first byte after an idle spell (default [`DEFAULT_HEADER_READ_TIMEOUT`],
    /// 10 s); after it the connection is closed.
    pub fn set_header_read_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.connection_timeouts.header_read = timeout;
        self
    }

    /// The longest a client may take to send a request's head.
    pub fn header_read_timeout(&self) -> Duration {
        self.connection_timeouts.header_read
    }

    /// The longest a kept-alive connection may stay idle between a reply and the next request
    /// (default [`DEFAULT_IDLE_TIMEOUT`], 60 s); after it the connection is closed.
    pub fn set_idle_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.connection_timeouts.idle = timeout;
        self
    }

    /// The longest a kept-alive connection may stay idle.
    pub fn idle_timeout(&self) -> Duration {
        self.connection_timeouts.idle
    }

    /// In a recording, the longest wait for the upstream's reply to begin (default
    /// [`DEFAULT_UPSTREAM_FIRST_BYTE_TIMEOUT`], 10 minutes); after it the agent gets 504 in
    /// its provider's error shape and the recording is not exact.
    pub fn set_upstream_first_byte_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.upstream_timeouts.first_byte = timeout;
        self
    }

    /// The longest wait for the upstream's reply to begin.
    pub fn upstream_first_byte_timeout(&self) -> Duration {
        self.upstream_timeouts.first_byte
    }

    /// In a recording, the longest silence of the upstream within a reply, between two
    /// events of a stream (default [`DEFAULT_UPSTREAM_IDLE_TIMEOUT`], 10 minutes); after it
    /// the reply is cut off, reaches the agent cut, is recorded as cut, and the recording is
    /// not exact.
    pub fn set_upstream_idle_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.upstream_timeouts.idle = timeout;
        self
    }

    /// The longest silence of the upstream within a reply.
    pub fn upstream_idle_timeout(&self) -> Duration {
        self.upstream_timeouts.idle
    }
}
