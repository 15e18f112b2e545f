//! OpenAI Chat Completions: `messages` in, `choices[0].message` out, `chat.completion.chunk`
//! deltas when streamed.

use serde_json::{Map, Value, json};

use crate::protocol::{Draft, Wire, arguments_text, count, parse_arguments, text_of, tool_fields};
use crate::{LlmRequest, LlmResponse, Message, Result, Role, ToolCall, ToolDefinition, Usage};

pub(super) fn request(wire: &Wire, body: &Value) -> Result<LlmRequest> {
    let mut request = LlmRequest::default();
    for (idx, value) in wire.array(body, "", "/messages")?.iter().enumerate() {
        let at = format!("/messages/{idx}");
        let role = wire.string(value, &at, "/role")?;
        let content = value.get("content").map(|content| text_of(content, "\n"));
        let content = content.unwrap_or_default();
        let message = match role.as_str() {
            "system" | "developer" => Message::system(content),
            "user" => Message::user(content),
            "assistant" => {
                let mut message = Message::new(Role::Assistant, content);
                for (call_idx, call) in wire.array(value, &at, "/tool_calls")?.iter().enumerate() {
                    let call_at = format!("{at}/tool_calls/{call_idx}");
                    message.tool_calls.push(ToolCall {
                        id: wire.string(call, &call_at, "/id")?,
                        name: wire.string(call, &call_at, "/function/name")?,
                        arguments: match call.pointer("/function/arguments") {
                            Some(Value::String(text)) => parse_arguments(text),
                            Some(other) => other.clone(),
                            None => Value::Object(Map::new()),
                        },
                    });
                }
                message
            }
            "tool" => Message::tool_result(wire.string(value, &at, "/tool_call_id")?, content),
            // The legacy `function` role names the function, not a call.
            "function" => Message::tool_result(wire.string(value, &at, "/name")?, content),
            other => {
                return Err(wire.error(
                    &format!("{at}/role"),
                    format!(
                        "expected \"system\", \"developer\", \"user\", \"assistant\" or \"tool\", \
                         found {other:?}"
                    ),
                ));
            }
        };
        request.messages.push(message);
    }
    for (idx, tool) in wire.array(body, "", "/tools")?.iter().enumerate() {
        let at = format!("/tools/{idx}");
        let definition = match tool.get("function") {
            Some(function) => ToolDefinition {
                name: wire.string(function, &format!("{at}/function"), "/name")?,
                description: text_of(function.get("description").unwrap_or(&Value::Null), ""),
                parameters: function.get("parameters").cloned().unwrap_or(Value::Null),
            },
            // Built-in tools have a type and no function.
            None => ToolDefinition::new(wire.string(tool, &at, "/type")?, "", Value::Null),
        };
        request.tools.push(definition);
    }
    Ok(request)
}

pub(super) fn response(wire: &Wire, body: &Value) -> Result<LlmResponse> {
    let Some(message) = body.pointer("/choices/0/message") else {
        return Err(wire.error("/choices/0/message", "missing".to_owned()));
    };
    if !message.is_object() {
        return Err(wire.unexpected("/choices/0/message", "an object", message));
    }
    let mut draft = Draft::default();
    draft.set_model(body.get("model"));
    read_message(wire, &mut draft, message, "/choices/0/message")?;
    draft.set_finish(body.pointer("/choices/0/finish_reason"));
    if let Some(usage) = body.get("usage") {
        draft.merge_usage(usage);
    }
    let usage = usage(&draft.usage);
    draft.complete = true;
    draft.into_response(wire, usage)
}

pub(super) fn event(wire: &Wire, draft: &mut Draft, data: &Value) -> Result<()> {
    draft.set_model(data.get("model"));
    if let Some(usage) = data.get("usage") {
        draft.merge_usage(usage);
    }
    for (idx, choice) in wire.array(data, "", "/choices")?.iter().enumerate() {
        // Only the first choice is read, as for a whole reply.
        if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
            continue;
        }
        if let Some(delta) = choice.get("delta").filter(|delta| !delta.is_null()) {
            read_message(wire, draft, delta, &format!("/choices/{idx}/delta"))?;
        }
        draft.set_finish(choice.get("finish_reason"));
    }
    Ok(())
}

/// Reads a whole message or a delta of one: both carry text, reasoning and tool calls, the
/// delta's calls in pieces keyed by `index`.
fn read_message(wire: &Wire, draft: &mut Draft, message: &Value, at: &str) -> Result<()> {
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        draft.text(text);
    }
    // Not OpenAI's own field, but what compatible servers (vLLM, DeepSeek, OpenRouter) send.
    for key in ["reasoning_content", "reasoning"] {
        if let Some(text) = message.get(key).and_then(Value::as_str) {
            draft.reasoning(text);
        }
    }
    for (idx, call) in wire.array(message, at, "/tool_calls")?.iter().enumerate() {
        let call_at = format!("{at}/tool_calls/{idx}");
        if !call.is_object() {
            return Err(wire.unexpected(&call_at, "an object", call));
        }
        let key = call.get("index").and_then(Value::as_u64).unwrap_or(idx as u64).to_string();
        let draft_call = draft.call(wire, &key, &call_at);
        if let Some(id) = call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty()) {
            draft_call.id = Some(id.to_owned());
        }
        if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
            if !name.is_empty() {
                draft_call.name = Some(name.to_owned());
            }
        }
        match call.pointer("/function/arguments") {
            Some(Value::String(text)) => draft_call.arguments.push_str(text),
            None | Some(Value::Null) => {}
            Some(other) => draft_call.value = Some(other.clone()),
        }
    }
    Ok(())
}

pub(super) fn usage(usage: &Value) -> Usage {
    Usage {
        prompt_tokens: count(usage, "/prompt_tokens"),
        completion_tokens: count(usage, "/completion_tokens"),
        cached_tokens: count(usage, "/prompt_tokens_details/cached_tokens"),
        reasoning_tokens: count(usage, "/completion_tokens_details/reasoning_tokens"),
    }
}

pub(super) fn body(request: &LlmRequest) -> Map<String, Value> {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| match message.role {
            Role::System => json!({"role": "system", "content": message.content}),
            Role::User => json!({"role": "user", "content": message.content}),
            Role::Tool => json!({
                "role": "tool",
                "tool_call_id": message.tool_call_id.as_deref().unwrap_or_default(),
                "content": message.content,
            }),
            Role::Assistant => {
                let mut out = Map::new();
                out.insert("role".to_owned(), json!("assistant"));
                let empty = message.content.is_empty() && !message.tool_calls.is_empty();
                out.insert(
                    "content".to_owned(),
                    if empty { Value::Null } else { json!(message.content) },
                );
                if !message.tool_calls.is_empty() {
                    let calls: Vec<Value> = message
                        .tool_calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": arguments_text(&call.arguments)},
                            })
                        })
                        .collect();
                    out.insert("tool_calls".to_owned(), Value::Array(calls));
                }
                Value::Object(out)
            }
        })
        .collect();
    let mut body = Map::new();
    body.insert("messages".to_owned(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| json!({"type": "function", "function": tool_fields(tool, "parameters")}))
            .collect();
        body.insert("tools".to_owned(), Value::Array(tools));
    }
    body
}
