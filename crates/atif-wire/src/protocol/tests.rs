//! Unit tests of the wire mapping, on hand-written requests, replies and streams of each
//! protocol.

use atif_schema::error_chain;
use serde_json::{Value, json};

use crate::protocol::{
    Protocol, SseEvent, StreamAssembler, gemini_model_from_path, parse_request, parse_response,
    parse_stream, request_body,
};
use crate::{
    Chunk, Error, FinishReason, LlmRequest, Message, Role, ToolCall, ToolDefinition, Usage,
};

use Protocol::{AnthropicMessages, Gemini, OpenAiChat, OpenAiResponses};

fn events(items: &[(Option<&str>, Value)]) -> Vec<SseEvent> {
    items.iter().map(|(name, data)| SseEvent::new(*name, data.clone())).collect()
}

fn unnamed(items: &[Value]) -> Vec<SseEvent> {
    items.iter().map(|data| SseEvent::new(None, data.clone())).collect()
}

/// Anthropic and Responses streams name each event after its `type`.
fn typed(items: &[Value]) -> Vec<SseEvent> {
    items.iter().map(|data| SseEvent::new(data["type"].as_str(), data.clone())).collect()
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

fn message_text(error: Error) -> String {
    error.to_string()
}

#[test]
fn request_paths_name_their_protocol() {
    assert_eq!(Protocol::from_path("/v1/chat/completions"), Some(OpenAiChat));
    assert_eq!(Protocol::from_path("/v1/responses"), Some(OpenAiResponses));
    assert_eq!(Protocol::from_path("/v1/messages?beta=true"), Some(AnthropicMessages));
    assert_eq!(Protocol::from_path("/v1/messages/count_tokens"), None);
    assert_eq!(
        Protocol::from_path("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"),
        Some(Gemini)
    );
    assert_eq!(Protocol::from_path("/v1/models"), None);
    assert_eq!(
        gemini_model_from_path("/v1beta/models/gemini-2.5-pro:generateContent"),
        Some("gemini-2.5-pro")
    );
    assert_eq!(gemini_model_from_path("/v1/chat/completions"), None);
}

// --- OpenAI Chat Completions -------------------------------------------------------------

#[test]
fn a_chat_completion_maps_onto_the_response() {
    let raw = json!({
        "id": "chatcmpl-1",
        "model": "gpt-4.1-2025-04-14",
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
        "usage": {
            "prompt_tokens": 120, "completion_tokens": 9,
            "prompt_tokens_details": {"cached_tokens": 64},
            "completion_tokens_details": {"reasoning_tokens": 4}
        }
    });
    let response = parse_response(OpenAiChat, &raw).unwrap();
    assert_eq!(response.content, None);
    assert_eq!(response.tool_calls, [call("call_abc", "calculator", json!({"expression": "2+2"}))]);
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(120, 9, 64).with_reasoning_tokens(4));
    assert_eq!(response.model.as_deref(), Some("gpt-4.1-2025-04-14"));
    assert_eq!(response.raw.as_ref(), Some(&raw));
}

#[test]
fn a_chat_stream_assembles_parallel_calls_split_across_deltas_with_usage_at_the_end() {
    let chunk = |delta: Value, finish: Value| json!({"object": "chat.completion.chunk", "model": "gpt-4.1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let stream = unnamed(&[
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"reasoning_content": "two sums"}), Value::Null),
        chunk(json!({"content": "Let me "}), Value::Null),
        chunk(json!({"content": "add."}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "add", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\": "}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "add", "arguments": "{\"a\""}}]}),
            Value::Null,
        ),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": ": 2}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        json!({"object": "chat.completion.chunk", "model": "gpt-4.1", "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 10}}}),
        json!("[DONE]"),
    ]);
    let response = parse_stream(OpenAiChat, &stream).unwrap();
    assert_eq!(response.text(), "Let me add.");
    assert_eq!(response.reasoning.as_deref(), Some("two sums"));
    assert_eq!(
        response.tool_calls,
        [call("call_a", "add", json!({"a": 1})), call("call_b", "add", json!({"a": 2}))]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(50, 20, 10));
    assert_eq!(response.model.as_deref(), Some("gpt-4.1"));

    let mut assembler = StreamAssembler::new(OpenAiChat);
    let mut deltas = Vec::new();
    for event in &stream {
        deltas.extend(assembler.push(event).unwrap());
    }
    assert!(assembler.is_complete());
    assert_eq!(
        deltas,
        [
            Chunk::Reasoning { text: "two sums".to_owned() },
            Chunk::Text { text: "Let me ".to_owned() },
            Chunk::Text { text: "add.".to_owned() },
        ]
    );
}

