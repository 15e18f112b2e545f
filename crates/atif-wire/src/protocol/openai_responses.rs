//! OpenAI Responses: `instructions` and `input` items in, `output` items out, typed
//! `response.*` events when streamed.

use serde_json::{Map, Value, json};

use crate::protocol::{Draft, Wire, arguments_text, count, provider_error, text_of, tool_fields};
use crate::{
    Error, FinishReason, LlmRequest, LlmResponse, Message, Result, Role, ToolCall, ToolDefinition,
    Usage,
};

pub(super) fn request(wire: &Wire, body: &Value) -> Result<LlmRequest> {
    let mut request = LlmRequest::default();
    match body.get("instructions") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => request.messages.push(Message::system(text.clone())),
        Some(other) => {
            return Err(wire.unexpected("/instructions", "a string", other));
        }
    }
    match body.get("input") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => request.messages.push(Message::user(text.clone())),
        Some(Value::Array(items)) => {
            for (idx, item) in items.iter().enumerate() {
                input_item(wire, item, &format!("/input/{idx}"), &mut request.messages)?;
            }
        }
        Some(other) => {
            return Err(wire.unexpected("/input", "a string or an array of items", other));
        }
    }
    for (idx, tool) in wire.array(body, "", "/tools")?.iter().enumerate() {
        let at = format!("/tools/{idx}");
        // Built-in tools (web search, …) have a type and may have no name.
        let name = match tool.get("name") {
            Some(_) => wire.string(tool, &at, "/name")?,
            None => wire.string(tool, &at, "/type")?,
        };
        request.tools.push(ToolDefinition {
            name,
            description: text_of(tool.get("description").unwrap_or(&Value::Null), ""),
            parameters: tool.get("parameters").cloned().unwrap_or(Value::Null),
        });
    }
    Ok(request)
}

fn input_item(wire: &Wire, item: &Value, at: &str, out: &mut Vec<Message>) -> Result<()> {
    if !item.is_object() {
        return Err(wire.unexpected(at, "an input item object", item));
    }
    let item_type = item.get("type").and_then(Value::as_str);
    if item.get("role").is_some() && matches!(item_type, None | Some("message")) {
        let role = wire.string(item, at, "/role")?;
        let content = item.get("content").unwrap_or(&Value::Null);
        let message = match role.as_str() {
            "system" | "developer" => Message::system(text_of(content, "\n")),
            "user" => Message::user(text_of(content, "\n")),
            "assistant" => Message::new(Role::Assistant, text_of(content, "")),
            other => {
                return Err(wire.error(
                    &format!("{at}/role"),
                    format!(
                        "expected \"system\", \"developer\", \"user\" or \"assistant\", found \
                         {other:?}"
                    ),
                ));
            }
        };
        out.push(message);
        return Ok(());
    }
    match item_type {
        Some("function_call" | "custom_tool_call") => {
            let call = ToolCall {
                id: wire.string(item, at, "/call_id")?,
                name: wire.string(item, at, "/name")?,
                arguments: call_arguments(item),
            };
            match out.last_mut() {
                Some(last) if last.role == Role::Assistant => last.tool_calls.push(call),
                _ => {
                    let mut message = Message::new(Role::Assistant, "");
                    message.tool_calls.push(call);
                    out.push(message);
                }
            }
        }
        Some("function_call_output" | "custom_tool_call_output") => {
            let id = wire.string(item, at, "/call_id")?;
            out.push(Message::tool_result(
                id,
                text_of(item.get("output").unwrap_or(&Value::Null), "\n"),
            ));
        }
        // Reasoning items and the outputs of built-in tools carry no message.
        Some(_) => {}
        None => return Err(wire.error(&format!("{at}/type"), "missing".to_owned())),
    }
    Ok(())
}

