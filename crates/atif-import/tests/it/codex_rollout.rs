//! Codex rollout files, on our own fixtures: usage written before and after its call.

use atif_import::{Error, ImportOptions, import};
use serde_json::json;

use crate::support::{
    crashed, errors, fixture, functions, import_fixture, joins, sources, steps, totals, unanswered,
};

#[test]
fn usage_written_before_its_call_binds_to_the_call_that_follows() {
    let imported = import_fixture("codex-rollout/usage-before.jsonl");
    let t = &imported.trajectory();
    assert_eq!(t["extra"]["usage_order"], "precedes");
    assert_eq!(sources(t), "uuaa");
    assert_eq!(functions(t), ["shell"]);
    let first = &steps(t)[2]["metrics"];
    assert_eq!(
        (
            first["prompt_tokens"].as_u64(),
            first["cached_tokens"].as_u64(),
            first["completion_tokens"].as_u64()
        ),
        (Some(3000), Some(2000), Some(200))
    );
    assert_eq!(first["extra"]["reasoning_output_tokens"], 128);
    // The token_count repeated with the same totals counts once.
    assert_eq!(steps(t)[3]["metrics"]["prompt_tokens"], 3400);
    assert_eq!(imported.stats().ignored().get("event_msg/token_count (repeated totals)"), Some(&1));
    assert_eq!(totals(t), (Some(6400), Some(260), Some(5000)));
}

#[test]
fn outputs_are_kept_verbatim_with_the_040_metadata_parsed_into_extra() {
    let imported = import_fixture("codex-rollout/usage-before.jsonl");
    let t = &imported.trajectory();
    let step = &steps(t)[2];
    assert_eq!(
        step["tool_calls"][0]["arguments"],
        json!({"command": ["bash", "-lc", "ls"], "workdir": "/tmp/tmp.cx1/repo"})
    );
    let result = &step["observation"]["results"][0];
    assert_eq!(
        result["content"],
        r#"{"output":"Cargo.toml\nsrc\n","metadata":{"exit_code":0,"duration_seconds":0.1}}"#
    );
    assert_eq!(result["extra"]["metadata"]["exit_code"], 0);
    assert_eq!(step["reasoning_content"], "**Listing the folder**");
    assert_eq!(step["model_name"], "gpt-5-codex");
    assert_eq!(step["reasoning_effort"], "high");
    assert_eq!(steps(t)[3]["message"], "Cargo.toml and src/.");
    assert_eq!(t["session_id"], "01997ea4-0000-7000-8000-00000000c0de");
    assert_eq!(
        t["agent"],
        json!({
            "name": "codex",
            "version": "0.40.0",
            "model_name": "gpt-5-codex",
            "extra": {"log_format": "codex-rollout"}
        })
    );
}

#[test]
fn usage_written_after_its_call_binds_to_the_call_before_it() {
    let imported = import_fixture("codex-rollout/usage-after.jsonl");
    let t = &imported.trajectory();
    assert_eq!(t["extra"]["usage_order"], "follows");
    assert_eq!(sources(t), "suaaas");
    assert_eq!(functions(t), ["exec_command", "exec_command", "apply_patch", "exec_command"]);
    let prompts: Vec<_> = steps(t).iter().map(|s| s["metrics"]["prompt_tokens"].as_u64()).collect();
    assert_eq!(prompts, [None, None, Some(5000), Some(5600), Some(5800), None]);
    assert_eq!(totals(t), (Some(16400), Some(460), Some(11500)));
    assert_eq!(imported.stats().ignored().get("event_msg/token_count (no usage)"), Some(&1));
}

