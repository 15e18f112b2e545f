//! Tests of `assert_golden!`: naming, settings, duplicate detection.

use std::path::Path;

use atif_golden::{Mode, Settings, assert_golden};

use crate::{file_names, run, settings};

fn update_in(dir: &Path) -> Settings {
    let mut settings = settings(Mode::Update);
    settings.set_golden_dir(dir);
    settings
}

/// Runs `f` on a thread named like a test, returning the panic message if it panicked.
pub(crate) fn on_test_thread(name: &str, f: impl FnOnce() + Send) -> Option<String> {
    std::thread::scope(|scope| {
        let handle =
            std::thread::Builder::new().name(name.to_owned()).spawn_scoped(scope, f).unwrap();
        handle.join().err().map(|payload| match payload.downcast::<String>() {
            Ok(message) => *message,
            Err(payload) => payload.downcast::<&str>().map(|s| (*s).to_owned()).unwrap_or_default(),
        })
    })
}

#[test]
fn the_golden_is_named_after_the_test_function() {
    let dir = tempfile::tempdir().unwrap();
    assert_golden!(run(1, "grep", "a"), &update_in(dir.path()));
    assert_eq!(
        file_names(dir.path()),
        ["it__macros__the_golden_is_named_after_the_test_function.json"]
    );
}

#[test]
fn named_goldens_keep_their_distinguishing_part() {
    let dir = tempfile::tempdir().unwrap();
    let settings = update_in(dir.path());
    for case in ["case a", "case/b", "v1.8"] {
        assert_golden!(name: case, run(1, "grep", case), &settings);
    }
    assert_eq!(
        file_names(dir.path()),
        [
            "it__macros__named_goldens_keep_their_distinguishing_part__case_a.json",
            "it__macros__named_goldens_keep_their_distinguishing_part__case_b.json",
            "it__macros__named_goldens_keep_their_distinguishing_part__v1.8.json",
        ]
    );
}

#[test]
fn a_name_with_dot_dot_slash_cannot_escape_the_golden_folder() {
    let root = tempfile::tempdir().unwrap();
    let golden_dir = root.path().join("a/b/golden");
    assert_golden!(name: "../../../escaped", run(1, "grep", "a"), &update_in(&golden_dir));
    let files = file_names(&golden_dir);
    assert_eq!(files.len(), 1);
    assert!(files[0].ends_with("escaped.json") && !files[0].contains(".."), "{files:?}");
    assert_eq!(file_names(root.path()), ["a"]);
    assert_eq!(file_names(&root.path().join("a")), ["b"]);
    assert_eq!(file_names(&root.path().join("a/b")), ["golden"]);
}

#[test]
fn settings_bound_to_the_scope_are_used_without_being_passed() {
    let dir = tempfile::tempdir().unwrap();
    update_in(dir.path()).bind(|| {
        assert_golden!(name: "bound", run(1, "grep", "a"));
    });
    assert_eq!(file_names(dir.path()).len(), 1);
}

/// A helper two tests share: both resolve to the helper's golden.
fn shared_helper(settings: &Settings) {
    assert_golden!(run(1, "grep", "a"), settings);
}

#[test]
fn two_tests_resolving_to_one_golden_are_caught_and_both_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let settings = update_in(dir.path());
    assert_eq!(on_test_thread("module::first_test", || shared_helper(&settings)), None);
    let message = on_test_thread("module::second_test", || shared_helper(&settings)).unwrap();
    assert!(
        message.contains("it__macros__shared_helper.json is claimed twice in one run"),
        "{message}"
    );
    assert!(
        message.contains("by `module::first_test` and then by `module::second_test`"),
        "{message}"
    );
}

/// The body of a parametrised test, as rstest generates it: one function the harness runs
/// under one name per case (`macros::parametrised_body::case_1_small`, ...).
fn parametrised_body(n_steps: usize, settings: &Settings) {
    assert_golden!(run(n_steps, "grep", "a"), settings);
}

#[test]
fn parametrised_tests_keep_their_case_in_the_golden_name() {
    let dir = tempfile::tempdir().unwrap();
    let settings = update_in(dir.path());
    for (case, n_steps) in [("case_1_small", 1), ("case_2_large", 3)] {
        let thread = format!("macros::parametrised_body::{case}");
        assert_eq!(on_test_thread(&thread, || parametrised_body(n_steps, &settings)), None);
    }
    assert_eq!(
        file_names(dir.path()),
        [
            "it__macros__parametrised_body__case_1_small.json",
            "it__macros__parametrised_body__case_2_large.json",
        ]
    );
}

#[test]
fn a_failing_assertion_panics_with_the_failure_message_and_the_test_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut check_only = settings(Mode::Check);
    check_only.set_golden_dir(dir.path());
    let message = on_test_thread("suite::records_nothing", || {
        assert_golden!(run(1, "grep", "a"), &check_only);
    })
    .unwrap();
    assert!(message.starts_with("golden file "), "{message}");
    assert!(
        message.ends_with(
            "record it with: ATIF_GOLDEN=update cargo test -p atif-golden suite::records_nothing"
        ),
        "{message}"
    );
    assert!(file_names(dir.path()).is_empty());
}

#[test]
fn a_broken_golden_panics_with_the_cause_not_just_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut check_only = settings(Mode::Check);
    check_only.set_golden_dir(dir.path());
    let golden = dir.path().join("it__macros__unreadable_golden.json");
    std::fs::create_dir(&golden).unwrap();
    let message = on_test_thread("suite::unreadable", || unreadable_golden(&check_only)).unwrap();
    assert!(
        message.starts_with(&format!("cannot read golden file {}: ", golden.display())),
        "{message}"
    );
    assert_eq!(message.matches("(os error ").count(), 1, "the OS reason, once: {message}");
}

