//! Tests of `atif check`: the real binary on files in a temp dir, with `ATIF_GOLDEN`, `CI` and
//! `ATIF_GOLDEN_LOG` set explicitly for each run (never inherited from the caller).
#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::path::Path;
use std::process::{Command, Output};

use atif_test_support::file_names;
use serde_json::{Value, json};

use crate::{atif_command, stderr, stdout};

/// A trajectory of `n_steps` agent steps calling `function`; `run_id` changes only volatile data.
fn trajectory(n_steps: usize, function: &str, run_id: &str) -> Value {
    let steps: Vec<Value> = (1..=n_steps)
        .map(|step_id| {
            let call = format!("call_{run_id}_{step_id}");
            json!({
                "step_id": step_id,
                "source": "agent",
                "timestamp": format!("2026-02-0{step_id}T10:00:00Z"),
                "message": "working",
                "tool_calls": [{"tool_call_id": call, "function_name": function, "arguments": {"n": step_id}}],
                "observation": {"results": [{"source_call_id": call, "content": "done"}]},
                "metrics": {"prompt_tokens": 1000, "completion_tokens": 50},
            })
        })
        .collect();
    json!({
        "schema_version": "ATIF-v1.8",
        "session_id": format!("s-{run_id}"),
        "agent": {"name": "cli-agent", "version": "2", "model_name": "m-1"},
        "steps": steps,
    })
}

fn write(dir: &Path, name: &str, doc: &Value) {
    std::fs::write(dir.join(name), serde_json::to_string_pretty(doc).unwrap()).unwrap();
}

/// `atif check ARGS` in `dir`, with the mode and CI variables given and nothing inherited.
fn atif_check(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = atif_command(&["check"]);
    command.current_dir(dir).args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

const CI: (&str, &str) = ("CI", "true");

#[test]
fn a_missing_golden_exits_1_names_atif_check_update_and_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    let output = atif_check(dir.path(), &[CI], &["golden.json", "run.json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "golden file golden.json does not exist; record it with: atif check --update golden.json run.json\n"
    );
    assert_eq!(file_names(dir.path()), ["run.json"]);
}

#[test]
fn update_command_replaces_the_fix_named_in_both_failure_messages() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    let fix = "pytest --atif-update 'tests/test_agent.py::test_x[a b]'";
    let missing =
        atif_check(dir.path(), &[CI], &["golden.json", "run.json", "--update-command", fix]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
    assert_eq!(
        stdout(&missing),
        format!("golden file golden.json does not exist; record it with: {fix}\n")
    );
    atif_check(dir.path(), &[], &["--update", "golden.json", "run.json"]);
    write(dir.path(), "run.json", &trajectory(2, "grep", "b"));
    let changed =
        atif_check(dir.path(), &[CI], &["golden.json", "run.json", "--update-command", fix]);
    assert_eq!(changed.status.code(), Some(1), "{}", stderr(&changed));
    let text = stdout(&changed);
    assert_eq!(text.lines().last().unwrap(), format!("if this change is intended: {fix}"));
}

#[test]
fn update_creates_then_prints_what_it_erased_then_stays_silent_when_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    let created = atif_check(dir.path(), &[CI], &["--update", "golden.json", "run.json"]);
    assert_eq!(created.status.code(), Some(0), "{}", stderr(&created));
    assert_eq!(stdout(&created), "created golden golden.json\n");
    let golden: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("golden.json")).unwrap())
            .unwrap();
    assert_eq!(golden["steps"][0]["tool_calls"][0]["tool_call_id"], "call_1");

    write(dir.path(), "run.json", &trajectory(1, "rg", "b"));
    let changed = atif_check(dir.path(), &[CI], &["--update", "golden.json", "run.json"]);
    assert_eq!(changed.status.code(), Some(0), "{}", stderr(&changed));
    let text = stdout(&changed);
    assert!(
        text.starts_with(
            "changed golden golden.json; this update erased:\n--- golden (erased)\n+++ actual\n"
        ),
        "{text}"
    );
    assert!(text.contains("\n-          \"function_name\": \"grep\",\n"), "{text}");

    write(dir.path(), "run.json", &trajectory(1, "rg", "c"));
    let unchanged = atif_check(dir.path(), &[CI], &["--update", "golden.json", "run.json"]);
    assert_eq!(stdout(&unchanged), "unchanged golden golden.json\n");
    assert_eq!(file_names(dir.path()), ["golden.json", "run.json"]);
}

