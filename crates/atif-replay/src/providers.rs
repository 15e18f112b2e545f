//! Readers of OpenAI- and Anthropic-style replies into [`LlmResponse`], for adapters of real
//! providers (the HTTP call stays in the adapter; this crate has no network code).

use serde_json::Value;

use crate::{Content, Error, FinishReason, LlmResponse, Result, ToolCall, Usage};

/// Reads an OpenAI Chat Completions reply (`choices[0].message`, `finish_reason`, `usage`).
///
/// Tool-call `arguments` arrive JSON-encoded and are parsed (a string that is not JSON is kept
/// as a string); `usage.prompt_tokens_details.cached_tokens` becomes `cached_tokens`; a
/// `reasoning_content` field (as some compatible servers send) becomes the reasoning. The raw
/// reply is kept in [`LlmResponse::raw`].
///
/// # Errors
///
/// [`Error::ProviderReply`] naming the JSON Pointer of a missing or mistyped field.
pub fn openai_response(raw: &Value) -> Result<LlmResponse> {
    let message = field(raw, "/choices/0/message")?;
    let mut response = LlmResponse::default();
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        response.content = Some(Content::Text(text.to_owned()));
    }
    if let Some(reasoning) = message.get("reasoning_content").and_then(Value::as_str) {
        response.reasoning = Some(reasoning.to_owned());
    }
    let calls = message.get("tool_calls").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (idx, call) in calls.iter().enumerate() {
        let base = format!("/choices/0/message/tool_calls/{idx}");
        let arguments = match call.pointer("/function/arguments") {
            Some(Value::String(text)) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            Some(other) => other.clone(),
            None => Value::Object(serde_json::Map::new()),
        };
        response.tool_calls.push(ToolCall {
            id: string(call, "/id", &base)?,
            name: string(call, "/function/name", &base)?,
            arguments,
        });
    }
    if let Some(reason) = raw.pointer("/choices/0/finish_reason").and_then(Value::as_str) {
        response.finish_reason = FinishReason::from(reason.to_owned());
    }
    response.usage = Usage {
        prompt_tokens: count(raw, "/usage/prompt_tokens"),
        completion_tokens: count(raw, "/usage/completion_tokens"),
        cached_tokens: count(raw, "/usage/prompt_tokens_details/cached_tokens"),
    };
    response.raw = Some(raw.clone());
    Ok(response)
}

/// Reads an Anthropic Messages reply (`content` blocks, `stop_reason`, `usage`).
///
/// `text` blocks are concatenated into the content, `thinking` blocks into the reasoning, and
/// `tool_use` blocks become tool calls. Anthropic's `input_tokens` excludes cached input, while
/// ATIF's `prompt_tokens` includes it, so `prompt_tokens` is `input_tokens +
/// cache_read_input_tokens + cache_creation_input_tokens` and `cached_tokens` is
/// `cache_read_input_tokens`. The raw reply is kept in [`LlmResponse::raw`].
///
/// # Errors
///
/// [`Error::ProviderReply`] naming the JSON Pointer of a missing or mistyped field.
pub fn anthropic_response(raw: &Value) -> Result<LlmResponse> {
    let Some(blocks) = field(raw, "/content")?.as_array() else {
        return Err(reply_error("/content", "expected an array of content blocks"));
    };
    let mut response = LlmResponse::default();
    let mut text: Option<String> = None;
    let mut reasoning: Option<String> = None;
    for (idx, block) in blocks.iter().enumerate() {
        let base = format!("/content/{idx}");
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                text.get_or_insert_with(String::new).push_str(&string(block, "/text", &base)?)
            }
            Some("thinking") => reasoning.get_or_insert_with(String::new).push_str(&string(
                block,
                "/thinking",
                &base,
            )?),
            Some("tool_use") => response.tool_calls.push(ToolCall {
                id: string(block, "/id", &base)?,
                name: string(block, "/name", &base)?,
                arguments: block.get("input").cloned().unwrap_or(Value::Null),
            }),
            // Other blocks (redacted thinking, server tool results) carry nothing a
            // trajectory step holds; they stay in `raw`.
            Some(_) => {}
            None => return Err(reply_error(&format!("{base}/type"), "expected a block type")),
        }
    }
    response.content = text.map(Content::Text);
    response.reasoning = reasoning;
    if let Some(reason) = raw.get("stop_reason").and_then(Value::as_str) {
        response.finish_reason = FinishReason::from(reason.to_owned());
    }
    let cache_read = count(raw, "/usage/cache_read_input_tokens");
    response.usage = Usage {
        // Saturating: absurd counts in a reply must not overflow (a panic in debug builds).
        prompt_tokens: count(raw, "/usage/input_tokens")
            .saturating_add(cache_read)
            .saturating_add(count(raw, "/usage/cache_creation_input_tokens")),
        completion_tokens: count(raw, "/usage/output_tokens"),
        cached_tokens: cache_read,
    };
    response.raw = Some(raw.clone());
    Ok(response)
}

