//! What each instrumentation's spans say, read into one form: which kind of span it is, the
//! messages of a model call, the call a tool span answers, token usage.
//!
//! Dialects: the GenAI semantic conventions (`gen_ai.input.messages` and friends, JSON
//! `{role, parts[]}` messages), OpenInference (`llm.input_messages.N.message.*` flattened into
//! attributes, `openinference.span.kind`), the older GenAI event form (`gen_ai.user.message`,
//! `gen_ai.choice` span events or log records) and the Vercel AI SDK's legacy `ai.*` mode.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::formats::otel::Obj;
use crate::formats::otel::otlp::{Span, decode_json_text};

/// What a span is to the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Agent,
    Model,
    Tool,
    Other,
}

/// One message of a conversation, in any dialect.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Message {
    pub(crate) role: String,
    pub(crate) parts: Vec<MsgPart>,
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MsgPart {
    Text(String),
    Reasoning(String),
    Call { id: Option<String>, name: String, arguments: Value },
    Response { id: Option<String>, result: Value },
}

/// A model call as its span records it; `None` where the span records no content.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModelCall {
    pub(crate) input: Option<Vec<Message>>,
    pub(crate) output: Option<Vec<Message>>,
    pub(crate) system: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) completion_tokens: Option<u64>,
    pub(crate) cached_tokens: Option<u64>,
    pub(crate) reasoning_tokens: Option<u64>,
    pub(crate) tools: Option<Vec<Value>>,
}

/// A tool execution as its span records it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolRun {
    pub(crate) call_id: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) arguments: Option<Value>,
    pub(crate) result: Option<Value>,
    /// The error's type and message (never its stack trace).
    pub(crate) error: Option<(String, String)>,
}

/// What kind of span `span` is.
pub(crate) fn kind(span: &Span) -> Kind {
    let operation = span.str_attr("gen_ai.operation.name").unwrap_or("");
    match operation {
        "invoke_agent" => return Kind::Agent,
        "chat" | "generate_content" | "text_completion" | "completion" => return Kind::Model,
        "execute_tool" => return Kind::Tool,
        _ => {}
    }
    match span.str_attr("openinference.span.kind").unwrap_or("") {
        "AGENT" => return Kind::Agent,
        "LLM" => return Kind::Model,
        "TOOL" => return Kind::Tool,
        _ => {}
    }
    let vercel = span.str_attr("ai.operationId").unwrap_or(&span.name);
    match vercel {
        "ai.generateText" | "ai.streamText" => Kind::Agent,
        "ai.generateText.doGenerate" | "ai.streamText.doStream" => Kind::Model,
        "ai.toolCall" => Kind::Tool,
        _ if span.name.starts_with("invoke_agent")
            || span.attributes.contains_key("agent_name") =>
        {
            Kind::Agent
        }
        _ => Kind::Other,
    }
}

/// The agent's name an agent span gives.
pub(crate) fn agent_name(span: &Span) -> String {
    let named = ["gen_ai.agent.name", "agent_name", "agent.name", "ai.telemetry.functionId"]
        .iter()
        .find_map(|key| span.str_attr(key));
    match named {
        Some(name) => name.to_owned(),
        None => span.name.strip_prefix("invoke_agent ").unwrap_or(&span.name).to_owned(),
    }
}

