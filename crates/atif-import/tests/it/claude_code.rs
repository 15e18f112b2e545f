//! Claude Code session transcripts, on our own fixtures.

use atif_import::{Error, ImportOptions, import};
use serde_json::json;

use crate::support::{
    crashed, errors, fixture, functions, import_fixture, joins, sources, steps, totals, unanswered,
};

#[test]
fn split_content_blocks_of_one_message_id_make_one_step() {
    let imported = import_fixture("claude-code/basic.jsonl");
    let t = &imported.trajectory();
    // Lines 4, 5, 6 and 8 share msg_01AAAA…: thinking, text and two parallel tool_use blocks.
    assert_eq!(sources(t), "uuaa");
    assert_eq!(functions(t), ["Read", "Read"]);
    let step = &steps(t)[2];
    assert_eq!(step["message"], "Reading both inventory files.");
    assert_eq!(step["reasoning_content"], "Two files, read both in parallel.");
    assert_eq!(step["llm_call_count"], 1);
    assert_eq!(step["model_name"], "claude-sonnet-4-5");
    assert_eq!(step["extra"]["message_id"], "msg_01AAAAAAAAAAAAAAAAAAAAAA");
}

#[test]
fn usage_counts_once_per_message_with_cache_reads_and_writes_in_the_prompt() {
    let imported = import_fixture("claude-code/basic.jsonl");
    let t = &imported.trajectory();
    let metrics = &steps(t)[2]["metrics"];
    // input 3 + cache read 900 + cache write 50; the copy with the most output tokens (41).
    assert_eq!(metrics["prompt_tokens"], 953);
    assert_eq!(metrics["cached_tokens"], 900);
    assert_eq!(metrics["completion_tokens"], 41);
    assert_eq!(metrics["extra"]["cache_creation_input_tokens"], 50);
    // Step 4: 5 + 1000 + 120 = 1125 prompt, 17 output. Totals: the sums, no cost.
    assert_eq!(totals(t), (Some(953 + 1125), Some(41 + 17), Some(900 + 1000)));
    assert_eq!(t["final_metrics"]["total_steps"], 4);
    assert!(t["final_metrics"].get("total_cost_usd").is_none());
}

#[test]
fn tool_results_join_their_calls_as_the_model_saw_them_with_structured_data_in_extra() {
    let imported = import_fixture("claude-code/basic.jsonl");
    let t = &imported.trajectory();
    // b.csv's result arrives first in the file; both join step 3.
    assert_eq!(
        joins(t),
        [
            (3, "toolu_01BBBBBBBBBBBBBBBBBBBBBB".to_owned()),
            (3, "toolu_01AAAAAAAAAAAAAAAAAAAAAA".to_owned())
        ]
    );
    let results = steps(t)[2]["observation"]["results"].as_array().unwrap();
    assert_eq!(results[0]["content"], "<tool_use_error>File does not exist.</tool_use_error>");
    assert_eq!(results[0]["extra"]["is_error"], true);
    assert_eq!(results[0]["extra"]["tool_use_result"], "Error: File does not exist.");
    assert_eq!(
        results[1]["content"],
        "     1\u{2192}sku,qty\n     2\u{2192}A1,3\n     3\u{2192}B2,0\n"
    );
    assert_eq!(results[1]["extra"]["tool_use_result"]["file"]["numLines"], 3);
    assert!(results[1]["extra"].get("is_error").is_none());
}

#[test]
fn injected_lines_are_marked_and_file_order_beats_timestamps() {
    let imported = import_fixture("claude-code/basic.jsonl");
    let t = &imported.trajectory();
    // The isMeta caveat is timestamped 40 ms after the prompt that follows it: order is the file's.
    assert_eq!(steps(t)[0]["extra"]["meta"], true);
    assert_eq!(steps(t)[0]["timestamp"], "2025-11-02T09:00:00.050Z");
    assert_eq!(steps(t)[1]["message"], "How many products are in stock? Check both files.");
    assert_eq!(t["session_id"], "sess-0001");
    assert_eq!(
        t["agent"],
        json!({
            "name": "claude-code",
            "version": "2.0.27",
            "model_name": "claude-sonnet-4-5",
            "extra": {"log_format": "claude-code"}
        })
    );
    assert_eq!(t["extra"]["cwd"], "/tmp/tmp.run1/shop");
    assert!(!crashed(t));
}

#[test]
fn unknown_record_types_are_skipped_and_counted_and_bookkeeping_is_ignored() {
    let imported = import_fixture("claude-code/basic.jsonl");
    let stats = imported.stats();
    assert_eq!(stats.records(), 12);
    assert_eq!(stats.skipped().get("brand-new-record"), Some(&1));
    assert_eq!(stats.skipped_total(), 1);
    assert_eq!(stats.ignored().get("file-history-snapshot"), Some(&1));
    assert_eq!(stats.ignored().get("summary"), Some(&1));
}