/// A function call's JSON-encoded `arguments`, or a custom tool call's free-form `input`.
fn call_arguments(item: &Value) -> Value {
    match (item.get("arguments"), item.get("input")) {
        (Some(Value::String(text)), _) => crate::protocol::parse_arguments(text),
        (Some(other), _) => other.clone(),
        (None, Some(input)) => input.clone(),
        (None, None) => Value::Object(Map::new()),
    }
}

pub(super) fn response(wire: &Wire, body: &Value) -> Result<LlmResponse> {
    let mut draft = Draft::default();
    read_response(wire, &mut draft, body, "", true)?;
    let usage = usage(&draft.usage);
    draft.into_response(wire, usage)
}

/// Reads a whole response object (at `at`): its model, status and usage, and its output items
/// when `with_output`.
fn read_response(
    wire: &Wire,
    draft: &mut Draft,
    response: &Value,
    at: &str,
    with_output: bool,
) -> Result<()> {
    draft.set_model(response.get("model"));
    match response.get("status").and_then(Value::as_str) {
        Some("incomplete") => {
            let reason = response.pointer("/incomplete_details/reason").and_then(Value::as_str);
            draft.finish = Some(match reason {
                Some("max_output_tokens") => FinishReason::Length,
                Some("content_filter") => FinishReason::ContentFilter,
                Some(other) => FinishReason::Other(other.to_owned()),
                None => FinishReason::Other("incomplete".to_owned()),
            });
            draft.complete = true;
        }
        Some("failed") => {
            return Err(provider_error(
                response.get("error").unwrap_or(&json!("the response failed")),
            ));
        }
        Some("completed") => draft.complete = true,
        _ => {}
    }
    if with_output {
        let Some(items) = response.get("output") else {
            return Err(wire.error(&format!("{at}/output"), "missing".to_owned()));
        };
        let Value::Array(items) = items else {
            return Err(wire.unexpected(
                &format!("{at}/output"),
                "an array of output items",
                items,
            ));
        };
        for (idx, item) in items.iter().enumerate() {
            let key = idx.to_string();
            output_item(wire, draft, item, &format!("{at}/output/{idx}"), &key, true)?;
        }
    }
    if let Some(usage) = response.get("usage") {
        draft.merge_usage(usage);
    }
    Ok(())
}

/// An output item, whole (`with_text`: its text too) or as a stream opens it.
fn output_item(
    wire: &Wire,
    draft: &mut Draft,
    item: &Value,
    at: &str,
    key: &str,
    with_text: bool,
) -> Result<()> {
    match item.get("type").and_then(Value::as_str) {
        Some("function_call" | "custom_tool_call") => {
            let id = wire.string(item, at, "/call_id")?;
            let name = wire.string(item, at, "/name")?;
            let call = draft.start_call(wire, key, at, id, name);
            match (item.get("arguments"), item.get("input")) {
                (Some(Value::String(text)), _) | (None, Some(Value::String(text))) => {
                    call.arguments.clone_from(text)
                }
                _ => {}
            }
        }
        Some("message") if with_text => {
            for (idx, part) in wire.array(item, at, "/content")?.iter().enumerate() {
                let part_at = format!("{at}/content/{idx}");
                match part.get("type").and_then(Value::as_str) {
                    Some("output_text") => draft.text(&wire.string(part, &part_at, "/text")?),
                    Some("refusal") => draft.text(&wire.string(part, &part_at, "/refusal")?),
                    _ => {}
                }
            }
        }
        Some("reasoning") if with_text => {
            for (idx, part) in wire.array(item, at, "/summary")?.iter().enumerate() {
                draft.reasoning_part(format!("{key}/summary/{idx}"));
                draft.reasoning(&wire.string(part, &format!("{at}/summary/{idx}"), "/text")?);
            }
            for (idx, part) in wire.array(item, at, "/content")?.iter().enumerate() {
                draft.reasoning_part(format!("{key}/content/{idx}"));
                draft.reasoning(&wire.string(part, &format!("{at}/content/{idx}"), "/text")?);
            }
        }
        Some(_) => {}
        None => return Err(wire.error(&format!("{at}/type"), "missing".to_owned())),
    }
    Ok(())
}

