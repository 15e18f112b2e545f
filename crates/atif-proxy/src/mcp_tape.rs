//! The MCP replay tape: each server's recorded JSON-RPC messages, and the rule that answers a
//! client's message from them (by method and normalised params, never by position or id).
//!
//! Each recorded client request or notification is an entry, followed by what the server
//! sent because of it: its response (joined by the recorded id) and the server's own
//! notifications and requests that came before the client's next message. Server messages
//! sent before the client said anything are the server's opening, sent when the relay starts.

use std::collections::HashMap;

use atif_replay::{McpHttp, McpMessage, McpSide};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use similar::TextDiff;

use crate::DriftPolicy;
use crate::normalize::{Normalizer, render_for_diff};

/// The JSON-RPC error code of a reply the tape cannot give (an implementation-defined server
/// error, in the range JSON-RPC reserves for them).
pub(crate) const TAPE_ERROR_CODE: i64 = -32001;

/// How many lines of an argument diff are shown.
const DIFF_LINES: usize = 40;

/// Methods matched by their params, strictly: what a server does for the agent. Every other
/// request (`initialize`, `tools/list`, `ping`, …) is answered in recorded order by method,
/// and the last recorded answer again when the agent asks more often than it did.
const MATCHED_BY_PARAMS: &[&str] = &[
    "tools/call",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/get",
    "completion/complete",
];

/// Every server's recorded messages and what a replay has used of them.
#[derive(Debug)]
pub(crate) struct McpTape {
    servers: HashMap<String, ServerTape>,
    /// Whether a call equal to a recorded one that was already served is served again (a
    /// hybrid recording's tools tape, where the model is live and may repeat a call).
    reuse: bool,
}

#[derive(Debug, Default)]
struct ServerTape {
    /// Server messages sent before the client's first message.
    opening: Vec<Output>,
    entries: Vec<Entry>,
    /// Whether the opening was sent.
    opened: bool,
    /// Requests seen so far per method and tool, for the count in "one too many".
    seen: HashMap<String, usize>,
}

#[derive(Debug)]
struct Entry {
    /// The message's number in the script's `mcp` list, from 1.
    number: usize,
    method: String,
    tool: Option<String>,
    is_request: bool,
    /// The params as matching compares them.
    params: Value,
    /// What the server sent because of it, in recorded order; a response's id is the
    /// recorded one and is rewritten to the live request's.
    outputs: Vec<Output>,
    used: bool,
    /// Whether its outputs went out already: answered again (a handshake past the end of the
    /// tape, a call a hybrid recording makes twice), it gives its response alone, not the
    /// server's own messages a second time (a `list_changed` could loop the agent).
    served: bool,
}

/// What a replaying relay sends the agent for one of its messages, and what it says.
#[derive(Debug, Default)]
pub(crate) struct McpAnswer {
    /// The messages to write to the agent, in order.
    pub(crate) replies: Vec<Output>,
    /// A failure that makes the run not exact.
    pub(crate) failure: Option<String>,
    /// A drift served anyway (`--drift warn`).
    pub(crate) warning: Option<String>,
}

impl McpTape {
    /// A tape over `messages`, their params normalised with `normalizer` and their
    /// `<cwd>` and `<home>` placeholders filled with this run's directories.
    pub(crate) fn new(messages: &[McpMessage], normalizer: &Normalizer) -> McpTape {
        let mut servers: HashMap<String, ServerTape> = HashMap::new();
        // Per server: the entry of each recorded request id, and the last client entry.
        let mut by_id: HashMap<(String, String), usize> = HashMap::new();
        let mut last: HashMap<String, usize> = HashMap::new();
        for (idx, message) in messages.iter().enumerate() {
            let tape = servers.entry(message.server.clone()).or_default();
            let output = Output::recorded(message, normalizer);
            match message.from {
                McpSide::Client if message.method().is_some() => {
                    let entry = Entry::new(idx + 1, message, normalizer);
                    if let Some(id) = message.id() {
                        by_id.insert((message.server.clone(), id.to_string()), tape.entries.len());
                    }
                    last.insert(message.server.clone(), tape.entries.len());
                    tape.entries.push(entry);
                }
                // The client's answer to a server's request: the server is not there to read it.
                McpSide::Client => {}
                McpSide::Server => {
                    // A response names its request; one whose id names none (an error with id
                    // `null`: the server could not tell which request it refused) follows the
                    // last message, as a server's own messages do.
                    let named = match (message.is_response(), message.id()) {
                        (true, Some(id)) => by_id.get(&(message.server.clone(), id.to_string())),
                        _ => None,
                    };
                    let owner = named.or_else(|| last.get(&message.server));
                    match owner.copied() {
                        Some(entry) => tape.entries[entry].outputs.push(output),
                        None => tape.opening.push(output),
                    }
                }
            }
        }
        McpTape { servers, reuse: false }
    }

