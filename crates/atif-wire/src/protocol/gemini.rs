//! Gemini `generateContent`: `systemInstruction` and `contents` in, `candidates` out; a stream
//! (`streamGenerateContent?alt=sse`) is a series of partial replies of the same shape.

use serde_json::{Map, Value, json};

use crate::protocol::{Draft, Wire, count, join_texts, text_of, tool_fields};
use crate::{
    FinishReason, LlmRequest, LlmResponse, Message, Result, Role, ToolCall, ToolDefinition, Usage,
};

pub(super) fn request(wire: &Wire, body: &Value) -> Result<LlmRequest> {
    let mut request = LlmRequest::default();
    if let Some(system) = body.get("systemInstruction").filter(|system| !system.is_null()) {
        let text = match system {
            Value::String(text) => text.clone(),
            _ => join_texts(parts(wire, system, "/systemInstruction")?, "\n"),
        };
        request.messages.push(Message::system(text));
    }
    for (idx, content) in wire.array(body, "", "/contents")?.iter().enumerate() {
        let at = format!("/contents/{idx}");
        let role = content.get("role").and_then(Value::as_str).unwrap_or("user");
        let parts = parts(wire, content, &at)?;
        match role {
            "model" => model_turn(wire, parts, &at, &mut request.messages)?,
            _ => user_turn(wire, parts, &at, &mut request.messages)?,
        }
    }
    for (idx, tool) in wire.array(body, "", "/tools")?.iter().enumerate() {
        let at = format!("/tools/{idx}");
        let declarations = wire.array(tool, &at, "/functionDeclarations")?;
        for (decl_idx, declaration) in declarations.iter().enumerate() {
            let decl_at = format!("{at}/functionDeclarations/{decl_idx}");
            request.tools.push(ToolDefinition {
                name: wire.string(declaration, &decl_at, "/name")?,
                description: text_of(declaration.get("description").unwrap_or(&Value::Null), ""),
                parameters: declaration
                    .get("parameters")
                    .or_else(|| declaration.get("parametersJsonSchema"))
                    .cloned()
                    .unwrap_or(Value::Null),
            });
        }
        // Built-in tools (`googleSearch`, `codeExecution`, …) are named by their key.
        if declarations.is_empty() {
            if let Some(name) = tool.as_object().and_then(|fields| fields.keys().next()) {
                request.tools.push(ToolDefinition::new(name.clone(), "", Value::Null));
            }
        }
    }
    Ok(request)
}

fn parts<'v>(wire: &Wire, content: &'v Value, at: &str) -> Result<&'v [Value]> {
    match content.get("parts") {
        Some(Value::Array(parts)) => Ok(parts),
        Some(other) => Err(wire.unexpected(&format!("{at}/parts"), "an array of parts", other)),
        None => Err(wire.error(&format!("{at}/parts"), "missing".to_owned())),
    }
}

/// A model turn: its text and its calls, merged into the assistant message before it when
/// that one is a model turn too (a streamed reply may come back as several contents).
fn model_turn(wire: &Wire, parts: &[Value], at: &str, out: &mut Vec<Message>) -> Result<()> {
    if !out.last().is_some_and(|last| last.role == Role::Assistant) {
        out.push(Message::new(Role::Assistant, ""));
    }
    let Some(message) = out.last_mut() else { return Ok(()) };
    for (idx, part) in parts.iter().enumerate() {
        let part_at = format!("{at}/parts/{idx}");
        if let Some(call) = part.get("functionCall") {
            let number = message.tool_calls.len() + 1;
            message.tool_calls.push(function_call(
                wire,
                call,
                &format!("{part_at}/functionCall"),
                number,
            )?);
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            if part.get("thought").and_then(Value::as_bool) != Some(true) {
                message.content.push_str(text);
            }
        }
    }
    Ok(())
}

/// A `functionCall` part; without an id of its own it is named `call_N`, N counting the calls
/// of its turn from 1.
fn function_call(wire: &Wire, call: &Value, at: &str, number: usize) -> Result<ToolCall> {
    let id = match call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty()) {
        Some(id) => id.to_owned(),
        None => format!("call_{number}"),
    };
    Ok(ToolCall {
        id,
        name: wire.string(call, at, "/name")?,
        arguments: call.get("args").cloned().unwrap_or(Value::Object(Map::new())),
    })
}

/// A user turn: each `functionResponse` part becomes a tool message joined to its call (by
/// its id, or else by the first unanswered call of that name in the model turn before), and
/// the text parts one user message.
fn user_turn(wire: &Wire, parts: &[Value], at: &str, out: &mut Vec<Message>) -> Result<()> {
    let calls: Vec<ToolCall> = out
        .iter()
        .rev()
        .find(|message| message.role == Role::Assistant)
        .map(|message| message.tool_calls.clone())
        .unwrap_or_default();
    let mut answered: Vec<String> =
        out.iter().filter_map(|message| message.tool_call_id.clone()).collect();
    let mut texts = Vec::new();
    for (idx, part) in parts.iter().enumerate() {
        let part_at = format!("{at}/parts/{idx}");
        if let Some(result) = part.get("functionResponse") {
            let result_at = format!("{part_at}/functionResponse");
            let name = wire.string(result, &result_at, "/name")?;
            let id = match result.get("id").and_then(Value::as_str).filter(|id| !id.is_empty()) {
                Some(id) => id.to_owned(),
                None => calls
                    .iter()
                    .find(|call| call.name == name && !answered.contains(&call.id))
                    .map_or_else(|| name.clone(), |call| call.id.clone()),
            };
            answered.push(id.clone());
            out.push(Message::tool_result(id, response_text(result.get("response"))));
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            texts.push(text.to_owned());
        }
    }
    if !texts.is_empty() {
        out.push(Message::user(texts.join("\n")));
    }
    Ok(())
}

