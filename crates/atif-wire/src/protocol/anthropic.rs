//! Anthropic Messages: `system` and content blocks in, content blocks out, `message_start` …
//! `content_block_delta` … `message_stop` events when streamed.

use serde_json::{Map, Value, json};

use crate::protocol::{Draft, Wire, count, text_of, tool_fields};
use crate::{LlmRequest, LlmResponse, Message, Result, Role, ToolCall, ToolDefinition, Usage};

pub(super) fn request(wire: &Wire, body: &Value) -> Result<LlmRequest> {
    let mut request = LlmRequest::default();
    match body.get("system") {
        None | Some(Value::Null) => {}
        Some(system @ (Value::String(_) | Value::Array(_))) => {
            request.messages.push(Message::system(text_of(system, "\n")));
        }
        Some(other) => {
            return Err(wire.unexpected("/system", "a string or an array of text blocks", other));
        }
    }
    for (idx, value) in wire.array(body, "", "/messages")?.iter().enumerate() {
        let at = format!("/messages/{idx}");
        let role = wire.string(value, &at, "/role")?;
        let blocks: Vec<Value> = match value.get("content") {
            Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(other) => {
                return Err(wire.unexpected(
                    &format!("{at}/content"),
                    "a string or an array of blocks",
                    other,
                ));
            }
            None => return Err(wire.error(&format!("{at}/content"), "missing".to_owned())),
        };
        match role.as_str() {
            "user" => user_message(wire, &blocks, &at, &mut request.messages)?,
            "assistant" => request.messages.push(assistant_message(wire, &blocks, &at)?),
            // Claude Code 2.x sends system reminders as messages of their own.
            "system" => {
                request.messages.push(Message::system(text_of(&Value::Array(blocks), "\n")))
            }
            other => {
                return Err(wire.error(
                    &format!("{at}/role"),
                    format!("expected \"user\", \"assistant\" or \"system\", found {other:?}"),
                ));
            }
        }
    }
    for (idx, tool) in wire.array(body, "", "/tools")?.iter().enumerate() {
        let at = format!("/tools/{idx}");
        request.tools.push(ToolDefinition {
            name: wire.string(tool, &at, "/name")?,
            description: text_of(tool.get("description").unwrap_or(&Value::Null), ""),
            parameters: tool.get("input_schema").cloned().unwrap_or(Value::Null),
        });
    }
    Ok(request)
}

/// A user turn: each `tool_result` block becomes a tool message, in order, and the text
/// blocks one user message after them.
fn user_message(wire: &Wire, blocks: &[Value], at: &str, out: &mut Vec<Message>) -> Result<()> {
    let mut texts = Vec::new();
    for (idx, block) in blocks.iter().enumerate() {
        let block_at = format!("{at}/content/{idx}");
        match block.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(wire.string(block, &block_at, "/text")?),
            Some("tool_result") => {
                let id = wire.string(block, &block_at, "/tool_use_id")?;
                let content = text_of(block.get("content").unwrap_or(&Value::Null), "\n");
                out.push(Message::tool_result(id, content));
            }
            Some(_) => {}
            None => return Err(wire.error(&format!("{block_at}/type"), "missing".to_owned())),
        }
    }
    if !texts.is_empty() {
        out.push(Message::user(texts.join("\n")));
    }
    Ok(())
}

fn assistant_message(wire: &Wire, blocks: &[Value], at: &str) -> Result<Message> {
    let mut message = Message::new(Role::Assistant, "");
    for (idx, block) in blocks.iter().enumerate() {
        let block_at = format!("{at}/content/{idx}");
        match block.get("type").and_then(Value::as_str) {
            Some("text") => message.content.push_str(&wire.string(block, &block_at, "/text")?),
            Some("tool_use") => message.tool_calls.push(ToolCall {
                id: wire.string(block, &block_at, "/id")?,
                name: wire.string(block, &block_at, "/name")?,
                arguments: block.get("input").cloned().unwrap_or(Value::Object(Map::new())),
            }),
            Some(_) => {}
            None => return Err(wire.error(&format!("{block_at}/type"), "missing".to_owned())),
        }
    }
    Ok(message)
}

pub(super) fn response(wire: &Wire, body: &Value) -> Result<LlmResponse> {
    let blocks = match body.get("content") {
        Some(Value::Array(blocks)) => blocks,
        Some(other) => {
            return Err(wire.unexpected("/content", "an array of content blocks", other));
        }
        None => return Err(wire.error("/content", "missing".to_owned())),
    };
    let mut draft = Draft::default();
    draft.set_model(body.get("model"));
    for (idx, block) in blocks.iter().enumerate() {
        start_block(wire, &mut draft, block, &format!("/content/{idx}"), &idx.to_string())?;
    }
    draft.set_finish(body.get("stop_reason"));
    if let Some(usage) = body.get("usage") {
        draft.merge_usage(usage);
    }
    draft.complete = true;
    let usage = usage(&draft.usage);
    draft.into_response(wire, usage)
}

