//! Tests of `atif normalize`, `atif shape` and `atif diff`: the real binary on files in a temp
//! dir.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly on purpose")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::{atif_command, run_with_closed_stdout, stderr, stdout};

/// A run of one user step and `n_agent` agent steps calling `function`; `run_id` changes only
/// volatile data (session, timestamps, call ids, an address, costs).
fn run(n_agent: usize, function: &str, run_id: &str) -> Value {
    let mut steps = vec![json!({
        "step_id": 1, "source": "user", "message": format!("look at <obj at 0x7f{run_id}00c0ffee>"),
        "timestamp": format!("2026-01-01T00:00:0{}Z", run_id.len()),
    })];
    for idx in 0..n_agent {
        let call = format!("toolu_{run_id}_{idx}");
        steps.push(json!({
            "step_id": idx + 2, "source": "agent", "message": "working",
            "timestamp": format!("2026-01-0{}T00:00:00Z", idx + 1),
            "tool_calls": [{"tool_call_id": call, "function_name": function, "arguments": {"n": idx}}],
            "observation": {"results": [{"source_call_id": call, "content": "done"}]},
            "metrics": {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.5},
            "extra": {"request_id": format!("req-{run_id}")},
        }));
    }
    json!({
        "schema_version": "ATIF-v1.8",
        "session_id": format!("s-{run_id}"),
        "trajectory_id": format!("t-{run_id}"),
        "agent": {"name": "cli-agent", "version": "2", "model_name": "m-1"},
        "steps": steps,
    })
}