/// The model call a model span records.
pub(crate) fn model_call(span: &Span) -> ModelCall {
    let (input, output) = match () {
        () if has_genai_messages(span) => (
            genai_attribute(span, "gen_ai.input.messages"),
            genai_attribute(span, "gen_ai.output.messages"),
        ),
        () if span.attributes.keys().any(|k| k.starts_with("llm.input_messages.")) => (
            Some(openinference_messages(span, "llm.input_messages.")),
            Some(openinference_messages(span, "llm.output_messages.")),
        ),
        () if span.attributes.contains_key("ai.prompt.messages") => vercel_messages(span),
        () => event_messages(span),
    };
    let system = span
        .json_attr("gen_ai.system_instructions")
        .map(|v| texts_of(&v))
        .filter(|text| !text.is_empty());
    let count = |keys: &[&str]| keys.iter().find_map(|key| span.count_attr(key));
    let tools = span
        .json_attr("gen_ai.tool.definitions")
        .and_then(|v| v.as_array().cloned())
        .or_else(|| openinference_tools(span));
    ModelCall {
        input,
        output,
        system,
        model: ["gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.model.id"]
            .iter()
            .find_map(|key| span.str_attr(key))
            .map(str::to_owned),
        prompt_tokens: count(&[
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
            "ai.usage.promptTokens",
            "ai.usage.inputTokens",
        ]),
        completion_tokens: count(&[
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
            "ai.usage.completionTokens",
            "ai.usage.outputTokens",
        ]),
        cached_tokens: count(&[
            "gen_ai.usage.cache_read.input_tokens",
            "gen_ai.usage.cache_read_input_tokens",
            "llm.token_count.prompt_details.cache_read",
        ]),
        reasoning_tokens: count(&[
            "gen_ai.usage.details.reasoning_tokens",
            "gen_ai.usage.reasoning_tokens",
            "llm.token_count.completion_details.reasoning",
        ]),
        tools,
    }
}

fn has_genai_messages(span: &Span) -> bool {
    span.attributes.contains_key("gen_ai.input.messages")
        || span.attributes.contains_key("gen_ai.output.messages")
}

/// The tool execution a tool span records.
pub(crate) fn tool_run(span: &Span) -> ToolRun {
    let first = |keys: &[&str]| keys.iter().find_map(|key| span.attributes.get(*key)).cloned();
    let text = |keys: &[&str]| keys.iter().find_map(|key| span.str_attr(key)).map(str::to_owned);
    let name = text(&["gen_ai.tool.name", "tool.name", "ai.toolCall.name"])
        .or_else(|| span.name.strip_prefix("execute_tool ").map(str::to_owned));
    let arguments = first(&[
        "gen_ai.tool.call.arguments",
        "tool_arguments",
        "ai.toolCall.args",
        "input.value",
        "tool.parameters",
    ])
    .map(|v| arguments_value(&v));
    let result =
        first(&["gen_ai.tool.call.result", "tool_response", "ai.toolCall.result", "output.value"])
            .map(|v| langchain_tool_content(unwrap_encoded(&v)));
    ToolRun {
        call_id: text(&["gen_ai.tool.call.id", "tool_call.id", "ai.toolCall.id"]),
        name,
        arguments,
        result,
        error: span.error.as_ref().map(|status| exception(span, status)),
    }
}

/// A failed span's error: its exception event's type and message, else its status message.
fn exception(span: &Span, status: &str) -> (String, String) {
    let event = span.events.iter().find(|e| e.name == "exception");
    let field = |key: &str| {
        event.and_then(|e| e.attributes.get(key)).and_then(Value::as_str).map(str::to_owned)
    };
    let message =
        field("exception.message").filter(|m| !m.is_empty()).unwrap_or_else(|| status.to_owned());
    (field("exception.type").unwrap_or_else(|| "error".to_owned()), message)
}

/// Tool arguments as a value: JSON text (pydantic-ai's strings, OpenInference's `input.value`)
/// decoded.
pub(crate) fn arguments_value(value: &Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| value.clone()),
        _ => value.clone(),
    }
}

/// [`arguments_value`] of a value the caller gives away.
fn owned_arguments_value(value: Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        other => other,
    }
}

/// The content of a LangChain `ToolMessage` as OpenInference's LangChain instrumentation writes
/// a tool span's `output.value`: the whole message serialised, `{"type": "tool", "data":
/// {"content": …, "tool_call_id": …, "status": …}}`; the model receives the content alone. Any
/// other value is returned as it is.
fn langchain_tool_content(value: Value) -> Value {
    let Value::String(text) = &value else { return value };
    if !text.starts_with('{') || !text.contains("\"tool_call_id\"") {
        return value;
    }
    let Ok(message) = serde_json::from_str::<Value>(text) else { return value };
    let is_tool_message = message.get("type").and_then(Value::as_str) == Some("tool");
    let data =
        message.get("data").filter(|data| is_tool_message && data.get("tool_call_id").is_some());
    match data.and_then(|data| data.get("content")) {
        Some(content) => content.clone(),
        None => value,
    }
}

