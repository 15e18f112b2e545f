//! Tests of `check`: the protocol's outcomes and failure messages.

use atif_golden::review::pending_path;
use atif_golden::{Error, JsonText, Mode, Outcome, check};
use serde_json::json;

use crate::{file_names, run, settings};

#[test]
fn a_missing_golden_fails_without_being_created_and_names_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("first_run.json");
    let err = check(&golden, run(1, "grep", "a"), &settings(Mode::Check)).unwrap_err();
    assert!(matches!(err, Error::MissingGolden { .. }));
    assert!(err.is_test_failure());
    assert_eq!(
        err.to_string(),
        format!(
            "golden file {} does not exist; record it with: ATIF_GOLDEN=update cargo test \
             check::a_missing_golden_fails_without_being_created_and_names_the_command",
            golden.display()
        )
    );
    assert!(file_names(dir.path()).is_empty());
}

#[test]
fn a_missing_golden_in_review_mode_leaves_a_pending_file_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("first_run.json");
    let err = check(&golden, run(1, "grep", "a"), &settings(Mode::Review)).unwrap_err();
    let pending = pending_path(&golden);
    assert_eq!(err.pending(), Some(pending.as_path()));
    let message = err.to_string();
    let expected = format!(
        "\npending: the actual run was written to {}\n\
         review it: atif golden review first_run.json --dir {dir}, \
         or accept it: atif golden accept first_run.json --dir {dir}",
        pending.display(),
        dir = dir.path().display()
    );
    assert!(message.ends_with(&expected), "{message}");
    assert_eq!(file_names(dir.path()), ["first_run.json.new"]);
    assert!(!golden.exists());
}

#[test]
fn update_writes_the_golden_as_the_canonical_normalized_text() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("nested/folder/recorded.json");
    let actual = run(2, "grep", "a");
    let outcome = check(&golden, &actual, &settings(Mode::Update)).unwrap();
    assert_eq!(outcome, Outcome::Created { path: golden.clone() });
    let written = std::fs::read_to_string(&golden).unwrap();
    let normalized =
        atif_normalize::normalize(&actual, &atif_normalize::NormalizeOptions::default()).unwrap();
    assert_eq!(written, atif_normalize::to_canonical_string(&normalized));
    assert!(!written.contains("session-a"), "volatile fields stay out of goldens");
    // The golden is itself a trajectory: checking it against itself matches.
    let reread: serde_json::Value = serde_json::from_str(&written).unwrap();
    let outcome = check(&golden, &reread, &settings(Mode::Check)).unwrap();
    assert_eq!(outcome, Outcome::Matched { path: golden });
}

#[test]
fn update_reports_the_erased_diff_and_is_silent_when_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();

    let outcome = check(&golden, run(1, "rg", "b"), &settings(Mode::Update)).unwrap();
    let Outcome::Changed { erased, .. } = &outcome else {
        panic!("expected Changed, got {outcome:?}")
    };
    assert!(erased.starts_with("--- golden (erased)\n+++ actual\n"), "{erased}");
    assert!(erased.contains("\n-          \"function_name\": \"grep\",\n"), "{erased}");
    assert!(erased.contains("\n+          \"function_name\": \"rg\",\n"), "{erased}");
    let shown = outcome.to_string();
    assert!(
        shown.starts_with(&format!("changed golden {}; this update erased:\n", golden.display()))
    );
    assert!(std::fs::read_to_string(&golden).unwrap().contains("\"rg\""));

    // Volatile churn only: the golden stays as it is and nothing but one line is reported.
    let before = std::fs::metadata(&golden).unwrap().modified().unwrap();
    let outcome = check(&golden, run(1, "rg", "c"), &settings(Mode::Update)).unwrap();
    assert_eq!(outcome, Outcome::Unchanged { path: golden.clone() });
    assert_eq!(outcome.to_string(), format!("unchanged golden {}", golden.display()));
    assert_eq!(std::fs::metadata(&golden).unwrap().modified().unwrap(), before);
}

#[test]
fn volatile_differences_alone_match() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    check(&golden, run(3, "grep", "first"), &settings(Mode::Update)).unwrap();
    let outcome = check(&golden, run(3, "grep", "second"), &settings(Mode::Check)).unwrap();
    assert!(matches!(outcome, Outcome::Matched { .. }));
}

