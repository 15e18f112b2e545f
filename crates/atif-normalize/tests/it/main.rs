//! Integration tests of atif-normalize, one module per source module, plus property tests.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly on purpose")]
#![allow(clippy::print_stderr, reason = "tests print skip notices")]

mod canonical;
mod diff;
mod documents;
mod explain;
mod matching;
mod normalize;
mod normalize_json;
mod path_placeholders;
mod properties;
mod shape;
mod strict_reader;

use std::path::PathBuf;

use atif_normalize::NormalizeOptions;
use serde_json::{Value, json};

/// A minimal valid trajectory around `steps`.
fn trajectory(steps: Value) -> Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "session_id": "sess-1",
        "trajectory_id": "traj-1",
        "agent": {"name": "demo", "version": "1.0", "model_name": "model-a"},
        "steps": steps,
    })
}

/// An agent step calling `function` with `call_id`, and its result.
fn call_step(step_id: u64, function: &str, call_id: &str) -> Value {
    json!({
        "step_id": step_id,
        "source": "agent",
        "message": format!("calling {function}"),
        "timestamp": format!("2026-01-01T00:00:{step_id:02}Z"),
        "tool_calls": [{"tool_call_id": call_id, "function_name": function, "arguments": {"q": "x"}}],
        "observation": {"results": [{"source_call_id": call_id, "content": "done"}]},
        "metrics": {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.01},
    })
}

/// `doc` normalised with the default options.
fn normalized(doc: &Value) -> Value {
    atif_normalize::normalize(doc, &NormalizeOptions::default()).unwrap()
}

/// The ATIF corpus folder, or `None` after printing a skip notice.
fn corpus_dir() -> Option<PathBuf> {
    atif_test_support::corpus("atif")
}

/// The JSON files of one corpus subfolder (`valid` or `invalid`), sorted.
fn corpus_files(atif: &std::path::Path, sub: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(atif.join(sub))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}