pub(super) fn event(wire: &Wire, draft: &mut Draft, event_type: &str, data: &Value) -> Result<()> {
    match event_type {
        "message_start" => {
            draft.set_model(data.pointer("/message/model"));
            if let Some(usage) = data.pointer("/message/usage") {
                draft.merge_usage(usage);
            }
        }
        "content_block_start" => {
            let key = block_index(wire, data)?;
            let Some(block) = data.get("content_block") else {
                return Err(wire.error("/content_block", "missing".to_owned()));
            };
            start_block(wire, draft, block, "/content_block", &key)?;
        }
        "content_block_delta" => {
            let key = block_index(wire, data)?;
            let delta = data.get("delta").unwrap_or(&Value::Null);
            match delta.get("type").and_then(Value::as_str) {
                Some("text_delta") => draft.text(&wire.string(delta, "/delta", "/text")?),
                Some("thinking_delta") => {
                    draft.reasoning(&wire.string(delta, "/delta", "/thinking")?)
                }
                Some("input_json_delta") => {
                    let json = wire.string(delta, "/delta", "/partial_json")?;
                    let Some(call) = draft.calls.iter_mut().find(|call| call.key == key) else {
                        return Err(wire.error(
                            "/index",
                            format!(
                                "a tool-input delta for content block {key}, which no \
                                 content_block_start opened as a tool_use block"
                            ),
                        ));
                    };
                    call.arguments.push_str(&json);
                }
                // Signatures and citations carry nothing a step holds.
                Some(_) => {}
                None => return Err(wire.error("/delta/type", "missing".to_owned())),
            }
        }
        "message_delta" => {
            draft.set_finish(data.pointer("/delta/stop_reason"));
            if let Some(usage) = data.get("usage") {
                draft.merge_usage(usage);
            }
        }
        "message_stop" => draft.complete = true,
        // `ping`, `content_block_stop` and event types added later carry nothing to read.
        _ => {}
    }
    Ok(())
}

fn block_index(wire: &Wire, data: &Value) -> Result<String> {
    match data.get("index") {
        Some(Value::Number(index)) if index.is_u64() => Ok(index.to_string()),
        Some(other) => Err(wire.unexpected("/index", "a content block index", other)),
        None => Err(wire.error("/index", "missing".to_owned())),
    }
}

/// A content block, whole or as it starts a stream.
fn start_block(wire: &Wire, draft: &mut Draft, block: &Value, at: &str, key: &str) -> Result<()> {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => draft.text(&wire.string(block, at, "/text")?),
        Some("thinking") => draft.reasoning(&wire.string(block, at, "/thinking")?),
        Some("tool_use") => {
            let id = wire.string(block, at, "/id")?;
            let name = wire.string(block, at, "/name")?;
            let call = draft.start_call(wire, key, at, id, name);
            // A stream starts the input as `{}` and sends it as JSON text deltas.
            call.value = block.get("input").cloned();
        }
        // Redacted thinking and server tools carry nothing a trajectory step holds.
        Some(_) => {}
        None => return Err(wire.error(&format!("{at}/type"), "missing".to_owned())),
    }
    Ok(())
}

/// Anthropic's `input_tokens` leaves out cached input, which ATIF's `prompt_tokens` counts,
/// so the cache reads and writes are added back.
pub(super) fn usage(usage: &Value) -> Usage {
    let cache_read = count(usage, "/cache_read_input_tokens");
    Usage {
        // Saturating: absurd counts in a reply must not overflow (a panic in debug builds).
        prompt_tokens: count(usage, "/input_tokens")
            .saturating_add(cache_read)
            .saturating_add(count(usage, "/cache_creation_input_tokens")),
        completion_tokens: count(usage, "/output_tokens"),
        cached_tokens: cache_read,
        reasoning_tokens: 0,
    }
}

pub(super) fn body(request: &LlmRequest) -> Map<String, Value> {
    let mut system = Vec::new();
    // Consecutive messages of one role share one turn, as the API requires.
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message.role {
            Role::System => {
                system.push(message.content.clone());
                continue;
            }
            Role::User => ("user", text_block(&message.content)),
            Role::Tool => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
                    "content": message.content,
                })],
            ),
            Role::Assistant => {
                let mut blocks = text_block(&message.content);
                for call in &message.tool_calls {
                    let input = match &call.arguments {
                        Value::Object(_) => call.arguments.clone(),
                        other => json!({"value": other}),
                    };
                    blocks.push(
                        json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                    );
                }
                ("assistant", blocks)
            }
        };
        match turns.last_mut() {
            Some((last, last_blocks)) if *last == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let mut body = Map::new();
    if !system.is_empty() {
        body.insert("system".to_owned(), json!(system.join("\n")));
    }
    let messages: Vec<Value> =
        turns.into_iter().map(|(role, blocks)| json!({"role": role, "content": blocks})).collect();
    body.insert("messages".to_owned(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let mut out = tool_fields(tool, "input_schema");
                // The API requires a schema.
                out.entry("input_schema").or_insert_with(|| json!({"type": "object"}));
                Value::Object(out)
            })
            .collect();
        body.insert("tools".to_owned(), Value::Array(tools));
    }
    body
}

/// A text block, or none for empty text (the API refuses empty text blocks).
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() { Vec::new() } else { vec![json!({"type": "text", "text": text})] }
}
