//! The fake provider's settings: what it answers, and which failure it simulates.

use std::net::SocketAddr;
use std::time::Duration;

use regex::Regex;

use crate::Sampling;

/// The command a shell tool is called with by default; the shell prints `atif-e2e-42`, which
/// the command text itself does not contain (so a quoted result proves the command ran). It
/// avoids `$(...)`, which some agents (Gemini CLI) refuse to run.
pub const DEFAULT_COMMAND: &str = r"printf 'atif-e2e-%d\n' 42";

/// The reply when no tool result is to be quoted and no shell tool is offered.
pub const DEFAULT_TEXT: &str = "Hello from the atif fake provider.";

/// Settings of a [`FakeProvider`](crate::FakeProvider); `Config::default()` is a working server
/// on a free loopback port.
///
/// The replies follow one deterministic tool loop, so that an agent completes one tool-using
/// turn:
///
/// 0. if scripted calls are set ([`Config::set_calls`], `--call NAME=JSON`) and the
///    conversation holds N tool results, the reply is scripted call N when its tool is
///    offered; with [`Config::set_parallel_calls`], the first reply makes every offered
///    scripted call at once, and none is made once the conversation holds a result;
/// 1. if the request's last message is a tool result, the reply is the final text
///    `The command printed: …`, quoting the result (see [`Config::quote_pattern`]);
/// 2. else, when the request asks for JSON with a schema, the reply is a small JSON value
///    fitting it;
/// 3. else, if a shell-like tool is offered (one of [`SHELL_TOOLS`](crate::SHELL_TOOLS),
///    compared without case: `bash`, `Bash`, `exec_command`, `run_shell_command`, `shell`, …),
///    the reply calls it with [`Config::command`], filling the tool's other required arguments
///    from its JSON Schema;
/// 4. else, if any tool is offered, the reply calls the first one, with the smallest arguments
///    that fit its JSON Schema: its required properties only, each its `const`, its `default`,
///    its first `enum` value, or a plain value of its type within its bounds (`"fake"`, `0`,
///    `false`, `[]`), local `$ref`s and `anyOf`/`oneOf`/`allOf` followed;
/// 5. else the reply is plain text, [`Config::text`].
///
/// Ids, timestamps and token counts depend only on the request's number of messages and the
/// reply, so two runs of the same behaviour get byte-identical replies, unless
/// [`Config::set_sampling`] varies the conversations from a seed.
#[derive(Debug, Clone)]
pub struct Config {
    listen: SocketAddr,
    command: String,
    text: String,
    models: Vec<String>,
    quote_pattern: Regex,
    fault: Option<Fault>,
    event_delay: Duration,
    end_delay: Duration,
    keepalives: bool,
    sampling: Option<Sampling>,
    calls: Vec<ScriptedCall>,
    parallel_calls: bool,
}

/// One tool call of a scripted sequence (see [`Config::set_calls`]): the tool's name and the
/// arguments it is called with.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedCall {
    /// The tool's name as the agent offers it, e.g. `mcp__files__read_text_file`.
    pub name: String,
    /// The arguments, a JSON object.
    pub arguments: serde_json::Value,
}

/// A failure the fake provider simulates on every model request, for tests of what sits between
/// an agent and its provider.
///
/// A provider that is down is simulated by [`unreachable_url`](crate::unreachable_url).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// Answer with this HTTP status and the protocol's own error body.
    Status(u16),
    /// Send this many SSE events (or the first half of a JSON body), then drop the connection
    /// without finishing the response.
    CutStream {
        /// Events sent before the cut.
        after_events: usize,
    },
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            command: DEFAULT_COMMAND.to_owned(),
            text: DEFAULT_TEXT.to_owned(),
            models: vec!["fake-model".to_owned()],
            quote_pattern: default_quote_pattern(),
            fault: None,
            event_delay: Duration::ZERO,
            end_delay: Duration::ZERO,
            keepalives: false,
            sampling: None,
            calls: Vec::new(),
            parallel_calls: false,
        }
    }
}

impl Config {
    /// The address to listen on. Default `127.0.0.1:0` (a free port).
    pub fn listen(&self) -> SocketAddr {
        self.listen
    }

    /// Sets the address to listen on.
    pub fn set_listen(&mut self, listen: SocketAddr) {
        self.listen = listen;
    }

