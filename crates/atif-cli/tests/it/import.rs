//! Tests of `atif import`: the real binary on our own fixtures (from atif-import) and on files
//! in a temp dir.
#![allow(clippy::unwrap_used, reason = "test helpers panic on broken test setup")]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../atif-import/tests/fixtures").join(rel)
}

fn atif(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_atif"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        pipe.write_all(bytes).unwrap();
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn trajectory(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn a_stream_on_standard_input_prints_the_trajectory_and_says_which_format_was_detected() {
    let log = std::fs::read(fixture("claude-stream/basic.jsonl")).unwrap();
    let output = atif(&["import", "-"], Some(&log));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .starts_with("atif import: format claude-stream (detected); 9 records, 0 skipped"),
        "{}",
        stderr(&output)
    );
    let text = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(text.starts_with("{\n  \""), "pretty JSON expected: {text}");
    let t = trajectory(&output);
    assert_eq!(t["schema_version"], "ATIF-v1.8");
    assert_eq!(t["steps"].as_array().unwrap().len(), 2);
    assert_eq!(t["subagent_trajectories"].as_array().unwrap().len(), 1);
}

#[test]
fn skipped_records_are_counted_by_type_on_standard_error() {
    let path = fixture("codex-rollout/usage-after.jsonl");
    let output = atif(&["import", "--format", "codex-rollout", path.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.starts_with("atif import: format codex-rollout (as asked); 19 records, 1 skipped"),
        "{err}"
    );
    assert!(err.contains("skipped 1 × unknown record type `mystery_record`"), "{err}");
    assert_eq!(trajectory(&output)["extra"]["crashed"], true);
}

#[test]
fn strict_mode_fails_with_exit_1_naming_the_line() {
    let path = fixture("claude-code/basic.jsonl");
    let output = atif(&["import", "--strict", path.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output)
            .contains("line 7: unknown claude-code record type `brand-new-record` (strict mode)"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_unrecognised_log_exits_1_and_lists_the_known_formats() {
    let output = atif(&["import", "-"], Some(b"{\"hello\":\"world\"}\n"));
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output).contains("unrecognised log: none of the first 1 records looks like a known format (known: claude-code, claude-stream, codex-rollout, codex-exec)"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn empty_and_broken_input_exit_1_with_the_reason() {
    let empty = atif(&["import", "-"], Some(b""));
    assert_eq!(empty.status.code(), Some(1));
    assert!(stderr(&empty).contains("standard input: the log is empty"), "{}", stderr(&empty));
    let broken = atif(&["import", "-"], Some(b"{\"type\":\"turn.started\"}\nnot json\n{}\n"));
    assert_eq!(broken.status.code(), Some(1));
    assert!(stderr(&broken).contains("line 2 is not JSON"), "{}", stderr(&broken));
}

#[test]
fn a_forced_format_that_does_not_fit_exits_1() {
    let path = fixture("codex-exec/basic.jsonl");
    let output = atif(&["import", "--format", "claude-code", path.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("no claude-code records in the log (it looks like codex-exec)"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_unreadable_file_exits_2_and_an_unknown_format_name_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let output = atif(&["import", missing.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cannot read"), "{}", stderr(&output));
    let output = atif(&["import", "--format", "gemini", "-"], Some(b""));
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_claude_code_session_folder_brings_its_subagents() {
    let path = fixture("claude-code/project");
    let output = atif(&["import", path.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let t = trajectory(&output);
    let ids: Vec<&str> = t["subagent_trajectories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["trajectory_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["agent-a7f3", "agent-b9c1"]);
}

#[test]
fn a_truncated_log_imports_with_a_warning_and_is_marked_crashed() {
    let path = fixture("claude-code/truncated.jsonl");
    let output = atif(&["import", path.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("warning: line 6: the last line is cut short"),
        "{}",
        stderr(&output)
    );
    assert_eq!(trajectory(&output)["extra"]["crashed"], true);
}