#[test]
fn a_chat_stream_cut_before_done_is_read_but_not_complete() {
    let stream = unnamed(&[json!({"choices": [{"index": 0, "delta": {"content": "hel"}}]})]);
    let mut assembler = StreamAssembler::new(OpenAiChat);
    assembler.push(&stream[0]).unwrap();
    assert!(!assembler.is_complete());
    assert_eq!(assembler.finish().unwrap().text(), "hel");
}

#[test]
fn a_chat_request_maps_prompts_calls_results_tools_and_parameters() {
    let body = json!({
        "model": "gpt-4.1",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}, {"type": "image_url", "image_url": {"url": "data:"}}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":2}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "4"}
        ],
        "tools": [{"type": "function", "function": {"name": "add", "description": "Adds.", "parameters": {"type": "object"}}}],
        "tool_choice": "auto",
        "temperature": 0.2,
        "stream": true,
        "stream_options": {"include_usage": true}
    });
    let request = parse_request(OpenAiChat, &body).unwrap();
    assert_eq!(request.model.as_deref(), Some("gpt-4.1"));
    let mut assistant = Message::new(Role::Assistant, "");
    assistant.tool_calls.push(call("call_1", "add", json!({"a": 2, "b": 2})));
    assert_eq!(
        request.messages,
        [
            Message::system("Be brief."),
            Message::user("What is 2+2?"),
            assistant,
            Message::tool_result("call_1", "4"),
        ]
    );
    assert_eq!(request.tools, [ToolDefinition::new("add", "Adds.", json!({"type": "object"}))]);
    assert_eq!(
        request.params.keys().collect::<Vec<_>>(),
        ["temperature", "tool_choice"],
        "the streaming switches are transport, not parameters"
    );
}

#[test]
fn malformed_chat_input_names_the_place_and_what_was_expected() {
    let err = parse_response(OpenAiChat, &json!({"choices": []})).unwrap_err();
    assert_eq!(
        message_text(err),
        "malformed OpenAI Chat Completions reply at /choices/0/message: missing"
    );
    let err = parse_response(OpenAiChat, &json!([1])).unwrap_err();
    assert_eq!(
        message_text(err),
        "malformed OpenAI Chat Completions reply at /: expected a JSON object, found an array"
    );
    let stream = unnamed(&[json!({"choices": []}), json!("not json")]);
    let err = parse_stream(OpenAiChat, &stream).unwrap_err();
    assert_eq!(
        message_text(err),
        "malformed OpenAI Chat Completions stream at /events/1/data: expected a JSON object or \
         [DONE], found a string"
    );
    let stream = unnamed(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}]}),
        json!("[DONE]"),
    ]);
    let err = parse_stream(OpenAiChat, &stream).unwrap_err();
    assert_eq!(
        message_text(err),
        "malformed OpenAI Chat Completions stream at /events/0/data/choices/0/delta/tool_calls/0: \
         the tool call never got its name"
    );
    let err = parse_request(OpenAiChat, &json!({"messages": [{"role": "robot"}]})).unwrap_err();
    assert!(message_text(err).starts_with(
        "malformed OpenAI Chat Completions request at /messages/0/role: expected \"system\""
    ));
    let err = parse_request(OpenAiChat, &json!({"messages": {"role": "user"}})).unwrap_err();
    assert_eq!(
        message_text(err),
        "malformed OpenAI Chat Completions request at /messages: expected an array, found an object"
    );
}