    /// The shell command a shell-like tool is called with. Default [`DEFAULT_COMMAND`].
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Sets the shell command a shell-like tool is called with.
    pub fn set_command(&mut self, command: impl Into<String>) {
        self.command = command.into();
    }

    /// The plain-text reply. Default [`DEFAULT_TEXT`].
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Sets the plain-text reply.
    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
    }

    /// The model ids `GET /v1/models` lists. Default `["fake-model"]`.
    pub fn models(&self) -> &[String] {
        &self.models
    }

    /// Sets the model ids `GET /v1/models` lists.
    pub fn set_models(&mut self, models: Vec<String>) {
        self.models = models;
    }

    /// What the final text quotes from a tool result: the first match of this pattern, or else
    /// the result's last non-empty line. Default `atif-e2e-[0-9A-Za-z_-]+`.
    pub fn quote_pattern(&self) -> &Regex {
        &self.quote_pattern
    }

    /// Sets the pattern the final text quotes from a tool result.
    pub fn set_quote_pattern(&mut self, pattern: Regex) {
        self.quote_pattern = pattern;
    }

    /// The failure simulated on every model request. Default none.
    pub fn fault(&self) -> Option<Fault> {
        self.fault
    }

    /// Sets the failure simulated on every model request.
    pub fn set_fault(&mut self, fault: Option<Fault>) {
        self.fault = fault;
    }

    /// The pause before each SSE event after the first, to make a stream observable in time.
    /// Default zero.
    pub fn event_delay(&self) -> Duration {
        self.event_delay
    }

    /// Sets the pause before each SSE event after the first.
    pub fn set_event_delay(&mut self, delay: Duration) {
        self.event_delay = delay;
    }

    /// The pause between a stream's last event and the end of its body, as a provider over a
    /// slow network may leave one: clients that stop reading at the terminal event
    /// (`data: [DONE]`) close the response before the body ends. Default zero.
    pub fn end_delay(&self) -> Duration {
        self.end_delay
    }

    /// Sets the pause between a stream's last event and the end of its body.
    pub fn set_end_delay(&mut self, delay: Duration) {
        self.end_delay = delay;
    }

    /// Whether streams carry what some providers and gateways add around their events: a
    /// first block `: connected` with `retry: 3000`, a `: ping` comment block after every
    /// event, and a comment line inside the first event. Default false.
    pub fn keepalives(&self) -> bool {
        self.keepalives
    }

    /// Sets whether streams carry comments and `retry:`.
    pub fn set_keepalives(&mut self, keepalives: bool) {
        self.keepalives = keepalives;
    }
}

impl Config {
    /// The seeded sampling mode, when on. Default off: every conversation is the same.
    pub fn sampling(&self) -> Option<Sampling> {
        self.sampling
    }

    /// Turns the seeded sampling mode on (`Some`) or off.
    pub fn set_sampling(&mut self, sampling: Option<Sampling>) {
        self.sampling = sampling;
    }

    /// The scripted tool calls, in order. Default none: the reply follows the tool loop.
    pub fn calls(&self) -> &[ScriptedCall] {
        &self.calls
    }

    /// Scripts the tool calls of a conversation: a request whose conversation already holds
    /// `n` tool results is answered with call `n` of this list when the request offers that
    /// tool (by name, or through a tool-search tool such as Claude Code's `ToolSearch`, whose
    /// result loads the tool). Past the list, or when the tool is not offered, the reply
    /// follows the usual tool loop. This lets an agent call several tools, MCP tools among
    /// them, with chosen arguments.
    pub fn set_calls(&mut self, calls: Vec<ScriptedCall>) {
        self.calls = calls;
    }

    /// Whether the scripted calls go out together. Default `false`: one a reply, in order.
    pub fn parallel_calls(&self) -> bool {
        self.parallel_calls
    }

    /// Sends the scripted calls whose tools are offered all in the first reply, as parallel
    /// tool calls (each with its own call id), instead of one a reply; once their results are
    /// in the conversation, the reply follows the usual tool loop (it quotes the last result).
    pub fn set_parallel_calls(&mut self, parallel: bool) {
        self.parallel_calls = parallel;
    }
}

fn default_quote_pattern() -> Regex {
    #[allow(clippy::expect_used, reason = "a constant pattern, checked by the tests")]
    Regex::new("atif-e2e-[0-9A-Za-z_-]+").expect("the default quote pattern is valid")
}
