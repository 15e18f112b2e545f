//! Writing a [`Reply`] in each protocol's own shape: one JSON body, or a list of SSE events
//! framed as the real provider frames them.

use atif_wire::Protocol;
use bytes::Bytes;
use serde_json::{Value, json};

use crate::turn::{Reply, Turn, call_id};

/// A fixed creation time (2026-01-01T00:00:00Z), so that replies are byte-for-byte reproducible.
const CREATED: u64 = 1_767_225_600;

/// A reply body before it is sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Payload {
    /// One JSON document (`application/json`).
    Json(Value),
    /// Server-sent events, each already framed (`text/event-stream`).
    Sse(Vec<Bytes>),
}

/// Token figures of one reply, derived from the request's length in messages and the reply's
/// length, so that two runs of the same behaviour report the same usage.
#[derive(Debug, Clone, Copy)]
struct Usage {
    input: u64,
    output: u64,
}

impl Usage {
    fn of(turn: &Turn, reply: &Reply) -> Usage {
        let n_messages = u64::try_from(turn.n_messages).unwrap_or(u64::MAX / 4);
        let content = u64::try_from(reply.content_len()).unwrap_or(u64::MAX / 4);
        let (input, output) = (100 + 10 * n_messages.min(1 << 40), 1 + content.min(1 << 40) / 4);
        // A sampled conversation scales its counts (the factor is 1 otherwise).
        let scale = |count: u64| ((count as f64 * turn.token_factor).round() as u64).max(1);
        Usage { input: scale(input), output: scale(output) }
    }

    fn total(self) -> u64 {
        self.input + self.output
    }
}

/// The reply to a model request of `protocol`, streamed (`stream`) or not.
///
/// For Gemini, `stream` without `sse` is `:streamGenerateContent` without `alt=sse`, which
/// answers a JSON array of chunks.
pub(crate) fn encode(
    protocol: Protocol,
    turn: &Turn,
    reply: &Reply,
    stream: bool,
    sse: bool,
) -> Payload {
    let usage = Usage::of(turn, reply);
    let id = turn.id_base + turn.n_messages;
    match (protocol, stream) {
        (Protocol::OpenAiChat, false) => Payload::Json(chat_completion(turn, reply, usage, id)),
        (Protocol::OpenAiChat, true) => Payload::Sse(chat_chunks(turn, reply, usage, id)),
        (Protocol::OpenAiResponses, false) => {
            Payload::Json(response_object(turn, reply, usage, id, true))
        }
        (Protocol::OpenAiResponses, true) => Payload::Sse(response_events(turn, reply, usage, id)),
        (Protocol::AnthropicMessages, false) => {
            Payload::Json(anthropic_message(turn, reply, usage, id))
        }
        (Protocol::AnthropicMessages, true) => {
            Payload::Sse(anthropic_events(turn, reply, usage, id))
        }
        (Protocol::Gemini, false) => {
            Payload::Json(gemini_response(turn, &gemini_parts(reply), true, usage, id))
        }
        (Protocol::Gemini, true) => {
            let chunks = gemini_chunks(turn, reply, usage, id);
            if sse {
                Payload::Sse(chunks.iter().map(frame_crlf).collect())
            } else {
                Payload::Json(Value::Array(chunks))
            }
        }
    }
}

/// The body of an error reply in the protocol's own shape.
pub(crate) fn error_body(protocol: Protocol, status: u16, message: &str) -> Value {
    match protocol {
        Protocol::OpenAiChat | Protocol::OpenAiResponses => json!({
            "error": {"message": message, "type": openai_error_type(status), "param": null, "code": null}
        }),
        Protocol::AnthropicMessages => json!({
            "type": "error",
            "error": {"type": anthropic_error_type(status), "message": message}
        }),
        Protocol::Gemini => json!({
            "error": {"code": status, "message": message, "status": gemini_error_status(status)}
        }),
    }
}

