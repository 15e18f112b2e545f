//! The step-level explanation of what moved.

use atif_normalize::{StepChange, explain};
use serde_json::{Value, json};

use crate::{call_step, normalized, trajectory};

fn check(golden: Value, actual: Value, expected: &[&str]) {
    let changes = explain(&normalized(&trajectory(golden)), &normalized(&trajectory(actual)));
    let lines: Vec<String> = changes.iter().map(StepChange::to_string).collect();
    assert_eq!(lines, expected);
}

fn user(step_id: u64, message: &str) -> Value {
    json!({"step_id": step_id, "source": "user", "message": message})
}

#[test]
fn identical_runs_explain_nothing() {
    check(
        json!([user(1, "go"), call_step(2, "f", "a")]),
        json!([user(1, "go"), call_step(2, "f", "b")]),
        &[],
    );
}

#[test]
fn an_inserted_step_is_named_with_its_calls() {
    check(
        json!([user(1, "go"), call_step(2, "read_file", "a")]),
        json!([user(1, "go"), call_step(2, "read_file", "a"), call_step(3, "grep", "b")]),
        &["step 3 (agent) inserted: calls grep"],
    );
}

#[test]
fn a_removed_step_is_named_by_its_golden_position() {
    check(
        json!([user(1, "go"), user(2, "and then stop please, right now, without further delay")]),
        json!([user(1, "go")]),
        &["step 2 (user) removed: message \"and then stop please, right now, without…\""],
    );
}

#[test]
fn a_step_calling_another_tool_is_changed_not_removed_and_inserted() {
    let mut changed = call_step(2, "rg", "b");
    changed["llm_call_count"] = json!(1);
    let mut golden_step = call_step(2, "grep", "b");
    golden_step["llm_call_count"] = json!(3);
    check(
        json!([user(1, "go"), golden_step]),
        json!([user(1, "go"), changed]),
        &["step 2 (agent) changed: calls rg instead of grep; 2 fewer LLM calls; message changed"],
    );
}

#[test]
fn aligned_steps_that_differ_in_content_say_what_differs() {
    let golden = call_step(1, "f", "a");
    let mut actual = golden.clone();
    actual["tool_calls"][0]["arguments"] = json!({"q": "y"});
    actual["observation"]["results"][0]["content"] = json!("other");
    check(
        json!([golden]),
        json!([actual]),
        &["step 1 (agent) changed: arguments of f changed; observation changed"],
    );
}

#[test]
fn positions_differ_when_earlier_steps_moved() {
    let mut later = call_step(2, "f", "a");
    let golden = json!([user(1, "go"), later.clone()]);
    later["message"] = json!("different");
    later["step_id"] = json!(3);
    check(
        golden,
        json!([user(1, "go"), user(2, "extra"), later]),
        &[
            "step 2 (user) inserted: message \"extra\"",
            "step 3 (agent, step 2 in golden) changed: message changed",
        ],
    );
}

#[test]
fn renumbered_call_ids_and_step_ids_after_an_insertion_are_not_changes() {
    let golden = json!([user(1, "go"), call_step(2, "f", "a"), call_step(3, "g", "b")]);
    let actual = json!([
        user(1, "go"),
        call_step(2, "check", "z"),
        call_step(3, "f", "a"),
        call_step(4, "g", "b"),
    ]);
    check(golden, actual, &["step 2 (agent) inserted: calls check"]);
}

#[test]
fn a_result_joined_to_another_call_of_the_same_step_is_still_a_change() {
    let mut golden = call_step(1, "f", "a");
    golden["tool_calls"] = json!([
        {"tool_call_id": "a", "function_name": "f", "arguments": {}},
        {"tool_call_id": "b", "function_name": "f", "arguments": {}},
    ]);
    let mut actual = golden.clone();
    actual["observation"]["results"][0]["source_call_id"] = json!("b");
    check(json!([golden]), json!([actual]), &["step 1 (agent) changed: observation changed"]);
}