#[test]
fn strict_mode_makes_an_unknown_record_type_an_error_naming_its_line() {
    let mut options = ImportOptions::new();
    options.set_strict(true);
    let err = import(&fixture("claude-code/basic.jsonl"), &options).unwrap_err();
    assert!(matches!(err, Error::UnknownRecord { line: 7, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "line 7: unknown claude-code record type `brand-new-record` (strict mode)"
    );
}

#[test]
fn an_interrupted_call_keeps_no_observation_and_the_run_is_crashed() {
    let imported = import_fixture("claude-code/interrupted.jsonl");
    let t = &imported.trajectory();
    assert_eq!(sources(t), "uau");
    assert_eq!(unanswered(t), ["toolu_01CCCCCCCCCCCCCCCCCCCCCC"]);
    assert!(steps(t)[1].get("observation").is_none());
    assert_eq!(errors(t), [(3, "interrupted".to_owned())]);
    assert_eq!(
        steps(t)[2]["extra"]["error"]["message"],
        "[Request interrupted by user for tool use]"
    );
    assert!(crashed(t));
}

#[test]
fn a_synthetic_api_error_is_an_error_step_without_a_model_call() {
    let imported = import_fixture("claude-code/api-error.jsonl");
    let t = &imported.trajectory();
    assert_eq!(sources(t), "ua");
    let step = &steps(t)[1];
    assert_eq!(step["llm_call_count"], 0);
    assert!(step.get("metrics").is_none() && step.get("model_name").is_none());
    assert_eq!(
        step["extra"]["error"],
        json!({"kind": "api_error", "message": "API Error: 529 Overloaded"})
    );
    assert_eq!(imported.stats().ignored().get("system/api_error"), Some(&1));
    assert!(crashed(t));
}

#[test]
fn a_truncated_last_line_keeps_everything_before_it_and_marks_the_run_crashed() {
    let imported = import_fixture("claude-code/truncated.jsonl");
    let t = &imported.trajectory();
    assert_eq!(imported.stats().truncated_line(), Some(6));
    assert!(imported.stats().warnings()[0].starts_with("line 6: the last line is cut short"));
    assert_eq!(sources(t), "uua");
    assert_eq!(unanswered(t), ["toolu_01AAAAAAAAAAAAAAAAAAAAAA"]);
    assert!(crashed(t));
}

#[test]
fn a_result_for_a_call_nobody_made_is_kept_as_a_user_observation_with_a_warning() {
    let log = br#"{"type":"user","uuid":"u1","sessionId":"S","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_gone","content":"late"}]}}
"#;
    let imported = import(log, &ImportOptions::default()).unwrap();
    let t = &imported.trajectory();
    assert_eq!(sources(t), "u");
    assert_eq!(steps(t)[0]["observation"]["results"][0]["extra"]["tool_use_id"], "toolu_gone");
    assert_eq!(
        imported.stats().warnings(),
        ["line 1: tool result for call `toolu_gone`, which no assistant message made"]
    );
}

#[test]
fn replayed_lines_with_a_known_uuid_are_imported_once() {
    let line =
        r#"{"type":"user","uuid":"u1","sessionId":"S","message":{"role":"user","content":"hi"}}"#;
    let log = format!("{line}\n{line}\n");
    let imported = import(log.as_bytes(), &ImportOptions::default()).unwrap();
    assert_eq!(sources(&imported.trajectory()), "u");
    let reason = "replayed record (same uuid, type and timestamp as an earlier one)";
    assert_eq!(imported.stats().dropped().get(reason), Some(&1));
}

#[test]
fn records_sharing_a_repeated_or_placeholder_uuid_are_all_kept() {
    let log = br#"{"type":"user","uuid":"00000000-0000-0000-0000-000000000000","sessionId":"S","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"first"}}
{"type":"user","uuid":"00000000-0000-0000-0000-000000000000","sessionId":"S","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"second"}}
{"type":"assistant","uuid":"00000000-0000-0000-0000-000000000000","sessionId":"S","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"ok"}]}}
"#;
    let imported = import(log, &ImportOptions::default()).unwrap();
    let t = &imported.trajectory();
    assert_eq!(sources(t), "uua");
    assert_eq!(steps(t)[1]["message"], "second");
    assert!(imported.stats().dropped().is_empty());
}

#[test]
fn sidechains_in_the_session_file_become_one_subagent_each_linked_by_the_recorded_ids() {
    let mut options = ImportOptions::new();
    options.set_strict(true);
    let imported = import(&fixture("claude-code/sidechains.jsonl"), &options).unwrap();
    let t = &imported.trajectory();
    // The main chain only: the prompt, two parallel Task calls, a third Task call, the answer.
    assert_eq!(sources(t), "uaaa");
    assert_eq!(functions(t), ["Task", "Task", "Task"]);
    let subagents = t["subagent_trajectories"].as_array().unwrap();
    let ids: Vec<&str> = subagents.iter().map(|s| s["trajectory_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["sidechain-1", "sidechain-2", "agent-c0ffee1", "sidechain-3"]);
    // Interleaved lines are split by their parentUuid chain (or agentId).
    let sub_sources: Vec<String> = subagents.iter().map(sources).collect();
    assert_eq!(sub_sources, ["uaa", "ua", "ua", "ua"]);
    assert_eq!(functions(&subagents[0]), ["Read"]);
    assert_eq!(subagents[0]["session_id"], "sess-0003");
    // Links: by prompt (root parentUuid null), by the main line the root's parentUuid names,
    // by the agentId of the Task result; the fourth sidechain was spawned by no call.
    let refs: Vec<(String, String)> = steps(t)
        .iter()
        .flat_map(|s| s["observation"]["results"].as_array().cloned().unwrap_or_default())
        .filter_map(|r| {
            let call = r["source_call_id"].as_str()?.to_owned();
            let sub = r["subagent_trajectory_ref"][0]["trajectory_id"].as_str()?.to_owned();
            Some((call, sub))
        })
        .collect();
    assert_eq!(
        refs,
        [
            ("toolu_01TASKLEXERTASKLEXER01".to_owned(), "sidechain-1".to_owned()),
            ("toolu_01TASKPARSERTASKPARSE1".to_owned(), "sidechain-2".to_owned()),
            ("toolu_01TASKMANIFESTTASKMANI1".to_owned(), "agent-c0ffee1".to_owned()),
        ]
    );
    assert_eq!(
        imported.stats().warnings(),
        [
            "line 16: no call of the session spawned the sidechain starting here; embedded as sidechain-3 without a link"
        ]
    );
}