/// The answer to a token-counting request (`/v1/messages/count_tokens`, Gemini `:countTokens`).
pub(crate) fn count_tokens(protocol: Protocol, turn: &Turn) -> Value {
    let tokens = Usage::of(turn, &Reply::Text(String::new())).input;
    match protocol {
        Protocol::Gemini => json!({"totalTokens": tokens}),
        _ => json!({"input_tokens": tokens}),
    }
}

/// The model list: OpenAI's shape, Anthropic's when `anthropic` (the request carried an
/// `anthropic-version` header), Gemini's when `gemini` (the path is under `/v1beta`).
pub(crate) fn model_list(models: &[String], anthropic: bool, gemini: bool) -> Value {
    if gemini {
        let models: Vec<Value> = models
            .iter()
            .map(|id| {
                json!({"name": format!("models/{id}"), "displayName": id,
                             "supportedGenerationMethods": ["generateContent", "countTokens"]})
            })
            .collect();
        return json!({"models": models});
    }
    if anthropic {
        let data: Vec<Value> = models
            .iter()
            .map(|id| json!({"type": "model", "id": id, "display_name": id, "created_at": "2026-01-01T00:00:00Z"}))
            .collect();
        return json!({"data": data, "has_more": false,
                      "first_id": models.first(), "last_id": models.last()});
    }
    let data: Vec<Value> = models
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": CREATED, "owned_by": "atif-fake-provider"}))
        .collect();
    json!({"object": "list", "data": data})
}

// OpenAI Chat Completions.

fn chat_completion(turn: &Turn, reply: &Reply, usage: Usage, id: usize) -> Value {
    let (message, finish_reason) = match reply {
        Reply::Text(text) => (
            json!({"role": "assistant", "content": text, "refusal": null, "annotations": []}),
            "stop",
        ),
        Reply::ToolCalls(calls) => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    json!({"id": call_id("call_fake", id, index), "type": "function",
                           "function": {"name": call.name, "arguments": call.arguments.to_string()}})
                })
                .collect();
            (
                json!({"role": "assistant", "content": null, "refusal": null, "annotations": [],
                       "tool_calls": tool_calls}),
                "tool_calls",
            )
        }
    };
    json!({
        "id": format!("chatcmpl-fake-{id}"),
        "object": "chat.completion",
        "created": CREATED,
        "model": turn.model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": chat_usage(usage),
        "system_fingerprint": "fp_fake",
    })
}

fn chat_usage(usage: Usage) -> Value {
    json!({"prompt_tokens": usage.input, "completion_tokens": usage.output, "total_tokens": usage.total(),
           "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}})
}

/// Chat Completions chunks: `data:` lines only (no event names), usage in a last chunk with no
/// choices, then `data: [DONE]`.
fn chat_chunks(turn: &Turn, reply: &Reply, usage: Usage, id: usize) -> Vec<Bytes> {
    let chunk = |delta: Value, finish_reason: Value| {
        json!({"id": format!("chatcmpl-fake-{id}"), "object": "chat.completion.chunk", "created": CREATED,
               "model": turn.model, "system_fingerprint": "fp_fake",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]})
    };
    let mut chunks = Vec::new();
    let finish_reason = match reply {
        Reply::Text(text) => {
            chunks.push(chunk(
                json!({"role": "assistant", "content": "", "refusal": null}),
                Value::Null,
            ));
            for piece in pieces(text) {
                chunks.push(chunk(json!({"content": piece}), Value::Null));
            }
            "stop"
        }
        Reply::ToolCalls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                let head = json!({"index": index, "id": call_id("call_fake", id, index), "type": "function",
                                  "function": {"name": call.name, "arguments": ""}});
                // The first chunk also opens the message.
                let delta = match index {
                    0 => json!({"role": "assistant", "content": null, "tool_calls": [head]}),
                    _ => json!({"tool_calls": [head]}),
                };
                chunks.push(chunk(delta, Value::Null));
                for piece in pieces(&call.arguments.to_string()) {
                    let delta =
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
                    chunks.push(chunk(delta, Value::Null));
                }
            }
            "tool_calls"
        }
    };
    chunks.push(chunk(json!({}), json!(finish_reason)));
    if turn.include_usage {
        // With `include_usage`, every chunk carries `usage: null` and one more chunk, with no
        // choices, carries the figures.
        for chunk in &mut chunks {
            chunk["usage"] = Value::Null;
        }
        let mut usage_chunk = chunk(json!({}), Value::Null);
        usage_chunk["choices"] = json!([]);
        usage_chunk["usage"] = chat_usage(usage);
        chunks.push(usage_chunk);
    }
    let mut events: Vec<Bytes> = chunks.iter().map(|data| frame(None, &data.to_string())).collect();
    events.push(frame(None, "[DONE]"));
    events
}

