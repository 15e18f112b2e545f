//! Shape deltas, their order and wording, tolerance, and the unified diff.

use atif_normalize::{Delta, DiffOptions, Shape, diff, render, shape};
use serde_json::{Value, json};

use crate::{call_step, normalized, trajectory};

fn shape_of(doc: &Value) -> Shape {
    shape(&normalized(doc))
}

/// The deltas between two documents, displayed one per line.
fn deltas(golden: &Value, actual: &Value, options: &DiffOptions) -> Vec<String> {
    diff(&shape_of(golden), &shape_of(actual), options).iter().map(Delta::to_string).collect()
}

fn structural() -> DiffOptions {
    let mut options = DiffOptions::default();
    options.set_compare_content(false);
    options
}

#[test]
fn one_extra_step_reports_step_count_1_to_2_literally() {
    let golden = trajectory(json!([{"step_id": 1, "source": "user", "message": "hi"}]));
    let actual = trajectory(json!([
        {"step_id": 1, "source": "user", "message": "hi"},
        {"step_id": 2, "source": "user", "message": "again"},
    ]));
    let lines = deltas(&golden, &actual, &DiffOptions::default());
    assert_eq!(lines[0], "step_count: 1 -> 2");
    assert_eq!(lines[1], r#"sources: ["user"] -> ["user","user"]"#);
}

#[test]
fn sequences_display_as_compact_json_arrays() {
    let golden = trajectory(json!([call_step(1, "read_file", "a")]));
    let mut actual = trajectory(json!([call_step(1, "read_file", "a")]));
    actual["steps"][0]["tool_calls"]
        .as_array_mut()
        .unwrap()
        .push(json!({"tool_call_id": "b", "function_name": "grep", "arguments": {}}));
    assert_eq!(
        deltas(&golden, &actual, &structural()),
        [r#"functions: ["read_file"] -> ["read_file","grep"]"#]
    );
}

#[test]
fn a_changed_computed_value_with_the_same_structure_is_caught_by_the_hash() {
    let golden = trajectory(json!([call_step(1, "add", "a")]));
    let mut actual = golden.clone();
    actual["steps"][0]["observation"]["results"][0]["content"] = json!("41");
    let lines = deltas(&golden, &actual, &DiffOptions::default());
    assert_eq!(lines.len(), 1);
    assert!(lines[0].starts_with("content_hash: \""), "{lines:?}");
    assert_eq!(deltas(&golden, &actual, &structural()), Vec::<String>::new());
}

#[test]
fn a_model_swap_shows_in_models_even_without_content_comparison() {
    let golden = trajectory(json!([call_step(1, "f", "a")]));
    let mut actual = golden.clone();
    actual["agent"]["model_name"] = json!("model-b");
    assert_eq!(deltas(&golden, &actual, &structural()), [r#"models: ["model-a"] -> ["model-b"]"#]);
}

#[test]
fn crash_shows_as_a_delta() {
    let golden = trajectory(json!([]));
    let mut actual = golden.clone();
    actual["extra"] = json!({"crashed": true});
    assert_eq!(deltas(&golden, &actual, &structural()), ["crashed: false -> true"]);
}

#[test]
fn token_tolerance_bands_and_the_zero_rule() {
    let with_tokens = |prompt: u64, completion: u64| {
        let mut doc = trajectory(json!([]));
        doc["final_metrics"] =
            json!({"total_prompt_tokens": prompt, "total_completion_tokens": completion});
        doc
    };
    let tolerance = |t: f64| {
        let mut options = structural();
        options.set_token_tolerance(t);
        options
    };
    for (golden, actual, t, expected) in [
        ((100, 10), (100, 10), 0.0, vec![]),
        ((100, 10), (101, 10), 0.0, vec!["prompt_tokens: 100 -> 101"]),
        ((100, 10), (110, 9), 0.1, vec![]),
        ((100, 10), (111, 10), 0.1, vec!["prompt_tokens: 100 -> 111"]),
        ((100, 10), (89, 10), 0.1, vec!["prompt_tokens: 100 -> 89"]),
        ((100, 0), (100, 1), 0.5, vec!["completion_tokens: 0 -> 1"]),
        ((100, 0), (100, 0), 0.5, vec![]),
    ] {
        let lines = deltas(
            &with_tokens(golden.0, golden.1),
            &with_tokens(actual.0, actual.1),
            &tolerance(t),
        );
        assert_eq!(lines, expected, "golden {golden:?} actual {actual:?} tolerance {t}");
    }
}

#[test]
fn structural_deltas_come_before_the_hash() {
    let golden = trajectory(json!([call_step(1, "f", "a")]));
    let actual = trajectory(json!([call_step(1, "f", "a"), call_step(2, "g", "b")]));
    let deltas = diff(&shape_of(&golden), &shape_of(&actual), &DiffOptions::default());
    let fields: Vec<&str> = deltas.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "step_count",
            "sources",
            "llm_calls",
            "functions",
            "prompt_tokens",
            "completion_tokens",
            "content_hash"
        ]
    );
}

#[test]
fn diff_options_have_documented_defaults_and_setters() {
    let mut options = DiffOptions::default();
    assert_eq!((options.token_tolerance(), options.compare_content()), (0.0, true));
    options.set_token_tolerance(0.25).set_compare_content(false);
    assert_eq!((options.token_tolerance(), options.compare_content()), (0.25, false));
    options.set_token_tolerance(-1.0);
    assert_eq!(options.token_tolerance(), 0.0);
}

#[test]
fn render_is_a_unified_diff_of_the_canonical_texts_headed_golden_and_actual() {
    let golden =
        normalized(&trajectory(json!([{"step_id": 1, "source": "user", "message": "hi"}])));
    let mut actual = golden.clone();
    actual["steps"][0]["message"] = json!("bye");
    let text = render(&golden, &actual);
    assert!(text.starts_with("--- golden\n+++ actual\n@@ "), "{text}");
    assert!(
        text.contains("\n-      \"message\": \"hi\",\n+      \"message\": \"bye\",\n"),
        "{text}"
    );
    assert_eq!(render(&golden, &golden), "");
}

/// Applies the unified diff `patch` to `old` and returns the new text.
fn apply(old: &str, patch: &str) -> String {
    let old_lines: Vec<&str> = old.lines().collect();
    let mut out: Vec<&str> = Vec::new();
    let mut next_old = 0;
    for line in patch.lines().skip(2) {
        if let Some(header) = line.strip_prefix("@@ -") {
            let start: usize = header.split([',', ' ']).next().unwrap().parse().unwrap();
            // A hunk that removes from an empty stretch names the line before it.
            let start = start.saturating_sub(1).max(next_old);
            out.extend(&old_lines[next_old..start]);
            next_old = start;
        } else if let Some(added) = line.strip_prefix('+') {
            out.push(added);
        } else if line.starts_with('-') {
            next_old += 1;
        } else {
            out.push(&line[1..]);
            next_old += 1;
        }
    }
    out.extend(&old_lines[next_old..]);
    out.iter().map(|line| format!("{line}\n")).collect()
}

#[test]
fn the_unified_diff_turns_golden_into_actual_for_small_and_large_runs() {
    let run = |n_steps: u64, function: &str| {
        let steps: Vec<Value> = (1..=n_steps)
            .map(|idx| {
                let function = if idx % 7 == 0 { function } else { "read_file" };
                call_step(idx, function, &format!("c{idx}"))
            })
            .collect();
        normalized(&trajectory(Value::Array(steps)))
    };
    // About 40 lines per step: the small pair goes to Myers, the large one to patience.
    for (n_golden, n_actual) in [(20, 23), (1000, 990)] {
        let golden = run(n_golden, "grep");
        let actual = run(n_actual, "rg");
        let n_lines = atif_normalize::to_canonical_string(&golden).lines().count();
        assert_eq!(n_golden > 100, n_lines > 20_000, "{n_lines} lines");
        let patch = render(&golden, &actual);
        assert!(patch.starts_with("--- golden\n+++ actual\n@@ "));
        let text = apply(&atif_normalize::to_canonical_string(&golden), &patch);
        assert_eq!(text, atif_normalize::to_canonical_string(&actual), "{n_golden} steps");
    }
}

#[test]
fn a_long_list_prints_as_the_edit_with_both_lengths_and_a_short_one_whole() {
    let names = |n: usize| -> Vec<Value> {
        (0..n).map(|idx| Value::String(format!("tool_{idx}"))).collect()
    };
    let golden = names(1_500);
    let mut actual = golden.clone();
    actual.insert(700, Value::String("inserted_probe_tool".to_owned()));
    let delta = Delta {
        field: "functions".to_owned(),
        golden: Value::Array(golden.clone()),
        actual: Value::Array(actual),
    };
    assert_eq!(delta.to_string(), "functions: +inserted_probe_tool at 701 (1,500 -> 1,501 calls)");

    let mut removed = golden.clone();
    removed.drain(10..30);
    removed[100] = Value::String("grep".to_owned());
    let delta = Delta {
        field: "functions".to_owned(),
        golden: Value::Array(golden),
        actual: Value::Array(removed),
    };
    assert_eq!(
        delta.to_string(),
        "functions: -tool_10, tool_11 and 18 more at 11, tool_120 -> grep at 101 (1,500 -> 1,480 calls)"
    );

    let short = Delta {
        field: "functions".to_owned(),
        golden: serde_json::json!(["grep"]),
        actual: serde_json::json!(["grep", "rg"]),
    };
    assert_eq!(short.to_string(), r#"functions: ["grep"] -> ["grep","rg"]"#);
}