#[test]
fn a_schema_version_bump_asks_for_a_re_record_in_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("versioned.json");
    let mut old = run(1, "grep", "a");
    old["schema_version"] = json!("ATIF-v1.7");
    check(&golden, &old, &settings(Mode::Update)).unwrap();
    let err = check(&golden, run(1, "grep", "a"), &settings(Mode::Check)).unwrap_err();
    assert!(matches!(err, Error::SchemaVersionChanged { .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "the schema version changed from ATIF-v1.7 (golden file {}) to ATIF-v1.8 (this run), \
             so re-record the golden with: ATIF_GOLDEN=update cargo test \
             check::a_schema_version_bump_asks_for_a_re_record_in_one_sentence",
            golden.display()
        )
    );
}

#[test]
fn the_mismatch_message_names_the_change_literally_on_its_second_line() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    let err = check(&golden, run(2, "grep", "b"), &settings(Mode::Check)).unwrap_err();
    let message = err.to_string();
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines[0], "agent behaviour changed (7 difference(s)):", "{message}");
    assert_eq!(lines[1], "  step_count: 1 -> 2", "{message}");
}

#[test]
fn the_failure_message_goes_deltas_explanation_diff_command_with_the_hash_last() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("ordered.json");
    check(&golden, run(2, "grep", "a"), &settings(Mode::Update)).unwrap();
    let err = check(&golden, run(2, "rg", "b"), &settings(Mode::Check)).unwrap_err();
    let Error::BehaviourChanged { deltas, report, pending, .. } = &err else {
        panic!("expected BehaviourChanged, got {err:?}")
    };
    assert_eq!(pending, &None, "check mode writes nothing");
    assert_eq!(
        deltas[0],
        "functions: step 1 replaced grep with rg; step 2 replaced grep with rg (2 -> 2 calls)"
    );
    assert!(deltas.last().unwrap().starts_with("content_hash: "), "{deltas:?}");
    let position = |needle: &str| {
        report.find(needle).unwrap_or_else(|| panic!("`{needle}` missing from:\n{report}"))
    };
    assert!(position("  functions: ") < position("  content_hash: "));
    assert!(
        position("  content_hash: ")
            < position("what moved, step by step:\n  step 1 (agent) changed")
    );
    assert!(
        position("what moved")
            < position(
                "unified diff (golden -> actual), 2 changed places:\n--- golden\n+++ actual\n"
            )
    );
    assert!(
        position("+++ actual\n@@ step 1 @@\n") < position("-      \"function_name\": \"grep\",")
    );
    // Called from a test, the fix names the running test (the harness names its thread so).
    assert!(report.ends_with(
        "\nif this change is intended: ATIF_GOLDEN=update cargo test \
         check::the_failure_message_goes_deltas_explanation_diff_command_with_the_hash_last"
    ));
}

#[test]
fn a_content_only_change_is_caught_by_the_hash_and_can_be_switched_off() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    let mut reworded = run(1, "grep", "a");
    reworded["steps"][0]["message"] = json!("different words, same behaviour");
    let err = check(&golden, &reworded, &settings(Mode::Check)).unwrap_err();
    let Error::BehaviourChanged { deltas, .. } = &err else { panic!("{err:?}") };
    assert_eq!(deltas.len(), 1);
    assert!(deltas[0].starts_with("content_hash: "));

    let mut structure_only = settings(Mode::Check);
    structure_only.set_compare_content(false);
    assert!(matches!(check(&golden, &reworded, &structure_only), Ok(Outcome::Matched { .. })));
}

#[test]
fn the_token_tolerance_setting_bands_token_counts() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    let mut more_tokens = run(1, "grep", "a");
    more_tokens["steps"][0]["metrics"]["prompt_tokens"] = json!(105);
    let mut lenient = settings(Mode::Check);
    lenient.set_compare_content(false);
    assert!(check(&golden, &more_tokens, &lenient).is_err(), "exact by default");
    lenient.set_token_tolerance(0.1);
    assert!(matches!(check(&golden, &more_tokens, &lenient), Ok(Outcome::Matched { .. })));
}