// OpenAI Responses.

/// The reply's output items: its message, or one `function_call` item per call.
fn response_items(turn: &Turn, reply: &Reply, id: usize, done: bool) -> Vec<Value> {
    let status = if done { "completed" } else { "in_progress" };
    match reply {
        Reply::Text(text) => {
            let content = if done { json!([output_text(text)]) } else { json!([]) };
            vec![json!({"id": format!("msg_fake_{id}"), "type": "message", "status": status,
                        "role": "assistant", "content": content})]
        }
        Reply::ToolCalls(calls) => calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                let arguments = if done { call.arguments.to_string() } else { String::new() };
                let mut item = json!({"id": call_id("fc_fake", id, index), "type": "function_call",
                       "status": status, "call_id": call_id("call_fake", id, index),
                       "name": call.name, "arguments": arguments});
                // A tool of a namespace is called by its own name, with its namespace beside it.
                if let Some((_, namespace, tool)) =
                    turn.namespaced.iter().find(|(full, ..)| *full == call.name)
                {
                    item["name"] = json!(tool);
                    item["namespace"] = json!(namespace);
                }
                item
            })
            .collect(),
    }
}

/// A tool's name as a call of it gives it: its own name for a tool of a namespace.
fn own_name<'a>(turn: &'a Turn, name: &'a str) -> &'a str {
    turn.namespaced.iter().find(|(full, ..)| full == name).map_or(name, |(_, _, tool)| tool)
}

fn output_text(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
}

fn response_object(turn: &Turn, reply: &Reply, usage: Usage, id: usize, done: bool) -> Value {
    let (status, output, usage) = if done {
        let usage = json!({"input_tokens": usage.input, "input_tokens_details": {"cached_tokens": 0},
                           "output_tokens": usage.output, "output_tokens_details": {"reasoning_tokens": 0},
                           "total_tokens": usage.total()});
        ("completed", json!(response_items(turn, reply, id, true)), usage)
    } else {
        ("in_progress", json!([]), Value::Null)
    };
    json!({
        "id": format!("resp_fake_{id}"), "object": "response", "created_at": CREATED, "status": status,
        "error": null, "incomplete_details": null, "instructions": null, "max_output_tokens": null,
        "model": turn.model, "output": output, "parallel_tool_calls": true, "previous_response_id": null,
        "reasoning": {"effort": null, "summary": null}, "store": false, "temperature": 1.0,
        "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [], "top_p": 1.0,
        "truncation": "disabled", "usage": usage, "metadata": {},
    })
}