fn field<'a>(raw: &'a Value, pointer: &str) -> Result<&'a Value> {
    raw.pointer(pointer).ok_or_else(|| reply_error(pointer, "missing"))
}

fn string(value: &Value, pointer: &str, base: &str) -> Result<String> {
    match value.pointer(pointer) {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(other) => Err(reply_error(
            &format!("{base}{pointer}"),
            &format!("expected a string, found {other}"),
        )),
        None => Err(reply_error(&format!("{base}{pointer}"), "missing")),
    }
}

fn count(raw: &Value, pointer: &str) -> u64 {
    raw.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

fn reply_error(pointer: &str, message: &str) -> Error {
    Error::ProviderReply { pointer: pointer.to_owned(), message: message.to_owned() }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_openai_reply_maps_onto_the_response() {
        let raw = json!({
            "id": "chatcmpl-1",
            "choices": [{
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [{
                        "id": "call_abc",
                        "type": "function",
                        "function": {"name": "calculator", "arguments": "{\"expression\":\"2+2\"}"}
                    }]
                }
            }],
            "usage": {"prompt_tokens": 120, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 64}}
        });
        let response = openai_response(&raw).unwrap();
        assert_eq!(response.content, None);
        assert_eq!(
            response.tool_calls,
            [ToolCall::new("call_abc", "calculator", json!({"expression": "2+2"}))]
        );
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
        assert_eq!(response.usage, Usage::new(120, 9, 64));
        assert_eq!(response.raw.as_ref(), Some(&raw));
    }

    #[test]
    fn an_anthropic_reply_maps_onto_the_response_with_cached_input_counted_in() {
        let raw = json!({
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "add them", "signature": "x"},
                {"type": "text", "text": "Let me compute."},
                {"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": {"expression": "2+2"}}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 20, "output_tokens": 15, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5}
        });
        let response = anthropic_response(&raw).unwrap();
        assert_eq!(response.text(), "Let me compute.");
        assert_eq!(response.reasoning.as_deref(), Some("add them"));
        assert_eq!(response.tool_calls[0].id, "toolu_1");
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
        assert_eq!(response.usage, Usage::new(125, 15, 100));
    }

    #[test]
    fn anthropic_counts_whose_sum_overflows_saturate_instead_of_panicking() {
        let raw = json!({
            "content": [{"type": "text", "text": "hi"}],
            "usage": {"input_tokens": u64::MAX, "output_tokens": 1, "cache_read_input_tokens": 2, "cache_creation_input_tokens": 3}
        });
        let response = anthropic_response(&raw).unwrap();
        assert_eq!(response.usage, Usage::new(u64::MAX, 1, 2));
    }

    #[test]
    fn a_malformed_reply_names_the_pointer() {
        let err = openai_response(&json!({"choices": []})).unwrap_err();
        assert_eq!(err.to_string(), "malformed provider reply at /choices/0/message: missing");
        let err =
            anthropic_response(&json!({"content": [{"type": "tool_use", "id": 7}]})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed provider reply at /content/0/id: expected a string, found 7"
        );
    }
}