#[test]
fn long_diffs_are_cut_to_the_first_places_naming_the_command_that_prints_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("long.json");
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    let mut review = settings(Mode::Review);
    review.set_max_diff_places(4);
    let err = check(&golden, run(20, "grep", "a"), &review).unwrap_err();
    let message = err.to_string();
    let pending = pending_path(&golden);
    assert!(
        message.contains("unified diff (golden -> actual), first 4 of 19 changed places:"),
        "{message}"
    );
    assert_eq!(message.matches("\n@@ step ").count(), 4, "{message}");
    let cut = message.lines().find(|line| line.starts_with("... ")).expect(&message);
    assert_eq!(
        cut,
        format!(
            "... 15 more changed places left out; the full diff: atif diff --full {} {}",
            golden.display(),
            pending.display()
        )
    );
    let full = std::fs::read_to_string(&pending).unwrap();
    assert_eq!(full.matches("\"step_id\"").count(), 20);

    let mut on_ci = settings(Mode::from_env_values(None, Some("true")).unwrap());
    on_ci.set_max_diff_places(4);
    std::fs::remove_file(&pending).unwrap();
    let message = check(&golden, run(20, "grep", "a"), &on_ci).unwrap_err().to_string();
    assert!(message.contains("left out; the full diff: run locally (not on CI"), "{message}");
    assert!(!pending.exists());
}

#[test]
fn a_failing_local_run_writes_a_pending_file_and_a_ci_run_never_does() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    let golden_before = std::fs::read(&golden).unwrap();

    let on_ci = Mode::from_env_values(None, Some("true")).unwrap();
    let err = check(&golden, run(2, "grep", "a"), &settings(on_ci)).unwrap_err();
    assert_eq!(err.pending(), None);
    assert_eq!(file_names(dir.path()), ["g.json"]);
    let explicit_review_on_ci = Mode::from_env_values(Some("review"), Some("true")).unwrap();
    check(&golden, run(2, "grep", "a"), &settings(explicit_review_on_ci)).unwrap_err();
    assert_eq!(file_names(dir.path()), ["g.json"]);

    let locally = Mode::from_env_values(None, None).unwrap();
    let err = check(&golden, run(2, "grep", "a"), &settings(locally)).unwrap_err();
    let pending = pending_path(&golden);
    assert_eq!(err.pending(), Some(pending.as_path()));
    assert_eq!(file_names(dir.path()), ["g.json", "g.json.new"]);
    assert_eq!(
        std::fs::read(&golden).unwrap(),
        golden_before,
        "a failing check never edits the golden"
    );
    assert!(std::fs::read_to_string(&pending).unwrap().contains("\"step_id\": 2"));

    // Once the run matches again, the stale pending file goes away.
    check(&golden, run(1, "grep", "a"), &settings(locally)).unwrap();
    assert_eq!(file_names(dir.path()), ["g.json"]);
}

#[test]
fn a_corrupt_golden_is_an_error_in_check_mode_and_rewritten_in_update_mode() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    std::fs::write(&golden, "{\"schema_version\": ").unwrap();
    let err = check(&golden, run(1, "grep", "a"), &settings(Mode::Check)).unwrap_err();
    assert!(!err.is_test_failure());
    assert!(
        err.to_string().starts_with(&format!(
            "golden file {}: invalid JSON at line 1, column 19",
            golden.display()
        )),
        "{err}"
    );
    let outcome = check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    assert!(matches!(outcome, Outcome::Changed { .. }));
    assert!(matches!(
        check(&golden, run(1, "grep", "a"), &settings(Mode::Check)),
        Ok(Outcome::Matched { .. })
    ));
}

#[test]
fn a_non_trajectory_actual_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let err =
        check(&dir.path().join("g.json"), json!([1, 2]), &settings(Mode::Update)).unwrap_err();
    let expected =
        "the actual trajectory: (root): the root is an array: an ATIF trajectory is a JSON object";
    assert!(err.to_string().starts_with(expected), "{err}");
    assert!(file_names(dir.path()).is_empty());
}

