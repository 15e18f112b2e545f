//! Our own fixtures against their committed goldens, through the golden protocol of
//! atif-golden: the whole mapping of every format, normalised with the agent's preset, is
//! pinned, and a change shows as a reviewed diff (`cargo xtask golden-update` re-records).

use std::path::{Path, PathBuf};

use atif_golden::{Settings, check};
use atif_import::{ImportOptions, import_path};
use atif_normalize::preset;

use crate::support::fixtures;

/// Each fixture (file or session folder) and the preset its golden is normalised with.
const CASES: &[(&str, &str)] = &[
    ("claude-code/basic.jsonl", "claude-code"),
    ("claude-code/interrupted.jsonl", "claude-code"),
    ("claude-code/api-error.jsonl", "claude-code"),
    ("claude-code/truncated.jsonl", "claude-code"),
    ("claude-code/project", "claude-code"),
    ("claude-code/project-2.0", "claude-code"),
    ("claude-code/sidechains.jsonl", "claude-code"),
    ("claude-stream/basic.jsonl", "claude-code"),
    ("claude-stream/max-turns.jsonl", "claude-code"),
    ("codex-rollout/usage-before.jsonl", "codex"),
    ("codex-rollout/usage-after.jsonl", "codex"),
    (
        "codex-rollout/threads/rollout-2026-03-02T10-00-00-019c1111-0000-7000-8000-00000000aaaa.jsonl",
        "codex",
    ),
    ("codex-exec/basic.jsonl", "codex"),
    ("codex-exec/failed.jsonl", "codex"),
];

fn golden_path(rel: &str) -> PathBuf {
    let name = rel.trim_end_matches(".jsonl").replace('/', "__");
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/goldens").join(format!("{name}.json"))
}

#[test]
fn every_fixture_matches_its_committed_golden() {
    let mut failures = Vec::new();
    for (rel, preset_name) in CASES {
        let imported = import_path(&fixtures().join(rel), &ImportOptions::default()).unwrap();
        let mut settings = Settings::new();
        settings.set_normalize_options(preset(preset_name).unwrap());
        if let Err(err) = check(&golden_path(rel), imported.trajectory(), &settings) {
            failures.push(format!("{rel}:\n{err}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_killed_run_fails_against_the_golden_of_the_finished_one_and_says_what_moved() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("stream.json");
    std::fs::copy(golden_path("claude-stream/basic.jsonl"), &golden).unwrap();
    let killed =
        import_path(&fixtures().join("claude-stream/killed.jsonl"), &ImportOptions::default())
            .unwrap();
    let mut settings = Settings::new();
    settings
        .set_normalize_options(preset("claude-code").unwrap())
        .set_mode(Some(atif_golden::Mode::Check));
    let message = check(&golden, killed.trajectory(), &settings).unwrap_err().to_string();
    assert!(message.starts_with("agent behaviour changed"), "{message}");
    assert!(message.contains("  step_count: 2 -> 1\n"), "{message}");
    assert!(message.contains("  crashed: false -> true\n"), "{message}");
}