fn write(dir: &Path, name: &str, contents: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

fn write_json(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    write(dir, name, serde_json::to_string_pretty(doc).unwrap().as_bytes())
}

fn atif(args: &[&str]) -> Output {
    atif_command(args).output().unwrap()
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn normalize_prints_the_canonical_text_of_the_normalised_trajectory() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({
        "schema_version": "ATIF-v1.8", "session_id": "s", "trajectory_id": "t",
        "agent": {"name": "a", "version": "1", "extra": {}},
        "steps": [{"step_id": 1, "source": "user", "message": "héllo\tat 0x7f3c2a1b4c50", "timestamp": "now"}],
    });
    let file = write_json(dir.path(), "run.json", &doc);
    let output = atif(&["normalize", path_str(&file)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "{\n  \"agent\": {\n    \"name\": \"a\",\n    \"version\": \"1\"\n  },\n  \"schema_version\": \"ATIF-v1.8\",\n  \"steps\": [\n    {\n      \"message\": \"héllo\\tat 0xADDR\",\n      \"source\": \"user\",\n      \"step_id\": 1\n    }\n  ]\n}\n"
    );
}

#[test]
fn normalize_reads_standard_input_for_a_dash() {
    let mut child = Command::new(atif_test_support::atif_binary())
        .args(["normalize", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let text = br#"{"steps": [], "schema_version": "ATIF-v1.8", "a": null}"#;
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), text).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "{\n  \"schema_version\": \"ATIF-v1.8\",\n  \"steps\": []\n}\n");
}

#[test]
fn normalize_flags_add_volatile_keys_selectors_maskers_and_keep_subagent_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = run(1, "grep", "a");
    doc["subagent_trajectories"] = json!([
        {"trajectory_id": "z", "agent": {"name": "zeta", "version": "1"}, "steps": []},
        {"trajectory_id": "y", "agent": {"name": "alpha", "version": "1"}, "steps": []},
    ]);
    let file = write_json(dir.path(), "run.json", &doc);
    let output = atif(&[
        "normalize",
        path_str(&file),
        "--volatile",
        "request_id",
        "--selector",
        ".steps[].message=[msg]",
        "--mask",
        "cli-(agent)=CLI-$1",
        "--keep-subagent-order",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(out["agent"]["name"], "CLI-agent");
    assert_eq!(out["steps"][0]["message"], "[msg]");
    assert!(out["steps"][1].get("extra").is_none(), "request_id removed, then the empty extra");
    assert_eq!(out["subagent_trajectories"][0]["agent"]["name"], "zeta");
    assert_eq!(out["subagent_trajectories"][0]["trajectory_id"], "subagent_1");
}

#[test]
fn normalize_exits_1_on_what_is_not_a_trajectory_naming_the_file_and_the_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let array = write(dir.path(), "array.json", b"[1, 2]");
    let broken = write(dir.path(), "broken.json", b"{\"a\": ");
    let duplicate = write(dir.path(), "duplicate.json", b"{\"a\": 1, \"a\": 2}");
    let not_atif = write(dir.path(), "hello.json", br#"{"hello": "world"}"#);
    let mut huge = run(1, "f", "a");
    huge["steps"][0]["step_id"] = json!(1);
    let huge_text = serde_json::to_string(&huge).unwrap().replacen(
        "\"step_id\":1",
        "\"step_id\":1180591620717411303424",
        1,
    );
    let huge = write(dir.path(), "huge.json", huge_text.as_bytes());
    for (path, message) in [
        (&array, "(root): the root is an array: an ATIF trajectory is a JSON object"),
        (&broken, "invalid JSON at line 1, column 6: the document ends early"),
        (&duplicate, "/a: this key repeats an earlier key of the same object"),
        (&not_atif, "/schema_version: missing: not an ATIF trajectory"),
        (&huge, "/steps/0/step_id: an integer outside -2^63 … 2^64-1"),
    ] {
        let output = atif(&["normalize", path_str(path)]);
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        let expected = format!("error: {}: {message}", path.display());
        assert!(stderr(&output).starts_with(&expected), "{expected}\n{}", stderr(&output));
        assert_eq!(stdout(&output), "", "nothing half-written on standard output");
    }
}

#[test]
fn normalize_errors_exit_2_and_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let valid = write_json(dir.path(), "run.json", &run(1, "f", "a"));
    for (args, message) in [
        (vec!["normalize", path_str(&missing)], format!("error: cannot read {}: ", missing.display())),
        (
            vec!["normalize", path_str(&valid), "--selector", "steps"],
            "error: --selector: invalid selector `steps`: expected `.` or `[` starting a selector at column 1, found `s`".to_owned(),
        ),
        (
            vec!["normalize", path_str(&valid), "--mask", "(=x"],
            "error: --mask: invalid masking pattern `(`: regex parse error".to_owned(),
        ),
        (
            vec!["normalize", path_str(&valid), "--mask", "a*=x"],
            "error: --mask: masking pattern `a*` matches the empty string; expected a pattern that matches at least one character".to_owned(),
        ),
        (
            vec!["normalize", path_str(&valid), "--mask", "no-equals-sign"],
            "error: --mask: expected REGEX=REPLACEMENT, got `no-equals-sign`".to_owned(),
        ),
        (
            vec!["diff", "-", "-"],
            "error: GOLDEN and ACTUAL are both `-`: standard input can be read only once"
                .to_owned(),
        ),
        (
            vec!["diff", path_str(&valid), path_str(&valid), "--token-tolerance=-0.1"],
            "error: invalid value '-0.1' for '--token-tolerance <F>': expected a finite number of 0 or more".to_owned(),
        ),
        (
            vec!["diff", path_str(&valid), path_str(&valid), "--token-tolerance", "NaN"],
            "error: invalid value 'NaN' for '--token-tolerance <F>': expected a finite number of 0 or more".to_owned(),
        ),
    ] {
        let output = atif(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).starts_with(&message), "{args:?}: {}", stderr(&output));
        assert_eq!(stdout(&output), "", "nothing half-written on standard output");
    }
}