#[test]
fn a_typed_trajectory_checks_like_its_json() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("typed.json");
    let value = run(2, "grep", "a");
    let typed: atif_schema::Trajectory = serde_json::from_value(value.clone()).unwrap();
    check(&golden, &value, &settings(Mode::Update)).unwrap();
    assert!(matches!(check(&golden, &typed, &settings(Mode::Check)), Ok(Outcome::Matched { .. })));
}

#[test]
fn the_update_command_can_be_replaced_for_other_front_ends() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    let mut cli = settings(Mode::Check);
    cli.set_update_command(Some("atif check --update g.json run.json".to_owned()));
    let err = check(&golden, run(1, "grep", "a"), &cli).unwrap_err();
    assert!(
        err.to_string().ends_with("record it with: atif check --update g.json run.json"),
        "{err}"
    );
}

/// A long run of `n_steps` agent steps with realistic bulk (long messages and observations),
/// cycling through a few tools, with `final_metrics`; `insert_at` adds one more step there
/// (1-based) calling `inserted_probe_tool`.
fn long_run(n_steps: usize, insert_at: Option<usize>) -> serde_json::Value {
    const TOOLS: [&str; 4] = ["read_file", "grep", "run_tests", "write_file"];
    let mut bodies: Vec<(String, String)> = (0..n_steps)
        .map(|idx| (TOOLS[idx % TOOLS.len()].to_owned(), format!("step body {idx} ")))
        .collect();
    if let Some(at) = insert_at {
        bodies.insert(at - 1, ("inserted_probe_tool".to_owned(), "probe ".to_owned()));
    }
    let steps: Vec<serde_json::Value> = bodies
        .iter()
        .enumerate()
        .map(|(idx, (tool, body))| {
            let call = format!("toolu_{idx:08}");
            json!({
                "step_id": idx + 1,
                "source": "agent",
                "message": body.repeat(40),
                "tool_calls": [{"tool_call_id": call, "function_name": tool, "arguments": {"path": format!("src/{}.py", body.len())}}],
                "observation": {"results": [{"source_call_id": call, "content": body.repeat(300)}]},
                "metrics": {"prompt_tokens": 1000, "completion_tokens": 50},
            })
        })
        .collect();
    let n = steps.len() as u64;
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "demo", "version": "1.0", "model_name": "m-1"},
        "steps": steps,
        "final_metrics": {"total_prompt_tokens": 1000 * n, "total_completion_tokens": 50 * n, "total_steps": n},
    })
}

#[test]
fn one_step_inserted_into_a_long_run_reads_in_one_screen() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("long.json");
    check(&golden, long_run(1_500, None), &settings(Mode::Update)).unwrap();
    let err = check(&golden, long_run(1_500, Some(701)), &settings(Mode::Review)).unwrap_err();
    let message = err.to_string();
    let n_lines = message.lines().count();
    assert!(n_lines <= 100, "{n_lines} lines:\n{message}");
    assert!(message.len() <= 12 * 1024, "{} bytes:\n{message}", message.len());
    assert!(
        message
            .contains("\n  functions: step 701 added inserted_probe_tool (1,500 -> 1,501 calls)\n"),
        "{message}"
    );
    // One more `agent` among 1,500: the steps are aligned with their calls, so it is found.
    assert!(
        message.contains("\n  sources: step 701 added agent (1,500 -> 1,501 steps)\n"),
        "{message}"
    );
    assert!(
        message.contains(
            "what moved, step by step:\n  step 701 (agent) inserted: calls inserted_probe_tool\n"
        ),
        "{message}"
    );
    // The renumbered steps after the insertion are no places of their own: the diff shows the
    // inserted step and the totals outside the steps.
    assert!(
        message.contains("unified diff (golden -> actual), 2 changed places:\n--- golden\n+++ actual\n@@ step 701 inserted @@\n"),
        "{message}"
    );
    assert!(message.contains("\n@@ outside the steps @@\n"), "{message}");
    assert!(message.contains("\"function_name\": \"inserted_probe_tool\""), "{message}");
}

