//! The step-level explanation of what moved.

use atif_normalize::{StepChange, explain};
use serde_json::{Value, json};

use crate::{call_step, normalized, trajectory};

fn check(golden: Value, actual: Value, expected: &[&str]) {
    let (golden, actual) = (trajectory(golden), trajectory(actual));
    crate::documents::agree(&golden, &actual);
    let changes = explain(&normalized(&golden), &normalized(&actual));
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

/// A run whose step `n` refers to the n-th of `subagents`, each a subagent calling `function`
/// (name, function) once.
fn with_subagents(subagents: &[(&str, &str)]) -> Value {
    let steps: Vec<Value> = subagents
        .iter()
        .enumerate()
        .map(|(idx, (name, _))| {
            json!({"step_id": idx + 1, "source": "agent", "message": "delegating",
                   "observation": {"results": [{"subagent_trajectory_ref": [{"trajectory_id": format!("id-{name}")}]}]}})
        })
        .collect();
    let mut doc = trajectory(Value::Array(steps));
    doc["subagent_trajectories"] = subagents
        .iter()
        .rev()
        .map(|(name, function)| {
            json!({"schema_version": "ATIF-v1.8", "trajectory_id": format!("id-{name}"),
                   "agent": {"name": name, "version": "1"},
                   "steps": [call_step(1, function, &format!("{name}-call"))]})
        })
        .collect();
    doc
}

fn check_docs(golden: &Value, actual: &Value, expected: &[&str]) {
    crate::documents::agree(golden, actual);
    let changes = explain(&normalized(golden), &normalized(actual));
    let lines: Vec<String> = changes.iter().map(StepChange::to_string).collect();
    assert_eq!(lines, expected);
}

#[test]
fn an_inserted_subagent_is_named_and_renumbered_refs_are_not_changes() {
    // "aaa" sorts first, so every other subagent's id moves up by one.
    let golden = with_subagents(&[("web", "search"), ("code", "edit")]);
    let actual = with_subagents(&[("web", "search"), ("code", "edit"), ("aaa", "ls")]);
    check_docs(
        &golden,
        &actual,
        &[
            "step 3 (agent) inserted: message \"delegating\"",
            "subagent \"aaa\" inserted: 1 step; calls ls",
        ],
    );
}

#[test]
fn a_removed_subagent_is_named_with_its_size_and_tools() {
    let golden = with_subagents(&[("web", "search"), ("code", "edit")]);
    let mut actual = with_subagents(&[("web", "search")]);
    actual["steps"].as_array_mut().unwrap().push(golden["steps"][1].clone());
    actual["steps"][1]["observation"] = json!({"results": []});
    check_docs(
        &golden,
        &actual,
        &[
            "step 2 (agent) changed: observation changed",
            "subagent \"code\" removed: 1 step; calls edit",
        ],
    );
}

#[test]
fn the_steps_of_a_changed_subagent_are_explained_under_its_name() {
    let golden = with_subagents(&[("web", "search"), ("code", "edit")]);
    let actual = with_subagents(&[("web", "fetch"), ("code", "edit")]);
    check_docs(
        &golden,
        &actual,
        &[
            "subagent \"web\": step 1 (agent) changed: calls fetch instead of search; message changed",
        ],
    );
}

#[test]
fn a_subagent_changed_outside_its_steps_is_changed_as_a_whole() {
    let golden = with_subagents(&[("web", "search")]);
    let mut actual = golden.clone();
    actual["subagent_trajectories"][0]["final_metrics"] = json!({"total_steps": 1});
    check_docs(&golden, &actual, &["subagent \"web\" changed: final_metrics changed"]);
}

#[test]
fn nested_subagents_are_named_outermost_first() {
    let golden = with_subagents(&[("web", "search")]);
    let mut actual = golden.clone();
    actual["subagent_trajectories"][0]["subagent_trajectories"] = json!([
        {"trajectory_id": "d", "agent": {"name": "deep", "version": "1"}, "steps": []}
    ]);
    check_docs(&golden, &actual, &["subagent \"web\" > \"deep\" inserted: 0 steps"]);
}

#[test]
fn subagents_sharing_a_name_pair_identical_ones_first() {
    let golden = with_subagents(&[("web", "search")]);
    let mut actual = golden.clone();
    let mut other = actual["subagent_trajectories"][0].clone();
    other["trajectory_id"] = json!("id-web-2");
    other["steps"][0]["tool_calls"][0]["function_name"] = json!("fetch");
    actual["subagent_trajectories"].as_array_mut().unwrap().insert(0, other);
    check_docs(&golden, &actual, &["subagent \"web\" inserted: 1 step; calls fetch"]);
}

#[test]
fn runs_that_differ_only_outside_their_steps_get_one_line_for_the_trajectory() {
    let golden = trajectory(json!([user(1, "go")]));
    let mut actual = golden.clone();
    actual["agent"]["model_name"] = json!("model-b");
    actual["notes"] = json!("rerun");
    check_docs(&golden, &actual, &["trajectory changed: agent, notes changed"]);
    let changes = explain(&normalized(&golden), &normalized(&actual));
    assert!(changes[0].is_whole_trajectory() && changes[0].subagent.is_empty());
}

/// A run of `n_steps` agent steps, each calling one of three tools in an order drawn from
/// `seed`: two such runs are too different for the step alignment's budget of work.
fn scrambled(n_steps: u64, seed: u64) -> Value {
    const TOOLS: [&str; 3] = ["read_file", "grep", "run_tests"];
    let mut state = seed;
    let steps: Vec<Value> = (1..=n_steps)
        .map(|step_id| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let tool = TOOLS[((state >> 33) % 3) as usize];
            json!({"step_id": step_id, "source": "agent", "tool_calls": [
                {"tool_call_id": format!("call_{step_id}"), "function_name": tool, "arguments": {}}
            ]})
        })
        .collect();
    trajectory(Value::Array(steps))
}

#[test]
fn runs_too_different_to_align_within_the_budget_explain_the_same_on_a_busy_machine() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let golden = normalized(&scrambled(8_000, 1));
    let actual = normalized(&scrambled(8_000, 2));
    let quiet = explain(&golden, &actual);
    // The alignment gave up on the shortest edit script: with no step found once on each
    // side, every step is paired in order, and none is inserted or removed.
    assert_eq!(quiet.len(), 8_000 - quiet_unchanged(&golden, &actual));
    assert!(
        quiet.iter().all(|change| change.to_string().contains(") changed: ")),
        "{:?}",
        quiet[0]
    );
    // The same comparison with every core kept busy, which a clock would notice.
    let stop = AtomicBool::new(false);
    let n_busy = std::thread::available_parallelism().map_or(2, usize::from);
    let busy = std::thread::scope(|scope| {
        for _ in 0..n_busy {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let busy = explain(&golden, &actual);
        stop.store(true, Ordering::Relaxed);
        busy
    });
    assert_eq!(quiet, busy);

    /// How many steps the two runs have alike at the same position.
    fn quiet_unchanged(golden: &Value, actual: &Value) -> usize {
        let calls = |doc: &Value| -> Vec<Value> {
            doc["steps"].as_array().unwrap().iter().map(|step| step["tool_calls"].clone()).collect()
        };
        calls(golden).iter().zip(calls(actual)).filter(|(g, a)| **g == *a).count()
    }
}
