//! Tests of what `atif check` leaves for CI: the artifacts bundle of a failing check (on CI
//! too, and never beside the golden), JUnit XML with the deltas as properties, and the GitHub
//! step summary, which holds no message content.
#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use crate::{atif_command, stderr, stdout};

/// A phrase only the runs' messages hold: it must never reach the step summary.
const CONTENT: &str = "message-content-that-stays-private";

/// A one-step run calling `function`.
fn run(function: &str) -> String {
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "ci-agent", "version": "1"},
        "steps": [{"step_id": 1, "source": "agent", "message": format!("{CONTENT} <b>&"),
                   "tool_calls": [{"tool_call_id": "c", "function_name": function, "arguments": {}}]}]
    })
    .to_string()
}

/// A folder with `goldens/calc.json` (a golden of a run calling `read`) and `run.json`, a run
/// calling `function`.
fn fixture(function: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("goldens")).unwrap();
    std::fs::write(dir.path().join("golden-run.json"), run("read")).unwrap();
    let update =
        check(dir.path(), &["--update", "goldens/calc.json", "golden-run.json"]).output().unwrap();
    assert_eq!(update.status.code(), Some(0), "{}", stderr(&update));
    std::fs::write(dir.path().join("run.json"), run(function)).unwrap();
    dir
}

/// `atif check ARGS` in `dir`, outside CI and GitHub unless the caller says otherwise.
fn check(dir: &Path, args: &[&str]) -> Command {
    let mut command = atif_command(&["check"]);
    command.args(args).current_dir(dir);
    for var in ["CI", "ATIF_GOLDEN", "ATIF_ARTIFACTS", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"] {
        command.env_remove(var);
    }
    command
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_failing_check_on_ci_writes_the_bundle_into_the_artifacts_folder_and_nothing_beside_the_golden()
{
    let dir = fixture("grep");
    let artifacts = dir.path().join("bundle");
    let output: Output = check(dir.path(), &["goldens/calc.json", "run.json"])
        .env("CI", "true")
        .env("ATIF_ARTIFACTS", &artifacts)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(files_in(&dir.path().join("goldens")), ["calc.json"], "nothing beside the golden");
    assert_eq!(
        files_in(&artifacts),
        ["goldens__calc.html", "goldens__calc.json", "goldens__calc.report.txt"]
    );
    // The run as the golden would hold it: `atif normalize`'s text.
    let normalized =
        atif_command(&["normalize", "run.json"]).current_dir(dir.path()).output().unwrap();
    let saved = std::fs::read_to_string(artifacts.join("goldens__calc.json")).unwrap();
    assert_eq!(saved, stdout(&normalized));
    let report = std::fs::read_to_string(artifacts.join("goldens__calc.report.txt")).unwrap();
    assert!(report.contains("calls grep instead of read"), "{report}");
    assert_eq!(report.trim_end(), stdout(&output).trim_end());
    let page = std::fs::read_to_string(artifacts.join("goldens__calc.html")).unwrap();
    assert!(page.contains("<div class=\"row changed first\" id=\"first\""), "the HTML diff");
}

#[test]
fn the_artifacts_flag_wins_over_the_environment_and_a_passing_check_writes_nothing() {
    let dir = fixture("grep");
    let (flag_dir, env_dir) = (dir.path().join("flag"), dir.path().join("env"));
    let output = check(dir.path(), &["--artifacts", "flag", "goldens/calc.json", "run.json"])
        .env("CI", "1")
        .env("ATIF_ARTIFACTS", &env_dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(files_in(&flag_dir).len(), 3);
    assert!(!env_dir.exists());
    let passing = check(dir.path(), &["goldens/calc.json", "golden-run.json"])
        .env("ATIF_ARTIFACTS", &env_dir)
        .output()
        .unwrap();
    assert_eq!(passing.status.code(), Some(0), "{}", stderr(&passing));
    assert!(!env_dir.exists(), "a passing check leaves no bundle");
}

#[test]
fn junit_xml_names_the_golden_and_holds_each_delta_as_a_property() {
    let dir = fixture("grep");
    let output = check(dir.path(), &["--junit", "junit.xml", "goldens/calc.json", "run.json"])
        .env("CI", "true")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let xml = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        xml.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"1\" failures=\"1\">"
        ),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase classname=\"atif.check\" name=\"goldens/calc.json\">"),
        "{xml}"
    );
    assert!(xml.contains("<property name=\"verdict\" value=\"behaviour-changed\"/>"), "{xml}");
    assert!(xml.contains("<property name=\"delta.functions\" value=\"functions: "), "{xml}");
    assert!(
        xml.contains("<property name=\"delta.content_hash\" value=\"content_hash: &quot;"),
        "{xml}"
    );
    assert!(xml.contains("<failure message=\""), "{xml}");
    assert!(!xml.contains("<b>&"), "the report's text is escaped: {xml}");
    let passing =
        check(dir.path(), &["--junit", "pass.xml", "goldens/calc.json", "golden-run.json"])
            .output()
            .unwrap();
    assert_eq!(passing.status.code(), Some(0), "{}", stderr(&passing));
    let xml = std::fs::read_to_string(dir.path().join("pass.xml")).unwrap();
    assert!(xml.contains("failures=\"0\"") && !xml.contains("<failure"), "{xml}");
    assert!(xml.contains("<property name=\"verdict\" value=\"matched\"/>"), "{xml}");
}

#[test]
fn on_github_actions_check_and_golden_pending_append_a_table_without_message_content() {
    let dir = fixture("grep");
    let summary: PathBuf = dir.path().join("summary.md");
    // A passing check first: it would remove the pending file a failing one leaves.
    let passing = check(dir.path(), &["goldens/calc.json", "golden-run.json"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(passing.status.code(), Some(0), "{}", stderr(&passing));
    let failing = check(dir.path(), &["goldens/calc.json", "run.json"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(failing.status.code(), Some(1), "{}", stderr(&failing));
    assert!(dir.path().join("goldens/calc.json.new").exists(), "off CI, the pending file");
    let pending = atif_command(&["golden", "pending", "--dir", "goldens"])
        .current_dir(dir.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(pending.status.code(), Some(1), "{}", stderr(&pending));
    let table = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(
        table,
        "| golden | verdict | deltas |\n| --- | --- | --- |\n\
         | `goldens/calc.json` | matched | – |\n\
         | `goldens/calc.json` | behaviour-changed | functions, content_hash |\n\
         | `calc.json` | pending: behaviour changed | functions, content_hash |\n"
    );
    assert!(!table.contains(CONTENT) && !table.contains("grep"), "no content in the summary");
}
