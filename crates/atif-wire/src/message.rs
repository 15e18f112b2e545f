//! The model-call types every protocol maps onto: a request ([`LlmRequest`], its [`Message`]s
//! and [`ToolDefinition`]s), a reply ([`LlmResponse`], its [`ToolCall`]s, [`Usage`] and
//! [`FinishReason`]), and the [`Chunk`]s of a streamed reply.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions (OpenAI `system`/`developer`, Anthropic's `system` parameter).
    System,
    /// The user, or the agent speaking for the user.
    User,
    /// The model's earlier replies, with their tool calls.
    Assistant,
    /// A tool's result (OpenAI `tool` message, Anthropic `tool_result` block).
    Tool,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        })
    }
}

/// One message of the conversation sent to the model.
///
/// An Anthropic message with several content blocks maps onto several of these: its text, one
/// assistant message carrying the `tool_use` blocks as [`ToolCall`]s, and one [`Role::Tool`]
/// message per `tool_result` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text (empty for an assistant message that only calls tools).
    #[serde(default)]
    pub content: String,
    /// Tool calls made by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a [`Role::Tool`] message: the id of the call this is the result of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A message with `role` and `content` and nothing else.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Message { role, content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::new(Role::User, content)
    }

    /// An assistant message repeating a reply (its text and tool calls) back to the model.
    pub fn assistant(response: &LlmResponse) -> Self {
        Message {
            role: Role::Assistant,
            content: response.text(),
            tool_calls: response.tool_calls.clone(),
            tool_call_id: None,
        }
    }

    /// The result of tool call `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The provider's id of the call (`call_…`, `toolu_…`); results refer to it.
    pub id: String,
    /// The function called.
    pub name: String,
    /// Its arguments as a JSON value (OpenAI's JSON-encoded string is parsed by the adapter).
    pub arguments: Value,
}

impl ToolCall {
    /// A tool call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall { id: id.into(), name: name.into(), arguments }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDefinition {
    /// The function name.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments.
    #[serde(default)]
    pub parameters: Value,
}

impl ToolDefinition {
    /// A tool definition.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        ToolDefinition { name: name.into(), description: description.into(), parameters }
    }

    /// The OpenAI function-calling shape `{type, function}` used by ATIF's `tool_definitions`.
    pub fn to_openai(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}

/// One request to the model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmRequest {
    /// The model asked for, when the agent names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The conversation so far.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// The tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDefinition>,
    /// Free-form parameters (`temperature`, `max_tokens`, `response_format`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, Value>,
}

impl LlmRequest {
    /// A request holding `messages`.
    pub fn new(messages: Vec<Message>) -> Self {
        LlmRequest { messages, ..LlmRequest::default() }
    }

    /// Names the model asked for.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Adds the tools the model may call.
    pub fn with_tools(mut self, tools: Vec<ToolDefinition>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets a free-form parameter.
    pub fn with_param(mut self, key: impl Into<String>, value: Value) -> Self {
        self.params.insert(key.into(), value);
        self
    }

    /// The last message, if any.
    pub fn last_message(&self) -> Option<&Message> {
        self.messages.last()
    }
}

/// The content of a reply: text, or a JSON value for structured output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Structured output (a JSON mode or schema-constrained reply).
    Json(Value),
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
#[non_exhaustive]
pub enum FinishReason {
    /// A natural end (OpenAI `stop`, Anthropic `end_turn`).
    #[default]
    Stop,
    /// The model wants tool results (OpenAI `tool_calls`, Anthropic `tool_use`).
    ToolCalls,
    /// The token limit was hit (OpenAI `length`, Anthropic `max_tokens`).
    Length,
    /// The provider filtered the content.
    ContentFilter,
    /// Anything else, as the provider spelled it.
    Other(String),
}

impl From<String> for FinishReason {
    fn from(value: String) -> Self {
        match value.as_str() {
            "stop" | "end_turn" => FinishReason::Stop,
            "tool_calls" | "tool_use" => FinishReason::ToolCalls,
            "length" | "max_tokens" => FinishReason::Length,
            "content_filter" => FinishReason::ContentFilter,
            _ => FinishReason::Other(value),
        }
    }
}

impl From<FinishReason> for String {
    fn from(value: FinishReason) -> Self {
        match value {
            FinishReason::Stop => "stop".to_owned(),
            FinishReason::ToolCalls => "tool_calls".to_owned(),
            FinishReason::Length => "length".to_owned(),
            FinishReason::ContentFilter => "content_filter".to_owned(),
            FinishReason::Other(other) => other,
        }
    }
}

/// Token counts of one call. `prompt_tokens` includes `cached_tokens`, as in ATIF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Input tokens, cached ones included.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Input tokens served from the provider's cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Output tokens spent on reasoning, included in `completion_tokens` (OpenAI
    /// `reasoning_tokens`, Gemini `thoughtsTokenCount` added to the candidates' count).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// A usage record without reasoning tokens.
    pub fn new(prompt_tokens: u64, completion_tokens: u64, cached_tokens: u64) -> Self {
        Usage { prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens: 0 }
    }