#[test]
fn a_provider_error_in_a_reply_or_a_stream_is_a_provider_error() {
    let raw = json!({"error": {"type": "invalid_request_error", "message": "bad model"}});
    let err = parse_response(OpenAiChat, &raw).unwrap_err();
    assert!(matches!(err, Error::Provider { .. }), "{err:?}");
    assert_eq!(error_chain(&err), "model provider error: invalid_request_error: bad model");
    let stream = typed(&[
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let err = parse_stream(AnthropicMessages, &stream).unwrap_err();
    assert_eq!(error_chain(&err), "model provider error: overloaded_error: Overloaded");
}

// --- OpenAI Responses --------------------------------------------------------------------

#[test]
fn a_responses_reply_maps_reasoning_text_calls_and_usage() {
    let raw = json!({
        "id": "resp_1",
        "object": "response",
        "model": "o4-mini-2025-04-16",
        "status": "completed",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "First."}, {"type": "summary_text", "text": "Second."}]},
            {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}", "status": "completed"}
        ],
        "usage": {
            "input_tokens": 300, "input_tokens_details": {"cached_tokens": 100},
            "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 25}, "total_tokens": 340
        }
    });
    let response = parse_response(OpenAiResponses, &raw).unwrap();
    assert_eq!(response.reasoning.as_deref(), Some("First.\n\nSecond."));
    assert_eq!(response.text(), "Checking.");
    assert_eq!(response.tool_calls, [call("call_1", "shell", json!({"cmd": "ls"}))]);
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(300, 40, 100).with_reasoning_tokens(25));
    assert_eq!(response.model.as_deref(), Some("o4-mini-2025-04-16"));
}

#[test]
fn an_incomplete_response_stopped_at_the_token_limit() {
    let raw = json!({
        "model": "gpt-4.1", "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Once upon"}]}]
    });
    let response = parse_response(OpenAiResponses, &raw).unwrap();
    assert_eq!(response.finish_reason, FinishReason::Length);
    assert_eq!(response.text(), "Once upon");
}

#[test]
fn a_responses_stream_assembles_parallel_calls_and_takes_usage_from_the_completed_event() {
    let stream = typed(&[
        json!({"type": "response.created", "response": {"model": "gpt-5", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "Plan"}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 1, "delta": "Act"}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "Two "}),
        json!({"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "calls."}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call", "call_id": "call_x", "name": "read", "arguments": ""}}),
        json!({"type": "response.output_item.added", "output_index": 3, "item": {"type": "function_call", "call_id": "call_y", "name": "read", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 3, "delta": "{\"path\":"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{\"path\":\"a\"}"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 3, "delta": "\"b\"}"}),
        json!({"type": "response.completed", "response": {
            "model": "gpt-5-2025-08-07", "status": "completed", "output": [],
            "usage": {"input_tokens": 80, "output_tokens": 30, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 12}}
        }}),
    ]);
    let response = parse_stream(OpenAiResponses, &stream).unwrap();
    assert_eq!(response.reasoning.as_deref(), Some("Plan\n\nAct"));
    assert_eq!(response.text(), "Two calls.");
    assert_eq!(
        response.tool_calls,
        [
            call("call_x", "read", json!({"path": "a"})),
            call("call_y", "read", json!({"path": "b"}))
        ]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(80, 30, 0).with_reasoning_tokens(12));
    assert_eq!(response.model.as_deref(), Some("gpt-5-2025-08-07"));
}

#[test]
fn a_responses_stream_of_only_a_completed_event_reads_its_output() {
    let stream = typed(&[json!({"type": "response.completed", "response": {
        "model": "gpt-5", "status": "completed",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]
    }})]);
    assert_eq!(parse_stream(OpenAiResponses, &stream).unwrap().text(), "Done.");
}

