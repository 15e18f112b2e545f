//! The providers' wire protocols, read into and written from this crate's types: one mapping
//! shared by the HTTP adapters, capture from traffic and the proxy.
//!
//! Four protocols are read, each as a whole JSON reply and as a stream of server-sent events:
//! OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Gemini `generateContent`.
//! A request body becomes an [`LlmRequest`] (system prompt, user messages, the assistant turns
//! it repeats, tool results, tool definitions, parameters); a reply becomes an [`LlmResponse`]
//! (text, reasoning, tool calls with their arguments assembled, usage, model, stop reason).
//! No HTTP is done here: the bytes stay with the caller.

mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;

use std::fmt;

use serde_json::{Map, Value};

use crate::{
    Chunk, Content, Error, FinishReason, LlmRequest, LlmResponse, Result, SseEvent, ToolCall,
    ToolDefinition, Usage,
};

/// A provider wire protocol: the one enum of them, shared by `atif-replay`, `atif-proxy` and
/// `atif-fake-provider`.
///
/// Deliberately exhaustive: a protocol added here must be handled by every crate that speaks
/// them, and the compiler then names each place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// OpenAI Chat Completions, `POST /v1/chat/completions`.
    OpenAiChat,
    /// OpenAI Responses, `POST /v1/responses`.
    OpenAiResponses,
    /// Anthropic Messages, `POST /v1/messages`.
    AnthropicMessages,
    /// Gemini, `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`.
    Gemini,
}