    /// Sets [`reasoning_tokens`](Usage::reasoning_tokens).
    pub fn with_reasoning_tokens(mut self, reasoning_tokens: u64) -> Self {
        self.reasoning_tokens = reasoning_tokens;
        self
    }

    /// The sum of two records, each count saturating rather than overflowing on absurd input.
    pub fn saturating_add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self.completion_tokens.saturating_add(other.completion_tokens),
            cached_tokens: self.cached_tokens.saturating_add(other.cached_tokens),
            reasoning_tokens: self.reasoning_tokens.saturating_add(other.reasoning_tokens),
        }
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// The model's reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmResponse {
    /// Text or structured content; absent when the reply only calls tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// Tool calls the reply makes, in the model's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    #[serde(default)]
    pub finish_reason: FinishReason,
    /// Reasoning text the provider exposed (OpenAI reasoning summary, Anthropic thinking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Token counts.
    #[serde(default)]
    pub usage: Usage,
    /// Whether the provider reported no token counts at all (an OpenAI-compatible stream
    /// without `stream_options.include_usage`): `usage` is then zeros that nobody measured, and
    /// a captured trajectory gives the step no metrics, so its Shape says `unknown`, not 0.
    #[serde(default, skip_serializing_if = "is_false")]
    pub usage_unknown: bool,
    /// The model that answered, as the provider named it in the reply (`model`,
    /// Gemini's `modelVersion`), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider's raw reply, for the agent's own use; never written to a script.
    #[serde(skip)]
    pub raw: Option<Value>,
}

impl LlmResponse {
    /// A text reply that stops.
    pub fn from_text(text: impl Into<String>) -> Self {
        LlmResponse { content: Some(Content::Text(text.into())), ..LlmResponse::default() }
    }

    /// A structured (JSON) reply that stops.
    pub fn from_json(value: Value) -> Self {
        LlmResponse { content: Some(Content::Json(value)), ..LlmResponse::default() }
    }

    /// A reply that calls tools.
    pub fn from_tool_calls(calls: Vec<ToolCall>) -> Self {
        LlmResponse {
            tool_calls: calls,
            finish_reason: FinishReason::ToolCalls,
            ..LlmResponse::default()
        }
    }

    /// Sets the token counts.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Sets the reasoning text.
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// The content as text: the text itself, structured content as compact JSON, or `""`.
    pub fn text(&self) -> String {
        match &self.content {
            Some(Content::Text(text)) => text.clone(),
            Some(Content::Json(value)) => value.to_string(),
            None => String::new(),
        }
    }

