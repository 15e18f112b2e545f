//! End-to-end golden tests: hand-written fixture trajectories of our own (subagents,
//! multimodal content, a crash) through `assert_golden!` against the goldens committed in
//! `tests/tests/golden/`, and the public corpus through the protocol in a temp folder (its
//! goldens are never committed: it is third-party data).
//!
//! Re-record a committed golden with `ATIF_GOLDEN=update cargo test -p tests <test name>` (for example
//! `crashed_migration`), or all of them with `atif golden update` (alias `cargo xtask golden-update`);
//! see docs/golden.md.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::path::{Path, PathBuf};

use atif_golden::{Error, Mode, Outcome, Settings, assert_golden, canonical_text, check};
use atif_normalize::{NormalizeOptions, normalize, shape};
use serde_json::{Value, json};

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Check-only settings: these comparisons must never write into the repository.
fn check_only() -> Settings {
    let mut settings = Settings::new();
    settings.set_mode(Some(Mode::Check));
    settings
}

#[test]
fn orchestrator_with_two_subagents() {
    let run = fixture("subagents.json");
    assert_golden!(run);

    let normalized = normalize(&run, &NormalizeOptions::default()).unwrap();
    let shape = shape(&normalized);
    assert_eq!(shape.subagents, ["grep-helper", "grep-helper"]);
    assert_eq!(shape.functions, ["spawn_subagent", "spawn_subagent"]);
}

#[test]
fn subagent_completion_order_and_provider_ids_do_not_reach_the_golden() {
    // The same behaviour as `orchestrator_with_two_subagents`, recorded by a run where the
    // helpers finished in the other order, with fresh ids, timestamps and addresses.
    let mut run = fixture("subagents.json");
    run["session_id"] = json!("another-session");
    run["trajectory_id"] = json!("root-0000");
    let mut renamed = Vec::new();
    let subagents = run["subagent_trajectories"].as_array_mut().unwrap();
    subagents.reverse();
    for (idx, subagent) in subagents.iter_mut().enumerate() {
        let old_id = subagent["trajectory_id"].as_str().unwrap().to_owned();
        let new_id = format!("helper-{idx}-rerun");
        subagent["trajectory_id"] = json!(new_id);
        subagent["steps"][0]["timestamp"] = json!("2027-01-01T00:00:00Z");
        renamed.push((old_id, new_id));
    }
    for result in run["steps"][1]["observation"]["results"].as_array_mut().unwrap() {
        let reference = &mut result["subagent_trajectory_ref"][0]["trajectory_id"];
        let (_, new_id) = renamed.iter().find(|(old_id, _)| reference == old_id).unwrap();
        *reference = json!(new_id);
    }
    let text = serde_json::to_string(&run).unwrap().replace("0x7f3c2a10b4e0", "0x5500aa11bb22");
    let rerun: Value = serde_json::from_str(&text).unwrap();
    // Byte-identical canonical text means the rerun would write exactly the committed golden.
    let settings = Settings::new();
    assert_eq!(
        canonical_text(&rerun, &settings).unwrap(),
        canonical_text(&fixture("subagents.json"), &settings).unwrap()
    );
}

#[test]
fn multimodal_content_parts() {
    let run = fixture("multimodal.json");
    assert_golden!(run);

    let normalized = normalize(&run, &NormalizeOptions::default()).unwrap();
    let parts = &normalized["steps"][1]["observation"]["results"][0]["content"];
    assert_eq!(parts[1]["type"], "audio");
    assert_eq!(parts[1]["source"]["duration_sec"], 1.4);
}

#[test]
fn crashed_migration() {
    let run = fixture("crash.json");
    assert_golden!(run);

    let normalized = normalize(&run, &NormalizeOptions::default()).unwrap();
    assert!(shape(&normalized).crashed);
    // A tool argument called `timestamp` is behaviour, not noise.
    assert_eq!(
        normalized["steps"][2]["tool_calls"][0]["arguments"]["timestamp"],
        "keep me: an argument"
    );
}

#[test]
fn a_run_that_no_longer_crashes_fails_against_a_crash_golden() {
    let goldens = tempfile::tempdir().unwrap();
    let golden = goldens.path().join("crash.json");
    let mut update = Settings::new();
    update.set_mode(Some(Mode::Update));
    check(&golden, fixture("crash.json"), &update).unwrap();

    let mut run = fixture("crash.json");
    run["extra"]["crashed"] = json!(false);
    let err = check(&golden, &run, &check_only()).unwrap_err();
    let Error::BehaviourChanged { deltas, report, .. } = &err else { panic!("{err:?}") };
    assert_eq!(deltas[0], "crashed: true -> false");
    assert!(report.ends_with(
        "if this change is intended: ATIF_GOLDEN=update cargo test a_run_that_no_longer_crashes_fails_against_a_crash_golden"
    ));
}

#[test]
fn every_valid_corpus_trajectory_goes_through_the_protocol_in_a_temp_folder() {
    let Some(valid) = atif_test_support::corpus("atif/valid") else { return };
    let goldens = tempfile::tempdir().unwrap();
    let mut update = Settings::new();
    update.set_mode(Some(Mode::Update));
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&valid).unwrap().map(|entry| entry.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty(), "no files in {}", valid.display());
    for file in &files {
        let run: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let golden = goldens.path().join(file.file_name().unwrap());

        let created = check(&golden, &run, &update).unwrap();
        assert_eq!(created, Outcome::Created { path: golden.clone() }, "{}", file.display());

        // An unchanged copy, with the volatile fields churned, passes.
        let mut rerun = run.clone();
        rerun["session_id"] = json!("a-different-session");
        for step in rerun["steps"].as_array_mut().unwrap() {
            if step.get("timestamp").is_some() {
                step["timestamp"] = json!("2030-01-01T00:00:00Z");
            }
        }
        let matched = check(&golden, &rerun, &check_only());
        assert!(matches!(matched, Ok(Outcome::Matched { .. })), "{}: {matched:?}", file.display());

        // One more agent step fails, and the first line after the heading says so.
        let mut mutated = run.clone();
        let steps = mutated["steps"].as_array_mut().unwrap();
        let n_steps = steps.len();
        steps.push(json!({"step_id": n_steps + 1, "source": "agent", "message": "one more thing"}));
        let err = check(&golden, &mutated, &check_only()).unwrap_err();
        let message = err.to_string();
        assert_eq!(
            message.lines().nth(1),
            Some(format!("  step_count: {n_steps} -> {}", n_steps + 1).as_str()),
            "{}:\n{message}",
            file.display()
        );
    }
}