impl Protocol {
    /// The protocol of a request path (a query string is ignored), or `None` for a path that
    /// is no model call (such as `/v1/models` or `/v1/messages/count_tokens`).
    pub fn from_path(path: &str) -> Option<Protocol> {
        let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
        if path.ends_with("/chat/completions") {
            Some(Protocol::OpenAiChat)
        } else if path.ends_with("/responses") {
            Some(Protocol::OpenAiResponses)
        } else if path.ends_with("/messages") {
            Some(Protocol::AnthropicMessages)
        } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
            Some(Protocol::Gemini)
        } else {
            None
        }
    }

    /// The protocol's name, as error messages write it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::OpenAiChat => "OpenAI Chat Completions",
            Protocol::OpenAiResponses => "OpenAI Responses",
            Protocol::AnthropicMessages => "Anthropic Messages",
            Protocol::Gemini => "Gemini generateContent",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The model a Gemini request path names (`/v1beta/models/gemini-2.5-pro:generateContent`
/// names `gemini-2.5-pro`); Gemini request bodies do not carry it.
pub fn gemini_model_from_path(path: &str) -> Option<&str> {
    let path = path.split('?').next().unwrap_or(path);
    let (_, rest) = path.rsplit_once("/models/")?;
    let (model, _) = rest.split_once(':')?;
    (!model.is_empty()).then_some(model)
}

/// Reads a request body of `protocol` into an [`LlmRequest`].
///
/// System prompts (OpenAI `system`/`developer` messages, Responses `instructions`, Anthropic
/// `system`, Gemini `systemInstruction`) become [`Role::System`](crate::Role::System)
/// messages; tool results (`tool` messages, `tool_result` blocks, `function_call_output`
/// items, Gemini `functionResponse` parts) become [`Role::Tool`](crate::Role::Tool) messages
/// with the call id; every other top-level field except the streaming switches (`stream`,
/// `stream_options`) is kept in [`LlmRequest::params`]. Text parts are joined with newlines;
/// images and other media are left out.
///
/// Gemini calls and results carry no ids unless the client set them: the `k`-th call of a
/// model turn is then `call_k` (from 1), a result takes the id of the first call of the turn
/// before it with its function name, and [`parse_response`] names a reply's calls the same
/// way, so results join their calls.
///
/// # Errors
///
/// [`Error::WireFormat`] naming the JSON Pointer of a field that is missing or of the wrong
/// type.
pub fn parse_request(protocol: Protocol, body: &Value) -> Result<LlmRequest> {
    let wire = Wire::new(protocol, "request", "");
    if !body.is_object() {
        return Err(wire.unexpected("", "a JSON object", body));
    }
    let mut request = match protocol {
        Protocol::OpenAiChat => openai_chat::request(&wire, body)?,
        Protocol::OpenAiResponses => openai_responses::request(&wire, body)?,
        Protocol::AnthropicMessages => anthropic::request(&wire, body)?,
        Protocol::Gemini => gemini::request(&wire, body)?,
    };
    let mapped = match protocol {
        Protocol::OpenAiChat => &["model", "messages", "tools"][..],
        Protocol::OpenAiResponses => &["model", "instructions", "input", "tools"][..],
        Protocol::AnthropicMessages => &["model", "system", "messages", "tools"][..],
        Protocol::Gemini => &["model", "contents", "systemInstruction", "tools"][..],
    };
    if let Value::Object(fields) = body {
        for (key, value) in fields {
            if !mapped.contains(&key.as_str()) && key != "stream" && key != "stream_options" {
                request.params.insert(key.clone(), value.clone());
            }
        }
    }
    if request.model.is_none() {
        request.model = body.get("model").and_then(Value::as_str).map(str::to_owned);
    }
    Ok(request)
}

/// Reads a whole (non-streamed) reply of `protocol` into an [`LlmResponse`].
///
/// Text parts are concatenated into the content and reasoning (OpenAI `reasoning_content` or a
/// Responses reasoning summary, Anthropic `thinking`, Gemini `thought` parts) into
/// [`LlmResponse::reasoning`]; tool-call arguments sent JSON-encoded are parsed (a string that
/// is not JSON is kept as a string). Usage counts cached input inside `prompt_tokens`, as ATIF
/// does (Anthropic's `input_tokens` leaves it out, so it is added back). The finish reason is
/// [`FinishReason::ToolCalls`] when the reply calls tools and the provider only says it
/// stopped (Responses and Gemini). The raw reply is kept in [`LlmResponse::raw`]. A Gemini
/// stream fetched without `alt=sse` (a JSON array of partial replies) reads as that stream.
///
/// # Errors
///
/// [`Error::WireFormat`] naming the JSON Pointer of a field that is missing or of the wrong
/// type; [`Error::Provider`] when the reply is the provider's error object.
pub fn parse_response(protocol: Protocol, body: &Value) -> Result<LlmResponse> {
    let wire = Wire::new(protocol, "reply", "");
    // Gemini's `streamGenerateContent` without `alt=sse` sends its pieces as one JSON array.
    if let (Protocol::Gemini, Value::Array(pieces)) = (protocol, body) {
        let events: Vec<SseEvent> =
            pieces.iter().map(|piece| SseEvent::new(None, piece.clone())).collect();
        let mut response = parse_stream(protocol, &events)?;
        response.raw = Some(body.clone());
        return Ok(response);
    }
    if !body.is_object() {
        return Err(wire.unexpected("", "a JSON object", body));
    }
    if let Some(error) = body.get("error").filter(|error| !error.is_null()) {
        return Err(provider_error(error));
    }
    let mut response = match protocol {
        Protocol::OpenAiChat => openai_chat::response(&wire, body)?,
        Protocol::OpenAiResponses => openai_responses::response(&wire, body)?,
        Protocol::AnthropicMessages => anthropic::response(&wire, body)?,
        Protocol::Gemini => gemini::response(&wire, body)?,
    };
    response.raw = Some(body.clone());
    Ok(response)
}

/// Reads a streamed reply of `protocol`, given as its events in order, into the
/// [`LlmResponse`] the whole reply would have given: text and reasoning deltas concatenated,
/// each tool call's argument deltas assembled, usage and stop reason from wherever in the
/// stream the provider sent them (often only in the final event).
///
/// A stream that ended before its final event (`[DONE]`, `message_stop`,
/// `response.completed`, a Gemini `finishReason`) is read as far as it goes; use
/// [`StreamAssembler::is_complete`] to tell.
///
/// # Errors
///
/// [`Error::WireFormat`] naming the event (`/events/N/data/...`) whose data is not what the
/// protocol sends; [`Error::Provider`] for an error event.
pub fn parse_stream(protocol: Protocol, events: &[SseEvent]) -> Result<LlmResponse> {
    let mut assembler = StreamAssembler::new(protocol);
    for event in events {
        assembler.push(event)?;
    }
    assembler.finish()
}

/// Writes `request` as a request body of `protocol`; `stream` asks for a streamed reply.
///
/// [`LlmRequest::params`] are copied to the top level (Gemini: `generationConfig` and
/// `toolConfig` as given). Anthropic requires `max_tokens`: 4096 when the parameters do not
/// set it. For Gemini the model goes into the path (see [`gemini_model_from_path`]), not the
/// body. [`parse_request`] reads the body back into the same request.
pub fn request_body(protocol: Protocol, request: &LlmRequest, stream: bool) -> Value {
    let mut body = match protocol {
        Protocol::OpenAiChat => openai_chat::body(request),
        Protocol::OpenAiResponses => openai_responses::body(request),
        Protocol::AnthropicMessages => anthropic::body(request),
        Protocol::Gemini => gemini::body(request),
    };
    for (key, value) in &request.params {
        body.insert(key.clone(), value.clone());
    }
    if protocol != Protocol::Gemini {
        if let Some(model) = &request.model {
            body.insert("model".to_owned(), Value::String(model.clone()));
        }
        if stream {
            body.insert("stream".to_owned(), Value::Bool(true));
        }
    }
    if stream && protocol == Protocol::OpenAiChat && !body.contains_key("stream_options") {
        // Without it, a Chat Completions stream carries no token counts.
        body.insert("stream_options".to_owned(), serde_json::json!({"include_usage": true}));
    }
    if protocol == Protocol::AnthropicMessages && !body.contains_key("max_tokens") {
        body.insert("max_tokens".to_owned(), Value::from(4096));
    }
    Value::Object(body)
}

/// Reads a streamed reply event by event, for a client that hands the text on as it arrives.
///
/// [`push`](StreamAssembler::push) returns the text and reasoning deltas of each event as
/// [`Chunk`]s; tool calls are complete only at the end, so [`finish`](StreamAssembler::finish)
/// returns the whole reply (and [`LlmResponse::to_chunks`]-style tool-call and finish chunks
/// are for the caller to send from it).
#[derive(Debug)]
pub struct StreamAssembler {
    protocol: Protocol,
    wire: Wire,
    events: usize,
    draft: Draft,
}

impl StreamAssembler {
    /// An assembler for a stream of `protocol`.
    pub fn new(protocol: Protocol) -> Self {
        StreamAssembler {
            protocol,
            wire: Wire::new(protocol, "stream", "/events/0/data"),
            events: 0,
            draft: Draft::default(),
        }
    }

    /// Reads the next event; returns the text and reasoning deltas it carried.
    ///
    /// # Errors
    ///
    /// [`Error::WireFormat`] naming the event whose data is not what the protocol sends;
    /// [`Error::Provider`] for an error event.
    pub fn push(&mut self, event: &SseEvent) -> Result<Vec<Chunk>> {
        self.wire.base = format!("/events/{}/data", self.events);
        self.events += 1;
        let start = self.draft.chunks.len();
        match &event.data {
            // A block of comments or `retry:` only: clients dispatch no event for it.
            Value::Null => {}
            Value::String(text) if text.trim() == "[DONE]" => self.draft.complete = true,
            Value::Object(_) => self.read_event(event.event.as_deref(), &event.data)?,
            other => {
                return Err(self.wire.unexpected("", "a JSON object or [DONE]", other));
            }
        }
        Ok(self.draft.chunks.split_off(start))
    }

    /// Whether the stream's final event was read.
    pub fn is_complete(&self) -> bool {
        self.draft.complete
    }

    /// The whole reply read so far.
    ///
    /// # Errors
    ///
    /// [`Error::WireFormat`] when a tool call never got a name or an id.
    pub fn finish(self) -> Result<LlmResponse> {
        let usage = match self.protocol {
            Protocol::OpenAiChat => openai_chat::usage(&self.draft.usage),
            Protocol::OpenAiResponses => openai_responses::usage(&self.draft.usage),
            Protocol::AnthropicMessages => anthropic::usage(&self.draft.usage),
            Protocol::Gemini => gemini::usage(&self.draft.usage),
        };
        self.draft.into_response(&self.wire, usage)
    }

    fn read_event(&mut self, name: Option<&str>, data: &Value) -> Result<()> {
        if let Some(error) = data.get("error").filter(|error| !error.is_null()) {
            return Err(provider_error(error));
        }
        // Responses and Anthropic events say their type in `type`, and also as the SSE event
        // name, which is all a stream with the field left out still carries.
        let event_type = || data.get("type").and_then(Value::as_str).or(name).unwrap_or_default();
        match self.protocol {
            Protocol::OpenAiChat => openai_chat::event(&self.wire, &mut self.draft, data),
            Protocol::OpenAiResponses => {
                openai_responses::event(&self.wire, &mut self.draft, event_type(), data)
            }
            Protocol::AnthropicMessages => {
                anthropic::event(&self.wire, &mut self.draft, event_type(), data)
            }
            Protocol::Gemini => gemini::event(&self.wire, &mut self.draft, data),
        }
    }
}

/// Where in a document the mapping is, for errors.
#[derive(Debug, Clone)]
struct Wire {
    protocol: Protocol,
    what: &'static str,
    base: String,
}

impl Wire {
    fn new(protocol: Protocol, what: &'static str, base: &str) -> Self {
        Wire { protocol, what, base: base.to_owned() }
    }

    fn error(&self, pointer: &str, message: String) -> Error {
        Error::WireFormat {
            protocol: self.protocol.name(),
            what: self.what,
            pointer: format!("{}{pointer}", self.base),
            message,
        }
    }

    /// An error at `pointer`: `expected` was wanted, `found` is what the JSON holds there.
    fn unexpected(&self, pointer: &str, expected: &str, found: &Value) -> Error {
        self.error(pointer, format!("expected {expected}, found {}", kind(found)))
    }

    /// The string at `pointer` inside `value` (which sits at `at`), or an error naming it.
    fn string(&self, value: &Value, at: &str, pointer: &str) -> Result<String> {
        match value.pointer(pointer) {
            Some(Value::String(text)) => Ok(text.clone()),
            Some(other) => Err(self.unexpected(&format!("{at}{pointer}"), "a string", other)),
            None => Err(self.error(&format!("{at}{pointer}"), "missing".to_owned())),
        }
    }

    /// The array at `pointer`, or an empty one when absent or null.
    fn array<'v>(&self, value: &'v Value, at: &str, pointer: &str) -> Result<&'v [Value]> {
        match value.pointer(pointer) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(self.unexpected(&format!("{at}{pointer}"), "an array", other)),
        }
    }
}

