//! `codex exec --json` events, on our own fixtures.

use atif_import::{ImportOptions, import};
use serde_json::json;

use crate::support::{
    assert_valid, crashed, errors, fixture, functions, import_fixture, joins, sources, steps,
    totals, unanswered,
};

#[test]
fn each_tool_item_is_a_call_with_its_result_and_the_next_output_starts_a_new_model_call() {
    let imported = import_fixture("codex-exec/basic.jsonl");
    let t = &imported.trajectory();
    // reasoning + command (item_1) | command (item_2) | message
    assert_eq!(sources(t), "aaa");
    // Named after the tool the model called, as in the rollout of the same run.
    assert_eq!(functions(t), ["shell", "shell"]);
    assert_eq!(steps(t)[0]["tool_calls"][0]["extra"]["item_type"], "command_execution");
    assert_eq!(joins(t), [(1, "item_1".to_owned()), (2, "item_2".to_owned())]);
    assert_eq!(steps(t)[0]["reasoning_content"], "**Reading the script**");
    assert_eq!(steps(t)[0]["tool_calls"][0]["arguments"]["command"], "bash -lc 'cat run.sh'");
    let failed = &steps(t)[1]["observation"]["results"][0];
    assert_eq!(failed["content"], "unknown flag\n");
    assert_eq!(failed["extra"]["exit_code"], 2);
    assert_eq!(failed["extra"]["is_error"], true);
    assert_eq!(steps(t)[2]["message"], "run.sh prints hi; it rejects --bad.");
    // Each command's `item.started` showed its call, which its `item.completed` completed.
    assert_eq!(imported.stats().ignored().get("item.started"), None);
    assert!(steps(t)[0]["tool_calls"][0]["extra"].get("started_only").is_none());
}

#[test]
fn usage_exists_per_turn_only_so_steps_have_no_metrics_and_totals_sum_the_turns() {
    let imported = import_fixture("codex-exec/basic.jsonl");
    let t = &imported.trajectory();
    assert!(steps(t).iter().all(|s| s.get("metrics").is_none()));
    assert_eq!(totals(t), (Some(6000), Some(200), Some(5000)));
    assert_eq!(t["session_id"], "019a0000-0000-7000-8000-00000000e7ec");
    assert!(t["agent"].get("model_name").is_none());
    assert!(!crashed(t));
}

#[test]
fn a_failed_turn_is_an_error_step_and_a_crash() {
    let imported = import_fixture("codex-exec/failed.jsonl");
    let t = &imported.trajectory();
    assert_eq!(sources(t), "as");
    assert_eq!(errors(t), [(2, "turn_failed".to_owned())]);
    assert_eq!(steps(t)[1]["message"], "stream disconnected before completion");
    assert!(crashed(t));
}

#[test]
fn every_tool_item_type_is_named_after_the_tool_that_makes_it_in_a_rollout() {
    let log = br#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"file_change","changes":[{"path":"a.rs","kind":"update"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"serde"},"result":{"content":[{"type":"text","text":"3 hits"}],"structured_content":null},"error":null,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"docs","tool":"fetch","arguments":{},"result":null,"error":{"message":"timed out"},"status":"failed"}}
{"type":"item.completed","item":{"id":"item_3","type":"web_search","query":"serde rename"}}
{"type":"item.completed","item":{"id":"item_4","type":"todo_list","items":[{"text":"fix","completed":false}]}}
{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}
"#;
    let mut options = ImportOptions::new();
    options.set_strict(true);
    let imported = import(log, &options).unwrap();
    let t = &imported.trajectory();
    assert_eq!(
        functions(t),
        ["apply_patch", "docs__search", "docs__fetch", "web_search", "update_plan"]
    );
    let item_types: Vec<&str> = steps(t)
        .iter()
        .map(|s| s["tool_calls"][0]["extra"]["item_type"].as_str().unwrap())
        .collect();
    assert_eq!(
        item_types,
        ["file_change", "mcp_tool_call", "mcp_tool_call", "web_search", "todo_list"]
    );
    assert_eq!(steps(t)[1]["tool_calls"][0]["arguments"], json!({"q": "serde"}));
    assert_eq!(steps(t)[1]["observation"]["results"][0]["content"], "3 hits");
    let failed = &steps(t)[2]["observation"]["results"][0];
    assert_eq!(failed["content"], "timed out");
    assert_eq!(failed["extra"]["is_error"], true);
    // A file change reports no output: its result is the status only.
    assert_eq!(steps(t)[0]["observation"]["results"][0]["extra"]["status"], "completed");
}

#[test]
fn a_collab_call_keeps_its_result_and_names_the_subagent_and_a_command_never_completed_crashes_the_run()
 {
    let mut options = atif_import::ImportOptions::new();
    options.set_strict(true);
    let imported =
        atif_import::import(&fixture("codex-exec/collab-and-killed.jsonl"), &options).unwrap();
    let t = &imported.trajectory();
    assert_eq!(functions(t), ["spawn_agent", "shell"]);
    let collab = &steps(t)[0];
    assert_eq!(collab["tool_calls"][0]["arguments"]["prompt"], "Count the files.");
    let result = &collab["observation"]["results"][0];
    assert_eq!(result["source_call_id"], "item_0");
    assert_eq!(result["content"], "019c3333-0000-7000-8000-000000000002 (running): ");
    assert_eq!(result["extra"]["subagent_thread_ids"][0], "019c3333-0000-7000-8000-000000000002");
    // The command started and never completed: a call with no result, and a crashed run.
    let last = steps(t).last().unwrap();
    assert_eq!(last["tool_calls"][0]["arguments"]["command"], "/bin/bash -lc 'sleep 600'");
    assert!(last.get("observation").is_none(), "{last}");
    assert_eq!(unanswered(t), ["item_2"]);
    assert_eq!(t["extra"]["crashed"], true);
    assert_valid(t, "collab-and-killed");
}