pub(super) fn event(wire: &Wire, draft: &mut Draft, event_type: &str, data: &Value) -> Result<()> {
    let key = || match data.get("output_index") {
        Some(Value::Number(index)) if index.is_u64() => Ok(index.to_string()),
        Some(other) => Err(wire.unexpected("/output_index", "an output index", other)),
        None => Err(wire.error("/output_index", "missing".to_owned())),
    };
    let delta = || wire.string(data, "", "/delta");
    match event_type {
        "response.created" | "response.in_progress" => {
            if let Some(response) = data.get("response") {
                read_response(wire, draft, response, "/response", false)?;
            }
        }
        "response.output_item.added" | "response.output_item.done" => {
            let Some(item) = data.get("item") else {
                return Err(wire.error("/item", "missing".to_owned()));
            };
            output_item(wire, draft, item, "/item", &key()?, false)?;
        }
        "response.output_text.delta" | "response.refusal.delta" => draft.text(&delta()?),
        "response.reasoning_summary_text.delta" => {
            let part = data.get("summary_index").and_then(Value::as_u64).unwrap_or(0);
            draft.reasoning_part(format!("{}/summary/{part}", key()?));
            draft.reasoning(&delta()?);
        }
        "response.reasoning_text.delta" => {
            let part = data.get("content_index").and_then(Value::as_u64).unwrap_or(0);
            draft.reasoning_part(format!("{}/content/{part}", key()?));
            draft.reasoning(&delta()?);
        }
        "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
            let key = key()?;
            let delta = delta()?;
            let Some(call) = draft.calls.iter_mut().find(|call| call.key == key) else {
                return Err(wire.error(
                    "/output_index",
                    format!(
                        "an arguments delta for output item {key}, which no \
                         response.output_item.added opened as a function call"
                    ),
                ));
            };
            call.arguments.push_str(&delta);
        }
        "response.completed" | "response.incomplete" | "response.failed" => {
            let Some(response) = data.get("response") else {
                return Err(wire.error("/response", "missing".to_owned()));
            };
            // A server that sends no deltas still sends the whole output here.
            let assembled =
                draft.text.is_some() || draft.reasoning.is_some() || !draft.calls.is_empty();
            read_response(wire, draft, response, "/response", !assembled)?;
            draft.complete = true;
        }
        "error" => {
            let message = data.get("message").and_then(Value::as_str);
            return Err(Error::provider(message.unwrap_or("the stream reported an error")));
        }
        _ => {}
    }
    Ok(())
}

pub(super) fn usage(usage: &Value) -> Usage {
    Usage {
        prompt_tokens: count(usage, "/input_tokens"),
        completion_tokens: count(usage, "/output_tokens"),
        cached_tokens: count(usage, "/input_tokens_details/cached_tokens"),
        reasoning_tokens: count(usage, "/output_tokens_details/reasoning_tokens"),
    }
}

pub(super) fn body(request: &LlmRequest) -> Map<String, Value> {
    let mut input = Vec::new();
    for message in &request.messages {
        match message.role {
            Role::System => input.push(json!({"role": "system", "content": message.content})),
            Role::User => input.push(json!({"role": "user", "content": message.content})),
            Role::Tool => input.push(json!({
                "type": "function_call_output",
                "call_id": message.tool_call_id.as_deref().unwrap_or_default(),
                "output": message.content,
            })),
            Role::Assistant => {
                if !message.content.is_empty() {
                    input.push(json!({"role": "assistant", "content": message.content}));
                }
                for call in &message.tool_calls {
                    input.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": arguments_text(&call.arguments),
                    }));
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("input".to_owned(), Value::Array(input));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let mut out = Map::new();
                out.insert("type".to_owned(), json!("function"));
                out.extend(tool_fields(tool, "parameters"));
                Value::Object(out)
            })
            .collect();
        body.insert("tools".to_owned(), Value::Array(tools));
    }
    body
}