/// A reply being assembled from a stream (or read whole).
#[derive(Debug, Default)]
struct Draft {
    text: Option<String>,
    reasoning: Option<String>,
    calls: Vec<DraftCall>,
    finish: Option<FinishReason>,
    /// The provider's usage object, later fields overriding earlier ones.
    usage: Value,
    model: Option<String>,
    complete: bool,
    /// Deltas not yet handed out by [`StreamAssembler::push`].
    chunks: Vec<Chunk>,
    /// The last reasoning part written to (Responses summaries), to separate parts.
    part: Option<String>,
}

#[derive(Debug, Default)]
struct DraftCall {
    key: String,
    id: Option<String>,
    name: Option<String>,
    arguments: String,
    /// Arguments that arrived whole rather than as JSON text.
    value: Option<Value>,
    pointer: String,
}

impl Draft {
    fn text(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        self.text.get_or_insert_with(String::new).push_str(delta);
        self.chunks.push(Chunk::Text { text: delta.to_owned() });
    }

    fn reasoning(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        self.reasoning.get_or_insert_with(String::new).push_str(delta);
        self.chunks.push(Chunk::Reasoning { text: delta.to_owned() });
    }

    /// Starts a new reasoning part: later text is separated from earlier parts by a blank line.
    fn reasoning_part(&mut self, key: String) {
        if self.part.as_ref().is_some_and(|part| *part != key) && self.reasoning.is_some() {
            self.reasoning("\n\n");
        }
        self.part = Some(key);
    }

