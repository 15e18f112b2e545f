//! Tests of `atif import`: the real binary on our own fixtures (from atif-import) and on files
//! in a temp dir.
#![allow(clippy::unwrap_used, reason = "test helpers panic on broken test setup")]

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

use crate::{atif_command, run_with_closed_stdout, run_with_stdin, stderr, stdout};

fn fixture(rel: &str) -> PathBuf {
    atif_test_support::workspace_path("crates/atif-import/tests/fixtures").join(rel)
}

fn atif(args: &[&str], stdin: Option<&[u8]>) -> Output {
    run_with_stdin(atif_command(args), stdin.unwrap_or_default())
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
    let output = atif(&["import", "--from", "codex-rollout", path.to_str().unwrap()], None);
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
        stderr(&output).contains("unrecognised log: none of the first 1 records looks like a known format (known: claude-code, claude-stream, codex-rollout, codex-exec, gemini-session, gemini-stream, opencode-run, opencode-export, pi-json, pi-session, otel)"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn empty_and_broken_input_exit_1_with_the_reason() {
    let empty = atif(&["import", "-"], Some(b""));
    assert_eq!(empty.status.code(), Some(1));
    assert!(stderr(&empty).contains("standard input: the log is empty"), "{}", stderr(&empty));
    let broken = atif(&["import", "-"], Some(b"not json\n{\"type\":\"turn.started\"}\n"));
    assert_eq!(broken.status.code(), Some(1));
    assert!(stderr(&broken).contains("line 1 is not JSON"), "{}", stderr(&broken));
    let log = b"{\"type\":\"turn.started\"}\nnot json\n{}\n";
    let strict = atif(&["import", "--strict", "-"], Some(log));
    assert_eq!(strict.status.code(), Some(1));
    assert!(stderr(&strict).contains("line 2 is not JSON"), "{}", stderr(&strict));
}

#[test]
fn a_forced_format_that_does_not_fit_exits_1() {
    let path = fixture("codex-exec/basic.jsonl");
    let output = atif(&["import", "--from", "claude-code", path.to_str().unwrap()], None);
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
    // The operating system's own words for this file, shown once after the path.
    let reason = std::fs::read(&missing).unwrap_err().to_string();
    assert_eq!(stderr(&output), format!("error: cannot read {}: {reason}\n", missing.display()));
    assert_eq!(stderr(&output).matches(&reason).count(), 1, "{}", stderr(&output));
    let output = atif(&["import", "--from", "gemini", "-"], Some(b""));
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

#[test]
fn every_claude_code_and_codex_sample_of_the_corpus_imports_in_strict_mode() {
    let Some(logs) = atif_test_support::corpus("logs") else { return };
    // A sample with an inline image writes it beside the output: into this temp folder, never
    // into the checkout.
    let cwd = tempfile::tempdir().unwrap();
    let mut n_samples = 0;
    for dir in std::fs::read_dir(&logs).unwrap().flatten() {
        let name = dir.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("claude-code-") || name.starts_with("codex-")) {
            continue;
        }
        for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let path = file.path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            n_samples += 1;
            let mut command = atif_command(&["import", "--strict", path.to_str().unwrap()]);
            command.current_dir(cwd.path());
            let output = run_with_stdin(command, b"");
            assert_eq!(output.status.code(), Some(0), "{}: {}", path.display(), stderr(&output));
            assert!(stderr(&output).contains(" records, 0 skipped"), "{}", stderr(&output));
            assert_eq!(trajectory(&output)["schema_version"], "ATIF-v1.8");
        }
    }
    assert_eq!(n_samples, 9, "the corpus holds nine Claude Code and Codex samples");
    assert!(
        cwd.path().join("atif-import.media").is_dir(),
        "a sample's image went to the temp folder"
    );
}

#[test]
fn a_folder_without_a_single_session_is_named_once_with_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.jsonl", "b.jsonl"] {
        std::fs::write(dir.path().join(name), b"").unwrap();
    }
    let folder = dir.path().to_str().unwrap();
    let output = atif(&["import", folder], None);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output).trim_end(),
        format!(
            "error: {folder}: expected a log file, or a Claude Code project folder holding one session `.jsonl`, found 2 .jsonl files"
        )
    );
}