#[test]
fn a_behaviour_change_exits_1_with_the_delta_on_the_second_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    atif_check(dir.path(), &[], &["--update", "golden.json", "run.json"]);
    write(dir.path(), "run.json", &trajectory(2, "grep", "b"));
    let output = atif_check(dir.path(), &[CI], &["golden.json", "run.json", "--no-content"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "agent behaviour changed (6 difference(s)):", "{text}");
    assert_eq!(lines[1], "  step_count: 1 -> 2");
    assert!(
        text.contains("what moved, step by step:\n  step 2 (agent) inserted: calls grep\n"),
        "{text}"
    );
    assert!(!text.contains("content_hash"), "--no-content skips the hash: {text}");
    assert_eq!(
        lines.last().unwrap(),
        &"if this change is intended: atif check --update golden.json run.json --no-content"
    );
}

#[test]
fn a_failing_local_run_leaves_a_pending_file_and_a_ci_run_never_does() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    atif_check(dir.path(), &[], &["--update", "golden.json", "run.json"]);
    write(dir.path(), "run.json", &trajectory(2, "grep", "a"));

    let on_ci = atif_check(dir.path(), &[CI], &["golden.json", "run.json"]);
    assert_eq!(on_ci.status.code(), Some(1));
    let explicit_review_on_ci =
        atif_check(dir.path(), &[CI, ("ATIF_GOLDEN", "review")], &["golden.json", "run.json"]);
    assert_eq!(explicit_review_on_ci.status.code(), Some(1));
    assert_eq!(file_names(dir.path()), ["golden.json", "run.json"]);

    let local = atif_check(dir.path(), &[("CI", "false")], &["golden.json", "run.json"]);
    assert_eq!(local.status.code(), Some(1));
    assert!(stdout(&local).contains("pending: the actual run was written to golden.json.new\n"));
    assert_eq!(file_names(dir.path()), ["golden.json", "golden.json.new", "run.json"]);
}

#[test]
fn update_mode_from_the_environment_writes_even_on_ci_because_it_was_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    let output =
        atif_check(dir.path(), &[CI, ("ATIF_GOLDEN", "update")], &["golden.json", "run.json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "created golden golden.json\n");
}

#[test]
fn an_unknown_mode_value_is_an_error_not_a_silent_default() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    let output = atif_check(dir.path(), &[("ATIF_GOLDEN", "updat")], &["golden.json", "run.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: unknown ATIF_GOLDEN value `updat`: expected one of auto, check, review, update (or unset)\n"
    );
    assert_eq!(file_names(dir.path()), ["run.json"]);
}

#[test]
fn a_schema_version_bump_exits_1_and_asks_for_a_re_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut old = trajectory(1, "grep", "a");
    old["schema_version"] = json!("ATIF-v1.6");
    write(dir.path(), "run.json", &old);
    atif_check(dir.path(), &[], &["--update", "golden.json", "run.json"]);
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    let output = atif_check(dir.path(), &[CI], &["golden.json", "run.json"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "the schema version changed from ATIF-v1.6 (golden file golden.json) to ATIF-v1.8 (this run), \
         so re-record the golden with: atif check --update golden.json run.json\n"
    );
}

#[test]
fn token_tolerance_and_no_content_let_token_drift_pass() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    atif_check(dir.path(), &[], &["--update", "golden.json", "run.json"]);
    let mut drifted = trajectory(1, "grep", "b");
    drifted["steps"][0]["metrics"]["prompt_tokens"] = json!(1040);
    write(dir.path(), "run.json", &drifted);

    let strict = atif_check(dir.path(), &[CI], &["golden.json", "run.json", "--no-content"]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(stdout(&strict).starts_with(
        "agent behaviour changed (1 difference(s)):\n  prompt_tokens: 1000 -> 1040\n"
    ));

    let args = ["golden.json", "run.json", "--no-content", "--token-tolerance", "0.05"];
    let lenient = atif_check(dir.path(), &[CI], &args);
    assert_eq!(lenient.status.code(), Some(0), "{}{}", stdout(&lenient), stderr(&lenient));
    assert_eq!(stdout(&lenient), "golden golden.json matches\n");
}

#[test]
fn a_negative_or_non_numeric_token_tolerance_exits_2_saying_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    for bad in ["-0.1", "NaN", "inf", "ten percent"] {
        let flag = format!("--token-tolerance={bad}");
        let output = atif_check(dir.path(), &[CI], &["golden.json", "run.json", &flag]);
        assert_eq!(output.status.code(), Some(2), "{bad}");
        let message = stderr(&output);
        assert!(
            message.starts_with(&format!(
                "error: invalid value '{bad}' for '--token-tolerance <F>': expected a finite number of 0 or more (0.1 for 10%), got `{bad}`"
            )),
            "{message}"
        );
    }
    assert_eq!(file_names(dir.path()), ["run.json"]);
}

