//! Tests of `atif validate`, run on the real binary with files in temp dirs.
#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::{atif_command, run_with_closed_stdout, run_with_stdin, stderr, stdout};

/// Runs `atif validate ARGS...` with `stdin` on standard input.
fn validate(args: &[&str], stdin: &[u8]) -> Output {
    let mut command = atif_command(&["validate"]);
    command.args(args);
    run_with_stdin(command, stdin)
}

/// A valid two-step trajectory.
fn valid_doc() -> Value {
    json!({
        "schema_version": "ATIF-v1.7",
        "session_id": "s-1",
        "agent": {"name": "demo", "version": "1.0"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "list files"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "calling ls",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "ls", "arguments": {}}],
                "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]}
            }
        ]
    })
}

/// Writes `bytes` to `name` in `dir` and returns the path as a string.
fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

fn doc_bytes(document: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(document).unwrap()
}

#[test]
fn a_valid_file_prints_one_summary_line_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "ok.json", &doc_bytes(&valid_doc()));
    let output = validate(&[&path], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), format!("{path}: valid (ATIF-v1.7, 2 steps, 0 warnings)\n"));
}

#[test]
fn an_invalid_file_prints_one_line_per_finding_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let mut document = valid_doc();
    document["steps"][1]["observation"]["results"][0]["source_call_id"] = json!("c9");
    document["steps"][0]["model_name"] = json!("m");
    let path = write(dir.path(), "bad.json", &doc_bytes(&document));
    let output = validate(&[&path], b"");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], format!("{path}: invalid (ATIF-v1.7, 2 steps, 2 errors, 0 warnings)"));
    assert!(lines[1].starts_with("  error[agent-only-field] /steps/0/model_name: "), "{text}");
    assert!(
        lines[2].starts_with(
            "  error[call-join] /steps/1/observation/results/0/source_call_id: source_call_id \"c9\""
        ),
        "{text}"
    );
}

#[test]
fn warnings_of_valid_files_are_printed_and_fail_only_with_deny_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let mut document = valid_doc();
    document["schema_version"] = json!("ATIF-v1.5");
    document["final_metrics"] = json!({"total_steps": 3});
    let path = write(dir.path(), "warn.json", &doc_bytes(&document));
    let output = validate(&[&path], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with(&format!("{path}: valid (ATIF-v1.5, 2 steps, 1 warning)\n")),
        "{text}"
    );
    assert!(text.contains("\n  warning[total-steps] /final_metrics/total_steps: "), "{text}");

    let output = validate(&["--deny-warnings", &path], b"");
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.starts_with(&format!("{path}: invalid (ATIF-v1.5, 2 steps, 0 errors, 1 warning)\n")),
        "{text}"
    );
    assert!(text.contains("warning[total-steps]"), "{text}");

    let output = validate(&["--deny-warnings", "--format", "json", &path], b"");
    assert_eq!(output.status.code(), Some(1));
    let reports: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(reports[0]["valid"], false);
    assert_eq!(reports[0]["findings"][0]["severity"], "warning");
}

#[test]
fn json_output_is_an_array_of_file_reports() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", &doc_bytes(&valid_doc()));
    let mut document = valid_doc();
    document["steps"][1]["step_id"] = json!(3);
    let bad = write(dir.path(), "bad.json", &doc_bytes(&document));
    let output = validate(&["--format", "json", &good, &bad], b"");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let reports: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        reports,
        json!([
            {"file": good, "valid": true, "version": "ATIF-v1.7", "findings": []},
            {"file": bad, "valid": false, "version": "ATIF-v1.7", "findings": [{
                "rule": "step-sequence",
                "severity": "error",
                "pointer": "/steps/1/step_id",
                "message": "expected step_id 2 (step ids count 1, 2, 3… in array order), found 3"
            }]}
        ])
    );
}

#[test]
fn a_dash_reads_standard_input() {
    let output = validate(&["-"], &doc_bytes(&valid_doc()));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "<stdin>: valid (ATIF-v1.7, 2 steps, 0 warnings)\n");
    let output = validate(&["--format", "json", "-"], b"[]");
    assert_eq!(output.status.code(), Some(1));
    let reports: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(reports[0]["file"], "<stdin>");
    assert_eq!(reports[0]["version"], Value::Null);
    assert_eq!(reports[0]["findings"][0]["rule"], "root-object");
}

#[test]
fn several_files_end_with_the_totals_and_findings_do_not_repeat_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", &doc_bytes(&valid_doc()));
    let mut document = valid_doc();
    document["steps"][0]["model_name"] = json!("m");
    let bad = write(dir.path(), "bad.json", &doc_bytes(&document));
    let output = validate(&[&good, &bad], b"");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], format!("{good}: valid (ATIF-v1.7, 2 steps, 0 warnings)"));
    assert_eq!(lines[1], format!("{bad}: invalid (ATIF-v1.7, 2 steps, 1 error, 0 warnings)"));
    assert!(lines[2].starts_with("  error[agent-only-field] /steps/0/model_name: "), "{text}");
    assert_eq!(lines[3], "2 files: 1 valid, 1 invalid; 1 error, 0 warnings");
    assert_eq!(text.matches(bad.as_str()).count(), 1, "{text}");
}