#[test]
fn a_bad_line_in_a_file_names_the_file_once_the_line_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.jsonl");
    std::fs::write(&log, "{\"type\":\"turn.started\"}\n{\"type\": }\n").unwrap();
    let output = atif(&["import", "--strict", log.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output).trim_end(),
        format!("error: {}: line 2 is not JSON: expected value at column 10", log.display())
    );
}

/// Runs `atif` in `dir` with `stdin`, as a shell pipeline stage would, with no golden mode or
/// CI setting inherited.
fn atif_in(dir: &std::path::Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut command = atif_command(args);
    command.current_dir(dir);
    run_with_stdin(command, stdin)
}

/// The lines docs/import.md shows after the console line `$ {command}`, up to the end of the
/// block or the line `until` (excluded).
fn doc_output(command: &str, until: &str) -> String {
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/import.md"),
    )
    .unwrap();
    let start = doc.find(&format!("$ {command}\n")).unwrap_or_else(|| panic!("no `$ {command}`"));
    doc[start..]
        .lines()
        .skip(1)
        .take_while(|line| !line.starts_with("$ ") && *line != "```" && *line != until)
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn the_ci_recipe_in_docs_import_md_shows_the_real_output() {
    let dir = tempfile::tempdir().unwrap();
    let run = std::fs::read(fixture("claude-stream/basic.jsonl")).unwrap();
    let killed = std::fs::read(fixture("claude-stream/killed.jsonl")).unwrap();
    let imported = atif_in(dir.path(), &["import", "-"], &run);
    let import_line = stderr(&imported);
    let record = atif_in(
        dir.path(),
        &["check", "--update", "--preset", "claude-code", "golden.json", "-"],
        &imported.stdout,
    );
    let command =
        "cat run.jsonl | atif import - | atif check --update --preset claude-code golden.json -";
    assert_eq!(
        format!("{import_line}{}{}", stderr(&record), String::from_utf8_lossy(&record.stdout)),
        doc_output(command, "")
    );
    let shape = atif_in(dir.path(), &["shape", "--preset", "claude-code", "-"], &imported.stdout);
    let command = "cat run.jsonl | atif import - 2>/dev/null | atif shape --preset claude-code -";
    assert_eq!(String::from_utf8_lossy(&shape.stdout), doc_output(command, ""));
    let killed = atif_in(dir.path(), &["import", "-"], &killed);
    let check = atif_in(
        dir.path(),
        &["check", "--preset", "claude-code", "golden.json", "-"],
        &killed.stdout,
    );
    assert_eq!(check.status.code(), Some(1));
    let text = format!("{}{}", String::from_utf8_lossy(&check.stdout), stderr(&check));
    let command = "cat killed.jsonl | atif import - 2>/dev/null | atif check --preset claude-code golden.json -";
    let shown =
        doc_output(command, "unified diff (golden -> actual), first 3 of 4 changed places:");
    assert!(text.starts_with(&shown), "docs/import.md shows:\n{shown}\nthe check prints:\n{text}");

    let events = std::fs::read(fixture("codex-exec/basic.jsonl")).unwrap();
    let imported = atif_in(dir.path(), &["import", "-"], &events);
    let shape = atif_in(dir.path(), &["shape", "--preset", "codex", "-"], &imported.stdout);
    let command = "cat events.jsonl | atif import - 2>/dev/null | atif shape --preset codex -";
    assert_eq!(String::from_utf8_lossy(&shape.stdout), doc_output(command, ""));
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let log = fixture("claude-code/basic.jsonl");
    let output = run_with_closed_stdout(atif_command(&["import", log.to_str().unwrap()]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
}

#[test]
fn a_stream_holding_several_runs_is_refused_unless_one_is_picked_or_all_are_split() {
    let path = fixture("claude-stream/two-runs.jsonl");
    let path = path.to_str().unwrap();
    let output = atif(&["import", path], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("the log holds 2 runs (output of several runs in one file): pick one with `--run N` (1 to 2), or write each to its own file with `--split DIR`"),
        "{}",
        stderr(&output)
    );
    let output = atif(&["import", "--run", "2", path], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(trajectory(&output)["session_id"], "strm-0002");
    let output = atif(&["import", "--run", "3", path], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("there is no run 3: the log holds 2 run(s)"));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs");
    let output = atif(&["import", "--split", out.to_str().unwrap(), path], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    for (n, session) in [(1, "strm-0001"), (2, "strm-0002")] {
        let text = std::fs::read(out.join(format!("run-{n}.json"))).unwrap();
        let run: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(run["session_id"], session);
    }
}

/// Two runs of a pydantic-ai agent as the Collector's file exporter writes them (one export
/// request per line), gzipped.
fn two_otel_runs_gzipped() -> Vec<u8> {
    use std::io::Write as _;

    let mut lines = String::new();
    for run in ["otel/pydantic-ai-run1.json", "otel/pydantic-ai-run2.json"] {
        let request: Value = serde_json::from_slice(&std::fs::read(fixture(run)).unwrap()).unwrap();
        lines.push_str(&request.to_string());
        lines.push('\n');
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(lines.as_bytes()).unwrap();
    gz.finish().unwrap()
}

#[test]
fn otel_traces_split_into_one_trajectory_per_run_from_a_gzip_file_or_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("traces.jsonl.gz");
    std::fs::write(&gz, two_otel_runs_gzipped()).unwrap();
    for (input, stdin) in [(gz.to_str().unwrap(), None), ("-", Some(two_otel_runs_gzipped()))] {
        let out = dir.path().join(format!("runs-{}", stdin.is_some()));
        let output = atif(&["import", "--split", out.to_str().unwrap(), input], stdin.as_deref());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(
            stderr(&output).starts_with("atif import: format otel (detected)"),
            "{}",
            stderr(&output)
        );
        assert!(stderr(&output).contains("wrote 2 run(s) to"), "{}", stderr(&output));
        let runs: Vec<String> = (1..=2)
            .map(|n| out.join(format!("run-{n}.json")).to_str().unwrap().to_owned())
            .collect();
        for run in &runs {
            let trajectory: Value = serde_json::from_slice(&std::fs::read(run).unwrap()).unwrap();
            assert_eq!(trajectory["agent"]["name"], "shell_agent");
            assert_eq!(trajectory["steps"].as_array().unwrap().len(), 4);
        }
        // The two runs of the same agent check equal under the `otel` preset, applied on its own.
        let output = atif(&["check", &runs[0], &runs[1]], None);
        assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    }
    // Without --split or --run, several traces are refused, naming the choice.
    let output = atif(&["import", "-"], Some(&two_otel_runs_gzipped()));
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("the log holds 2 runs"), "{}", stderr(&output));
    let output = atif(&["import", "--run", "2", "-"], Some(&two_otel_runs_gzipped()));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(trajectory(&output)["agent"]["name"], "shell_agent");
}

#[test]
fn otlp_protobuf_on_standard_input_imports_as_the_file_does() {
    let pb = std::fs::read(fixture("otel/pydantic-ai.pb")).unwrap();
    let from_file = atif(&["import", fixture("otel/pydantic-ai.pb").to_str().unwrap()], None);
    assert_eq!(from_file.status.code(), Some(0), "{}", stderr(&from_file));
    let from_stdin = atif(&["import", "--from", "otel", "-"], Some(&pb));
    assert_eq!(from_stdin.status.code(), Some(0), "{}", stderr(&from_stdin));
    assert_eq!(trajectory(&from_stdin), trajectory(&from_file));
    assert_eq!(trajectory(&from_stdin)["agent"]["name"], "shell_agent");
    // Binary data of no format that is read is still refused at once, naming standard input.
    let output = atif(&["import", "-"], Some(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("standard input"), "{}", stderr(&output));
    assert!(stderr(&output).contains("binary data, not an agent log"), "{}", stderr(&output));
}

#[test]
fn inline_images_are_written_beside_the_output_and_it_passes_its_own_harbor_validation() {
    let dir = tempfile::tempdir().unwrap();
    let log = fixture("claude-stream/image-result.jsonl");
    let import_as = |name: &str| {
        let out = dir.path().join(name);
        let output = atif(&["import", "-o", out.to_str().unwrap(), log.to_str().unwrap()], None);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(output.stdout.is_empty());
        std::fs::read(&out).unwrap()
    };
    // The output's name never reaches the content: the same log under two names is one text.
    let first = import_as("run-1.json");
    assert_eq!(import_as("run-2.json"), first);
    let run: Value = serde_json::from_slice(&first).unwrap();
    let part = &run["steps"][0]["observation"]["results"][0]["content"][0];
    let path = part["source"]["path"].as_str().unwrap();
    let name = path.strip_prefix("media/").unwrap();
    assert!(name.ends_with(".png") && name.len() == 16 + 4, "named by its content's hash: {path}");
    assert!(std::fs::read(dir.path().join(path)).unwrap().starts_with(b"\x89PNG"));
    let out = dir.path().join("run-1.json");
    let output = atif(&["validate", "--profile", "harbor", out.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));

    // To standard output: the images go to the given folder, and standard error says so.
    let media = dir.path().join("elsewhere");
    let output =
        atif(&["import", "--media-dir", media.to_str().unwrap(), log.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(media.join(name).is_file());
    assert!(
        stderr(&output).contains(&format!("wrote 1 inline image(s) to {}", media.display())),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_import_records_its_agent_and_log_format_and_checks_apply_that_preset() {
    let dir = tempfile::tempdir().unwrap();
    let log = fixture("claude-stream/basic.jsonl");
    let out = dir.path().join("run.json");
    let output = atif(&["import", "-o", out.to_str().unwrap(), log.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(run["agent"]["name"], "claude-code");
    assert_eq!(run["agent"]["extra"]["log_format"], "claude-stream");
    let output = atif(&["validate", out.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));

    // The same run again, as another day's run of the same behaviour: other message and request
    // ids. Without a preset the check would fail on them; the recorded format picks claude-code.
    let mut rerun = run.clone();
    rerun["steps"][0]["extra"]["message_id"] = serde_json::json!("msg_01XFDUDYJgAACzvnptvVoYEL");
    rerun["steps"][0]["extra"]["request_id"] = serde_json::json!("req_011CUdMKKFGtjoLjYExNYXcN");
    let rerun_path = dir.path().join("rerun.json");
    std::fs::write(&rerun_path, rerun.to_string()).unwrap();
    let golden = dir.path().join("golden.json");
    let (golden, rerun_path) = (golden.to_str().unwrap(), rerun_path.to_str().unwrap());
    let output = atif(&["check", "--update", golden, out.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let note = "atif check: preset claude-code, as the run was imported from a claude-stream log (--preset chooses another)\n";
    assert_eq!(stderr(&output), note);
    let mut command = atif_command(&["check", golden, rerun_path]);
    command.env("CI", "1");
    let output = run_with_stdin(command, b"");
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(stderr(&output), note);
    for command in ["normalize", "shape"] {
        let output = atif(&[command, rerun_path], None);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(stderr(&output), note.replace("check", command));
    }
    let output = atif(&["diff", out.to_str().unwrap(), rerun_path], None);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    // `-q` keeps the note off standard error; `--preset` chooses without a note.
    let output = atif(&["-q", "shape", rerun_path], None);
    assert_eq!(stderr(&output), "");
    let output = atif(&["shape", "--preset", "codex", rerun_path], None);
    assert_eq!(stderr(&output), "");
}

#[test]
fn a_check_that_fails_only_on_what_the_agents_preset_removes_says_which_preset() {
    let dir = tempfile::tempdir().unwrap();
    let log = fixture("claude-stream/basic.jsonl");
    let output = atif(&["import", log.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // An import from before the log format was recorded: the agent's name alone.
    let mut run = trajectory(&output);
    run["agent"]["extra"].as_object_mut().unwrap().remove("log_format");
    let mut rerun = run.clone();
    rerun["steps"][0]["extra"]["message_id"] = serde_json::json!("msg_01XFDUDYJgAACzvnptvVoYEL");
    let (run_path, rerun_path) = (dir.path().join("run.json"), dir.path().join("rerun.json"));
    std::fs::write(&run_path, run.to_string()).unwrap();
    std::fs::write(&rerun_path, rerun.to_string()).unwrap();
    let golden = dir.path().join("golden.json");
    let golden = golden.to_str().unwrap();
    let output = atif(&["check", "--update", golden, run_path.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let hint =
        "atif check: this looks like a claude-code import; did you mean --preset claude-code?\n";

    let mut command = atif_command(&["check", golden, rerun_path.to_str().unwrap()]);
    command.env("CI", "1");
    let output = run_with_stdin(command, b"");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stdout(&output).starts_with("agent behaviour changed ("), "{}", stdout(&output));
    assert_eq!(stderr(&output), hint);
    assert!(!dir.path().join("golden.json.new").exists(), "on CI nothing is written");

    // A change the preset does not remove gets no hint.
    let mut changed = rerun.clone();
    changed["steps"][0]["message"] = serde_json::json!("something else entirely");
    std::fs::write(&rerun_path, changed.to_string()).unwrap();
    let mut command = atif_command(&["check", golden, rerun_path.to_str().unwrap()]);
    command.env("CI", "1");
    let output = run_with_stdin(command, b"");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output), "");
}

#[test]
fn latest_finds_the_newest_session_an_agent_wrote_for_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let cwd = "/srv/my.project";
    let folder = home.path().join(".pi/agent/sessions/--srv-my.project--");
    std::fs::create_dir_all(&folder).unwrap();
    let old = folder.join("2026-01-01T00-00-00-000Z_a.jsonl");
    let new = folder.join("2026-01-02T00-00-00-000Z_b.jsonl");
    let session = |id: &str| {
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"{cwd}\"}}\n\
             {{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}}}\n"
        )
    };
    std::fs::write(&old, session("old")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&new, session("new")).unwrap();
    let mut command = atif_command(&["import", "--latest", "pi", "--cwd", cwd]);
    command.env("HOME", home.path());
    let output = run_with_stdin(command, b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains(&format!("newest pi session: {}", new.display())));
    assert_eq!(trajectory(&output)["session_id"], "new");

    let mut command = atif_command(&["import", "--latest", "pi", "--cwd", "/elsewhere"]);
    command.env("HOME", home.path());
    let output = run_with_stdin(command, b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("no latest pi session: no session file for /elsewhere under"));
    let mut command = atif_command(&["import", "--latest", "opencode"]);
    command.env("HOME", home.path());
    let output = run_with_stdin(command, b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("opencode export"), "{}", stderr(&output));
}

#[test]
fn a_malformed_record_is_reported_as_skipped_or_fails_strict_mode_naming_its_line() {
    let user = r#"{"type":"user","uuid":"u-1","sessionId":"s","timestamp":"2025-11-02T09:00:00.000Z","message":{"role":"user","content":"hi"}}"#;
    let bad = r#"{"type":"user","uuid":"u-2","sessionId":"s","timestamp":"2025-11-02T09:00:01.000Z","message":{"role":"user","content":42}}"#;
    let log = format!("{user}\n{bad}\n");
    let output = atif(&["import", "--from", "claude-code", "-"], Some(log.as_bytes()));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("2 records, 1 skipped"), "{err}");
    assert!(
        err.contains(
            "skipped 1 × malformed record: user record whose `message.content` is a number"
        ),
        "{err}"
    );
    assert!(err.contains("warning: line 2: skipped: user record"), "{err}");

    let strict = atif(&["import", "--strict", "--from", "claude-code", "-"], Some(log.as_bytes()));
    assert_eq!(strict.status.code(), Some(1));
    assert!(strict.stdout.is_empty());
    assert!(
        stderr(&strict).contains("line 2: malformed claude-code record: user record"),
        "{}",
        stderr(&strict)
    );
}

#[test]
fn malformed_records_of_every_kind_are_counted_by_reason_or_fail_strict_mode_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("exec.jsonl");
    std::fs::write(
        &log,
        [
            r#"{"type":"thread.started","thread_id":"t-1"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"item.completed","item":"just a string"}"#,
            r#"{"type": not json"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hello."}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":3}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let path = log.to_str().unwrap();
    let output = atif(&["import", path], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("format codex-exec (detected); 5 records, 2 skipped"), "{err}");
    assert!(err.contains("skipped 1 × malformed record: line that is not JSON\n"), "{err}");
    assert!(
        err.contains("skipped 1 × malformed record: item.completed record whose `item` is a string, expected an object\n"),
        "{err}"
    );
    assert!(err.contains("warning: line 3: skipped: item.completed record"), "{err}");
    assert!(err.contains("warning: line 4: skipped: line that is not JSON: "), "{err}");
    assert_eq!(trajectory(&output)["steps"].as_array().unwrap().len(), 1);

    let strict = atif(&["import", "--strict", path], None);
    assert_eq!(strict.status.code(), Some(1));
    assert!(strict.stdout.is_empty());
    assert_eq!(
        stderr(&strict).trim_end(),
        format!(
            "error: {path}: line 3: malformed codex-exec record: item.completed record whose `item` is a string, expected an object (strict mode)"
        )
    );

    // A log written as one JSON document names the JSON Pointer instead of a line.
    let session = dir.path().join("session.json");
    let document = serde_json::json!({
        "sessionId": "g1", "projectHash": "h",
        "messages": [
            {"id": "u1", "type": "user", "content": "hi"},
            {"id": "m1", "type": "gemini", "content": 42}
        ]
    });
    std::fs::write(&session, serde_json::to_string_pretty(&document).unwrap()).unwrap();
    let path = session.to_str().unwrap();
    let strict = atif(&["import", "--strict", path], None);
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(
        stderr(&strict).trim_end(),
        format!(
            "error: {path}: at /messages/1: malformed gemini-session record: message whose `content` is a number, expected text or a list of parts (strict mode)"
        )
    );
    let output = atif(&["import", path], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("warning: at /messages/1: skipped: message whose"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_log_file_is_read_within_the_input_limit_and_binary_data_fails_at_once() {
    // /dev/zero never ends: only a reader that stops at its first byte can answer.
    let output = atif(&["import", "/dev/zero"], None);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(output.stdout.is_empty());
    assert_eq!(
        stderr(&output).trim_end(),
        "error: /dev/zero: invalid JSON at line 1, column 1: byte 0x00 cannot appear in JSON text: \
         this is binary data, not an agent log"
    );
    let output = atif(&["import", "-"], Some(b"<html>"));
    assert!(
        stderr(&output).contains(
            "`<` cannot start JSON text (an agent log is JSON or JSON Lines, starting with `{` or `[`)"
        ),
        "{}",
        stderr(&output)
    );

    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("session.jsonl");
    std::fs::write(&image, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR").unwrap();
    let output = atif(&["import", image.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!(
            "{}: invalid JSON at line 1, column 1: byte 0x89 cannot appear in JSON text",
            image.display()
        )),
        "{}",
        stderr(&output)
    );

    let log = fixture("codex-exec/basic.jsonl");
    let size = std::fs::metadata(&log).unwrap().len();
    let limit = (size - 1).to_string();
    let output = atif(&["import", "--max-input-bytes", &limit, log.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(output.stdout.is_empty());
    assert_eq!(
        stderr(&output).trim_end(),
        format!("error: {} is larger than the input limit of {limit} bytes", log.display())
    );
    let limit = size.to_string();
    let output = atif(&["import", "--max-input-bytes", &limit, log.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// A session file for `--latest`: where it is under HOME, what it holds, and how many seconds
/// after the epoch it was last written.
struct SessionFile {
    path: &'static str,
    text: String,
    modified_secs: u64,
}

/// Writes `files` under a fake HOME and runs `atif import --latest AGENT --cwd CWD` there,
/// with none of the agents' own folder variables inherited.
fn import_latest(agent: &str, cwd: &str, files: &[SessionFile]) -> (tempfile::TempDir, Output) {
    let home = tempfile::tempdir().unwrap();
    for file in files {
        let path = home.path().join(file.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &file.text).unwrap();
        let modified = std::time::UNIX_EPOCH + std::time::Duration::from_secs(file.modified_secs);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
    }
    let mut command = atif_command(&["import", "--latest", agent, "--cwd", cwd]);
    command.env("HOME", home.path()).env_remove("CLAUDE_CONFIG_DIR").env_remove("CODEX_HOME");
    let output = run_with_stdin(command, b"");
    (home, output)
}

#[test]
fn latest_picks_the_newest_session_for_the_directory_in_each_agents_default_folder() {
    let cwd = "/srv/my.project";
    let claude = |id: &str, cwd: &str| {
        serde_json::json!({"type": "user", "uuid": "u-1", "sessionId": id, "cwd": cwd,
            "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "hi"}})
        .to_string()
    };
    let codex = |id: &str, cwd: &str| {
        let meta = serde_json::json!({"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": id, "cwd": cwd, "cli_version": "0.50.0"}});
        let message = serde_json::json!({"timestamp": "2026-01-01T00:00:01.000Z", "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}});
        format!("{meta}\n{message}\n")
    };
    let gemini = |id: &str| {
        serde_json::json!({"sessionId": id, "projectHash": "h",
            "messages": [{"id": "u1", "timestamp": "2026-01-01T00:00:00Z", "type": "user", "content": "hi"}]})
        .to_string()
    };
    let file = |path: &'static str, text: String, modified_secs: u64| SessionFile {
        path,
        text,
        modified_secs,
    };
    let cases = [
        (
            "claude-code",
            vec![
                file(".claude/projects/-srv-my-project/old.jsonl", claude("old", cwd), 1_000),
                file(".claude/projects/-srv-my-project/new.jsonl", claude("new", cwd), 2_000),
                // A subagent's file of the same folder, and another project's newer session.
                file(".claude/projects/-srv-my-project/agent-a1.jsonl", claude("new", cwd), 4_000),
                file(
                    ".claude/projects/-srv-other/newest.jsonl",
                    claude("other", "/srv/other"),
                    3_000,
                ),
            ],
            ".claude/projects/-srv-my-project/new.jsonl",
        ),
        (
            "codex",
            vec![
                file(
                    ".codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-a.jsonl",
                    codex("old", cwd),
                    1_000,
                ),
                file(
                    ".codex/sessions/2026/01/02/rollout-2026-01-02T00-00-00-b.jsonl",
                    codex("new", cwd),
                    2_000,
                ),
                file(
                    ".codex/sessions/2026/01/03/rollout-2026-01-03T00-00-00-c.jsonl",
                    codex("other", "/srv/other"),
                    3_000,
                ),
            ],
            ".codex/sessions/2026/01/02/rollout-2026-01-02T00-00-00-b.jsonl",
        ),
        (
            "gemini-cli",
            vec![
                file(".gemini/tmp/hash-1/.project_root", cwd.to_owned(), 500),
                file(".gemini/tmp/hash-1/chats/session-old.json", gemini("old"), 1_000),
                file(".gemini/tmp/hash-1/chats/session-new.json", gemini("new"), 2_000),
                file(".gemini/tmp/hash-2/.project_root", "/srv/other\n".to_owned(), 500),
                file(".gemini/tmp/hash-2/chats/session-other.json", gemini("other"), 3_000),
            ],
            ".gemini/tmp/hash-1/chats/session-new.json",
        ),
    ];
    for (agent, files, newest) in cases {
        let (home, output) = import_latest(agent, cwd, &files);
        assert_eq!(output.status.code(), Some(0), "{agent}: {}", stderr(&output));
        let expected = home.path().join(newest);
        assert!(
            stderr(&output).contains(&format!("newest {agent} session: {}\n", expected.display())),
            "{agent}: {}",
            stderr(&output)
        );
        assert_eq!(trajectory(&output)["session_id"], "new", "{agent}");

        // Only the other directory's session left: none is for this directory.
        let others: Vec<SessionFile> = files
            .into_iter()
            .filter(|f| f.text.contains("other") || f.path.ends_with(".project_root"))
            .collect();
        let (_home, output) = import_latest(agent, cwd, &others);
        assert_eq!(output.status.code(), Some(1), "{agent}: {}", stderr(&output));
        assert!(
            stderr(&output)
                .contains(&format!("no latest {agent} session: no session file for {cwd} under")),
            "{agent}: {}",
            stderr(&output)
        );
    }
}
