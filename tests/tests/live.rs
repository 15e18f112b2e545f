//! `atif live` as a user who changed a prompt runs it: 20 runs of a real agent process against
//! the fake provider's sampling mode, checked against an envelope of 40, and the verdict read
//! in one screen (24 rows of 80 columns) that says how the behaviour moved.
#![allow(clippy::unwrap_used, reason = "test code")]

use std::path::Path;
use std::process::Output;

use atif_fake_provider::{Config, FakeProvider, Sampling};
use tests::e2e;

/// A terminal's screen: 24 rows of 80 columns.
const ROWS: usize = 24;
const COLUMNS: usize = 80;

/// How many rows `text` takes on the screen, long lines wrapping.
fn rows(text: &str) -> usize {
    text.lines().map(|line| line.chars().count().div_ceil(COLUMNS).max(1)).sum()
}

/// `atif live --runs N --jobs 4 --golden g.json [--update] -- python agent.py` against a
/// sampling provider that calls `write` in `extra` of its conversations.
fn live(python: &Path, dir: &Path, seed: u64, extra: f64, runs: &str, update: bool) -> Output {
    let mut config = Config::default();
    config.set_sampling(Some(Sampling { seed, extra, swap: 0.3, fail: 0.0, token_band: 0.1 }));
    let provider = FakeProvider::start(config).unwrap();
    let agent = atif_test_support::workspace_root().join("tests/fixtures/docs/agent.py");
    let mut command = e2e::atif_in_clean_env(dir, std::env::var_os("PATH").unwrap_or_default());
    command.args(["live", "--runs", runs, "--jobs", "4", "--golden", "g.json"]);
    if update {
        command.arg("--update");
    }
    command.args(["--upstream", provider.url(), "--"]).arg(python).arg(agent);
    command.output().unwrap()
}

#[test]
fn a_prompt_change_is_read_in_one_screen_that_says_how_behaviour_moved() {
    let Some(python) = e2e::python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let written = live(&python, dir.path(), 1, 0.1, "40", true);
    assert_eq!(written.status.code(), Some(0), "{}", e2e::describe(&written));

    // The prompt changed: the model now calls `write` in 60% of conversations, not 10%.
    let moved = live(&python, dir.path(), 2, 0.6, "20", false);
    assert_eq!(moved.status.code(), Some(1), "{}", e2e::describe(&moved));
    let screen = format!(
        "{}{}",
        String::from_utf8_lossy(&moved.stderr),
        String::from_utf8_lossy(&moved.stdout)
    );
    assert!(rows(&screen) <= ROWS, "{} rows:\n{screen}", rows(&screen));
    let report = String::from_utf8_lossy(&moved.stdout);
    let first = report.lines().next().unwrap_or_default();
    assert!(first.starts_with("changed: ") && first.contains("20 runs against an envelope of 40"));
    // How it moved: the tool it calls more, in how many runs, against how many before.
    let write =
        report.lines().find(|line| line.starts_with("  tool_runs.write: `write` called in "));
    let write = write.unwrap_or_else(|| panic!("no line on `write`:\n{report}"));
    assert!(write.contains("/20 runs, was ") && write.contains("/40 (p = "), "{write}");
    assert!(report.contains("\n  no clear change in: "), "{report}");

    // The same model again: nothing moved, in fewer rows still.
    let same = live(&python, dir.path(), 3, 0.1, "20", false);
    assert_eq!(same.status.code(), Some(0), "{}", e2e::describe(&same));
    let report = String::from_utf8_lossy(&same.stdout);
    assert!(report.starts_with("no clear change: "), "{report}");
    assert!(rows(&report) <= ROWS, "{report}");
}

#[test]
fn rows_count_wrapped_lines() {
    assert_eq!(rows("a\n\nb"), 3);
    assert_eq!(rows(&"x".repeat(81)), 2);
    assert_eq!(rows(&"α".repeat(80)), 1);
}