    /// Splits the reply into the chunks a stream of it carries: reasoning, content, each tool
    /// call, then the finish chunk.
    pub fn to_chunks(&self) -> Vec<Chunk> {
        let mut chunks = Vec::new();
        if let Some(reasoning) = &self.reasoning {
            chunks.push(Chunk::Reasoning { text: reasoning.clone() });
        }
        match &self.content {
            Some(Content::Text(text)) => chunks.push(Chunk::Text { text: text.clone() }),
            Some(Content::Json(value)) => chunks.push(Chunk::Json { value: value.clone() }),
            None => {}
        }
        for call in &self.tool_calls {
            chunks.push(Chunk::ToolCall { call: call.clone() });
        }
        chunks.push(Chunk::Finish {
            finish_reason: self.finish_reason.clone(),
            usage: self.usage,
            model: self.model.clone(),
        });
        chunks
    }

    /// Assembles a reply from the chunks of a stream: text and reasoning concatenated, tool
    /// calls in order, the last finish chunk's reason and usage.
    pub fn from_chunks(chunks: &[Chunk]) -> Self {
        let mut response = LlmResponse::default();
        let mut text: Option<String> = None;
        let mut reasoning: Option<String> = None;
        for chunk in chunks {
            match chunk {
                Chunk::Text { text: part } => text.get_or_insert_with(String::new).push_str(part),
                Chunk::Json { value } => response.content = Some(Content::Json(value.clone())),
                Chunk::Reasoning { text: part } => {
                    reasoning.get_or_insert_with(String::new).push_str(part)
                }
                Chunk::ToolCall { call } => response.tool_calls.push(call.clone()),
                Chunk::Finish { finish_reason, usage, model } => {
                    response.finish_reason = finish_reason.clone();
                    response.usage = *usage;
                    response.model.clone_from(model);
                }
            }
        }
        if let Some(text) = text {
            response.content = Some(Content::Text(text));
        }
        response.reasoning = reasoning;
        response
    }
}

/// One piece of a streamed reply.
///
/// Adapters of streaming providers emit text and reasoning as deltas and each tool call whole
/// (once its argument deltas are assembled).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Chunk {
    /// A piece of the text.
    Text {
        /// The delta.
        text: String,
    },
    /// Structured content, whole.
    Json {
        /// The value.
        value: Value,
    },
    /// A piece of the reasoning.
    Reasoning {
        /// The delta.
        text: String,
    },
    /// A complete tool call.
    ToolCall {
        /// The call.
        call: ToolCall,
    },
    /// The end of the reply.
    Finish {
        /// Why the model stopped.
        finish_reason: FinishReason,
        /// Token counts of the whole call.
        usage: Usage,
        /// The model that answered, when the provider named it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_round_trip_to_the_same_response() {
        let response = LlmResponse::from_tool_calls(vec![ToolCall::new(
            "c1",
            "add",
            serde_json::json!({"a": 1}),
        )])
        .with_reasoning("think")
        .with_usage(Usage::new(10, 2, 4));
        assert_eq!(LlmResponse::from_chunks(&response.to_chunks()), response);
    }

    #[test]
    fn finish_reasons_of_both_providers_map_onto_one_enum() {
        assert_eq!(FinishReason::from("end_turn".to_owned()), FinishReason::Stop);
        assert_eq!(FinishReason::from("tool_use".to_owned()), FinishReason::ToolCalls);
        assert_eq!(FinishReason::from("max_tokens".to_owned()), FinishReason::Length);
        assert_eq!(
            FinishReason::from("pause_turn".to_owned()),
            FinishReason::Other("pause_turn".to_owned())
        );
        let json = serde_json::to_string(&FinishReason::ToolCalls).unwrap();
        assert_eq!(json, "\"tool_calls\"");
    }

    #[test]
    fn raw_provider_reply_is_never_serialised() {
        let mut response = LlmResponse::from_text("hi");
        response.raw = Some(serde_json::json!({"secret": "x"}));
        let json = serde_json::to_string(&response).unwrap();
        assert!(!json.contains("secret"), "{json}");
    }
}