#[test]
fn a_negative_token_tolerance_as_a_separate_argument_gets_the_same_message() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    let output =
        atif_check(dir.path(), &[CI], &["golden.json", "run.json", "--token-tolerance", "-1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with(
            "error: invalid value '-1' for '--token-tolerance <F>': expected a finite number of 0 or more (0.1 for 10%), got `-1`"
        ),
        "{}",
        stderr(&output)
    );
    assert_eq!(file_names(dir.path()), ["run.json"]);
}

#[test]
fn normalisation_flags_apply_to_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let mut recorded = trajectory(1, "grep", "a");
    recorded["steps"][0]["extra"] = json!({"request_id": "req-1"});
    write(dir.path(), "run.json", &recorded);
    atif_check(dir.path(), &[], &["--update", "golden.json", "run.json"]);
    recorded["steps"][0]["extra"] = json!({"request_id": "req-2"});
    write(dir.path(), "run.json", &recorded);

    let strict = atif_check(dir.path(), &[CI], &["golden.json", "run.json"]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(
        stdout(&strict).starts_with("agent behaviour changed (1 difference(s)):\n  content_hash: ")
    );

    let args = ["golden.json", "run.json", "--selector", ".steps[].extra.request_id"];
    let selected = atif_check(dir.path(), &[CI], &args);
    assert_eq!(selected.status.code(), Some(0), "{}{}", stdout(&selected), stderr(&selected));
    let args = ["golden.json", "run.json", "--volatile", "request_id"];
    let volatile = atif_check(dir.path(), &[CI], &args);
    assert_eq!(volatile.status.code(), Some(0), "{}{}", stdout(&volatile), stderr(&volatile));
}

/// A root run that spawned subagents named `names`, embedded in that (completion) order.
fn with_subagents(names: &[&str]) -> Value {
    let mut doc = trajectory(1, "spawn", "a");
    let subagents: Vec<Value> = names
        .iter()
        .map(|name| {
            json!({
                "schema_version": "ATIF-v1.8",
                "trajectory_id": format!("t-{name}"),
                "agent": {"name": name, "version": "1", "model_name": "m-mini"},
                "steps": [{"step_id": 1, "source": "agent", "message": format!("{name} at work")}],
            })
        })
        .collect();
    doc["subagent_trajectories"] = json!(subagents);
    doc
}

#[test]
fn subagent_order_is_ignored_unless_keep_subagent_order_is_given() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &with_subagents(&["alpha", "beta"]));
    atif_check(dir.path(), &[], &["--update", "sorted.json", "run.json"]);
    let args = ["--update", "kept.json", "run.json", "--keep-subagent-order"];
    atif_check(dir.path(), &[], &args);
    write(dir.path(), "run.json", &with_subagents(&["beta", "alpha"]));

    let sorted = atif_check(dir.path(), &[CI], &["sorted.json", "run.json"]);
    assert_eq!(sorted.status.code(), Some(0), "{}{}", stdout(&sorted), stderr(&sorted));

    // The Shape lists subagent names sorted, so only the content hash sees the new order.
    let args = ["kept.json", "run.json", "--keep-subagent-order"];
    let kept = atif_check(dir.path(), &[CI], &args);
    assert_eq!(kept.status.code(), Some(1), "{}", stderr(&kept));
    let text = stdout(&kept);
    assert!(
        text.starts_with("agent behaviour changed (1 difference(s)):\n  content_hash: "),
        "{text}"
    );
    assert!(text.contains("\n-          \"message\": \"alpha at work\",\n"), "{text}");
}

