//! `codex exec --json` events, on our own fixtures.

use crate::support::{crashed, errors, functions, import_fixture, joins, sources, steps, totals};

#[test]
fn each_tool_item_is_a_call_with_its_result_and_the_next_output_starts_a_new_model_call() {
    let imported = import_fixture("codex-exec/basic.jsonl");
    let t = imported.trajectory();
    // reasoning + command (item_1) | command (item_2) | message
    assert_eq!(sources(t), "aaa");
    assert_eq!(functions(t), ["command_execution", "command_execution"]);
    assert_eq!(joins(t), [(1, "item_1".to_owned()), (2, "item_2".to_owned())]);
    assert_eq!(steps(t)[0]["reasoning_content"], "**Reading the script**");
    assert_eq!(steps(t)[0]["tool_calls"][0]["arguments"]["command"], "bash -lc 'cat run.sh'");
    let failed = &steps(t)[1]["observation"]["results"][0];
    assert_eq!(failed["content"], "unknown flag\n");
    assert_eq!(failed["extra"]["exit_code"], 2);
    assert_eq!(failed["extra"]["is_error"], true);
    assert_eq!(steps(t)[2]["message"], "run.sh prints hi; it rejects --bad.");
    assert_eq!(imported.stats().ignored().get("item.started"), Some(&2));
}

#[test]
fn usage_exists_per_turn_only_so_steps_have_no_metrics_and_totals_sum_the_turns() {
    let imported = import_fixture("codex-exec/basic.jsonl");
    let t = imported.trajectory();
    assert!(steps(t).iter().all(|s| s.get("metrics").is_none()));
    assert_eq!(totals(t), (Some(6000), Some(200), Some(5000)));
    assert_eq!(t["session_id"], "019a0000-0000-7000-8000-00000000e7ec");
    assert!(t["agent"].get("model_name").is_none());
    assert!(!crashed(t));
}

#[test]
fn a_failed_turn_is_an_error_step_and_a_crash() {
    let imported = import_fixture("codex-exec/failed.jsonl");
    let t = imported.trajectory();
    assert_eq!(sources(t), "as");
    assert_eq!(errors(t), [(2, "turn_failed".to_owned())]);
    assert_eq!(steps(t)[1]["message"], "stream disconnected before completion");
    assert!(crashed(t));
}