/// Responses events: `event:` lines named like their `type`, numbered by `sequence_number`,
/// from `response.created` to `response.completed`, each output item added, filled and done in
/// turn; no `[DONE]`.
fn response_events(turn: &Turn, reply: &Reply, usage: Usage, id: usize) -> Vec<Bytes> {
    let mut events: Vec<Value> = vec![
        json!({"type": "response.created", "response": response_object(turn, reply, usage, id, false)}),
        json!({"type": "response.in_progress", "response": response_object(turn, reply, usage, id, false)}),
    ];
    let started = response_items(turn, reply, id, false);
    let done = response_items(turn, reply, id, true);
    for (output_index, (item, done)) in started.into_iter().zip(done).enumerate() {
        events.push(json!({"type": "response.output_item.added", "output_index": output_index, "item": item}));
        let at = json!({"item_id": done["id"], "output_index": output_index});
        match reply {
            Reply::Text(text) => text_events(&mut events, &at, text),
            Reply::ToolCalls(calls) => {
                let arguments = calls[output_index].arguments.to_string();
                for piece in pieces(&arguments) {
                    events.push(with(
                        &at,
                        json!({"type": "response.function_call_arguments.delta", "delta": piece}),
                    ));
                }
                let name = own_name(turn, &calls[output_index].name);
                events.push(with(
                    &at,
                    json!({"type": "response.function_call_arguments.done", "name": name, "arguments": arguments}),
                ));
            }
        }
        events.push(json!({"type": "response.output_item.done", "output_index": output_index, "item": done}));
    }
    events.push(json!({"type": "response.completed", "response": response_object(turn, reply, usage, id, true)}));
    events
        .into_iter()
        .enumerate()
        .map(|(sequence_number, mut event)| {
            event["sequence_number"] = json!(sequence_number);
            let name = event["type"].as_str().unwrap_or_default().to_owned();
            frame(Some(&name), &event.to_string())
        })
        .collect()
}

/// The events of a message's text, at `at` (its item id and output index).
fn text_events(events: &mut Vec<Value>, at: &Value, text: &str) {
    let mut at = at.clone();
    at["content_index"] = json!(0);
    let at = &at;
    events.push(with(at, json!({"type": "response.content_part.added", "part": output_text("")})));
    for piece in pieces(text) {
        events.push(with(
            at,
            json!({"type": "response.output_text.delta", "delta": piece, "logprobs": []}),
        ));
    }
    events
        .push(with(at, json!({"type": "response.output_text.done", "text": text, "logprobs": []})));
    events.push(with(at, json!({"type": "response.content_part.done", "part": output_text(text)})));
}

/// `base`'s fields followed by `extra`'s (both objects).
fn with(base: &Value, extra: Value) -> Value {
    let mut merged = extra;
    if let (Some(merged), Some(base)) = (merged.as_object_mut(), base.as_object()) {
        for (key, value) in base {
            merged.insert(key.clone(), value.clone());
        }
    }
    merged
}

// Anthropic Messages.

fn anthropic_message(turn: &Turn, reply: &Reply, usage: Usage, id: usize) -> Value {
    let (content, stop_reason) = match reply {
        Reply::Text(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
        Reply::ToolCalls(calls) => {
            let blocks: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    json!({"type": "tool_use", "id": call_id("toolu_fake", id, index),
                           "name": call.name, "input": call.arguments})
                })
                .collect();
            (json!(blocks), "tool_use")
        }
    };
    json!({
        "id": format!("msg_fake_{id}"), "type": "message", "role": "assistant", "model": turn.model,
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": usage.input, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": usage.output},
    })
}

/// Anthropic events: `message_start`, each content block (start, `ping` after the first start,
/// deltas, stop),
/// `message_delta` with the stop reason and output tokens, `message_stop`.
fn anthropic_events(turn: &Turn, reply: &Reply, usage: Usage, id: usize) -> Vec<Bytes> {
    let mut message = anthropic_message(turn, reply, usage, id);
    message["content"] = json!([]);
    message["stop_reason"] = Value::Null;
    message["usage"]["output_tokens"] = json!(1);
    let mut events = vec![json!({"type": "message_start", "message": message})];
    let stop_reason = match reply {
        Reply::Text(text) => {
            events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
            events.push(json!({"type": "ping"}));
            for piece in pieces(text) {
                events.push(json!({"type": "content_block_delta", "index": 0,
                                   "delta": {"type": "text_delta", "text": piece}}));
            }
            events.push(json!({"type": "content_block_stop", "index": 0}));
            "end_turn"
        }
        Reply::ToolCalls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                let block = json!({"type": "tool_use", "id": call_id("toolu_fake", id, index),
                                   "name": call.name, "input": {}});
                events.push(
                    json!({"type": "content_block_start", "index": index, "content_block": block}),
                );
                if index == 0 {
                    events.push(json!({"type": "ping"}));
                }
                for piece in pieces(&call.arguments.to_string()) {
                    events.push(json!({"type": "content_block_delta", "index": index,
                                       "delta": {"type": "input_json_delta", "partial_json": piece}}));
                }
                events.push(json!({"type": "content_block_stop", "index": index}));
            }
            "tool_use"
        }
    };
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                       "usage": {"output_tokens": usage.output}}));
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|event| frame(Some(event["type"].as_str().unwrap_or_default()), &event.to_string()))
        .collect()
}