/// A tool result, with the Vercel AI SDK's double encoding (a JSON string holding JSON text of
/// a string) taken off.
fn unwrap_encoded(value: &Value) -> Value {
    let mut value = value.clone();
    for _ in 0..2 {
        match &value {
            Value::String(text) if text.starts_with('"') => match serde_json::from_str(text) {
                Ok(inner @ Value::String(_)) => value = inner,
                _ => break,
            },
            _ => break,
        }
    }
    value
}

/// The GenAI-conventions messages of the attribute `key`. Its JSON text (every model call
/// repeats the conversation, so this is most of a trace) is read straight into messages; text
/// of any other shape, and attributes that are not text, go through a `Value` as before.
fn genai_attribute(span: &Span, key: &str) -> Option<Vec<Message>> {
    let value = span.attributes.get(key)?;
    let direct = match value {
        Value::String(text) => genai_messages_text(text),
        _ => None,
    };
    Some(direct.unwrap_or_else(|| genai_messages(&decode_json_text(value))))
}

/// A message as its JSON text gives it: strings borrowed where they hold no escape.
#[derive(Deserialize)]
struct TextMessage<'a> {
    #[serde(borrow, default, deserialize_with = "text")]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    parts: Option<Vec<Obj<TextPart<'a>>>>,
}

/// A part as its JSON text gives it. A field of another type than [`genai_part`] reads (a
/// number for `content`) fails the whole read, and the `Value` path decides.
#[derive(Deserialize)]
struct TextPart<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "text")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "text")]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "text")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "text")]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    arguments: Option<Value>,
    /// `Some(Null)` for `"result": null`, which (as in [`genai_part`]) hides `response`.
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    response: Option<Value>,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A string, borrowed from the text where it holds no escape, or `None` for `null`.
fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    struct Text;
    impl<'de> Visitor<'de> for Text {
        type Value = Option<Cow<'de, str>>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a string or null")
        }

        fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Borrowed(text)))
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(text.to_owned())))
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    deserializer.deserialize_any(Text)
}

/// GenAI-conventions messages read from their JSON text as [`genai_messages`] reads them from
/// a `Value`; `None` when the text is not an array of messages of the expected types.
fn genai_messages_text(text: &str) -> Option<Vec<Message>> {
    let messages: Vec<Obj<TextMessage<'_>>> = serde_json::from_str(text).ok()?;
    let messages = messages.into_iter().map(|Obj(message)| Message {
        role: message.role.map(Cow::into_owned).unwrap_or_default(),
        parts: message
            .parts
            .unwrap_or_default()
            .into_iter()
            .map(|Obj(part)| part)
            .filter_map(text_part)
            .collect(),
    });
    Some(messages.collect())
}

fn text_part(part: TextPart<'_>) -> Option<MsgPart> {
    let id = part.id.filter(|id| !id.is_empty()).map(Cow::into_owned);
    match part.kind?.as_ref() {
        "text" => part.content.map(|text| repr_call_or_text(text.into_owned())),
        "reasoning" | "thinking" => part.content.map(|text| MsgPart::Reasoning(text.into_owned())),
        "tool_call" => Some(MsgPart::Call {
            id,
            name: part.name.map(Cow::into_owned).unwrap_or_default(),
            arguments: part.arguments.map_or(Value::Null, owned_arguments_value),
        }),
        "tool_call_response" => Some(MsgPart::Response {
            id,
            result: part.result.or(part.response).unwrap_or_default(),
        }),
        _ => None,
    }
}

