//! The Shape of a normalised trajectory.

use atif_normalize::{Shape, shape};
use serde_json::{Value, json};

use crate::{call_step, normalized, trajectory};

fn check(input: Value, expected: Value) {
    let actual = shape(&normalized(&input));
    let mut actual = serde_json::to_value(&actual).unwrap();
    // The hash is checked on its own below; here it only has to be there.
    assert_eq!(actual["content_hash"].as_str().unwrap().len(), 12);
    actual.as_object_mut().unwrap().remove("content_hash");
    assert_eq!(actual, expected);
}

#[test]
fn the_shape_counts_what_the_root_did() {
    let mut doc = trajectory(json!([
        {"step_id": 1, "source": "user", "message": "go"},
        call_step(2, "read_file", "a"),
        {"step_id": 3, "source": "agent", "message": "", "llm_call_count": 3, "model_name": "model-b",
         "tool_calls": [
             {"tool_call_id": "b", "function_name": "grep", "arguments": {}},
             {"tool_call_id": "c", "function_name": "edit", "arguments": {}},
         ]},
        {"step_id": 4, "source": "system", "message": "note"},
    ]));
    doc["subagent_trajectories"] = json!([
        {"trajectory_id": "x", "agent": {"name": "web", "version": "1", "model_name": "model-c"}, "steps": [],
         "subagent_trajectories": [{"trajectory_id": "y", "agent": {"name": "deep", "version": "1"}, "steps": []}]},
        {"trajectory_id": "z", "agent": {"name": "code", "version": "1"}, "steps": []},
    ]);
    check(
        doc,
        json!({
            "step_count": 4,
            "sources": ["user", "agent", "agent", "system"],
            "llm_calls": 4,
            "functions": ["read_file", "grep", "edit"],
            "tool_errors": [],
            "subagents": ["code", "deep", "web"],
            "models": ["model-a", "model-b", "model-c"],
            "crashed": false,
            "prompt_tokens": 100,
            "completion_tokens": 10,
        }),
    );
}

#[test]
fn final_metrics_totals_win_over_the_sum_of_step_metrics() {
    let mut doc = trajectory(json!([call_step(1, "f", "a"), call_step(2, "g", "b")]));
    doc["final_metrics"] = json!({"total_prompt_tokens": 7});
    let shape = shape(&normalized(&doc));
    assert_eq!((shape.prompt_tokens, shape.completion_tokens), (Some(7), Some(20)));
}

#[test]
fn tokens_no_step_reported_are_unknown_not_zero_in_the_shape_and_the_diff() {
    let steps = json!([
        {"step_id": 1, "source": "user", "message": "go"},
        {"step_id": 2, "source": "agent", "message": "done", "model_name": "model-a"},
    ]);
    let unreported = shape(&normalized(&trajectory(steps.clone())));
    assert_eq!((unreported.prompt_tokens, unreported.completion_tokens), (None, None));
    let fields = serde_json::to_value(&unreported).unwrap();
    assert_eq!(
        (&fields["prompt_tokens"], &fields["completion_tokens"]),
        (&json!("unknown"), &json!("unknown"))
    );
    assert_eq!(serde_json::from_value::<Shape>(fields).unwrap().prompt_tokens, None);

    let mut reported = trajectory(steps);
    reported["steps"][1]["metrics"] = json!({"prompt_tokens": 0, "completion_tokens": 4});
    let reported = shape(&normalized(&reported));
    assert_eq!((reported.prompt_tokens, reported.completion_tokens), (Some(0), Some(4)));
    let deltas = atif_normalize::diff(&unreported, &reported, &Default::default());
    let rendered: Vec<String> = deltas.iter().map(ToString::to_string).collect();
    let rendered = rendered.join("\n");
    assert!(rendered.contains("prompt_tokens: \"unknown\" -> 0"), "{rendered}");
    assert!(rendered.contains("completion_tokens: \"unknown\" -> 4"), "{rendered}");

    let bad = json!({"step_count": 0, "sources": [], "llm_calls": 0, "functions": [], "subagents": [],
        "models": [], "crashed": false, "prompt_tokens": "many", "completion_tokens": 0, "content_hash": ""});
    let err = serde_json::from_value::<Shape>(bad).unwrap_err().to_string();
    assert!(err.contains("expected a token count or \"unknown\", got \"many\""), "{err}");
}

