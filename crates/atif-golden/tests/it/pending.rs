//! Tests of the review workflow: finding, reviewing, accepting and rejecting pending files,
//! and update runs of a real test command.

use std::path::{Path, PathBuf};

use atif_golden::review::{PendingStatus, Tally, find_pending, pending_path};
use atif_golden::{Mode, check};

use crate::{run, settings};

/// A project with one golden recorded and two pending files: a changed run of that golden and
/// a first run of a golden that does not exist yet; plus a decoy under `node_modules/`.
fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let golden = root.path().join("crates/a/tests/golden/a__one.json");
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    check(&golden, run(2, "grep", "a"), &settings(Mode::Review)).unwrap_err();
    let fresh = root.path().join("tests/golden/fixtures__new.json");
    check(&fresh, run(1, "grep", "a"), &settings(Mode::Review)).unwrap_err();
    let decoy = root.path().join("node_modules/x/golden.json");
    check(&decoy, run(1, "grep", "a"), &settings(Mode::Review)).unwrap_err();
    (root, golden, fresh)
}

fn relative(root: &Path, paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|path| path.strip_prefix(root).unwrap().display().to_string()).collect()
}

#[test]
fn pending_files_are_found_anywhere_but_target_node_modules_and_hidden_folders() {
    let (root, golden, fresh) = project();
    let found = find_pending(root.path(), None).unwrap();
    let goldens: Vec<PathBuf> = found.iter().map(|item| item.golden.clone()).collect();
    assert_eq!(goldens, [golden.clone(), fresh]);
    assert_eq!(found[0].pending, pending_path(&golden));
    let filtered = find_pending(root.path(), Some("fixtures__")).unwrap();
    assert_eq!(
        relative(root.path(), &[filtered[0].golden.clone()]),
        ["tests/golden/fixtures__new.json"]
    );
    assert_eq!(filtered.len(), 1);
}

#[test]
fn a_review_names_the_status_the_deltas_and_the_report() {
    let (root, _, _) = project();
    let found = find_pending(root.path(), None).unwrap();
    let changed = atif_golden::review::review(&found[0]).unwrap();
    assert_eq!(changed.status, PendingStatus::Changed);
    assert_eq!(changed.deltas[0], "step_count: 1 -> 2");
    let text = changed.render(root.path());
    assert!(
        text.starts_with(
            "== crates/a/tests/golden/a__one.json\nagent behaviour changed (7 difference(s)):\n  step_count: 1 -> 2\n"
        ),
        "{text}"
    );
    assert!(text.contains("what moved, step by step:\n  step 2 (agent) inserted"), "{text}");
    let new = atif_golden::review::review(&found[1]).unwrap();
    assert_eq!(new.status, PendingStatus::New);
    assert!(new.render(root.path()).starts_with(
        "== tests/golden/fixtures__new.json\nnew golden (none recorded yet), shape:\n  {\"step_count\":1,"
    ));
}

#[test]
fn accept_moves_the_pending_file_into_place_and_reject_deletes_it() {
    let (root, golden, fresh) = project();
    let found = find_pending(root.path(), Some("a__one")).unwrap();
    assert_eq!(atif_golden::review::accept(&found[0]).unwrap(), golden);
    check(&golden, run(2, "grep", "a"), &settings(Mode::Check)).unwrap();
    let found = find_pending(root.path(), None).unwrap();
    assert_eq!(found.len(), 1);
    atif_golden::review::reject(&found[0]).unwrap();
    assert!(find_pending(root.path(), None).unwrap().is_empty());
    assert!(!fresh.exists());
}

#[test]
fn a_pending_file_that_is_not_a_trajectory_is_never_accepted() {
    let (root, golden, _) = project();
    let before = std::fs::read(&golden).unwrap();
    let pending = pending_path(&golden);
    let duplicate = r#"{"schema_version": "ATIF-v1.8", "steps": [], "steps": []}"#;
    for (text, pointer) in [(duplicate, "/steps"), (r#"{"hello": "world"}"#, "/schema_version")] {
        std::fs::write(&pending, text).unwrap();
        let found = find_pending(root.path(), Some("a__one")).unwrap();
        let err = atif_golden::review::accept(&found[0]).unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with(&format!("{}: {pointer}", pending.display())), "{message}");
        assert_eq!(std::fs::read(&golden).unwrap(), before, "the golden is left alone");
        assert!(pending.exists(), "the pending file stays for a look");
    }
}