    /// A tape for a hybrid recording (`atif record --replay-tools`): calls match by tool name
    /// and arguments alone, a call equal to one already served is served again, and a miss
    /// is measured against every recorded call of its tool.
    pub(crate) fn reusing(mut self) -> McpTape {
        self.reuse = true;
        self
    }

    /// Whether `server` has any message on the tape.
    pub(crate) fn has_server(&self, server: &str) -> bool {
        self.servers.contains_key(server)
    }

    /// The server messages `server` sent before the client's first message, once.
    pub(crate) fn opening(&mut self, server: &str) -> Vec<Output> {
        let Some(tape) = self.servers.get_mut(server) else { return Vec::new() };
        match std::mem::replace(&mut tape.opened, true) {
            true => Vec::new(),
            false => tape.opening.clone(),
        }
    }

    /// Answers the client's `message` to `server` from the tape.
    pub(crate) fn answer(
        &mut self,
        server: &str,
        message: &Value,
        normalizer: &Normalizer,
        drift: DriftPolicy,
    ) -> McpAnswer {
        let mut answer = McpAnswer { replies: self.opening(server), ..McpAnswer::default() };
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            // A response to a server's request, which the tape already answered for it.
            return answer;
        };
        let id = message.get("id").filter(|id| !id.is_null());
        let tool = tool_of(method, message);
        let params = normalized_params(message, normalizer);
        let Some(tape) = self.servers.get_mut(server) else {
            if let Some(id) = id {
                let failure = format!(
                    "MCP server `{server}`: {} was never recorded; the script holds no message \
                     of this server (is `{server}` the name it was recorded under, by `atif mcp --name` or \
                     `--mcp`?)",
                    describe(method, tool.as_deref())
                );
                answer.replies.push(Output::new(error_reply(id, &failure)));
                answer.failure = Some(failure);
            }
            return answer;
        };
        let Some(id) = id else {
            answer.replies.extend(tape.notification(method, &params));
            return answer;
        };
        let key = format!("{method} {}", tool.as_deref().unwrap_or(""));
        let count = {
            let seen = tape.seen.entry(key).or_default();
            *seen += 1;
            *seen
        };
        let request = Request { server, method, tool: tool.as_deref(), params: &params, count };
        match tape.request(&request, drift, self.reuse) {
            Ok((entry, warning)) => {
                answer.warning = warning;
                let again = std::mem::replace(&mut tape.entries[entry].served, true);
                let outputs = &tape.entries[entry].outputs;
                if !outputs.iter().any(|output| is_response(&output.value)) {
                    // Recorded without its response (the recording was cut, and kept beside
                    // the script): the agent would wait for it for ever.
                    let failure = format!(
                        "MCP server `{server}`: the tape holds no response to {} (message {} \
                         of the script); it was recorded without one",
                        describe(method, tool.as_deref()),
                        tape.entries[entry].number
                    );
                    answer.replies.push(Output::new(error_reply(id, &failure)));
                    answer.failure = Some(failure);
                    return answer;
                }
                answer.replies.extend(outputs.iter().filter_map(|output| {
                    let recorded_id = output.value.get("id").filter(|id| !id.is_null());
                    match (is_response(&output.value), recorded_id) {
                        (true, Some(_)) => Some(output.with_id(id)),
                        // An error the server sent with id `null` goes out as it was.
                        (true, None) => Some(output.clone()),
                        (false, _) => (!again).then(|| output.clone()),
                    }
                }));
            }
            Err(failure) => {
                answer.replies.push(Output::new(error_reply(id, &failure)));
                answer.failure = Some(failure);
            }
        }
        answer
    }

    /// The recorded calls never made, as lines naming the server, the method and the tool:
    /// requests matched by params (tool calls, resource reads, prompts) only.
    pub(crate) fn unused(&self) -> Vec<String> {
        let mut unused: Vec<(usize, String)> = Vec::new();
        for (server, tape) in &self.servers {
            for entry in &tape.entries {
                if !entry.used && entry.is_request && MATCHED_BY_PARAMS.contains(&&*entry.method) {
                    let what = describe(&entry.method, entry.tool.as_deref());
                    unused.push((entry.number, format!("#{} {server}: {what}", entry.number)));
                }
            }
        }
        unused.sort();
        unused.into_iter().map(|(_, line)| line).collect()
    }

    /// How many recorded calls there are (requests matched by params), of every server.
    pub(crate) fn calls(&self) -> usize {
        let is_call =
            |entry: &&Entry| entry.is_request && MATCHED_BY_PARAMS.contains(&&*entry.method);
        self.servers.values().map(|tape| tape.entries.iter().filter(is_call).count()).sum()
    }
}