// Gemini.

fn gemini_parts(reply: &Reply) -> Value {
    match reply {
        Reply::Text(text) => json!([{"text": text}]),
        Reply::ToolCalls(calls) => calls
            .iter()
            .map(|call| json!({"functionCall": {"name": call.name, "args": call.arguments}}))
            .collect(),
    }
}

fn gemini_response(turn: &Turn, parts: &Value, last: bool, usage: Usage, id: usize) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut usage_metadata = json!({"promptTokenCount": usage.input});
    if last {
        candidate["finishReason"] = json!("STOP");
        usage_metadata = json!({"promptTokenCount": usage.input, "candidatesTokenCount": usage.output,
                                "totalTokenCount": usage.total()});
    }
    json!({"candidates": [candidate], "usageMetadata": usage_metadata,
           "modelVersion": turn.model, "responseId": format!("fake-{id}")})
}

/// Gemini chunks: each a whole `GenerateContentResponse`; the last carries `finishReason` and
/// the full usage. A function call comes whole, in one chunk.
fn gemini_chunks(turn: &Turn, reply: &Reply, usage: Usage, id: usize) -> Vec<Value> {
    match reply {
        Reply::Text(text) => {
            let pieces = pieces(text);
            let n_pieces = pieces.len();
            pieces
                .into_iter()
                .enumerate()
                .map(|(idx, piece)| {
                    gemini_response(turn, &json!([{"text": piece}]), idx + 1 == n_pieces, usage, id)
                })
                .collect()
        }
        Reply::ToolCalls(_) => {
            vec![gemini_response(turn, &gemini_parts(reply), true, usage, id)]
        }
    }
}

// SSE framing.

/// One SSE event: an optional `event:` line, one `data:` line, a blank line.
fn frame(event: Option<&str>, data: &str) -> Bytes {
    match event {
        Some(event) => Bytes::from(format!("event: {event}\ndata: {data}\n\n")),
        None => Bytes::from(format!("data: {data}\n\n")),
    }
}

/// Gemini's framing: `data:` lines ended by CRLF pairs.
fn frame_crlf(data: &Value) -> Bytes {
    Bytes::from(format!("data: {data}\r\n\r\n"))
}

/// A text cut into a few deltas (at most three), on character boundaries; never empty.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let size = chars.len().div_ceil(3).max(1);
    chars.chunks(size).map(|chunk| chunk.iter().collect()).collect()
}

fn openai_error_type(status: u16) -> &'static str {
    match status {
        400 | 404 | 422 => "invalid_request_error",
        401 | 403 => "authentication_error",
        429 => "rate_limit_exceeded",
        _ => "server_error",
    }
}

fn anthropic_error_type(status: u16) -> &'static str {
    match status {
        400 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fn gemini_error_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_back_to_the_text() {
        for text in ["", "a", "héllo wörld", "The command printed: atif-e2e-42"] {
            let pieces = pieces(text);
            assert!(pieces.len() <= 3 && !pieces.is_empty());
            assert_eq!(pieces.concat(), text);
        }
    }
}
