//! Integration tests of the golden protocol: real files in temp dirs, every mode forced through
//! `Settings` so the tests behave the same under `ATIF_GOLDEN=update` and on CI.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

mod check;
mod file;
#[cfg(feature = "insta")]
mod insta;
mod live;
mod macros;
mod matching;
mod pending;

use atif_golden::{Mode, Settings};
use atif_test_support::file_names;
use serde_json::{Value, json};

/// A small trajectory: `n_steps` agent steps, each calling `function`, with volatile fields that
/// differ between `run_id`s.
fn run(n_steps: usize, function: &str, run_id: &str) -> Value {
    let steps: Vec<Value> = (1..=n_steps)
        .map(|step_id| {
            let call = format!("call_{run_id}_{step_id}");
            json!({
                "step_id": step_id,
                "source": "agent",
                "timestamp": format!("2026-01-0{}T00:00:00Z", step_id % 9 + 1),
                "message": format!("step {step_id}"),
                "tool_calls": [{"tool_call_id": call, "function_name": function, "arguments": {"q": step_id}}],
                "observation": {"results": [{"source_call_id": call, "content": "ok"}]},
                "metrics": {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.01},
            })
        })
        .collect();
    json!({
        "schema_version": "ATIF-v1.8",
        "session_id": format!("session-{run_id}"),
        "agent": {"name": "demo", "version": "1.0", "model_name": "m-1"},
        "steps": steps,
    })
}

/// Settings that force `mode`.
fn settings(mode: Mode) -> Settings {
    let mut settings = Settings::new();
    settings.set_mode(Some(mode));
    settings
}