fn unreadable_golden(settings: &Settings) {
    assert_golden!(run(1, "grep", "a"), settings);
}

#[test]
fn each_assertion_appends_its_test_and_outcome_to_the_check_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("check-log.jsonl");
    let mut settings = update_in(&dir.path().join("golden"));
    settings.set_log_file(Some(log.clone()));
    assert_golden!(name: "first", run(1, "grep", "a"), &settings);
    assert_golden!(name: "second", run(1, "grep", "a"), &settings);
    let entries = atif_golden::review::read_check_log(&log).unwrap();
    let seen: Vec<_> = entries
        .iter()
        .map(|entry| {
            (entry.outcome, entry.path.file_name().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    let prefix = "it__macros__each_assertion_appends_its_test_and_outcome_to_the_check_log";
    assert_eq!(
        seen,
        [
            (atif_golden::review::OutcomeKind::Created, format!("{prefix}__first.json")),
            (atif_golden::review::OutcomeKind::Created, format!("{prefix}__second.json")),
        ]
    );
    for entry in &entries {
        assert_eq!(
            entry.test,
            "macros::each_assertion_appends_its_test_and_outcome_to_the_check_log"
        );
    }
}

/// A workspace in a temp dir: `atif.toml` at its root with `project_file`, and a member crate
/// `agent` whose goldens `names` (of its test `calc::checks`) hold `run(1, "grep", "a")`.
/// Returns the workspace and the member's folder.
fn workspace_with(project_file: &str, names: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("Cargo.toml"), "[workspace]\nmembers = [\"agent\"]\n").unwrap();
    std::fs::write(root.path().join(atif_golden::PROJECT_FILE), project_file).unwrap();
    let agent = root.path().join("agent");
    std::fs::create_dir_all(agent.join("tests/golden")).unwrap();
    std::fs::write(agent.join("Cargo.toml"), "[package]\nname = \"agent\"\nversion = \"0.1.0\"\n")
        .unwrap();
    let text = atif_golden::canonical_text(&run(1, "grep", "a"), &Settings::new()).unwrap();
    for name in names {
        let golden = agent.join(format!("tests/golden/calc__checks__{name}.json"));
        std::fs::write(golden, &text).unwrap();
    }
    (root, agent)
}

/// Asserts the golden `name` of the member crate at `agent` against `actual` as the macro
/// does (from the test `calc::checks` of package `agent`): the panic message, if any.
fn assert_in(
    agent: &Path,
    name: &str,
    actual: &serde_json::Value,
    settings: &Settings,
) -> Option<String> {
    on_test_thread(&format!("calc::checks::{name}"), || {
        let manifest_dir = agent.to_str().unwrap();
        atif_golden::__private::assert_golden(
            manifest_dir,
            "agent",
            "calc::checks",
            Some(name),
            actual,
            settings,
        );
    })
}

#[test]
fn the_project_file_above_the_crate_applies_to_its_goldens_under_what_the_settings_set() {
    let (_root, agent) = workspace_with(
        "[defaults]\ntoken_tolerance = 0.5\ncontent = false\n\n\
         [[golden]]\nglob = \"agent/tests/golden/*__volatile*.json\"\ncontent = true\n\
         volatile = [\"message\"]\n",
        &["tolerant", "volatile", "tolerant_off", "volatile_off"],
    );
    // 30% more prompt tokens: within the file's tolerance, where content is not compared.
    let mut actual = run(1, "grep", "b");
    actual["steps"][0]["metrics"]["prompt_tokens"] = serde_json::json!(130);
    // Another first message: volatile for one golden only (its glob is relative to the file's
    // folder), whose content is compared.
    let mut changed_message = run(1, "grep", "b");
    changed_message["steps"][0]["message"] = serde_json::json!("another message");
    let check = settings(Mode::Check);
    assert_eq!(assert_in(&agent, "tolerant", &actual, &check), None);
    assert_eq!(assert_in(&agent, "volatile", &changed_message, &check), None);
    // The same runs with the file turned off: the token count and the message are changes.
    let mut without = settings(Mode::Check);
    without.set_project_file(false);
    let failure = assert_in(&agent, "tolerant_off", &actual, &without).expect("the tokens moved");
    assert!(failure.contains("prompt_tokens: 100 -> 130"), "{failure}");
    let failure =
        assert_in(&agent, "volatile_off", &changed_message, &without).expect("message moved");
    assert!(failure.contains("content_hash"), "{failure}");
}

#[test]
fn a_tolerance_set_by_hand_wins_over_the_project_file() {
    let (_root, agent) =
        workspace_with("[defaults]\ntoken_tolerance = 0.5\ncontent = false\n", &["tolerant"]);
    let mut actual = run(1, "grep", "b");
    actual["steps"][0]["metrics"]["prompt_tokens"] = serde_json::json!(130);
    let mut exact = settings(Mode::Check);
    exact.set_token_tolerance(0.0);
    let failure = assert_in(&agent, "tolerant", &actual, &exact).expect("the tokens moved");
    assert!(failure.contains("prompt_tokens: 100 -> 130"), "{failure}");
}

#[test]
fn a_broken_project_file_fails_the_assertion_naming_the_file_and_the_line() {
    let (root, agent) =
        workspace_with("[defaults]\ntoken_tolerance = 0.5\ncolour = \"red\"\n", &["tolerant"]);
    let failure = assert_in(&agent, "tolerant", &run(1, "grep", "a"), &settings(Mode::Check))
        .expect("the file is not valid");
    let file = root.path().join(atif_golden::PROJECT_FILE);
    assert!(failure.contains(&file.display().to_string()), "{failure}");
    assert!(failure.contains("line 3") && failure.contains("unknown field `colour`"), "{failure}");
}
