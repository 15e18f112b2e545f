//! MCP messages in a script: the JSON-RPC traffic between an agent and its MCP servers, each
//! message with the server it went to or came from, its direction and its place in the order.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One JSON-RPC message between an agent (the MCP client) and one of its MCP servers, as
/// recorded by `atif mcp`: a request, a response or a notification, in either direction.
///
/// A script keeps them in [`Script::mcp`](crate::Script::mcp) in the order the relay saw
/// them, every server's messages interleaved as they happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct McpMessage {
    /// The name the agent's configuration gives the server (`atif mcp --name NAME`).
    pub server: String,
    /// Who sent it.
    pub from: McpSide,
    /// The JSON-RPC message as it was sent, secrets redacted and the recording's working and
    /// home directories written `<cwd>` and `<home>`; a line that was not JSON is kept as a
    /// JSON string.
    pub message: Value,
    /// The line exactly as the server wrote it (secrets redacted, directories as
    /// placeholders), kept when it differs from `message` written compactly: `message` keeps
    /// no key order, and an agent hands a tool's structured result on to the model as it
    /// reads it, so a replay writes this line (its `id` rewritten) to give the agent the same
    /// bytes. It parses to `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// How the message travelled, for a Streamable-HTTP server fronted by the record/replay
    /// server (`atif record --mcp NAME=URL`); absent for a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<McpHttp>,
}

impl McpMessage {
    /// A message of `server` sent by `from`.
    pub fn new(server: impl Into<String>, from: McpSide, message: Value) -> McpMessage {
        McpMessage { server: server.into(), from, message, line: None, http: None }
    }

    /// This message as it travelled over Streamable HTTP.
    pub fn with_http(mut self, http: McpHttp) -> McpMessage {
        self.http = Some(http);
        self
    }

    /// This message with the exact `line` its sender wrote, when the line parses to the
    /// message but differs from it written compactly (see [`McpMessage::line`]); otherwise
    /// the message unchanged.
    pub fn with_line(mut self, line: &str) -> McpMessage {
        let same = serde_json::from_str::<Value>(line).is_ok_and(|parsed| parsed == self.message);
        let compact = serde_json::to_string(&self.message).ok();
        if same && compact.as_deref() != Some(line) {
            self.line = Some(line.to_owned());
        }
        self
    }

    /// The JSON-RPC method, for a request or a notification.
    pub fn method(&self) -> Option<&str> {
        self.message.get("method").and_then(Value::as_str)
    }

    /// The JSON-RPC id, for a request or a response.
    pub fn id(&self) -> Option<&Value> {
        self.message.get("id").filter(|id| !id.is_null())
    }

    /// Whether this is a request: a method and an id.
    pub fn is_request(&self) -> bool {
        self.method().is_some() && self.id().is_some()
    }

    /// Whether this is a response: an id, a `result` or an `error`, and no method.
    pub fn is_response(&self) -> bool {
        self.method().is_none()
            && self.id().is_some()
            && (self.message.get("result").is_some() || self.message.get("error").is_some())
    }

    /// The tool a `tools/call` request names.
    pub fn tool(&self) -> Option<&str> {
        match self.method() {
            Some("tools/call") => self.message.pointer("/params/name").and_then(Value::as_str),
            _ => None,
        }
    }
}

/// Which side of an MCP connection sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpSide {
    /// The agent (the MCP client), writing to the server's standard input.
    Client,
    /// The MCP server, writing to its standard output.
    Server,
}

impl McpSide {
    /// `client` or `server`.
    pub fn as_str(self) -> &'static str {
        match self {
            McpSide::Client => "client",
            McpSide::Server => "server",
        }
    }
}

/// How a message between an agent and a Streamable-HTTP MCP server travelled: what a replay
/// needs to give the agent the same HTTP replies without the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct McpHttp {
    /// Which request or reply carried it.
    pub via: McpVia,
    /// The HTTP status of the reply that carried a server message, when it was not 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Whether the reply that carried a server message gave the agent a session
    /// (`Mcp-Session-Id`). The id itself is volatile and never kept: a replay hands out a new
    /// one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub session: bool,
}

impl McpHttp {
    /// A message carried `via` this request or reply, with status 200 and no new session.
    pub fn new(via: McpVia) -> McpHttp {
        McpHttp { via, status: None, session: false }
    }

    /// The reply's status, kept when it is not 200.
    pub fn with_status(mut self, status: u16) -> McpHttp {
        self.status = (status != 200).then_some(status);
        self
    }

    /// Whether the reply gave the agent a session.
    pub fn with_session(mut self, session: bool) -> McpHttp {
        self.session = session;
        self
    }
}

/// Which request or reply of Streamable HTTP carried an MCP message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum McpVia {
    /// The agent's `POST`, alone or in a batch.
    Post,
    /// The JSON body of the reply to a `POST`.
    Reply,
    /// The event stream (`text/event-stream`) replying to a `POST`.
    ReplyStream,
    /// The event stream the agent opened with `GET`, for the server's own messages.
    GetStream,
}