/// Which MCP server offers each tool, from the recorded `tools/list` responses: the name the
/// agent gives the model, either the server's own tool name or Claude Code's
/// `mcp__SERVER__TOOL`.
pub(crate) fn tool_servers(messages: &[McpMessage]) -> HashMap<String, String> {
    let mut listings: HashMap<(String, String), ()> = HashMap::new();
    let mut tools = HashMap::new();
    for message in messages {
        match (message.from, message.method(), message.id()) {
            (McpSide::Client, Some("tools/list"), Some(id)) => {
                listings.insert((message.server.clone(), id.to_string()), ());
            }
            (McpSide::Server, None, Some(id))
                if listings.contains_key(&(message.server.clone(), id.to_string())) =>
            {
                let listed = message.message.pointer("/result/tools").and_then(Value::as_array);
                for tool in listed.into_iter().flatten() {
                    if let Some(name) = tool.get("name").and_then(Value::as_str) {
                        tools.insert(name.to_owned(), message.server.clone());
                        tools.insert(
                            format!("mcp__{}__{name}", message.server),
                            message.server.clone(),
                        );
                    }
                }
            }
            _ => {}
        }
    }
    tools
}

/// Marks each tool result of `trajectory` whose call named an MCP server's tool with
/// `extra.mcp_server`, the server's name.
pub(crate) fn mark_mcp_results(
    trajectory: &mut atif_schema::Trajectory,
    tools: &HashMap<String, String>,
) {
    if tools.is_empty() {
        return;
    }
    let mut calls: HashMap<String, String> = HashMap::new();
    for step in &mut trajectory.steps {
        for call in step.tool_calls.iter().flatten() {
            if let Some(server) = tools.get(&call.function_name) {
                calls.insert(call.tool_call_id.clone(), server.clone());
            }
        }
        let results = step.observation.iter_mut().flat_map(|observation| &mut observation.results);
        for result in results {
            let server = result.source_call_id.as_ref().and_then(|id| calls.get(id));
            if let Some(server) = server {
                let extra = result.extra.get_or_insert_with(Default::default);
                extra.insert("mcp_server".to_owned(), Value::String(server.clone()));
            }
        }
    }
}

/// A live request, as matching sees it.
struct Request<'a> {
    server: &'a str,
    method: &'a str,
    tool: Option<&'a str>,
    params: &'a Value,
    /// How many requests of this method and tool the client has made, this one included.
    count: usize,
}

impl ServerTape {
    /// The outputs of the first unused recorded notification of `method`, its params equal
    /// if one is, else in order.
    fn notification(&mut self, method: &str, params: &Value) -> Vec<Output> {
        let candidates =
            |entry: &&mut Entry| !entry.used && !entry.is_request && entry.method == method;
        let mut found =
            self.entries.iter_mut().filter(candidates).position(|e| e.params == *params);
        if found.is_none() && self.entries.iter_mut().any(|entry| candidates(&entry)) {
            found = Some(0);
        }
        let Some(nth) = found else { return Vec::new() };
        match self.entries.iter_mut().filter(candidates).nth(nth) {
            Some(entry) => {
                entry.used = true;
                entry.outputs.clone()
            }
            None => Vec::new(),
        }
    }