#[test]
fn the_interactive_review_acts_on_each_answer_and_asks_again_on_an_unknown_one() {
    let (root, golden, fresh) = project();
    let found = find_pending(root.path(), None).unwrap();
    let mut input = std::io::Cursor::new("what\na\nr\n");
    let mut output = Vec::new();
    let tally =
        atif_golden::review::review_interactively(&found, root.path(), &mut input, &mut output)
            .unwrap();
    assert_eq!(tally, Tally { accepted: 1, rejected: 1, skipped: 0 });
    let shown = String::from_utf8(output).unwrap();
    assert!(shown.starts_with("[1/2] == crates/a/tests/golden/a__one.json\n"), "{shown}");
    // Asked three times (an unknown answer is asked again, after the list of keys).
    assert_eq!(shown.matches("accept (a), reject (r), skip (s), quit (q)").count(), 3);
    assert_eq!(shown.matches("unknown answer `what`: a accepts").count(), 1, "{shown}");
    assert!(shown.contains("accepted crates/a/tests/golden/a__one.json\n"), "{shown}");
    assert!(shown.contains("rejected tests/golden/fixtures__new.json.new\n"), "{shown}");
    check(&golden, run(2, "grep", "a"), &settings(Mode::Check)).unwrap();
    assert!(!fresh.exists() && !pending_path(&fresh).exists());
}

#[test]
fn an_interactive_review_that_runs_out_of_answers_skips_the_rest() {
    let (root, _, _) = project();
    let found = find_pending(root.path(), None).unwrap();
    let mut input = std::io::Cursor::new("s\n");
    let tally =
        atif_golden::review::review_interactively(&found, root.path(), &mut input, &mut Vec::new())
            .unwrap();
    assert_eq!(tally, Tally { accepted: 0, rejected: 0, skipped: 2 });
    assert_eq!(find_pending(root.path(), None).unwrap().len(), 2);
}

#[cfg(unix)]
#[test]
fn an_update_run_sums_up_what_the_checks_of_a_real_test_command_did() {
    let root = tempfile::tempdir().unwrap();
    let kept = root.path().join("tests/golden/kept.json");
    let gone = root.path().join("tests/golden/gone.json");
    for golden in [&kept, &gone] {
        check(golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    }
    // A test command in another language: it appends one line to the check log, as `atif check`
    // does, and checks that it runs in update mode.
    let line = format!(r#"{{"outcome":"changed","path":"{}","test":"t"}}"#, kept.display());
    let script = format!(
        "test \"$ATIF_GOLDEN\" = update && printf '%s\\n' '{line}' >> \"$ATIF_GOLDEN_LOG\""
    );
    let mut command = std::process::Command::new("sh");
    command.args(["-c", &script]);
    let summary = atif_golden::review::run_update(root.path(), command, false).unwrap();
    assert!(summary.tests_passed);
    assert_eq!(summary.changed, [kept]);
    assert_eq!(summary.deleted_candidates, Some(vec![gone]));

    let mut failing = std::process::Command::new("sh");
    failing.args(["-c", "exit 3"]);
    let summary = atif_golden::review::run_update(root.path(), failing, false).unwrap();
    assert!(!summary.tests_passed);
    assert_eq!(summary.deleted_candidates, None);
    assert!(
        summary
            .to_string()
            .ends_with("(some tests failed: goldens no test touched are not listed)\n")
    );
}

#[test]
fn stale_temp_files_are_found_in_every_walked_folder_and_removed_with_a_filter() {
    let (root, golden, fresh) = project();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let dead_name = format!(".atif-{dead}-Stale1.tmp");
    let golden_dir = golden.parent().unwrap();
    let fresh_dir = fresh.parent().unwrap();
    let skipped = root.path().join("target");
    std::fs::create_dir_all(&skipped).unwrap();
    for dir in [golden_dir, fresh_dir, root.path(), &skipped] {
        std::fs::write(dir.join(&dead_name), "half").unwrap();
    }
    let live = golden_dir.join(format!(".atif-{}-Live1.tmp", std::process::id()));
    std::fs::write(&live, "being written").unwrap();

    let found = atif_golden::review::find_stale_temp_files_under(root.path(), None).unwrap();
    let expected = [
        dead_name.clone(),
        format!("crates/a/tests/golden/{dead_name}"),
        format!("tests/golden/{dead_name}"),
    ];
    assert_eq!(relative(root.path(), &found), expected);

    let removed =
        atif_golden::review::remove_stale_temp_files_under(root.path(), Some("crates/")).unwrap();
    assert_eq!(relative(root.path(), &removed), [expected[1].clone()]);
    assert!(!golden_dir.join(&dead_name).exists());
    assert!(live.exists(), "a running writer's file stays");
    assert!(fresh_dir.join(&dead_name).exists(), "outside the filter");
    let left = atif_golden::review::find_stale_temp_files_under(root.path(), None).unwrap();
    assert_eq!(relative(root.path(), &left), [expected[0].clone(), expected[2].clone()]);
}