#[test]
fn parallel_calls_share_one_step_and_outputs_join_in_any_order() {
    let imported = import_fixture("codex-rollout/usage-after.jsonl");
    let t = &imported.trajectory();
    assert_eq!(
        joins(t),
        [
            (3, "call_BBBBBBBBBBBBBBBBBBBBBBB2".to_owned()),
            (3, "call_BBBBBBBBBBBBBBBBBBBBBBB1".to_owned()),
            (4, "call_BBBBBBBBBBBBBBBBBBBBBBB3".to_owned()),
        ]
    );
    let results = &steps(t)[2]["observation"]["results"];
    assert_eq!(results[0]["content"], "Exit code: 0\nOutput:\nsmoke.rs\n");
    assert_eq!(results[1]["content"], "# Shpo\n");
    let patch = &steps(t)[3]["tool_calls"][0];
    assert_eq!(
        patch["arguments"]["input"],
        "*** Begin Patch\n*** Update File: README.md\n-# Shpo\n+# Shop\n*** End Patch"
    );
    assert_eq!(patch["extra"]["custom"], true);
    assert_eq!(steps(t)[0]["extra"]["role"], "developer");
}

#[test]
fn a_call_cut_off_by_an_abort_keeps_no_observation_and_the_run_is_crashed() {
    let imported = import_fixture("codex-rollout/usage-after.jsonl");
    let t = &imported.trajectory();
    assert_eq!(unanswered(t), ["call_BBBBBBBBBBBBBBBBBBBBBBB4"]);
    assert_eq!(errors(t), [(6, "aborted".to_owned())]);
    assert_eq!(steps(t)[5]["message"], "turn aborted: interrupted");
    assert!(crashed(t));
    assert_eq!(imported.stats().skipped().get("mystery_record"), Some(&1));
}

#[test]
fn strict_mode_names_the_unknown_record() {
    let mut options = ImportOptions::new();
    options.set_strict(true);
    let err = import(&fixture("codex-rollout/usage-after.jsonl"), &options).unwrap_err();
    assert!(matches!(err, Error::UnknownRecord { line: 19, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "line 19: unknown codex-rollout record type `mystery_record` (strict mode)"
    );
}

#[test]
fn a_function_call_with_arguments_that_are_not_a_json_object_keeps_them_raw() {
    let log = br#"{"timestamp":"2025-09-25T02:12:23.9Z","type":"session_meta","payload":{"id":"s","cli_version":"0.40.0"}}
{"timestamp":"2025-09-25T02:12:24.9Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"ls -la","call_id":"call_1"}}
"#;
    let imported = import(log, &ImportOptions::default()).unwrap();
    let call = &imported.trajectory()["steps"][0]["tool_calls"][0];
    assert_eq!(call["arguments"], json!({"raw_arguments": "ls -la"}));
    assert_eq!(call["extra"]["arguments_not_an_object"], true);
}

#[test]
fn a_message_from_another_agent_is_input_that_ends_the_model_call_and_keeps_its_sender() {
    let log = br#"{"timestamp":"2026-03-02T10:00:00.000Z","type":"session_meta","payload":{"id":"s","cli_version":"0.146.0"}}
{"timestamp":"2026-03-02T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Waiting for the reviewer."}]}}
{"timestamp":"2026-03-02T10:00:02.000Z","type":"inter_agent_communication_metadata","payload":{"trigger_turn":true}}
{"timestamp":"2026-03-02T10:00:02.000Z","type":"response_item","payload":{"type":"agent_message","id":"m1","author":"/root/reviewer","recipient":"/root","content":[{"type":"input_text","text":"parser.rs unwraps on empty input."},{"type":"encrypted_content","encrypted_content":"gAAA"}]}}
{"timestamp":"2026-03-02T10:00:03.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixing it."}]}}
"#;
    let mut options = ImportOptions::new();
    options.set_strict(true);
    let imported = import(log, &options).unwrap();
    let t = &imported.trajectory();
    assert_eq!(sources(t), "aua");
    let message = &steps(t)[1];
    assert_eq!(message["message"], "parser.rs unwraps on empty input.");
    assert_eq!(
        message["extra"],
        json!({"role": "agent_message", "author": "/root/reviewer", "recipient": "/root"})
    );
    assert!(imported.stats().skipped().is_empty());
    assert_eq!(imported.stats().ignored().get("inter_agent_communication_metadata"), Some(&1));
}