/// A function response as text: the string of a one-field object such as `{"output": "…"}`,
/// else the compact JSON.
fn response_text(response: Option<&Value>) -> String {
    match response {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Object(fields)) if fields.len() == 1 => match fields.values().next() {
            Some(Value::String(text)) => text.clone(),
            _ => Value::Object(fields.clone()).to_string(),
        },
        Some(other) => other.to_string(),
    }
}

pub(super) fn response(wire: &Wire, body: &Value) -> Result<LlmResponse> {
    let mut draft = Draft::default();
    event(wire, &mut draft, body)?;
    draft.complete = true;
    let usage = usage(&draft.usage);
    draft.into_response(wire, usage)
}

/// One reply, whole or one piece of a stream.
pub(super) fn event(wire: &Wire, draft: &mut Draft, data: &Value) -> Result<()> {
    draft.set_model(data.get("modelVersion"));
    if let Some(usage) = data.get("usageMetadata") {
        draft.merge_usage(usage);
    }
    let Some(candidate) = wire.array(data, "", "/candidates")?.first() else {
        return Ok(());
    };
    if let Some(content) = candidate.get("content").filter(|content| !content.is_null()) {
        // A candidate stopped by a filter may have a content without parts.
        let parts = match content.get("parts") {
            None | Some(Value::Null) => &[][..],
            Some(_) => parts(wire, content, "/candidates/0/content")?,
        };
        for (idx, part) in parts.iter().enumerate() {
            let part_at = format!("/candidates/0/content/parts/{idx}");
            if let Some(call) = part.get("functionCall") {
                let number = draft.calls.len() + 1;
                let call = function_call(wire, call, &format!("{part_at}/functionCall"), number)?;
                let key = number.to_string();
                let draft_call = draft.start_call(wire, &key, &part_at, call.id, call.name);
                draft_call.value = Some(call.arguments);
            } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                if part.get("thought").and_then(Value::as_bool) == Some(true) {
                    draft.reasoning(text);
                } else {
                    draft.text(text);
                }
            }
        }
    }
    if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
        draft.finish = Some(match reason {
            "STOP" => FinishReason::Stop,
            "MAX_TOKENS" => FinishReason::Length,
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
            | "IMAGE_SAFETY" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        });
        draft.complete = true;
    }
    Ok(())
}

/// Gemini counts thinking apart from the candidates; ATIF's completion tokens include it.
pub(super) fn usage(usage: &Value) -> Usage {
    let thoughts = count(usage, "/thoughtsTokenCount");
    Usage {
        prompt_tokens: count(usage, "/promptTokenCount"),
        completion_tokens: count(usage, "/candidatesTokenCount").saturating_add(thoughts),
        cached_tokens: count(usage, "/cachedContentTokenCount"),
        reasoning_tokens: thoughts,
    }
}

pub(super) fn body(request: &LlmRequest) -> Map<String, Value> {
    let mut system = Vec::new();
    let mut contents: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, parts) = match message.role {
            Role::System => {
                system.push(json!({"text": message.content}));
                continue;
            }
            Role::User => ("user", vec![json!({"text": message.content})]),
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                let name = request
                    .messages
                    .iter()
                    .flat_map(|earlier| &earlier.tool_calls)
                    .find(|call| call.id == id)
                    .map_or(id, |call| call.name.as_str());
                let result =
                    json!({"id": id, "name": name, "response": {"output": message.content}});
                ("user", vec![json!({"functionResponse": result})])
            }
            Role::Assistant => {
                let mut parts = Vec::new();
                if !message.content.is_empty() {
                    parts.push(json!({"text": message.content}));
                }
                for call in &message.tool_calls {
                    parts.push(json!({"functionCall": {"id": call.id, "name": call.name, "args": call.arguments}}));
                }
                ("model", parts)
            }
        };
        match contents.last_mut() {
            Some((last, last_parts)) if *last == role => last_parts.extend(parts),
            _ => contents.push((role, parts)),
        }
    }
    let mut body = Map::new();
    if !system.is_empty() {
        body.insert("systemInstruction".to_owned(), json!({"parts": system}));
    }
    let contents: Vec<Value> =
        contents.into_iter().map(|(role, parts)| json!({"role": role, "parts": parts})).collect();
    body.insert("contents".to_owned(), Value::Array(contents));
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| Value::Object(tool_fields(tool, "parameters")))
            .collect();
        body.insert("tools".to_owned(), json!([{"functionDeclarations": declarations}]));
    }
    body
}
