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
    assert_eq!(lines[1], "sources: step 2 added user (1 -> 2 steps)");
}

#[test]
fn sequences_name_each_change_with_its_step_and_count_both_lengths() {
    let golden = trajectory(json!([call_step(1, "read_file", "a")]));
    let mut actual = trajectory(json!([call_step(1, "read_file", "a")]));
    actual["steps"][0]["tool_calls"]
        .as_array_mut()
        .unwrap()
        .push(json!({"tool_call_id": "b", "function_name": "grep", "arguments": {}}));
    assert_eq!(
        deltas(&golden, &actual, &structural()),
        ["functions: step 1 added grep (1 -> 2 calls)"]
    );
}

#[test]
fn a_tool_that_failed_fails_the_comparison_with_content_off_naming_the_step() {
    let golden = trajectory(json!([
        {"step_id": 1, "source": "user", "message": "go"},
        call_step(2, "bash", "a"),
        call_step(3, "grep", "b"),
    ]));
    let mut actual = golden.clone();
    // What a content-less trace records of a failed tool: the error, the same call.
    actual["steps"][1]["observation"]["results"][0]["extra"] =
        json!({"error": {"kind": "RuntimeError", "message": "exit 1"}});
    assert_eq!(
        deltas(&golden, &actual, &structural()),
        ["tool_errors: step 2 bash failed (0 -> 1 errors)"]
    );
    assert_eq!(
        deltas(&actual, &golden, &structural()),
        ["tool_errors: step 2 bash no longer failed (1 -> 0 errors)"]
    );

    // An error in a step the golden run does not have is named with that step, beside the
    // `sources` delta; an error that only moved with its step is no change.
    let mut longer = trajectory(json!([
        {"step_id": 1, "source": "user", "message": "go"},
        call_step(2, "read_file", "z"),
        call_step(3, "bash", "a"),
        call_step(4, "grep", "b"),
    ]));
    longer["steps"][1]["observation"]["results"][0]["extra"] = json!({"is_error": true});
    longer["steps"][2]["observation"]["results"][0]["extra"] = json!({"is_error": true});
    let lines = deltas(&actual, &longer, &structural());
    assert!(
        lines.contains(&"tool_errors: step 2 read_file failed (1 -> 2 errors)".to_owned()),
        "{lines:?}"
    );
    // The other way, the failed step removed and a kept one failing anew: both are named, so
    // the counts that stay the same do not hide them.
    let mut shorter = actual.clone();
    shorter["steps"][2]["observation"]["results"][0]["extra"] = json!({"is_error": true});
    let lines = deltas(&longer, &shorter, &structural());
    assert!(
        lines.contains(
            &"tool_errors: step 2 read_file no longer failed; step 3 grep failed (2 -> 2 errors)"
                .to_owned()
        ),
        "{lines:?}"
    );

    // A Shape read back from JSON knows no steps and prints the lists whole.
    let read_back = |shape: Shape| -> Shape {
        serde_json::from_str(&serde_json::to_string(&shape).unwrap()).unwrap()
    };
    let lines: Vec<String> =
        diff(&read_back(shape_of(&golden)), &read_back(shape_of(&actual)), &structural())
            .iter()
            .map(Delta::to_string)
            .collect();
    assert_eq!(lines, [r#"tool_errors: [] -> ["bash"]"#]);
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

/// A run of `n_steps` agent steps, each calling `read_file` except those `special` names.
fn calls(n_steps: u64, special: &[(u64, &str)]) -> Value {
    let steps: Vec<Value> = (1..=n_steps)
        .map(|idx| {
            let function = special.iter().find(|(at, _)| *at == idx).map_or("read_file", |s| s.1);
            call_step(idx, function, &format!("c{idx}"))
        })
        .collect();
    trajectory(Value::Array(steps))
}

/// The same run with the calls of the `quiet` steps taken out (each is a step that only talks).
fn without_calls(mut run: Value, quiet: &[u64]) -> Value {
    for &idx in quiet {
        let step = &mut run["steps"][idx as usize - 1];
        let step = step.as_object_mut().unwrap();
        step.remove("tool_calls");
        step.remove("observation");
    }
    run
}

#[test]
fn a_call_list_delta_names_the_step_of_each_change() {
    let golden = calls(27, &[(22, "Edit"), (25, "Bash")]);
    let actual = without_calls(golden.clone(), &[22, 25]);
    let lines = deltas(&golden, &actual, &structural());
    assert_eq!(lines, ["functions: step 22 removed Edit; step 25 removed Bash (27 -> 25 calls)"]);

    // A step that now calls another tool; one more step added at the end.
    let mut actual = calls(28, &[(22, "Edit"), (25, "Bash"), (28, "write_file")]);
    actual["steps"][2]["tool_calls"][0]["function_name"] = json!("grep");
    let lines = deltas(&golden, &actual, &structural());
    assert_eq!(
        lines[..4],
        [
            "step_count: 27 -> 28",
            "sources: step 28 added agent (27 -> 28 steps)",
            "llm_calls: 27 -> 28",
            "functions: step 3 replaced read_file with grep; step 28 added write_file (27 -> 28 calls)",
        ]
    );
}

#[test]
fn a_long_list_of_changes_names_five_and_counts_the_rest() {
    let golden = calls(40, &[]);
    let quiet = [3, 7, 11, 15, 19, 23, 27, 31];
    let actual = without_calls(golden.clone(), &quiet);
    let lines = deltas(&golden, &actual, &structural());
    assert_eq!(
        lines,
        ["functions: step 3 removed read_file; step 7 removed read_file; step 11 removed \
             read_file; step 15 removed read_file; step 19 removed read_file; and 3 more \
             changes; see what moved (40 -> 32 calls)"]
    );
}

#[test]
fn a_long_run_names_the_inserted_step_and_counts_with_thousands() {
    let golden = calls(1_500, &[]);
    let mut steps = golden["steps"].as_array().unwrap().clone();
    steps.insert(700, call_step(701, "inserted_probe_tool", "probe"));
    let actual = trajectory(Value::Array(steps));
    let lines = deltas(&golden, &actual, &structural());
    assert_eq!(lines[1], "sources: step 701 added agent (1,500 -> 1,501 steps)");
    assert_eq!(lines[3], "functions: step 701 added inserted_probe_tool (1,500 -> 1,501 calls)");
}

#[test]
fn a_list_without_steps_prints_whole_or_as_what_it_gained_and_lost() {
    let names = |n: usize| -> Vec<Value> {
        (0..n).map(|idx| Value::String(format!("model_{idx:02}"))).collect()
    };
    let golden = names(30);
    let mut actual = golden.clone();
    actual.remove(3);
    actual.push(Value::String("zeta".to_owned()));
    let delta = Delta {
        field: "models".to_owned(),
        golden: Value::Array(golden),
        actual: Value::Array(actual),
        step_edits: None,
    };
    assert_eq!(delta.to_string(), "models: -model_03, +zeta (30 -> 30 models)");

    let short = Delta {
        field: "models".to_owned(),
        golden: json!(["m-1"]),
        actual: json!(["m-2"]),
        step_edits: None,
    };
    assert_eq!(short.to_string(), r#"models: ["m-1"] -> ["m-2"]"#);

    // A Shape read back from JSON knows no steps of its calls: the delta then names none.
    let functions = Delta {
        field: "functions".to_owned(),
        golden: json!(["grep"]),
        actual: json!(["grep", "rg"]),
        step_edits: None,
    };
    assert_eq!(functions.to_string(), r#"functions: ["grep"] -> ["grep","rg"]"#);
}