#[test]
fn a_resumed_session_adds_the_segments_of_its_restarted_running_total() {
    let mut options = ImportOptions::new();
    options.set_strict(true);
    let imported = import(&fixture("codex-rollout/resumed.jsonl"), &options).unwrap();
    let t = &imported.trajectory();
    assert_eq!(t["final_metrics"]["total_prompt_tokens"], 130);
    assert_eq!(t["final_metrics"]["total_completion_tokens"], 15);
    assert_eq!(t["final_metrics"]["total_cached_tokens"], 40);
    // The per-step usage sums to the same totals, so no note says otherwise.
    let prompt: u64 = steps(t).iter().filter_map(|s| s["metrics"]["prompt_tokens"].as_u64()).sum();
    assert_eq!(prompt, 130);
    assert!(t.get("notes").is_none(), "{}", t["notes"]);
    // Codex 0.169's token_usage_record is known: the usage token_count repeats.
    assert!(imported.stats().skipped().is_empty());
    assert_eq!(
        imported.stats().ignored().get("token_usage_record (the usage token_count states)"),
        Some(&1)
    );
}

#[test]
fn an_error_event_keeps_its_kind_and_message() {
    let imported = import_fixture("codex-rollout/rate-limited.jsonl");
    let t = &imported.trajectory();
    let last = steps(t).last().unwrap();
    assert_eq!(
        last["extra"]["error"],
        json!({"kind": "usage_limit_exceeded", "message": "You've hit your usage limit. Try again in 3 hours."})
    );
    assert_eq!(t["extra"]["crashed"], true);
}

#[test]
fn secrets_are_redacted_as_one_walk_over_the_whole_trajectory_would_redact_them() {
    // The import redacts each step as it writes it; the trajectory and the report (findings in
    // document order) must be those of redacting the whole imported document at once.
    let call = |id: &str, arguments: &str| json!({"timestamp": "2025-09-25T02:12:24.000Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": id}});
    let output = |id: &str, text: &str| json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": id, "output": text}});
    let mut lines = vec![
        json!({"timestamp": "2025-09-25T02:12:23.966Z", "type": "session_meta", "payload": {"id": "sk-ant-api03-abcdefghijkl", "cli_version": "0.40.0", "cwd": "/home/x/api_key=supersecret99", "source": {"GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123"}}}),
        json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "my key is AKIAABCDEFGHIJKLMNOP ok"}]}}),
    ];
    for idx in 0..80 {
        let id = format!("c{idx}");
        let arguments = json!({"command": ["ls"], "env": {"OPENAI_API_KEY": "sk-proj-abcdefghijklmnopqrstuv"}, "ghp_abcdefghijklmnopqrstuvwxyz0123": idx});
        lines.push(call(&id, &arguments.to_string()));
        lines.push(output(&id, "password=hunter2222 and Authorization: Bearer abcdefghijklmnop"));
        lines.push(json!({"type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 3}, "total_token_usage": {"input_tokens": 3 * (idx + 1)}}}}));
    }
    let log: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let imported = import(log.as_bytes(), &ImportOptions::default()).unwrap();
    let mut keep = ImportOptions::default();
    keep.set_secret_scanner(None);
    let mut whole = import(log.as_bytes(), &keep).unwrap().trajectory();
    let report = atif_secrets::Scanner::new().redact_value(&mut whole);
    assert_eq!(imported.trajectory(), whole);
    assert!(imported.json() == serde_json::to_string_pretty(&whole).unwrap());
    assert_eq!(imported.secrets(), &report);
    let pointers = report.pointers();
    assert_eq!(
        pointers[..4],
        ["/extra/cwd", "/extra/source/GITHUB_TOKEN", "/session_id", "/steps/0/message"]
    );
    assert_eq!(report.len(), 4 + 80 * 4);
}