    /// The call with this key, created when it is new, remembering the full JSON Pointer of
    /// where (`at`) it started.
    fn call(&mut self, wire: &Wire, key: &str, at: &str) -> &mut DraftCall {
        let idx = match self.calls.iter().position(|call| call.key == key) {
            Some(idx) => idx,
            None => {
                self.calls.push(DraftCall {
                    key: key.to_owned(),
                    pointer: format!("{}{at}", wire.base),
                    ..DraftCall::default()
                });
                self.calls.len() - 1
            }
        };
        &mut self.calls[idx]
    }

    /// The call with this key (see [`Draft::call`]), given its id and name, for protocols
    /// that send both when the call starts.
    fn start_call(
        &mut self,
        wire: &Wire,
        key: &str,
        at: &str,
        id: String,
        name: String,
    ) -> &mut DraftCall {
        let call = self.call(wire, key, at);
        call.id = Some(id);
        call.name = Some(name);
        call
    }

    fn merge_usage(&mut self, usage: &Value) {
        let Value::Object(fields) = usage else { return };
        if !self.usage.is_object() {
            self.usage = Value::Object(Map::new());
        }
        if let Value::Object(merged) = &mut self.usage {
            for (key, value) in fields {
                if !value.is_null() {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
    }

    /// Records the provider's stop or finish reason, when `reason` is a string.
    fn set_finish(&mut self, reason: Option<&Value>) {
        if let Some(reason) = reason.and_then(Value::as_str) {
            self.finish = Some(FinishReason::from(reason.to_owned()));
        }
    }

    fn set_model(&mut self, value: Option<&Value>) {
        if let Some(model) = value.and_then(Value::as_str).filter(|model| !model.is_empty()) {
            self.model = Some(model.to_owned());
        }
    }

    fn into_response(self, wire: &Wire, usage: Usage) -> Result<LlmResponse> {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for call in self.calls {
            // The pointer was taken where the call started, already in full.
            let missing = |field: &str| Error::WireFormat {
                protocol: wire.protocol.name(),
                what: wire.what,
                pointer: call.pointer.clone(),
                message: format!("the tool call never got its {field}"),
            };
            let name = call.name.clone().ok_or_else(|| missing("name"))?;
            let id = call.id.clone().ok_or_else(|| missing("id"))?;
            let arguments = match call.value {
                Some(value) if call.arguments.is_empty() => value,
                _ => parse_arguments(&call.arguments),
            };
            tool_calls.push(ToolCall { id, name, arguments });
        }
        let finish_reason = match self.finish {
            Some(FinishReason::Stop) | None if !tool_calls.is_empty() => FinishReason::ToolCalls,
            Some(reason) => reason,
            None => FinishReason::Stop,
        };
        Ok(LlmResponse {
            content: self.text.map(Content::Text),
            tool_calls,
            finish_reason,
            reasoning: self.reasoning,
            usage,
            // The provider's usage object never came (it is merged in as it arrives).
            usage_unknown: self.usage.is_null(),
            model: self.model,
            raw: None,
        })
    }
}

/// Tool-call arguments sent as JSON text: the value, `{}` for no text, the text itself when it
/// is not JSON.
fn parse_arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// Tool-call arguments as JSON text, as OpenAI sends them.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(text) => text.clone(),
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}

/// The text of a content value: a string, or the `text` of each part of an array (parts of
/// other kinds, such as images, are left out), joined by `separator`.
fn text_of(content: &Value, separator: &str) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => join_texts(parts, separator),
        _ => String::new(),
    }
}