#[test]
fn a_responses_request_maps_instructions_items_and_outputs() {
    let body = json!({
        "model": "gpt-5",
        "instructions": "You are a coding agent.",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List files."}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"},
            {"type": "function_call", "call_id": "call_2", "name": "shell", "arguments": "{\"cmd\":\"pwd\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
            {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "/work"}]}
        ],
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object"}}, {"type": "web_search"}],
        "tool_choice": "auto",
        "reasoning": {"effort": "low"},
        "stream": true
    });
    let request = parse_request(OpenAiResponses, &body).unwrap();
    let mut assistant = Message::new(Role::Assistant, "");
    assistant.tool_calls = vec![
        call("call_1", "shell", json!({"cmd": "ls"})),
        call("call_2", "shell", json!({"cmd": "pwd"})),
    ];
    assert_eq!(
        request.messages,
        [
            Message::system("You are a coding agent."),
            Message::user("List files."),
            assistant,
            Message::tool_result("call_1", "a.txt"),
            Message::tool_result("call_2", "/work"),
        ]
    );
    let names: Vec<&str> = request.tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["shell", "web_search"]);
    assert_eq!(request.params.keys().collect::<Vec<_>>(), ["reasoning", "tool_choice"]);
}

#[test]
fn malformed_responses_input_names_the_event() {
    let stream = typed(&[
        json!({"type": "response.function_call_arguments.delta", "output_index": 4, "delta": "{"}),
    ]);
    let err = parse_stream(OpenAiResponses, &stream).unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed OpenAI Responses stream at /events/0/data/output_index: an arguments delta for \
         output item 4, which no response.output_item.added opened as a function call"
    );
    let err = parse_response(OpenAiResponses, &json!({"output": "text"})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed OpenAI Responses reply at /output: expected an array of output items, found a \
         string"
    );
    let failed = json!({"type": "response.failed", "response": {"status": "failed", "error": {"message": "rate limited"}}});
    let err = parse_stream(OpenAiResponses, &typed(&[failed])).unwrap_err();
    assert_eq!(error_chain(&err), "model provider error: rate limited");
}

// --- Anthropic Messages ------------------------------------------------------------------

#[test]
fn an_anthropic_reply_maps_onto_the_response_with_cached_input_counted_in() {
    let raw = json!({
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "thinking", "thinking": "add them", "signature": "x"},
            {"type": "text", "text": "Let me compute."},
            {"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": {"expression": "2+2"}}
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 20, "output_tokens": 15, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5}
    });
    let response = parse_response(AnthropicMessages, &raw).unwrap();
    assert_eq!(response.text(), "Let me compute.");
    assert_eq!(response.reasoning.as_deref(), Some("add them"));
    assert_eq!(response.tool_calls, [call("toolu_1", "calculator", json!({"expression": "2+2"}))]);
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(125, 15, 100));
    assert_eq!(response.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
}

#[test]
fn anthropic_counts_whose_sum_overflows_saturate_instead_of_panicking() {
    let raw = json!({
        "content": [{"type": "text", "text": "hi"}],
        "usage": {"input_tokens": u64::MAX, "output_tokens": 1, "cache_read_input_tokens": 2, "cache_creation_input_tokens": 3}
    });
    let response = parse_response(AnthropicMessages, &raw).unwrap();
    assert_eq!(response.usage, Usage::new(u64::MAX, 1, 2));
}