#[test]
fn a_selector_replacement_is_split_at_the_first_equals_sign_outside_a_quoted_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = run(1, "grep", "a");
    doc["extra"] = json!({"a=b": 1, "c": "x=y"});
    let file = write_json(dir.path(), "run.json", &doc);
    let output = atif(&[
        "normalize",
        path_str(&file),
        "--selector",
        r#".extra["a=b"]=one=1"#,
        "--selector",
        ".extra.c",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(out["extra"], json!({"a=b": "one=1"}));
}

/// Runs `atif` with `args` and closes its standard output before reading anything, as
/// `atif ... | head -0` would; returns the exit code and standard error.
fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let output = run_with_closed_stdout(atif_command(args));
    (output.status.code(), stderr(&output))
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // Each output is far larger than a pipe's buffer, so the writer meets the closed pipe
    // whether or not it started before the pipe was closed.
    let golden = write_json(dir.path(), "golden.json", &run(8000, "grep", "a"));
    let actual = write_json(dir.path(), "actual.json", &run(8001, "grep", "a"));
    for (args, code) in [
        (vec!["normalize", path_str(&golden)], 0),
        (vec!["shape", path_str(&golden)], 0),
        (vec!["shape", path_str(&golden), "--format", "json"], 0),
        (vec!["diff", path_str(&golden), path_str(&actual)], 1),
    ] {
        let (status, stderr) = with_closed_stdout(&args);
        assert_eq!((status, stderr.as_str()), (Some(code), ""), "{args:?}");
    }
}