/// GenAI-conventions messages: `[{role, parts: [{type, content | id, name, arguments |
/// result}]}]`.
fn genai_messages(value: &Value) -> Vec<Message> {
    let Some(messages) = value.as_array() else { return Vec::new() };
    messages
        .iter()
        .map(|message| Message {
            role: message.get("role").and_then(Value::as_str).unwrap_or("").to_owned(),
            parts: message
                .get("parts")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .filter_map(genai_part)
                .collect(),
        })
        .collect()
}

fn genai_part(part: &Value) -> Option<MsgPart> {
    let text = |key: &str| part.get(key).and_then(Value::as_str).map(str::to_owned);
    let id = text("id").filter(|id| !id.is_empty());
    match part.get("type").and_then(Value::as_str)? {
        "text" => text("content").map(repr_call_or_text),
        "reasoning" | "thinking" => text("content").map(MsgPart::Reasoning),
        "tool_call" => Some(MsgPart::Call {
            id,
            name: text("name").unwrap_or_default(),
            arguments: part.get("arguments").map_or(Value::Null, arguments_value),
        }),
        "tool_call_response" => Some(MsgPart::Response {
            id,
            result: part
                .get("result")
                .or_else(|| part.get("response"))
                .cloned()
                .unwrap_or(Value::Null),
        }),
        _ => None,
    }
}

/// A text part, or a tool call the contrib OpenAI Agents bridge wrote as Python repr text
/// (`ResponseFunctionToolCall(arguments='{…}', call_id='call_1', name='bash', …)`).
fn repr_call_or_text(text: String) -> MsgPart {
    let Some(body) =
        text.strip_prefix("ResponseFunctionToolCall(").and_then(|t| t.strip_suffix(')'))
    else {
        return MsgPart::Text(text);
    };
    let fields = repr_fields(body);
    let field = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    match field("name") {
        Some(name) => MsgPart::Call {
            id: field("call_id"),
            name,
            arguments: field("arguments")
                .map_or(Value::Null, |a| arguments_value(&Value::String(a))),
        },
        None => MsgPart::Text(text),
    }
}

/// The `key='value'` fields of a Python repr, with `\'` and `\\` escapes undone.
fn repr_fields(body: &str) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    let mut rest = body;
    while let Some(eq) = rest.find("='") {
        let key = rest[..eq].rsplit([',', ' ']).next().unwrap_or("").to_owned();
        let mut value = String::new();
        let mut chars = rest[eq + 2..].char_indices();
        let mut end = rest.len() - eq - 2;
        while let Some((idx, c)) = chars.next() {
            match c {
                '\\' => value.extend(chars.next().map(|(_, c)| c)),
                '\'' => {
                    end = idx + 1;
                    break;
                }
                _ => value.push(c),
            }
        }
        fields.push((key, value));
        rest = &rest[eq + 2 + end..];
    }
    fields
}

/// OpenInference messages, flattened under `prefix`: `N.message.role`, `N.message.content`,
/// `N.message.contents.M.message_content.text`, `N.message.tool_calls.M.tool_call.*`,
/// `N.message.tool_call_id`.
fn openinference_messages(span: &Span, prefix: &str) -> Vec<Message> {
    let mut by_index: std::collections::BTreeMap<usize, Map<String, Value>> = Default::default();
    for (key, value) in &span.attributes {
        let Some(rest) = key.strip_prefix(prefix) else { continue };
        let Some((index, field)) = rest.split_once('.') else { continue };
        let Ok(index) = index.parse::<usize>() else { continue };
        by_index.entry(index).or_default().insert(field.to_owned(), value.clone());
    }
    by_index.into_values().map(|fields| openinference_message(&fields)).collect()
}

