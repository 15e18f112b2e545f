//! Imported runs through normalisation: the presets make runs that differ only in volatile
//! content byte-identical, and a golden-like round trip in a temp folder catches a real change.

use atif_import::{ImportOptions, import};
use atif_normalize::{NormalizeOptions, normalize, preset, shape, to_canonical_string};
use serde_json::Value;

use crate::support::fixture;

/// The canonical normalised text of an imported log.
pub(crate) fn normalized(log: &[u8], options: &NormalizeOptions) -> String {
    let imported = import(log, &ImportOptions::default()).unwrap();
    to_canonical_string(&normalize(&imported.trajectory(), options).unwrap())
}

/// The log without its first line that makes a tool call (for `codex exec`, without every
/// event of the first tool item: its `item.started` shows the call too).
pub(crate) fn without_first_tool_call(log: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(log);
    let mut removed = false;
    let mut removed_item: Option<String> = None;
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let item_id = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|r| r["item"]["id"].as_str().map(str::to_owned));
        if item_id.is_some() && item_id == removed_item {
            continue;
        }
        if !removed && makes_tool_call(line) {
            removed = true;
            removed_item = item_id;
            continue;
        }
        out.push_str(line);
    }
    assert!(removed, "the log has no tool call to remove");
    return out.into_bytes();

    fn makes_tool_call(line: &str) -> bool {
        let Ok(record) = serde_json::from_str::<Value>(line) else { return false };
        let claude = record["message"]["content"]
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_use"));
        let codex = matches!(
            record["payload"]["type"].as_str(),
            Some("function_call" | "custom_tool_call")
        );
        let exec = matches!(record["type"].as_str(), Some("item.started" | "item.completed"))
            && record["item"]["type"] == "command_execution";
        claude || codex || exec
    }
}

/// Imports `log` twice into a golden file in a temp folder and checks that the second import
/// matches it byte for byte, and that the log with one tool call removed does not.
pub(crate) fn golden_round_trip(name: &str, log: &[u8], preset_name: &str) {
    let options = preset(preset_name).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let golden_path = dir.path().join("golden.json");
    std::fs::write(&golden_path, normalized(log, &options)).unwrap();
    let golden = std::fs::read_to_string(&golden_path).unwrap();
    assert_eq!(
        golden,
        normalized(log, &options),
        "{name}: two imports of one log normalise differently"
    );
    let mutated = normalized(&without_first_tool_call(log), &options);
    assert_ne!(golden, mutated, "{name}: removing a tool call went unnoticed");
    let golden_shape = shape(&serde_json::from_str(&golden).unwrap());
    let mutated_shape = shape(&serde_json::from_str(&mutated).unwrap());
    assert_eq!(mutated_shape.functions.len() + 1, golden_shape.functions.len(), "{name}");
}

#[test]
fn claude_runs_that_differ_only_in_ids_uuids_cwd_and_dates_normalise_alike_with_the_preset() {
    let a = fixture("claude-code/volatile-a.jsonl");
    let b = fixture("claude-code/volatile-b.jsonl");
    let options = preset("claude-code").unwrap();
    assert_eq!(normalized(&a, &options), normalized(&b, &options));
    assert_ne!(
        normalized(&a, &NormalizeOptions::default()),
        normalized(&b, &NormalizeOptions::default())
    );
}

#[test]
fn codex_runs_that_differ_only_in_ids_uuids_cwd_and_dates_normalise_alike_with_the_preset() {
    let a = fixture("codex-rollout/volatile-a.jsonl");
    let b = fixture("codex-rollout/volatile-b.jsonl");
    let options = preset("codex").unwrap();
    assert_eq!(normalized(&a, &options), normalized(&b, &options));
    assert_ne!(
        normalized(&a, &NormalizeOptions::default()),
        normalized(&b, &NormalizeOptions::default())
    );
}

#[test]
fn every_fixture_survives_the_golden_round_trip() {
    let cases = [
        ("claude-code/basic.jsonl", "claude-code"),
        ("claude-code/interrupted.jsonl", "claude-code"),
        ("claude-code/truncated.jsonl", "claude-code"),
        ("claude-stream/basic.jsonl", "claude-code"),
        ("codex-rollout/usage-before.jsonl", "codex"),
        ("codex-rollout/usage-after.jsonl", "codex"),
        ("codex-exec/basic.jsonl", "codex"),
    ];
    for (rel, preset_name) in cases {
        golden_round_trip(rel, &fixture(rel), preset_name);
    }
}