#[test]
fn a_small_change_keeps_its_full_detail() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("small.json");
    check(&golden, run(2, "grep", "a"), &settings(Mode::Update)).unwrap();
    let mut reworded = run(2, "grep", "a");
    reworded["steps"][1]["message"] = json!("a new message");
    let message = check(&golden, &reworded, &settings(Mode::Check)).unwrap_err().to_string();
    assert!(
        message.contains(
            "@@ step 2 @@\n {\n-  \"message\": \"step 2\",\n+  \"message\": \"a new message\",\n   \"metrics\": {\n"
        ),
        "{message}"
    );
    assert!(!message.contains("left out"), "{message}");
}

#[test]
fn debug_prints_the_message_and_its_causes_for_tests_that_return_errors() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    std::fs::create_dir(&golden).unwrap();
    let err = check(&golden, run(1, "grep", "a"), &settings(Mode::Check)).unwrap_err();
    let debug = format!("{err:?}");
    assert!(
        debug.starts_with(&format!(
            "cannot read golden file {}\n\ncaused by:\n    ",
            golden.display()
        )),
        "{debug}"
    );
    assert_eq!(debug.lines().count(), 4, "{debug}");
}

#[test]
fn what_the_strict_loader_refuses_fails_the_check_with_its_pointer_and_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    let run_file = dir.path().join("run.json");
    let step = r#"{"step_id": 1, "source": "agent", "message": "a", "message": "b"}"#;
    let cases = [
        (format!(r#"{{"schema_version": "ATIF-v1.8", "steps": [{step}]}}"#), "/steps/0/message"),
        (
            r#"{"schema_version": "ATIF-v1.8", "steps": [{"step_id": 1180591620717411303424, "source": "agent"}]}"#
                .to_owned(),
            "/steps/0/step_id",
        ),
        (r#"{"hello": "world"}"#.to_owned(), "/schema_version"),
    ];
    for (text, pointer) in cases {
        std::fs::write(&run_file, &text).unwrap();
        // Update mode writes whatever it is given, unless the loader refuses it first.
        let err = check(&golden, JsonText::read(&run_file).unwrap(), &settings(Mode::Update))
            .unwrap_err();
        let Error::Load(inner) = &err else { panic!("{text}: expected Error::Load, got {err:?}") };
        let atif_schema::Error::NotTrajectory { pointer: found, .. } = inner.as_ref() else {
            panic!("{text}: expected NotTrajectory, got {inner:?}")
        };
        assert_eq!(found.as_deref(), Some(pointer), "{text}");
        let message = err.to_string();
        let expected = format!("{}: {pointer}: ", run_file.display());
        assert!(message.starts_with(&expected), "{message}");
        assert!(!err.is_test_failure());
        assert!(!golden.exists(), "{text}: no golden is written");
    }

    // A Value cannot hold a duplicate key, but it can be something other than a trajectory.
    let err = check(&golden, json!({"hello": "world"}), &settings(Mode::Update)).unwrap_err();
    let message = err.to_string();
    assert!(message.starts_with("the actual trajectory: /schema_version: missing"), "{message}");
    assert!(!golden.exists());

    // A golden edited by hand into a duplicate key is refused in check mode, naming it.
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    let text = std::fs::read_to_string(&golden).unwrap();
    let edited =
        text.replacen("\"source\": \"agent\",", "\"source\": \"agent\", \"source\": \"user\",", 1);
    assert_ne!(text, edited, "the golden has a step source to duplicate");
    std::fs::write(&golden, edited).unwrap();
    let err = check(&golden, run(2, "grep", "a"), &settings(Mode::Check)).unwrap_err();
    let message = err.to_string();
    let expected = format!("golden file {}: /steps/0/source: ", golden.display());
    assert!(message.starts_with(&expected), "{message}");
}

#[test]
fn a_run_given_by_value_or_as_json_text_gets_the_same_outcomes_and_report_as_by_reference() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("by_value.json");
    let recorded = check(&golden, run(2, "grep", "a"), &settings(Mode::Update));
    assert_eq!(recorded.unwrap(), Outcome::Created { path: golden.clone() });
    let matched = check(&golden, run(2, "grep", "b"), &settings(Mode::Check));
    assert_eq!(matched.unwrap(), Outcome::Matched { path: golden.clone() });
    let changed = run(3, "rg", "a");
    let by_value = check(&golden, changed.clone(), &settings(Mode::Check));
    let by_reference = check(&golden, &changed, &settings(Mode::Check));
    let text = JsonText::new(serde_json::to_vec(&changed).unwrap(), "run.json");
    let by_text = check(&golden, text, &settings(Mode::Check));
    assert!(matches!(by_value, Err(Error::BehaviourChanged { .. })));
    let by_reference = by_reference.unwrap_err().to_string();
    assert_eq!(by_value.unwrap_err().to_string(), by_reference);
    assert_eq!(by_text.unwrap_err().to_string(), by_reference);
    let same = JsonText::new(serde_json::to_vec(&run(2, "grep", "c")).unwrap(), "run.json");
    assert_eq!(
        check(&golden, same, &settings(Mode::Check)).unwrap(),
        Outcome::Matched { path: golden }
    );
}

/// The `content_hash` delta of a failure, as `(golden, actual)`.
fn hash_delta(err: &Error) -> (String, String) {
    let Error::BehaviourChanged { deltas, .. } = err else { panic!("{err:?}") };
    let delta = deltas.iter().find(|d| d.starts_with("content_hash: ")).expect("a hash delta");
    let (golden, actual) = delta["content_hash: ".len()..].split_once(" -> ").unwrap();
    (golden.trim_matches('"').to_owned(), actual.trim_matches('"').to_owned())
}

#[test]
fn the_content_hashes_of_a_failure_are_those_of_both_normalised_documents() {
    let dir = tempfile::tempdir().unwrap();
    let options = atif_normalize::NormalizeOptions::default();
    let hash_of = |doc: &serde_json::Value| {
        atif_normalize::content_hash(&atif_normalize::normalize(doc, &options).unwrap())
    };
    let changed = run(1, "grep", "b");
    let mut reworded = run(1, "grep", "a");
    reworded["steps"][0]["message"] = json!("other words");

    // A golden this crate wrote: its text is its canonical text, hashed as read.
    let written = dir.path().join("written.json");
    check(&written, &reworded, &settings(Mode::Update)).unwrap();
    let err = check(&written, &changed, &settings(Mode::Check)).unwrap_err();
    assert_eq!(hash_delta(&err), (hash_of(&reworded), hash_of(&changed)));

    // A golden saved by hand, compact and with its volatile fields: the hash is still that of
    // its normalised form, not of the bytes in the file.
    let by_hand = dir.path().join("by_hand.json");
    std::fs::write(&by_hand, serde_json::to_string(&reworded).unwrap()).unwrap();
    let err = check(&by_hand, &changed, &settings(Mode::Check)).unwrap_err();
    assert_eq!(hash_delta(&err), (hash_of(&reworded), hash_of(&changed)));
}

#[test]
fn a_golden_read_ahead_checks_as_check_does_and_says_what_it_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("ahead.json");
    let mut secret = run(1, "grep", "a");
    secret["steps"][0]["message"] = json!("token ghp_abcdefghijklmnopqrstuvwxyz0123456789");

    // Read before the file exists: the check creates it in update mode.
    let ahead = atif_golden::support::GoldenFile::read(&golden);
    assert_eq!(ahead.path(), golden.as_path());
    let checked = ahead.check(secret.clone(), &settings(Mode::Update));
    assert!(matches!(checked.result, Ok(Outcome::Created { .. })), "{:?}", checked.result);
    assert!(checked.redacted.to_string().contains("/steps/0/message"), "{}", checked.redacted);
    let written = std::fs::read_to_string(&golden).unwrap();
    assert!(!written.contains("ghp_"), "{written}");

    let changed = run(2, "grep", "a");
    let checked = atif_golden::support::GoldenFile::read(&golden)
        .check(changed.clone(), &settings(Mode::Check));
    assert!(checked.redacted.is_empty());
    let by_check = check(&golden, &changed, &settings(Mode::Check)).unwrap_err();
    assert_eq!(checked.result.unwrap_err().to_string(), by_check.to_string());

    // A golden that cannot be read is the check's error, not the read's.
    let unreadable = atif_golden::support::GoldenFile::read(dir.path());
    let checked = unreadable.check(changed, &settings(Mode::Check));
    assert!(matches!(checked.result, Err(Error::Io { .. })), "{:?}", checked.result);
}
