//! The import benches' synthetic inputs and their floors, shared with the `import_profile`
//! example so that instruction counts and wall-clock times measure the same work.
#![allow(clippy::unwrap_used, reason = "the floor parses input it generated or knows to be JSON")]
#![allow(dead_code, reason = "each bench uses its own input; the example uses them all")]

use serde_json::{Value, json};

/// A synthetic Codex 0.40 rollout of at least `size` bytes: a `session_meta`, then groups of a
/// `token_count`, a reasoning item with 2 kB of encrypted content, a function call and its
/// wrapped output.
pub(crate) fn synthetic_rollout(size: usize) -> Vec<u8> {
    let mut log = String::new();
    log.push_str(&json!({"timestamp": "2025-09-25T02:12:23.966Z", "type": "session_meta", "payload": {"id": "s", "cli_version": "0.40.0"}}).to_string());
    log.push('\n');
    let mut i = 0u64;
    while log.len() < size {
        let usage =
            json!({"input_tokens": 4000, "cached_input_tokens": 3000, "output_tokens": 200});
        for line in [
            json!({"timestamp": "2025-09-25T02:12:24.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": usage, "total_token_usage": {"input_tokens": 4000 * (i + 1)}}}}),
            json!({"timestamp": "2025-09-25T02:12:24.000Z", "type": "response_item", "payload": {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Thinking about the next step**"}], "encrypted_content": "g".repeat(2000)}}),
            json!({"timestamp": "2025-09-25T02:12:24.000Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"bash\",\"-lc\",\"ls\"]}", "call_id": format!("call_{i}")}}),
            json!({"timestamp": "2025-09-25T02:12:24.000Z", "type": "response_item", "payload": {"type": "function_call_output", "call_id": format!("call_{i}"), "output": "{\"output\":\"a\\nb\\n\",\"metadata\":{\"exit_code\":0}}".repeat(20)}}),
        ] {
            log.push_str(&line.to_string());
            log.push('\n');
        }
        i += 1;
    }
    log.into_bytes()
}

/// The floor: split into lines and parse each as JSON.
pub(crate) fn parse_lines(bytes: &[u8]) -> usize {
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice::<Value>(line).unwrap())
        .filter(Value::is_object)
        .count()
}

/// The floor of an OpenTelemetry trace: parse the document as JSON.
pub(crate) fn parse_document(bytes: &[u8]) -> usize {
    usize::from(serde_json::from_slice::<Value>(bytes).unwrap().is_object())
}

fn attribute(key: &str, value: &str) -> Value {
    json!({ "key": key, "value": { "stringValue": value } })
}

/// One OTLP/JSON export request of `n_spans` spans, on one line: an agent span, then per model
/// call a model-call span with GenAI-conventions messages (a three-message history as JSON
/// text, as real spans repeat the conversation) and the tool span that answers it.
pub(crate) fn otel_trace(n_spans: usize) -> Vec<u8> {
    let mut spans = vec![json!({
        "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "a0", "name": "invoke_agent bench",
        "startTimeUnixNano": "1700000000000000000",
        "attributes": [attribute("gen_ai.operation.name", "invoke_agent"), attribute("gen_ai.agent.name", "bench")],
    })];
    for call in 0..n_spans.saturating_sub(1) / 2 {
        let input = json!([
            {"role": "user", "parts": [{"type": "text", "content": "List the files."}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": format!("c{}", call.saturating_sub(1)), "name": "bash", "arguments": "{\"command\":\"ls\"}"}]},
            {"role": "user", "parts": [{"type": "tool_call_response", "id": format!("c{}", call.saturating_sub(1)), "result": "a.txt"}]},
        ]);
        let output = json!([{"role": "assistant", "parts": [{"type": "tool_call", "id": format!("c{call}"), "name": "bash", "arguments": "{\"command\":\"ls\"}"}]}]);
        let start = (1_700_000_000_000_000_000_u64 + call as u64 * 2_000_000).to_string();
        spans.push(json!({
            "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": format!("m{call}"), "parentSpanId": "a0",
            "name": "chat m", "startTimeUnixNano": start,
            "attributes": [
                attribute("gen_ai.operation.name", "chat"),
                attribute("gen_ai.input.messages", &input.to_string()),
                attribute("gen_ai.output.messages", &output.to_string()),
                { "key": "gen_ai.usage.input_tokens", "value": { "intValue": "120" } },
            ],
        }));
        spans.push(json!({
            "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": format!("t{call}"), "parentSpanId": "a0",
            "name": "execute_tool bash", "startTimeUnixNano": start,
            "attributes": [
                attribute("gen_ai.operation.name", "execute_tool"), attribute("gen_ai.tool.name", "bash"),
                attribute("gen_ai.tool.call.id", &format!("c{call}")), attribute("gen_ai.tool.call.result", "a.txt"),
            ],
        }));
    }
    let request = json!({ "resourceSpans": [{ "scopeSpans": [{ "scope": { "name": "bench" }, "spans": spans }] }] });
    request.to_string().into_bytes()
}