#[test]
fn the_harbor_profile_accepts_python_habits_that_strict_rejects() {
    let text = r#"{"agent": {"name": "a", "version": "1"}, "session_id": "s",
        "steps": [{"step_id": "1", "source": "agent", "message": "x", "metrics": {"cost_usd": NaN}}]}"#;
    let output = validate(&["--profile", "harbor", "-"], text.as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let out = stdout(&output);
    assert!(out.starts_with("<stdin>: valid (ATIF-v1.8, 1 step, 3 warnings)\n"), "{out}");

    let output = validate(&["-"], text.as_bytes());
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(out.starts_with("<stdin>: invalid (no version, 1 step, 3 errors, "), "{out}");
    assert!(out.contains("\n  error[schema-version]: missing schema_version"), "{out}");
    assert!(
        out.contains("\n  error[non-finite-number] /steps/0/metrics/cost_usd: `NaN` is not JSON"),
        "{out}"
    );
    assert!(
        out.contains(
            "\n  error[type] /steps/0/step_id: expected an integer, found the string \"1\""
        ),
        "{out}"
    );
}

#[test]
fn hostile_inputs_are_invalid_with_a_clear_message_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_objects = format!("{}1{}", "{\"a\": ".repeat(100_000), "}".repeat(100_000));
    let bom = [b"\xEF\xBB\xBF".as_slice(), &doc_bytes(&valid_doc())].concat();
    let cases: [(&str, &[u8], &str); 11] = [
        (
            "malformed.json",
            b"{\"schema_version\": \"ATIF-v1.7\",\n  \"agent\" {}}",
            "error[json]: invalid JSON at line 2, column 11: expected `:`",
        ),
        (
            "deep-objects.json",
            deep_objects.as_bytes(),
            "error[json]: invalid JSON at line 1, column 763: nested deeper than 128",
        ),
        ("empty.json", b"", "error[json]: empty document"),
        ("bom.json", &bom, "error[json]: the file starts with a UTF-8 byte-order mark"),
        (
            "latin1.json",
            b"{\"a\": \"caf\xE9\"}",
            "error[json]: invalid JSON at line 1, column 11: invalid UTF-8 (byte 0xE9",
        ),
        (
            "nan.json",
            b"{\"schema_version\": NaN}",
            "error[non-finite-number] /schema_version: `NaN` is not JSON",
        ),
        (
            "garbage.json",
            b"{} trailing",
            "error[json]: invalid JSON at line 1, column 4: trailing characters",
        ),
        (
            "array.json",
            b"[{}, {}]",
            "error[root-object]: expected a JSON object (one trajectory), found an array of 2 elements",
        ),
        (
            "one.json",
            b"[{}]",
            "error[root-object]: expected a JSON object (one trajectory), found an array of 1 element;",
        ),
        (
            "deep.json",
            deep.as_bytes(),
            "error[json]: invalid JSON at line 1, column 128: nested deeper than 128",
        ),
        (
            "truncated.json",
            b"{\"steps\": [",
            "error[json]: invalid JSON at line 1, column 11: the document ends early",
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = write(dir.path(), name, bytes);
        let output = validate(&[&path], b"");
        assert_eq!(output.status.code(), Some(1), "{name}: {}", stderr(&output));
        let out = stdout(&output);
        assert!(out.starts_with(&format!("{path}: invalid (")), "{name}: {out}");
        assert!(out.contains(&format!("\n  {expected}")), "{name}: {out}");
        assert!(stderr(&output).is_empty(), "{name}: {}", stderr(&output));
    }
}

#[test]
fn a_directory_or_a_missing_file_exits_2_naming_the_path_and_the_rest_is_still_checked() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", &doc_bytes(&valid_doc()));
    let folder = dir.path().to_str().unwrap().to_owned();
    let missing = dir.path().join("missing.json").to_str().unwrap().to_owned();
    for unreadable in [&folder, &missing] {
        let output = validate(&[unreadable, &good], b"");
        assert_eq!(output.status.code(), Some(2), "{unreadable}");
        assert!(
            stderr(&output).contains(&format!("cannot read {unreadable}")),
            "{}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), format!("{good}: valid (ATIF-v1.7, 2 steps, 0 warnings)\n"));
    }
    assert!(stderr(&validate(&[&folder], b"")).contains("it is a directory"));
}

#[test]
fn bad_arguments_exit_2() {
    for args in [&["--profile", "lax", "-"][..], &[], &["--format", "yaml", "-"]] {
        let output = validate(args, b"{}");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(!stderr(&output).is_empty(), "{args:?}");
    }
}