fn openinference_message(fields: &Map<String, Value>) -> Message {
    let text = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_owned);
    let role = text("message.role").unwrap_or_default();
    let mut parts = Vec::new();
    let tool_call_id = text("message.tool_call_id");
    let content = text("message.content");
    let mut contents: Vec<(String, String)> = fields
        .iter()
        .filter_map(|(k, v)| {
            let rest = k.strip_prefix("message.contents.")?;
            let (idx, field) = rest.split_once('.')?;
            (field == "message_content.text")
                .then(|| (idx.to_owned(), v.as_str().unwrap_or("").to_owned()))
        })
        .collect();
    contents.sort_by_key(|(idx, _)| idx.parse::<usize>().unwrap_or(usize::MAX));
    // `contents` is the structured form of `content`: an instrumentation that writes both
    // (OpenInference's OpenAI Agents bridge) writes the same text twice, so the parts win.
    let texts: Vec<String> = if contents.is_empty() {
        content.into_iter().collect()
    } else {
        contents.into_iter().map(|(_, t)| t).collect()
    };
    let texts = texts.into_iter();
    match (&tool_call_id, role.as_str()) {
        (_, "tool") => {
            let result = texts.collect::<Vec<_>>().join("\n");
            parts.push(MsgPart::Response { id: tool_call_id, result: Value::String(result) });
        }
        _ => parts.extend(texts.filter(|t| !t.is_empty()).map(repr_call_or_text)),
    }
    let mut calls: std::collections::BTreeMap<usize, Map<String, Value>> = Default::default();
    for (key, value) in fields {
        let Some(rest) = key.strip_prefix("message.tool_calls.") else { continue };
        let Some((idx, field)) = rest.split_once('.') else { continue };
        let Ok(idx) = idx.parse::<usize>() else { continue };
        calls.entry(idx).or_default().insert(field.to_owned(), value.clone());
    }
    for call in calls.into_values() {
        let text = |key: &str| call.get(key).and_then(Value::as_str).map(str::to_owned);
        parts.push(MsgPart::Call {
            id: text("tool_call.id"),
            name: text("tool_call.function.name").unwrap_or_default(),
            arguments: call
                .get("tool_call.function.arguments")
                .map_or(Value::Null, arguments_value),
        });
    }
    Message { role, parts }
}

fn openinference_tools(span: &Span) -> Option<Vec<Value>> {
    let tools: Vec<Value> = span
        .attributes
        .iter()
        .filter(|(k, _)| k.starts_with("llm.tools.") && k.ends_with(".tool.json_schema"))
        .map(|(_, v)| decode_json_text(v))
        .collect();
    (!tools.is_empty()).then_some(tools)
}

/// The Vercel AI SDK's legacy mode: `ai.prompt.messages` (JSON `{role, content}` with
/// content parts), `ai.response.text` and `ai.response.toolCalls`.
fn vercel_messages(span: &Span) -> (Option<Vec<Message>>, Option<Vec<Message>>) {
    let input =
        span.json_attr("ai.prompt.messages").and_then(|v| v.as_array().cloned()).map(|list| {
            list.iter()
                .map(|m| chat_message(m, "type", "text", "toolCallId", "toolName", "args"))
                .collect()
        });
    let mut parts = Vec::new();
    if let Some(text) = span.str_attr("ai.response.text").filter(|t| !t.is_empty()) {
        parts.push(MsgPart::Text(text.to_owned()));
    }
    for call in span
        .json_attr("ai.response.toolCalls")
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
    {
        let text = |key: &str| call.get(key).and_then(Value::as_str).map(str::to_owned);
        parts.push(MsgPart::Call {
            id: text("toolCallId"),
            name: text("toolName").unwrap_or_default(),
            arguments: call
                .get("args")
                .or_else(|| call.get("input"))
                .map_or(Value::Null, arguments_value),
        });
    }
    let output = (!parts.is_empty()).then(|| vec![Message { role: "assistant".into(), parts }]);
    (input, output)
}

