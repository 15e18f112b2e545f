//! Integration tests of envelope goldens: building and reading them, the verdict on crafted
//! runs, and the calibration of its error rates on a seeded model of a sampling agent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, reason = "test code")]

mod calibration;
mod envelope;
mod verdict;

use atif_envelope::Run;
use atif_normalize::NormalizeOptions;
use serde_json::{Value, json};

/// A trajectory with one agent step per entry of `steps` (each the tools it calls), the given
/// token counts on the first step, and `extra.crashed` when `crashed`.
fn trajectory(steps: &[&[&str]], tokens: (u64, u64), crashed: bool) -> Value {
    let steps: Vec<Value> = steps
        .iter()
        .enumerate()
        .map(|(idx, tools)| {
            let calls: Vec<Value> = tools
                .iter()
                .enumerate()
                .map(|(call_idx, name)| {
                    json!({"tool_call_id": format!("call_{idx}_{call_idx}"), "function_name": name, "arguments": {"path": "a.txt"}})
                })
                .collect();
            let mut step = json!({
                "step_id": idx + 1, "source": "agent", "message": format!("step {idx}"),
                "timestamp": "2026-12-03T00:00:00Z", "tool_calls": calls,
            });
            if idx == 0 {
                step["metrics"] = json!({"prompt_tokens": tokens.0, "completion_tokens": tokens.1});
            }
            step
        })
        .collect();
    let mut doc = json!({
        "schema_version": "ATIF-v1.8",
        "session_id": "session-1",
        "agent": {"name": "demo", "version": "1", "model_name": "m-1"},
        "steps": steps,
    });
    if crashed {
        doc["extra"] = json!({"crashed": true});
    }
    doc
}

/// `n` runs labelled `run 1`…, each from `make(i)`.
fn runs(n: usize, make: impl Fn(usize) -> Value) -> Vec<Run> {
    let options = NormalizeOptions::default();
    (0..n).map(|i| Run::new(&format!("run {}", i + 1), make(i), &options).unwrap()).collect()
}