#[test]
fn an_anthropic_stream_assembles_thinking_text_and_parallel_tool_inputs() {
    let stream = typed(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude-haiku-4-5", "content": [], "usage": {"input_tokens": 40, "cache_read_input_tokens": 60, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Two files"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "abc"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Reading both."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\": \"a"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ".txt\"}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_b", "name": "Read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\": \"b.txt\"}"}}),
        json!({"type": "content_block_stop", "index": 3}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 33}}),
        json!({"type": "message_stop"}),
    ]);
    let response = parse_stream(AnthropicMessages, &stream).unwrap();
    assert_eq!(response.reasoning.as_deref(), Some("Two files"));
    assert_eq!(response.text(), "Reading both.");
    assert_eq!(
        response.tool_calls,
        [
            call("toolu_a", "Read", json!({"file_path": "a.txt"})),
            call("toolu_b", "Read", json!({"file_path": "b.txt"})),
        ]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(100, 33, 60), "input from the start, output at the end");
    assert_eq!(response.model.as_deref(), Some("claude-haiku-4-5"));
}

#[test]
fn anthropic_and_responses_events_without_a_type_field_are_read_by_their_event_name() {
    let anthropic = events(&[
        (
            Some("content_block_start"),
            json!({"index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"index": 0, "delta": {"type": "text_delta", "text": "Hi."}}),
        ),
        (Some("message_delta"), json!({"delta": {"stop_reason": "end_turn"}})),
        (Some("message_stop"), json!({})),
    ]);
    let response = parse_stream(AnthropicMessages, &anthropic).unwrap();
    assert_eq!(response.text(), "Hi.");
    assert_eq!(response.finish_reason, FinishReason::Stop);
    let responses = events(&[
        (Some("response.output_text.delta"), json!({"output_index": 0, "delta": "Hi."})),
        // The field wins over the event name where both are sent.
        (
            Some("response.output_text.delta"),
            json!({"type": "ping", "output_index": 0, "delta": "No."}),
        ),
    ]);
    assert_eq!(parse_stream(OpenAiResponses, &responses).unwrap().text(), "Hi.");
}

#[test]
fn an_anthropic_tool_without_input_deltas_keeps_its_start_input() {
    let stream = typed(&[
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Now", "input": {}}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ]);
    let response = parse_stream(AnthropicMessages, &stream).unwrap();
    assert_eq!(response.tool_calls, [call("toolu_1", "Now", json!({}))]);
}

#[test]
fn an_anthropic_request_maps_system_blocks_results_and_calls() {
    let body = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": [{"type": "text", "text": "You are Claude Code."}, {"type": "text", "text": "Be careful.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "Read a.txt"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "…", "signature": "s"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.txt"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "hello"}]},
                {"type": "text", "text": "Now summarise."}
            ]}
        ],
        "tools": [{"name": "Read", "description": "Reads a file.", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "auto"},
        "temperature": 1,
        "metadata": {"user_id": "u"}
    });
    let request = parse_request(AnthropicMessages, &body).unwrap();
    let mut assistant = Message::new(Role::Assistant, "Reading.");
    assistant.tool_calls.push(call("toolu_1", "Read", json!({"file_path": "a.txt"})));
    assert_eq!(
        request.messages,
        [
            Message::system("You are Claude Code.\nBe careful."),
            Message::user("Read a.txt"),
            assistant,
            Message::tool_result("toolu_1", "hello"),
            Message::user("Now summarise."),
        ]
    );
    assert_eq!(
        request.tools,
        [ToolDefinition::new("Read", "Reads a file.", json!({"type": "object"}))]
    );
    assert_eq!(
        request.params.keys().collect::<Vec<_>>(),
        ["max_tokens", "metadata", "temperature", "tool_choice"]
    );
}

#[test]
fn malformed_anthropic_input_names_the_place() {
    let err =
        parse_response(AnthropicMessages, &json!({"content": [{"type": "tool_use", "id": 7}]}))
            .unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed Anthropic Messages reply at /content/0/id: expected a string, found a number"
    );
    let stream = typed(&[
        json!({"type": "message_start", "message": {"model": "m", "usage": {}}}),
        json!({"type": "content_block_delta", "index": 5, "delta": {"type": "input_json_delta", "partial_json": "{"}}),
    ]);
    let err = parse_stream(AnthropicMessages, &stream).unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed Anthropic Messages stream at /events/1/data/index: a tool-input delta for \
         content block 5, which no content_block_start opened as a tool_use block"
    );
    let err =
        parse_request(AnthropicMessages, &json!({"messages": [{"role": "user", "content": 3}]}))
            .unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed Anthropic Messages request at /messages/0/content: expected a string or an \
         array of blocks, found a number"
    );
}

