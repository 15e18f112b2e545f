//! The error type of this crate: a server that could not start or stop, and a run that was
//! not exact.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::Verdict;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The address to listen on could not be bound (a port in use, say).
    #[error("cannot listen on {addr}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The address to listen on is one other machines can reach, and
    /// [`Options::set_allow_remote`](crate::Options::set_allow_remote) was not set.
    #[error(
        "refusing to listen on {addr}: other machines could reach it, be served the script's \
         replies and record through the server; listen on 127.0.0.1, or pass --allow-remote \
         (Options::set_allow_remote) if that is intended"
    )]
    Remote {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The operating system gave no randomness for the control token.
    #[error("cannot make the control token: the operating system gave no random bytes")]
    Token {
        /// getrandom's error.
        #[source]
        source: getrandom::Error,
    },
    /// The script to replay could not be read, or the recording could not be saved.
    #[error(transparent)]
    Script(#[from] atif_replay::Error),
    /// The script to record into is a directory.
    #[error("{path} is a directory; give the path of a script file")]
    ScriptIsDirectory {
        /// The path given.
        path: PathBuf,
    },
    /// A `--mask` pattern is not a valid regular expression.
    #[error("invalid mask `{pattern}`")]
    Mask {
        /// The pattern as given.
        pattern: String,
        /// Why the regex engine rejected it.
        #[source]
        source: regex::Error,
    },
    /// The upstream URL is not an `http://` or `https://` URL.
    #[error(
        "invalid upstream `{url}`: expected an http:// or https:// URL such as https://api.openai.com"
    )]
    Upstream {
        /// The URL as given, with its secrets redacted and its userinfo masked.
        url: String,
    },
    /// The HTTP client for the upstream could not be built.
    #[error("cannot build the HTTP client for the upstream")]
    Client {
        /// reqwest's error.
        #[source]
        source: reqwest::Error,
    },
    /// An MCP server could not be started by its relay.
    #[error("cannot start the MCP server `{name}` (`{command}`)")]
    McpServer {
        /// The server's name (`--name`).
        name: String,
        /// The command that starts it.
        command: String,
        /// Why it could not be started.
        #[source]
        source: std::io::Error,
    },
    /// An MCP relay could not do its job: the record/replay server is out of reach or refused
    /// it, or the agent's side could not be read.
    #[error("MCP relay `{name}`: {message}")]
    McpRelay {
        /// The server's name (`--name`).
        name: String,
        /// What went wrong.
        message: String,
    },
    /// A Streamable-HTTP MCP server to front (`--mcp NAME=URL`) is not given as it must be.
    #[error("--mcp `{name}` {message}")]
    McpHttp {
        /// The server's name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// The server stopped with an error.
    #[error("the server failed")]
    Serve {
        /// The error it stopped with.
        #[source]
        source: std::io::Error,
    },
    /// The run was not exact: the agent asked for more, fewer or different replies than were
    /// recorded, or a recording failed. The verdict says what and where.
    #[error("{}", verdict.summary())]
    NotExact {
        /// What the server saw.
        verdict: Box<Verdict>,
        /// Where a recording that was not exact was saved instead of its script (see
        /// [`failed_path`](crate::failed_path)); `None` in a replay, and for a recording of
        /// no exchange, which is saved nowhere.
        saved: Option<PathBuf>,
    },
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