/// A chat message `{role, content}` whose content is text or a list of typed parts.
fn chat_message(
    message: &Value,
    type_key: &str,
    text_type: &str,
    id_key: &str,
    name_key: &str,
    args_key: &str,
) -> Message {
    let role = message.get("role").and_then(Value::as_str).unwrap_or("").to_owned();
    let mut parts = Vec::new();
    match message.get("content") {
        Some(Value::String(text)) => parts.push(MsgPart::Text(text.clone())),
        Some(Value::Array(items)) => {
            for item in items {
                let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_owned);
                match item.get(type_key).and_then(Value::as_str).unwrap_or("") {
                    t if t == text_type => parts.extend(text("text").map(MsgPart::Text)),
                    "reasoning" => parts.extend(text("text").map(MsgPart::Reasoning)),
                    "tool-call" => parts.push(MsgPart::Call {
                        id: text(id_key),
                        name: text(name_key).unwrap_or_default(),
                        arguments: item
                            .get(args_key)
                            .or_else(|| item.get("input"))
                            .map_or(Value::Null, arguments_value),
                    }),
                    "tool-result" => parts.push(MsgPart::Response {
                        id: text(id_key),
                        result: item
                            .get("result")
                            .or_else(|| item.get("output"))
                            .map_or(Value::Null, unwrap_encoded),
                    }),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    Message { role, parts }
}

/// The older GenAI event form: `gen_ai.{system,user,assistant,tool}.message` events (span
/// events or log records) for the input, `gen_ai.choice` for the output.
fn event_messages(span: &Span) -> (Option<Vec<Message>>, Option<Vec<Message>>) {
    let mut input = Vec::new();
    let mut output = Vec::new();
    for event in &span.events {
        let body = event.attributes.get("body").map(decode_json_text);
        let field = |key: &str| {
            body.as_ref()
                .and_then(|b| b.get(key))
                .or_else(|| event.attributes.get(key))
                .map(decode_json_text)
        };
        let role = match event.name.as_str() {
            "gen_ai.system.message" => "system",
            "gen_ai.user.message" => "user",
            "gen_ai.assistant.message" => "assistant",
            "gen_ai.tool.message" => "tool",
            "gen_ai.choice" => {
                let message = field("message").unwrap_or(Value::Null);
                output.push(event_message("assistant", &message, None));
                continue;
            }
            _ => continue,
        };
        let message = body.clone().unwrap_or_else(|| Value::Object(event.attributes.clone()));
        input.push(event_message(role, &message, field("id")));
    }
    let some = |list: Vec<Message>| (!list.is_empty()).then_some(list);
    (some(input), some(output))
}

fn event_message(role: &str, message: &Value, id: Option<Value>) -> Message {
    let mut parts = Vec::new();
    let content = message.get("content").map(decode_json_text);
    if role == "tool" {
        let id = id.and_then(|v| v.as_str().map(str::to_owned));
        parts.push(MsgPart::Response { id, result: content.unwrap_or(Value::Null) });
        return Message { role: role.into(), parts };
    }
    match content {
        Some(Value::String(text)) => parts.push(repr_call_or_text(text)),
        Some(other @ (Value::Array(_) | Value::Object(_))) => {
            parts.push(MsgPart::Text(texts_of(&other)))
        }
        _ => {}
    }
    for call in message.get("tool_calls").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
        let function = call.get("function");
        let text = |v: Option<&Value>, key: &str| {
            v.and_then(|v| v.get(key)).and_then(Value::as_str).map(str::to_owned)
        };
        parts.push(MsgPart::Call {
            id: text(Some(call), "id"),
            name: text(function, "name").unwrap_or_default(),
            arguments: function
                .and_then(|f| f.get("arguments"))
                .map_or(Value::Null, arguments_value),
        });
    }
    Message { role: role.into(), parts }
}

/// The text of a list of parts (`[{type: "text", content}]`), or of plain text.
pub(crate) fn texts_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| {
                p.get("content")
                    .or_else(|| p.get("text"))
                    .and_then(Value::as_str)
                    .or_else(|| p.as_str())
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_python_repr_tool_call_is_read_as_a_call_with_parsed_arguments() {
        let part = repr_call_or_text(
            r#"ResponseFunctionToolCall(arguments='{"command":"echo it\'s"}', call_id='call_1', name='bash', type='function_call', id='fc_1', status='completed')"#.to_owned(),
        );
        assert_eq!(
            part,
            MsgPart::Call {
                id: Some("call_1".into()),
                name: "bash".into(),
                arguments: json!({"command": "echo it's"})
            }
        );
        assert_eq!(repr_call_or_text("hello".into()), MsgPart::Text("hello".into()));
    }

    #[test]
    fn genai_messages_read_from_their_text_equal_those_read_through_a_value() {
        let cases = [
            // Every part type, escapes (owned strings) and plain text (borrowed ones).
            r#"[{"role":"system","parts":[{"type":"text","content":"Be \"brief\"\n"}]},
               {"role":"user","parts":[{"type":"text","content":"List."},{"type":"blob","mime_type":"image/png","content":"iVBO"}]},
               {"role":"assistant","parts":[{"type":"thinking","content":"hmm"},{"type":"reasoning","content":"so"},
                 {"type":"tool_call","id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"},
                 {"type":"tool_call","id":"","name":"edit","arguments":{"path":"a"}},
                 {"type":"tool_call","name":"noargs"},{"type":"tool_call","id":"c3","name":"nul","arguments":null},
                 {"type":"tool_call","id":"c4","name":"text","arguments":"not json"}]},
               {"role":"tool","parts":[{"type":"tool_call_response","id":"c1","result":"a.txt"},
                 {"type":"tool_call_response","id":"c2","response":{"ok":true}},
                 {"type":"tool_call_response","id":"c3","result":null,"response":"hidden"},
                 {"type":"tool_call_response","id":"c4"}]}]"#,
            // A Python repr tool call in a text part.
            r#"[{"role":"assistant","parts":[{"type":"text","content":"ResponseFunctionToolCall(arguments='{}', call_id='call_1', name='bash')"}]}]"#,
            // Missing and null roles, parts, types and contents.
            r#"[{"parts":[{"type":"text"}]},{"role":null,"parts":null},{"role":"user"},{"role":"user","parts":[{"content":"no type"},{"type":null}]}]"#,
            "[]",
            // What the typed read refuses, so the Value path decides.
            r#"[{"role":"user","parts":[{"type":"text","content":42}]}]"#,
            r#"[{"role":7,"parts":[]}]"#,
            r#"[{"role":"user","role":"assistant","parts":[]}]"#,
            r#"["not a message", {"role":"user","parts":[{"type":"text","content":"x"}]}]"#,
            r#"{"role":"user"}"#,
            "[not json",
            "plain text",
            // Messages and parts written as arrays, which derived structs would read by
            // position while the Value path finds no key in them.
            r#"[{"role":"user","parts":[["text","hi"]]}]"#,
            r#"[["assistant",[{"type":"tool_call","id":"c1","name":"bash","arguments":{}}]]]"#,
        ];
        for text in cases {
            let through_value = genai_messages(&decode_json_text(&Value::String(text.to_owned())));
            let mut span = Span {
                trace_id: "t".into(),
                span_id: "s".into(),
                parent_id: None,
                name: "chat".into(),
                start: 0,
                scope: "".into(),
                scope_version: "".into(),
                attributes: Map::new(),
                events: Vec::new(),
                error: None,
            };
            span.attributes.insert("gen_ai.input.messages".into(), text.into());
            let direct = genai_attribute(&span, "gen_ai.input.messages");
            assert_eq!(direct.as_ref(), Some(&through_value), "{text}");
        }
        // The first cases are read straight from their text, not by the fallback.
        for text in &cases[..4] {
            assert!(genai_messages_text(text).is_some(), "{text}");
        }
        for text in &cases[4..] {
            assert!(genai_messages_text(text).is_none(), "{text}");
        }
    }

    #[test]
    fn a_double_encoded_result_is_unwrapped_once_and_json_objects_stay() {
        assert_eq!(unwrap_encoded(&json!("\"hello\"")), json!("hello"));
        assert_eq!(unwrap_encoded(&json!("hello")), json!("hello"));
        assert_eq!(unwrap_encoded(&json!({"a": 1})), json!({"a": 1}));
    }
}