// --- Gemini ------------------------------------------------------------------------------

#[test]
fn a_gemini_reply_maps_thoughts_calls_and_usage_and_names_calls_by_position() {
    let raw = json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"text": "Look at both.", "thought": true},
                {"text": "Reading."},
                {"functionCall": {"name": "read_file", "args": {"path": "a"}}},
                {"functionCall": {"name": "read_file", "args": {"path": "b"}}}
            ]},
            "finishReason": "STOP"
        }],
        "usageMetadata": {"promptTokenCount": 90, "candidatesTokenCount": 20, "thoughtsTokenCount": 7, "cachedContentTokenCount": 30, "totalTokenCount": 117},
        "modelVersion": "gemini-2.5-flash"
    });
    let response = parse_response(Gemini, &raw).unwrap();
    assert_eq!(response.reasoning.as_deref(), Some("Look at both."));
    assert_eq!(response.text(), "Reading.");
    assert_eq!(
        response.tool_calls,
        [
            call("call_1", "read_file", json!({"path": "a"})),
            call("call_2", "read_file", json!({"path": "b"})),
        ]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage, Usage::new(90, 27, 30).with_reasoning_tokens(7));
    assert_eq!(response.model.as_deref(), Some("gemini-2.5-flash"));
}

#[test]
fn a_gemini_stream_concatenates_pieces_and_keeps_the_last_usage() {
    let stream = unnamed(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}], "usageMetadata": {"promptTokenCount": 10}, "modelVersion": "gemini-2.5-pro"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"id": "fc-9", "name": "ls", "args": {}}}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 6}}),
    ]);
    let mut assembler = StreamAssembler::new(Gemini);
    let mut texts = Vec::new();
    for event in &stream {
        texts.extend(assembler.push(event).unwrap());
    }
    assert!(assembler.is_complete());
    let response = assembler.finish().unwrap();
    assert_eq!(texts.len(), 2);
    assert_eq!(response.text(), "Hello");
    assert_eq!(response.tool_calls, [call("fc-9", "ls", json!({}))]);
    assert_eq!(response.usage, Usage::new(10, 6, 0));
    assert_eq!(response.model.as_deref(), Some("gemini-2.5-pro"));
}