/// The `text` of each part (or each string), joined by `separator`.
fn join_texts(parts: &[Value], separator: &str) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| match part {
            Value::String(text) => Some(text.as_str()),
            _ => part.get("text").and_then(Value::as_str),
        })
        .collect();
    texts.join(separator)
}

/// A tool definition's `name`, its `description` unless empty, and its parameter schema
/// under `parameters_key` unless absent.
fn tool_fields(tool: &ToolDefinition, parameters_key: &str) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("name".to_owned(), Value::String(tool.name.clone()));
    if !tool.description.is_empty() {
        out.insert("description".to_owned(), Value::String(tool.description.clone()));
    }
    if !tool.parameters.is_null() {
        out.insert(parameters_key.to_owned(), tool.parameters.clone());
    }
    out
}

/// A token count at `pointer`, 0 when absent.
fn count(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// A provider's error object (or string) as a [`Error::Provider`].
pub(crate) fn provider_error(error: &Value) -> Error {
    Error::provider(provider_message(error))
}

/// The text of a provider's error object: `kind: message` where it has both, the kind being
/// OpenAI's and Anthropic's `type` or Gemini's `status`.
pub fn provider_message(error: &Value) -> String {
    match error {
        Value::String(text) => text.clone(),
        _ => match error.get("message").and_then(Value::as_str) {
            Some(text) => {
                match error.get("type").or_else(|| error.get("status")).and_then(Value::as_str) {
                    Some(kind) => format!("{kind}: {text}"),
                    None => text.to_owned(),
                }
            }
            None => error.to_string(),
        },
    }
}

fn kind(value: &Value) -> &'static str {
    atif_schema::support::json_kind(value)
}

#[cfg(test)]
mod tests;