    /// The entry that answers `request`, with a drift warning when one was served anyway, or
    /// the failure.
    fn request(
        &mut self,
        request: &Request<'_>,
        drift: DriftPolicy,
        reuse: bool,
    ) -> Result<(usize, Option<String>), String> {
        let same_call = |entry: &Entry| {
            entry.is_request
                && entry.method == request.method
                && entry.tool.as_deref() == request.tool
        };
        let unused: Vec<usize> = (0..self.entries.len())
            .filter(|&idx| !self.entries[idx].used && same_call(&self.entries[idx]))
            .collect();
        if let Some(&idx) = unused.iter().find(|&&idx| self.entries[idx].params == *request.params)
        {
            self.entries[idx].used = true;
            return Ok((idx, None));
        }
        let recorded: Vec<usize> =
            (0..self.entries.len()).filter(|&idx| same_call(&self.entries[idx])).collect();
        if reuse {
            // The same call again: a tool answers the same arguments the same way.
            if let Some(&idx) =
                recorded.iter().find(|&&idx| self.entries[idx].params == *request.params)
            {
                return Ok((idx, None));
            }
        }
        if !MATCHED_BY_PARAMS.contains(&request.method) {
            // Handshakes and listings: in recorded order, and the last one again past the end.
            let last = (0..self.entries.len()).rev().find(|&idx| same_call(&self.entries[idx]));
            return match unused.first().copied().or(last) {
                Some(idx) => {
                    self.entries[idx].used = true;
                    Ok((idx, None))
                }
                None => Err(never_recorded(request, self.recorded_of(request.method), reuse)),
            };
        }
        let candidates = if reuse { &recorded } else { &unused };
        let Some(nearest) = self.nearest(candidates, request.params) else {
            return Err(match recorded.len() {
                0 => never_recorded(request, self.recorded_of(request.method), reuse),
                n => one_too_many(request, n),
            });
        };
        let entry = &self.entries[nearest];
        let message = drift_message(request, entry.number, &entry.params, reuse);
        match drift {
            DriftPolicy::Warn | DriftPolicy::Off => {
                self.entries[nearest].used = true;
                let warning = (drift == DriftPolicy::Warn).then_some(message);
                Ok((nearest, warning))
            }
            _ => Err(message),
        }
    }

    /// Of the entries `candidates`, the one whose params differ least from `params`: the
    /// highest share of equal characters in their rendered text (the first among equals).
    fn nearest(&self, candidates: &[usize], params: &Value) -> Option<usize> {
        let now = render_for_diff(params);
        let mut best: Option<(usize, f32)> = None;
        for &idx in candidates {
            let recorded = render_for_diff(&self.entries[idx].params);
            let ratio = TextDiff::from_chars(&recorded, &now).ratio();
            if best.is_none_or(|(_, best)| ratio > best) {
                best = Some((idx, ratio));
            }
        }
        best.map(|(idx, _)| idx)
    }

    /// What was recorded of `method`: its tools for `tools/call`, else the method itself.
    fn recorded_of(&self, method: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .entries
            .iter()
            .filter(|entry| entry.is_request && entry.method == method)
            .map(|entry| entry.tool.clone().unwrap_or_else(|| entry.method.clone()))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// One message the tape sends the agent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Output {
    /// The message.
    pub(crate) value: Value,
    /// The exact line the server wrote, when the recording kept it (see
    /// [`McpMessage::line`]); it parses to `value`.
    line: Option<String>,
    /// How it travelled, for a Streamable-HTTP server.
    pub(crate) http: Option<McpHttp>,
}

impl Output {
    /// A message the tape makes up (an error), written as its JSON.
    pub(crate) fn new(value: Value) -> Output {
        Output { value, line: None, http: None }
    }

    /// A recorded message with this run's directories where it says `<cwd>` or `<home>`; its
    /// recorded line is kept only while it still parses to the message.
    fn recorded(message: &McpMessage, normalizer: &Normalizer) -> Output {
        let mut value = message.message.clone();
        normalizer.fill_placeholders(&mut value);
        let line = message.line.as_deref().and_then(|line| {
            let filled = normalizer.fill_placeholders_str(line).unwrap_or_else(|| line.to_owned());
            let parsed = serde_json::from_str::<Value>(&filled).ok()?;
            (parsed == value).then_some(filled)
        });
        Output { value, line, http: message.http.clone() }
    }

    /// The line to write to the agent: the recorded one byte for byte where it was kept.
    pub(crate) fn text(&self) -> String {
        self.line.clone().unwrap_or_else(|| self.value.to_string())
    }