#[test]
fn a_gemini_request_joins_results_to_calls_by_name_when_neither_has_an_id() {
    let body = json!({
        "systemInstruction": {"parts": [{"text": "You are helpful."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Read a and b."}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "read_file", "args": {"path": "a"}}},
                {"functionCall": {"name": "stat", "args": {"path": "b"}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "stat", "response": {"output": "12 bytes"}}},
                {"functionResponse": {"name": "read_file", "response": {"content": "x", "lines": 1}}}
            ]}
        ],
        "tools": [{"functionDeclarations": [{"name": "read_file", "parameters": {"type": "object"}}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {"temperature": 0}
    });
    let request = parse_request(Gemini, &body).unwrap();
    let mut assistant = Message::new(Role::Assistant, "");
    assistant.tool_calls = vec![
        call("call_1", "read_file", json!({"path": "a"})),
        call("call_2", "stat", json!({"path": "b"})),
    ];
    assert_eq!(
        request.messages,
        [
            Message::system("You are helpful."),
            Message::user("Read a and b."),
            assistant,
            Message::tool_result("call_2", "12 bytes"),
            Message::tool_result("call_1", r#"{"content":"x","lines":1}"#),
        ]
    );
    assert_eq!(request.params.keys().collect::<Vec<_>>(), ["generationConfig", "toolConfig"]);
}

#[test]
fn a_gemini_stream_fetched_as_one_json_array_reads_as_the_stream() {
    let body = json!([
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}}
    ]);
    let response = parse_response(Gemini, &body).unwrap();
    assert_eq!(response.text(), "Hello");
    assert_eq!(response.usage, Usage::new(4, 2, 0));
    let err = parse_response(OpenAiChat, &body).unwrap_err();
    assert!(err.to_string().contains("expected a JSON object, found an array"), "{err}");
}

#[test]
fn malformed_gemini_input_names_the_place() {
    let err = parse_response(Gemini, &json!({"candidates": {"content": {}}})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed Gemini generateContent reply at /candidates: expected an array, found an object"
    );
    let stream = unnamed(&[
        json!({"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]}),
    ]);
    let err = parse_stream(Gemini, &stream).unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed Gemini generateContent stream at \
         /events/0/data/candidates/0/content/parts/0/functionCall/name: missing"
    );
}

// --- Writing requests --------------------------------------------------------------------

#[test]
fn a_written_request_reads_back_as_the_same_request_in_every_protocol() {
    let mut assistant = Message::new(Role::Assistant, "Adding.");
    assistant.tool_calls = vec![
        call("call_1", "add", json!({"a": 1, "b": 2})),
        call("call_2", "add", json!({"a": 3, "b": 4})),
    ];
    let request = LlmRequest::new(vec![
        Message::system("Be exact."),
        Message::user("Add 1+2 and 3+4."),
        assistant,
        Message::tool_result("call_1", "3"),
        Message::tool_result("call_2", "7"),
    ])
    .with_tools(vec![ToolDefinition::new(
        "add",
        "Adds two numbers.",
        json!({"type": "object"}),
    )]);
    for protocol in [OpenAiChat, OpenAiResponses, AnthropicMessages, Gemini] {
        let mut expected = request.clone().with_param("temperature", json!(0));
        if protocol != Gemini {
            expected.model = Some("m-1".to_owned());
        }
        if protocol == AnthropicMessages {
            expected.params.insert("max_tokens".to_owned(), json!(4096));
        }
        let mut sent = request.clone().with_param("temperature", json!(0));
        sent.model = Some("m-1".to_owned());
        let body = request_body(protocol, &sent, true);
        let read = parse_request(protocol, &body).unwrap();
        assert_eq!(read, expected, "{protocol}: {body:#}");
    }
}

#[test]
fn a_streamed_chat_request_asks_for_usage() {
    let request = LlmRequest::new(vec![Message::user("hi")]);
    let body = request_body(OpenAiChat, &request, true);
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert!(request_body(OpenAiChat, &request, false).get("stream").is_none());
}

#[test]
fn hostile_streams_never_panic() {
    let odd = [
        json!(null),
        json!(1),
        json!({"choices": 3}),
        json!({"choices": [{"delta": {"tool_calls": [7]}}]}),
        json!({"type": "content_block_start", "index": -1}),
        json!({"type": "content_block_delta", "index": 0, "delta": 3}),
        json!({"type": "response.output_item.added", "output_index": "x", "item": {}}),
        json!({"type": "response.completed", "response": {"output": [{"type": 1}]}}),
        json!({"candidates": [{"content": {"parts": "x"}}]}),
        json!({"candidates": [{"content": {"parts": [{"functionCall": 5}]}}]}),
        json!({"usage": "lots", "usageMetadata": [1]}),
    ];
    for protocol in [OpenAiChat, OpenAiResponses, AnthropicMessages, Gemini] {
        for data in &odd {
            let stream = events(&[(Some("message"), data.clone())]);
            // Each either reads as something or fails with an error naming the place.
            if let Err(err) = parse_stream(protocol, &stream) {
                assert!(err.to_string().contains("/events/0/data"), "{protocol}: {err}");
            }
            let _ = parse_response(protocol, data);
            let _ = parse_request(protocol, data);
        }
    }
}