#[test]
fn crash_is_part_of_the_shape() {
    let mut doc = trajectory(json!([]));
    assert!(!shape(&normalized(&doc)).crashed);
    doc["extra"] = json!({"crashed": true});
    assert!(shape(&normalized(&doc)).crashed);
    doc["extra"] = json!({"crashed": "yes"});
    assert!(!shape(&normalized(&doc)).crashed, "only the boolean true means crashed");
}

#[test]
fn tool_results_that_record_an_error_are_part_of_the_shape_by_their_function() {
    let mut doc = trajectory(json!([
        call_step(1, "read_file", "a"),
        call_step(2, "bash", "b"),
        call_step(3, "grep", "c"),
        call_step(4, "edit", "d"),
    ]));
    assert!(shape(&normalized(&doc)).tool_errors.is_empty());
    // The trace importer's form, the agent CLIs' form, and a result naming no call.
    doc["steps"][1]["observation"]["results"][0]["extra"] =
        json!({"error": {"kind": "RuntimeError", "message": "exit 1"}});
    doc["steps"][2]["observation"]["results"][0]["extra"] = json!({"is_error": true});
    doc["steps"][3]["observation"]["results"][0]["extra"] = json!({"error": "denied"});
    doc["steps"][3]["observation"]["results"][0]["source_call_id"] = json!("nobody");
    let errored = shape(&normalized(&doc));
    assert_eq!(errored.tool_errors, ["bash", "grep", "unknown"]);
    assert_eq!(errored.tool_error_steps, [2, 3, 4]);
    // Markers that say no error are not errors.
    doc["steps"][2]["observation"]["results"][0]["extra"] = json!({"is_error": false});
    doc["steps"][3]["observation"]["results"][0]["extra"] = json!({"error": null});
    assert_eq!(shape(&normalized(&doc)).tool_errors, ["bash"]);
}

#[test]
fn a_shape_serialised_before_tool_errors_existed_reads_back_with_none() {
    let old = json!({"step_count": 0, "sources": [], "llm_calls": 0, "functions": [], "subagents": [],
        "models": [], "crashed": false, "prompt_tokens": 0, "completion_tokens": 0, "content_hash": ""});
    assert!(serde_json::from_value::<Shape>(old).unwrap().tool_errors.is_empty());
}

#[test]
fn odd_documents_give_an_empty_shape_instead_of_failing() {
    for doc in
        [json!([]), json!({"steps": "many"}), json!({"steps": [1, null, {"llm_call_count": -1}]})]
    {
        let shape = shape(&doc);
        assert!(shape.sources.is_empty() && shape.functions.is_empty() && shape.models.is_empty());
        assert_eq!(shape.llm_calls, 0);
    }
}

#[test]
fn the_shape_serialises_with_the_documented_names_in_order_and_reads_back() {
    let shape = shape(&normalized(&trajectory(json!([call_step(1, "f", "a")]))));
    let text = serde_json::to_string(&shape).unwrap();
    let order = [
        "step_count",
        "sources",
        "llm_calls",
        "functions",
        "tool_errors",
        "subagents",
        "models",
        "crashed",
        "prompt_tokens",
        "completion_tokens",
        "content_hash",
    ];
    let positions: Vec<usize> =
        order.iter().map(|name| text.find(&format!("\"{name}\":")).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    // Every field but the derived `function_steps` and `tool_error_steps` comes back from the
    // JSON.
    let mut without_steps = shape.clone();
    without_steps.function_steps.clear();
    without_steps.tool_error_steps.clear();
    assert_eq!(serde_json::from_str::<Shape>(&text).unwrap(), without_steps);
    let fields: Vec<String> = shape.fields().into_iter().map(|(name, _)| name).collect();
    assert_eq!(fields, order);
}

#[test]
fn join_runs_both_and_passes_a_panic_on() {
    let (sum, product) =
        atif_normalize::support::join(|| (1..=10).sum::<u32>(), || (1..=5).product::<u32>());
    assert_eq!((sum, product), (55, 120));
    let caught = std::panic::catch_unwind(|| {
        atif_normalize::support::join(|| -> u32 { panic!("background failed") }, || 1)
    });
    let payload = caught.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"background failed"));
}