#[test]
fn missing_media_files_beside_a_file_fail_the_harbor_profile_and_warn_in_strict() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("images")).unwrap();
    std::fs::write(dir.path().join("images/here.png"), b"png").unwrap();
    let mut document = valid_doc();
    document["schema_version"] = json!("ATIF-v1.8");
    document["steps"][0]["message"] = json!([
        {"type": "image", "source": {"media_type": "image/png", "path": "images/here.png"}},
        {"type": "image", "source": {"media_type": "image/png", "path": "images/gone.png"}}
    ]);
    let bytes = doc_bytes(&document);
    let path = write(dir.path(), "run.json", &bytes);
    let pointer = "/steps/0/message/1/source/path";

    // Relative paths are resolved against the trajectory's folder, not the working directory.
    let output = validate(&["--profile", "harbor", &path], b"");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let gone = dir.path().join("images/gone.png");
    assert_eq!(
        stdout(&output),
        format!(
            "{path}: invalid (ATIF-v1.8, 2 steps, 1 error, 0 warnings)\n  error[media-file] {pointer}: the image file \"images/gone.png\" does not \
             exist (looked for {:?}); Harbor's validator rejects the trajectory file for this\n",
            gone.to_str().unwrap()
        )
    );

    let output = validate(&[&path], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.starts_with(&format!("{path}: valid (ATIF-v1.8, 2 steps, 1 warning)\n")), "{out}");
    assert!(out.contains(&format!("\n  warning[media-file] {pointer}")), "{out}");

    // Like Harbor's --no-validate-images; standard input has no folder, so it is never checked.
    let output = validate(&["--profile", "harbor", "--no-media-check", &path], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let output = validate(&["--profile", "harbor", "-"], &bytes);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));

    // Once the file is there, the harbor profile accepts the document.
    std::fs::write(&gone, b"png").unwrap();
    let output = validate(&["--profile", "harbor", &path], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "ok.json", &doc_bytes(&valid_doc()));
    // Enough output to fill a pipe, with its reading end closed at once.
    let files = vec![path.as_str(); 5_000];
    let mut command = atif_command(&["validate"]);
    command.args(&files);
    let output = run_with_closed_stdout(command);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).is_empty(), "{}", stderr(&output));
}

#[test]
fn the_example_in_docs_validation_md_is_real_output() {
    let dir = tempfile::tempdir().unwrap();
    let document = json!({
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "demo", "version": "1.0"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "add 2 and 3"},
            {"step_id": 2, "source": "agent", "message": "thinking"},
            {"step_id": 3, "source": "agent", "message": "thinking more"},
            {
                "step_id": 4,
                "source": "agent",
                "message": "calling add",
                "tool_calls": [{"tool_call_id": "call_1", "function_name": "add", "arguments": {"a": 2, "b": 3}}],
                "observation": {"results": [{"source_call_id": "call_9", "content": "5"}]}
            }
        ]
    });
    std::fs::write(dir.path().join("run.json"), doc_bytes(&document)).unwrap();
    let output = Command::new(atif_test_support::atif_binary())
        .args(["validate", "run.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let out = stdout(&output);
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/validation.md"),
    )
    .unwrap();
    let block = format!("```text\n{out}```");
    assert!(docs.contains(&block), "docs/validation.md should show this real output:\n{block}");
}

#[test]
fn the_command_examples_in_docs_validation_md_are_real_output() {
    let dir = tempfile::tempdir().unwrap();
    let old = json!({
        "schema_version": "ATIF-v1.6",
        "session_id": "main",
        "agent": {"name": "delegator", "version": "0.6"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "summarise the repo"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "delegating",
                "tool_calls": [{"tool_call_id": "d1", "function_name": "delegate", "arguments": {}}],
                "observation": {"results": [{"source_call_id": "d1", "subagent_trajectory_ref": [{"session_id": "child"}]}]}
            }
        ]
    });
    std::fs::write(dir.path().join("old.json"), doc_bytes(&old)).unwrap();
    let run = |args: &[&str]| {
        Command::new(atif_test_support::atif_binary())
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/validation.md"),
    )
    .unwrap();

    let json_output = run(&["validate", "--format", "json", "old.json"]);
    assert_eq!(json_output.status.code(), Some(1));
    let block = format!("$ atif validate --format json old.json\n{}```", stdout(&json_output));
    assert!(docs.contains(&block), "docs/validation.md should show:\n{block}");

    let upgrade = run(&["upgrade", "old.json", "-o", "new.json"]);
    assert_eq!(upgrade.status.code(), Some(1), "the ref cannot be resolved, so it stays invalid");
    assert!(!dir.path().join("new.json").exists(), "nothing is written");
    let block = format!("$ atif upgrade old.json -o new.json\n{}```", stderr(&upgrade));
    assert!(docs.contains(&block), "docs/validation.md should show:\n{block}");
}