#[test]
fn shape_prints_one_field_per_line_or_json_with_the_documented_names() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(dir.path(), "run.json", &run(2, "grep", "a"));
    let output = atif(&["shape", path_str(&file)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..10],
        [
            "step_count: 3",
            r#"sources: ["user","agent","agent"]"#,
            "llm_calls: 2",
            r#"functions: ["grep","grep"]"#,
            "tool_errors: []",
            "subagents: []",
            r#"models: ["m-1"]"#,
            "crashed: false",
            "prompt_tokens: 200",
            "completion_tokens: 20",
        ]
    );
    assert!(lines[10].starts_with("content_hash: \"") && lines.len() == 11, "{text}");

    let output = atif(&["shape", path_str(&file), "--format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let shape: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(shape["step_count"], 3);
    assert_eq!(shape["functions"], json!(["grep", "grep"]));
    assert_eq!(shape["content_hash"].as_str().unwrap(), &lines[10][15..27]);
}

#[test]
fn diff_of_runs_differing_only_in_volatile_data_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let golden = write_json(dir.path(), "golden.json", &run(2, "grep", "a"));
    let actual = write_json(dir.path(), "actual.json", &run(2, "grep", "bb"));
    let output = atif(&["diff", path_str(&golden), path_str(&actual), "--volatile", "request_id"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(
        stdout(&output),
        format!("{} and {} have the same Shape\n", golden.display(), actual.display())
    );
}

#[test]
fn diff_with_an_extra_step_exits_1_with_deltas_then_steps_then_the_unified_diff() {
    let dir = tempfile::tempdir().unwrap();
    let golden = write_json(dir.path(), "golden.json", &run(1, "grep", "a"));
    let actual = write_json(dir.path(), "actual.json", &run(2, "grep", "a"));
    let output = atif(&["diff", path_str(&golden), path_str(&actual)]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    let (golden, actual) = (golden.display(), actual.display());
    // Two runs, named as given: `atif diff` claims no golden and no behaviour change.
    assert!(
        text.starts_with(&format!(
            "{golden} -> {actual}: 7 differences in the Shape:\n  step_count: 2 -> 3\n"
        )),
        "{text}"
    );
    assert!(!text.contains("behaviour") && !text.contains("(golden -> actual)"), "{text}");
    let steps_at =
        text.find("\nwhat moved, step by step:\n  step 3 (agent) inserted: calls grep\n").unwrap();
    let diff_at =
        text.find(&format!("\n--- {golden}\n+++ {actual}\n@@ step 3 inserted @@\n+{{\n")).unwrap();
    assert!(text.find("content_hash: ").unwrap() < steps_at && steps_at < diff_at, "{text}");
}

#[test]
fn diff_names_a_subagent_that_came_or_changed_under_steps() {
    let dir = tempfile::tempdir().unwrap();
    let subagent = |id: &str, name: &str, function: &str| {
        let mut sub = run(1, function, id);
        sub["agent"]["name"] = json!(name);
        sub
    };
    let mut golden_doc = run(1, "grep", "a");
    golden_doc["subagent_trajectories"] = json!([subagent("s", "web", "search")]);
    let mut actual_doc = run(1, "grep", "b");
    actual_doc["subagent_trajectories"] =
        json!([subagent("s", "web", "fetch"), subagent("s", "tests", "pytest")]);
    let golden = write_json(dir.path(), "golden.json", &golden_doc);
    let actual = write_json(dir.path(), "actual.json", &actual_doc);

    let output = atif(&["diff", path_str(&golden), path_str(&actual), "--volatile", "request_id"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with(&format!(
            "{} -> {}: 2 differences in the Shape:\n  subagents: [\"web\"] -> [\"tests\",\"web\"]\n",
            golden.display(),
            actual.display()
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "\nwhat moved, step by step:\n  subagent \"tests\" inserted: 2 steps; calls pytest\n  subagent \"web\": step 2 (agent) changed: calls fetch instead of search\n"
        ),
        "{text}"
    );
}

#[test]
fn diff_options_skip_the_content_hash_and_band_the_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let golden_doc = run(1, "grep", "a");
    let mut actual_doc = golden_doc.clone();
    actual_doc["steps"][1]["observation"]["results"][0]["content"] = json!("other");
    actual_doc["steps"][1]["metrics"]["prompt_tokens"] = json!(105);
    let golden = write_json(dir.path(), "golden.json", &golden_doc);
    let actual = write_json(dir.path(), "actual.json", &actual_doc);

    let output = atif(&["diff", path_str(&golden), path_str(&actual), "--no-content"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).starts_with(&format!(
            "{} -> {}: 1 difference in the Shape:\n  prompt_tokens: 100 -> 105\nwhat moved, step by step:\n",
            golden.display(),
            actual.display()
        )),
        "{}",
        stdout(&output)
    );

    let output = atif(&[
        "diff",
        path_str(&golden),
        path_str(&actual),
        "--no-content",
        "--token-tolerance",
        "0.05",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn diff_accepts_an_already_normalised_golden() {
    let dir = tempfile::tempdir().unwrap();
    let raw = write_json(dir.path(), "raw.json", &run(2, "grep", "a"));
    let normalized = atif(&["normalize", path_str(&raw)]);
    let golden = write(dir.path(), "golden.json", &normalized.stdout);
    let actual = write_json(dir.path(), "actual.json", &run(2, "grep", "zz"));
    let output = atif(&["diff", path_str(&golden), path_str(&actual)]);
    assert_eq!(output.status.code(), Some(1), "request_id is not volatile by default");
    assert_eq!(atif(&["diff", path_str(&golden), path_str(&golden)]).status.code(), Some(0));
}

#[test]
fn diff_of_a_file_that_is_not_a_trajectory_exits_1_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let golden = write_json(dir.path(), "golden.json", &run(1, "grep", "a"));
    let actual = write(dir.path(), "actual.json", b"[]");
    let output = atif(&["diff", path_str(&golden), path_str(&actual)]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(&format!("{}: (root): the root is an array", actual.display())),
        "{}",
        stderr(&output)
    );
}

#[test]
fn the_diff_example_in_the_normalisation_guide_is_real_output() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let guide = std::fs::read_to_string(root.join("docs/normalization.md")).unwrap();
    let command =
        "$ atif diff examples/calculator-run.json examples/calculator-regressed.json | head -10\n";
    let start =
        guide.find(command).expect("the example is in docs/normalization.md") + command.len();
    let shown = &guide[start..start + guide[start..].find("```").unwrap()];

    let output = Command::new(atif_test_support::atif_binary())
        .args(["diff", "examples/calculator-run.json", "examples/calculator-regressed.json"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let first_ten: String = text.lines().take(10).map(|line| format!("{line}\n")).collect();
    assert_eq!(shown, first_ten, "update the example in docs/normalization.md");
}
