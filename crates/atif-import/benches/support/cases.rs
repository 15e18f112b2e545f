//! The import bench's synthetic input and its floor, shared with the `import_profile` example
//! so that instruction counts and wall-clock times measure the same work.
#![allow(clippy::unwrap_used, reason = "the floor parses input it generated or knows to be JSON")]

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