#[test]
fn unreadable_inputs_exit_2_and_invalid_ones_exit_1_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.json"), "{\"steps\": [").unwrap();
    let output = atif_check(dir.path(), &[CI], &["golden.json", "broken.json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("error: broken.json: invalid JSON at line 1, column 11"),
        "{}",
        stderr(&output)
    );

    let output = atif_check(dir.path(), &[CI], &["golden.json", "missing.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).starts_with("error: cannot read missing.json"), "{}", stderr(&output));

    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    std::fs::write(dir.path().join("golden.json"), "not json").unwrap();
    let output = atif_check(dir.path(), &[CI], &["golden.json", "run.json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("error: golden file golden.json: invalid JSON at line 1"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn the_actual_can_come_from_standard_input() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    atif_check(dir.path(), &[], &["--update", "golden.json", "run.json"]);
    let mut child = Command::new(atif_test_support::atif_binary())
        .current_dir(dir.path())
        .args(["check", "golden.json", "-"])
        .env_remove("ATIF_GOLDEN")
        .env("CI", "true")
        .env_remove("ATIF_GOLDEN_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&trajectory(1, "grep", "z")).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "golden golden.json matches\n");
}

#[test]
fn a_run_from_standard_input_is_suggested_piped_in_again() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    atif_check(dir.path(), &[], &["--update", "golden.json", "run.json"]);
    let changed = serde_json::to_vec(&trajectory(2, "grep", "a")).unwrap();
    let mut command = atif_command(&["check", "golden.json", "-"]);
    command.current_dir(dir.path()).env("CI", "true");
    let output = atif_test_support::run_with_stdin(command, &changed);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.ends_with(
            "if this change is intended: <the run> | atif check --update golden.json -\n"
        ),
        "{text}"
    );

    // A run read from a file is named as it is.
    write(dir.path(), "two.json", &trajectory(2, "grep", "a"));
    let output = atif_check(dir.path(), &[("CI", "true")], &["golden.json", "two.json"]);
    assert!(
        stdout(&output)
            .ends_with("if this change is intended: atif check --update golden.json two.json\n")
    );
}

#[test]
fn thirty_two_processes_updating_thirty_two_goldens_in_one_folder_all_land_intact() {
    // One process per test, as under nextest: each writes its own golden into the shared
    // folder and appends to the shared check log at the same time.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("check-log.jsonl");
    for idx in 0..32 {
        write(dir.path(), &format!("run_{idx}.json"), &trajectory(idx % 5 + 1, "grep", "a"));
    }
    let children: Vec<_> = (0..32)
        .map(|idx| {
            Command::new(atif_test_support::atif_binary())
                .current_dir(dir.path())
                .args([
                    "check",
                    "--update",
                    &format!("golden/g_{idx}.json"),
                    &format!("run_{idx}.json"),
                ])
                .env_remove("ATIF_GOLDEN")
                .env("CI", "true")
                .env("ATIF_GOLDEN_LOG", &log)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    }
    assert_eq!(file_names(&dir.path().join("golden")).len(), 32);
    assert_eq!(atif_golden::review::read_check_log(&log).unwrap().len(), 32);
    for idx in 0..32 {
        write(dir.path(), "rerun.json", &trajectory(idx % 5 + 1, "grep", "b"));
        let output =
            atif_check(dir.path(), &[CI], &[&format!("golden/g_{idx}.json"), "rerun.json"]);
        assert_eq!(output.status.code(), Some(0), "golden {idx}: {}", stdout(&output));
    }
}

#[test]
fn every_check_appends_a_line_to_the_check_log_when_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("check-log.jsonl");
    let log_env = ("ATIF_GOLDEN_LOG", log.to_str().unwrap());
    write(dir.path(), "run.json", &trajectory(1, "grep", "a"));
    atif_check(dir.path(), &[CI, log_env], &["golden.json", "run.json"]);
    atif_check(dir.path(), &[CI, log_env], &["--update", "golden.json", "run.json"]);
    atif_check(dir.path(), &[CI, log_env], &["golden.json", "run.json"]);
    let entries = atif_golden::review::read_check_log(&log).unwrap();
    let outcomes: Vec<String> = entries
        .iter()
        .map(|entry| format!("{:?} {} {}", entry.outcome, entry.path.display(), entry.test))
        .collect();
    // The check log names goldens by absolute path, so a reader anywhere can place them.
    let golden = dir.path().join("golden.json");
    let golden = golden.display();
    assert_eq!(
        outcomes,
        [
            format!("Failed {golden} golden"),
            format!("Created {golden} golden"),
            format!("Matched {golden} golden")
        ]
    );
}