    /// This response with the agent's request `id`; the recorded line keeps its members in
    /// their order and every value's bytes, only the `id` is another.
    fn with_id(&self, id: &Value) -> Output {
        let mut value = self.value.clone();
        value["id"] = id.clone();
        let line = self.line.as_deref().and_then(|line| {
            let Members(mut members) = serde_json::from_str(line).ok()?;
            let id = RawValue::from_string(id.to_string()).ok()?;
            match members.iter_mut().find(|(key, _)| key == "id") {
                Some((_, value)) => *value = id,
                None => members.push(("id".to_owned(), id)),
            }
            let mut text = String::from("{");
            for (idx, (key, value)) in members.iter().enumerate() {
                if idx > 0 {
                    text.push(',');
                }
                text.push_str(&serde_json::to_string(key).ok()?);
                text.push(':');
                text.push_str(value.get());
            }
            text.push('}');
            Some(text)
        });
        Output { value, line, http: self.http.clone() }
    }
}

/// A JSON object's members in the order they were written, each value's text as it was.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        struct InOrder;
        impl<'de> serde::de::Visitor<'de> for InOrder {
            type Value = Members;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

impl Entry {
    fn new(number: usize, message: &McpMessage, normalizer: &Normalizer) -> Entry {
        Entry {
            number,
            method: message.method().unwrap_or_default().to_owned(),
            tool: message.tool().map(str::to_owned),
            is_request: message.is_request(),
            params: normalized_params(&message.message, normalizer),
            outputs: Vec::new(),
            used: false,
            served: false,
        }
    }
}

/// A message's params as matching compares them: without `_meta` (progress tokens, a client's
/// own ids for the call), secrets redacted, directories and volatile values masked as in a
/// model request.
pub(crate) fn normalized_params(message: &Value, normalizer: &Normalizer) -> Value {
    let mut params = message.get("params").cloned().unwrap_or(Value::Null);
    if let Some(map) = params.as_object_mut() {
        map.remove("_meta");
    }
    let mut normalized = normalizer.normalize("", &params);
    normalized.get_mut("body").map(Value::take).unwrap_or(Value::Null)
}

fn tool_of(method: &str, message: &Value) -> Option<String> {
    match method {
        "tools/call" => message.pointer("/params/name").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// Whether `message` is a JSON-RPC response: a `result` or an `error` and no method (its id
/// may be `null`, from a server that could not tell which request it refused).
pub(crate) fn is_response(message: &Value) -> bool {
    message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
}

/// `tools/call of `read_file``, or the method.
fn describe(method: &str, tool: Option<&str>) -> String {
    match tool {
        Some(tool) => format!("tools/call of `{tool}`"),
        None => format!("`{method}`"),
    }
}

fn error_reply(id: &Value, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": TAPE_ERROR_CODE, "message": message}})
}

fn never_recorded(request: &Request<'_>, recorded: Vec<String>, hybrid: bool) -> String {
    let what = describe(request.method, request.tool);
    let listed = match recorded.is_empty() {
        true => format!("the tape holds no `{}` of this server", request.method),
        false => format!("recorded: {}", recorded.join(", ")),
    };
    let server = request.server;
    match hybrid {
        // A hybrid recording says what to do itself (see `mcp_hybrid.rs`).
        true => format!("MCP server `{server}`: {what} was never recorded ({listed})"),
        false => format!(
            "MCP server `{server}`: {what} was never recorded ({listed}). The agent calls \
             something it did not call when it was recorded: that is the regression; \
             re-record if intended"
        ),
    }
}

fn one_too_many(request: &Request<'_>, recorded: usize) -> String {
    format!(
        "MCP server `{}`: the agent made call #{} of {}, but the tape recorded {recorded}. The \
         agent is making more tool calls than when it was recorded: that is the regression; \
         re-record if intended",
        request.server,
        request.count,
        describe(request.method, request.tool)
    )
}

fn drift_message(request: &Request<'_>, number: usize, recorded: &Value, reuse: bool) -> String {
    let old = render_for_diff(recorded);
    let new = render_for_diff(request.params);
    let text = TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(2)
        .header(&format!("message #{number} (recorded)"), "now")
        .to_string();
    let mut lines: Vec<&str> = text.lines().collect();
    let more = lines.len().saturating_sub(DIFF_LINES);
    lines.truncate(DIFF_LINES);
    let mut diff = lines.join("\n");
    if more > 0 {
        diff.push_str(&format!("\n… ({more} more lines)"));
    }
    // A hybrid recording's tape serves a call again, so every recorded call is a candidate.
    let unused = if reuse { "" } else { "unused " };
    format!(
        "MCP server `{}`: {} matches no {unused}recorded call; against the nearest recorded one \
         (message #{number}), the arguments changed (- recorded, + now):\n{diff}",
        request.server,
        describe(request.method, request.tool)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalizer() -> Normalizer {
        Normalizer::new(Some("/work/run".to_owned()), None, &[]).unwrap()
    }

    fn client(message: Value) -> McpMessage {
        McpMessage::new("files", McpSide::Client, message)
    }

    fn server(message: Value) -> McpMessage {
        McpMessage::new("files", McpSide::Server, message)
    }

    fn call(id: u64, path: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "read_text_file", "arguments": {"path": path}}})
    }

    fn result(id: u64, text: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
    }

    fn tape() -> McpTape {
        let messages = vec![
            server(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
            client(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
            ),
            server(json!({"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": {"name": "fs"}}})),
            client(call(1, "/work/run/a.txt")),
            client(call(2, "/work/run/b.txt")),
            server(result(2, "bee")),
            server(result(1, "ay")),
        ];
        McpTape::new(&messages, &normalizer())
    }

    fn texts(answer: &McpAnswer) -> Vec<String> {
        answer.replies.iter().map(Output::text).collect()
    }

    #[test]
    fn a_result_replays_in_the_key_order_the_server_wrote_it_with_the_agent_s_id() {
        let line = r#"{"result":{"structuredContent":{"name":"m","entityType":"note","path":"<cwd>/m"}},"jsonrpc":"2.0","id":1}"#;
        let recorded: Value = serde_json::from_str(line).unwrap();
        let messages = vec![
            client(call(1, "<cwd>/a.txt")),
            McpMessage::new("files", McpSide::Server, recorded.clone()).with_line(line),
        ];
        assert_eq!(messages[1].line.as_deref(), Some(line), "kept: its key order differs");
        // The tape of a replay in /elsewhere.
        let elsewhere = Normalizer::new(Some("/elsewhere".to_owned()), None, &[]).unwrap();
        let mut tape = McpTape::new(&messages, &elsewhere);
        let answer =
            tape.answer("files", &call(9, "/elsewhere/a.txt"), &elsewhere, DriftPolicy::Strict);
        assert_eq!(
            texts(&answer),
            [
                r#"{"result":{"structuredContent":{"name":"m","entityType":"note","path":"/elsewhere/m"}},"jsonrpc":"2.0","id":9}"#
            ]
        );
        // A line that says something else than the message is not kept.
        let other = McpMessage::new("files", McpSide::Server, recorded).with_line(r#"{"id":2}"#);
        assert_eq!(other.line, None);
    }

    #[test]
    fn a_request_recorded_without_its_response_fails_with_an_error_the_agent_reads() {
        let messages = vec![client(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))];
        let mut tape = McpTape::new(&messages, &normalizer());
        let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"});
        let answer = tape.answer("files", &list, &normalizer(), DriftPolicy::Strict);
        let failure = answer.failure.unwrap();
        assert_eq!(
            failure,
            "MCP server `files`: the tape holds no response to `tools/list` (message 1 of the \
             script); it was recorded without one"
        );
        assert_eq!(answer.replies.len(), 1);
        assert_eq!(answer.replies[0].value["id"], 9);
        assert_eq!(answer.replies[0].value["error"]["message"], failure.as_str());
    }

    #[test]
    fn a_listing_answered_again_gives_its_response_alone() {
        let messages = vec![
            client(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            server(json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})),
            server(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        ];
        let mut tape = McpTape::new(&messages, &normalizer());
        let list = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        let first = tape.answer("files", &list(7), &normalizer(), DriftPolicy::Strict);
        assert_eq!(first.replies.len(), 2, "the response, then the server's notification");
        // Past the end of the tape the last listing answers again, without the notification
        // that would make the agent list once more, and again.
        let again = tape.answer("files", &list(8), &normalizer(), DriftPolicy::Strict);
        assert!(again.failure.is_none(), "{:?}", again.failure);
        let ids: Vec<&Value> = again.replies.iter().map(|reply| &reply.value["id"]).collect();
        assert_eq!(ids, [&json!(8)]);
    }

    #[test]
    fn calls_match_by_arguments_whatever_their_order_and_ids_are_rewritten() {
        let mut tape = tape();
        let normalizer = Normalizer::new(Some("/elsewhere".to_owned()), None, &[]).unwrap();
        let strict = DriftPolicy::Strict;
        let first = tape.answer("files", &call(7, "/elsewhere/b.txt"), &normalizer, strict);
        // The opening comes first, once.
        assert_eq!(first.replies[0].value["method"], "notifications/tools/list_changed");
        assert_eq!(first.replies[1].value, result(7, "bee"));
        let second = tape.answer("files", &call(8, "/elsewhere/a.txt"), &normalizer, strict);
        assert_eq!(texts(&second), vec![result(8, "ay").to_string()]);
        assert!(tape.unused().is_empty());
    }

    #[test]
    fn an_unrecorded_call_names_the_tool_and_shows_the_argument_diff() {
        let mut tape = tape();
        let answer =
            tape.answer("files", &call(3, "/work/run/c.txt"), &normalizer(), DriftPolicy::Strict);
        let failure = answer.failure.unwrap();
        assert!(
            failure.starts_with(
                "MCP server `files`: tools/call of `read_text_file` matches no unused recorded call"
            ),
            "{failure}"
        );
        assert!(
            failure.contains("-    \"path\": \"<cwd>/a.txt\"") || failure.contains("<cwd>/b.txt"),
            "{failure}"
        );
        assert!(failure.contains("+    \"path\": \"<cwd>/c.txt\""), "{failure}");
        assert_eq!(answer.replies.last().unwrap().value["error"]["code"], TAPE_ERROR_CODE);
        assert_eq!(answer.replies.last().unwrap().value["id"], 3);
        assert_eq!(
            tape.unused(),
            vec![
                "#4 files: tools/call of `read_text_file`",
                "#5 files: tools/call of `read_text_file`"
            ]
        );
    }

    #[test]
    fn drift_warn_serves_the_nearest_call_and_says_so() {
        let mut tape = tape();
        let answer =
            tape.answer("files", &call(3, "/work/run/b.txtx"), &normalizer(), DriftPolicy::Warn);
        assert!(answer.failure.is_none());
        assert!(answer.warning.unwrap().contains("b.txtx"));
        assert_eq!(answer.replies.last().unwrap().value, result(3, "bee"));
    }

    #[test]
    fn one_call_too_many_and_a_tool_never_recorded_are_named() {
        let mut tape = tape();
        let n = normalizer();
        for (id, path) in [(1, "/work/run/a.txt"), (2, "/work/run/b.txt")] {
            assert!(
                tape.answer("files", &call(id, path), &n, DriftPolicy::Strict).failure.is_none()
            );
        }
        let extra = tape.answer("files", &call(3, "/work/run/a.txt"), &n, DriftPolicy::Strict);
        assert!(extra.failure.unwrap().contains(
            "the agent made call #3 of tools/call of `read_text_file`, but the tape recorded 2"
        ));
        let other = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "write_file", "arguments": {}}});
        let never = tape.answer("files", &other, &n, DriftPolicy::Strict).failure.unwrap();
        assert!(
            never.contains(
                "tools/call of `write_file` was never recorded (recorded: read_text_file)"
            ),
            "{never}"
        );
    }

    #[test]
    fn tools_are_known_by_their_server_under_both_names_only_from_tools_list() {
        let messages = vec![
            client(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            client(json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"})),
            server(
                json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "not_a_tool"}]}}),
            ),
            server(
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "read_text_file"}]}}),
            ),
        ];
        let tools = tool_servers(&messages);
        assert_eq!(tools.len(), 2, "{tools:?}");
        assert_eq!(tools["read_text_file"], "files");
        assert_eq!(tools["mcp__files__read_text_file"], "files");
    }

    #[test]
    fn handshakes_replay_in_order_and_again_past_the_end() {
        let mut tape = tape();
        let init = json!({"jsonrpc": "2.0", "id": "a", "method": "initialize", "params": {"protocolVersion": "2099-01-01"}});
        for _ in 0..2 {
            let answer = tape.answer("files", &init, &normalizer(), DriftPolicy::Strict);
            assert!(answer.failure.is_none());
            assert_eq!(answer.replies.last().unwrap().value["result"]["serverInfo"]["name"], "fs");
            assert_eq!(answer.replies.last().unwrap().value["id"], "a");
        }
    }
}
