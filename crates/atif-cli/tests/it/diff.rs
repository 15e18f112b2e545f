//! Tests of `atif diff`: the JSON report of a long run is as short as the text one.
#![allow(clippy::unwrap_used, reason = "test helpers")]

use serde_json::{Value, json};

use crate::{atif_command, stderr, stdout};

/// A run of `n_steps` agent steps, each calling `function(step)` and quoting `note` in its
/// result.
fn run(n_steps: usize, function: impl Fn(usize) -> String, note: &str) -> Value {
    let steps: Vec<Value> = (1..=n_steps)
        .map(|step_id| {
            let call = format!("call_{step_id}");
            json!({
                "step_id": step_id,
                "source": "agent",
                "message": format!("step {step_id}"),
                "tool_calls": [{"tool_call_id": call, "function_name": function(step_id), "arguments": {"n": step_id}}],
                "observation": {"results": [{"source_call_id": call, "content": format!("{note} {step_id}")}]},
            })
        })
        .collect();
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "long-agent", "version": "1", "model_name": "m-1"},
        "steps": steps,
    })
}

/// `atif diff --format json [extra] golden.json actual.json`, its exit code and its document.
fn diff_json(golden: &Value, actual: &Value, extra: &[&str]) -> (Option<i32>, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("golden.json"), golden.to_string()).unwrap();
    std::fs::write(dir.path().join("actual.json"), actual.to_string()).unwrap();
    let mut command = atif_command(&["diff", "--format", "json"]);
    command.args(extra).args(["golden.json", "actual.json"]).current_dir(dir.path());
    let output = command.output().unwrap();
    let text = stdout(&output);
    let doc = serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("{err}: {text}{}", stderr(&output)));
    (output.status.code(), text, doc)
}

#[test]
fn the_json_diff_of_a_long_run_with_one_inserted_step_is_short_and_names_the_step() {
    let golden = run(1500, |_| "read_file".to_owned(), "ok");
    let mut actual = golden.clone();
    let steps = actual["steps"].as_array_mut().unwrap();
    steps.insert(
        700,
        json!({"step_id": 701, "source": "agent", "message": "probing",
               "tool_calls": [{"tool_call_id": "p", "function_name": "inserted_probe_tool", "arguments": {}}],
               "observation": {"results": [{"source_call_id": "p", "content": "probe"}]}}),
    );
    for (idx, step) in steps.iter_mut().enumerate() {
        step["step_id"] = json!(idx + 1);
    }
    let (code, text, doc) = diff_json(&golden, &actual, &[]);
    assert_eq!(code, Some(1));
    assert!(text.len() < 12_000, "{} bytes: {text}", text.len());
    assert_eq!(doc["steps"].as_array().unwrap().len(), 1, "{text}");
    assert_eq!(doc["steps"][0]["kind"], "inserted");
    assert_eq!(doc["steps"][0]["actual_step"], 701);
    assert_eq!(doc["more_steps"], 0);
    let functions = doc["deltas"].as_array().unwrap().iter().find(|d| d["field"] == "functions");
    let functions = functions.unwrap();
    assert_eq!(
        functions["text"], "functions: step 701 added inserted_probe_tool (1,500 -> 1,501 calls)",
        "{text}"
    );
    assert!(functions.get("golden").is_none(), "{functions}");
    let diff = doc["diff"].as_str().unwrap();
    assert!(
        diff.starts_with("--- golden.json\n+++ actual.json\n@@ step 701 inserted @@\n"),
        "{diff}"
    );
    assert!(diff.contains("inserted_probe_tool"), "{diff}");
}

#[test]
fn the_json_diff_of_a_run_where_every_step_changed_is_cut_unless_full() {
    let golden = run(300, |_| "read_file".to_owned(), "ok");
    let actual = run(300, |step| format!("tool_{step}"), "changed");
    let (code, cut_text, cut) = diff_json(&golden, &actual, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(cut["steps"].as_array().unwrap().len(), 10);
    assert_eq!(cut["more_steps"], 290);
    let diff = cut["diff"].as_str().unwrap();
    assert_eq!(diff.matches("\n@@ step ").count(), 3, "{diff}");
    assert!(diff.ends_with("more changed places left out; the full diff: atif diff --full golden.json actual.json\n"), "{diff}");
    assert!(cut_text.len() < 20_000, "{} bytes", cut_text.len());

    let (code, full_text, full) = diff_json(&golden, &actual, &["--full"]);
    assert_eq!(code, Some(1));
    assert_eq!(full["steps"].as_array().unwrap().len(), 300);
    assert_eq!(full["more_steps"], 0);
    let functions = full["deltas"].as_array().unwrap().iter().find(|d| d["field"] == "functions");
    assert_eq!(functions.unwrap()["actual"].as_array().unwrap().len(), 300);
    let diff = full["diff"].as_str().unwrap();
    assert!(diff.starts_with("--- golden.json\n+++ actual.json\n@@ -"), "{diff}");
    assert!(diff.contains("tool_300") && !diff.contains("left out"));
    assert!(full_text.len() > 10 * cut_text.len());
}
