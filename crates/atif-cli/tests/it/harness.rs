//! Tests of `atif harness`: each request gives what the process it stands for gives.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Stdio};

use serde_json::{Value, json};

use crate::proxy::http;
use crate::{atif_command, run_with_stdin, stderr, stdout};

/// A running `atif harness` in `dir`, with `CI` set so that no check writes a file.
struct Harness {
    child: Child,
    replies: BufReader<ChildStdout>,
}

impl Harness {
    fn start(dir: &Path) -> Harness {
        let mut command = atif_command(&["harness"]);
        command.current_dir(dir).env("CI", "true").env_remove("ATIF_GOLDEN").env("NO_COLOR", "1");
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let replies = BufReader::new(child.stdout.take().unwrap());
        Harness { child, replies }
    }

    fn ask(&mut self, request: &Value) -> Value {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        self.replies.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("{err}: {line:?}"))
    }

    fn finish(mut self) {
        drop(self.child.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }
}

fn trajectory(message: &str, prompt_tokens: u64) -> Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "session_id": "s-1",
        "agent": {"name": "cli-agent", "version": "2"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "hi"},
            {"step_id": 2, "source": "agent", "model_name": "m", "message": message,
             "metrics": {"prompt_tokens": prompt_tokens, "completion_tokens": 5}},
        ],
    })
}

#[test]
fn a_check_in_the_harness_gives_the_status_and_output_of_the_atif_check_process() {
    let dir = tempfile::tempdir().unwrap();
    let write =
        |name: &str, doc: &Value| std::fs::write(dir.path().join(name), doc.to_string()).unwrap();
    write("run.json", &trajectory("hello", 100));
    write("changed.json", &trajectory("hello again", 104));
    std::fs::write(dir.path().join("broken.json"), "{\"steps\": [").unwrap();
    let update = atif_command(&["check", "--update", "golden.json", "run.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(update.status.success(), "{}", stderr(&update));

    let lines: &[&[&str]] = &[
        &["check", "golden.json", "run.json"],
        &["check", "golden.json", "changed.json", "--update-command", "pytest --atif-update t.py"],
        &["check", "golden.json", "changed.json", "--no-content", "--token-tolerance", "0.1"],
        &["check", "missing.json", "run.json"],
        &["check", "golden.json", "broken.json"],
        &["check", "golden.json", "run.json", "--max-input-bytes", "10"],
        &["check", "golden.json", "run.json", "--preset", "no-such-agent"],
        &["check", "golden.json", "run.json", "--no-such-flag"],
    ];
    let mut harness = Harness::start(dir.path());
    for line in lines {
        let mut process = atif_command(line);
        process
            .current_dir(dir.path())
            .env("CI", "true")
            .env_remove("ATIF_GOLDEN")
            .env("NO_COLOR", "1");
        let expected = run_with_stdin(process, b"");
        let args: Vec<&str> = std::iter::once("atif").chain(line.iter().copied()).collect();
        let reply = harness.ask(&json!({"op": "check", "args": args}));
        assert_eq!(reply["code"], json!(expected.status.code().unwrap()), "{line:?}: {reply}");
        assert_eq!(reply["stdout"], json!(stdout(&expected)), "{line:?}");
        assert_eq!(reply["stderr"], json!(stderr(&expected)), "{line:?}");
    }
    // Positive control: two lines that differ give different answers.
    let matched =
        harness.ask(&json!({"op": "check", "args": ["atif", "check", "golden.json", "run.json"]}));
    let changed = harness
        .ask(&json!({"op": "check", "args": ["atif", "check", "golden.json", "changed.json"]}));
    assert_eq!((matched["code"].as_u64(), changed["code"].as_u64()), (Some(0), Some(1)));
    harness.finish();
}

#[test]
fn the_harness_serves_a_script_and_stops_with_the_verdict_atif_serve_gives() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let exchange = json!({
        "method": "POST", "path": "/v1/chat/completions",
        "request": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        "status": 200, "body": {"choices": [{"message": {"role": "assistant", "content": "hello"}}]},
    });
    let script_doc = json!({"format": "atif-replay-script", "version": 2, "model": null, "calls": [], "recording": {}, "exchanges": [exchange]});
    std::fs::write(&script, script_doc.to_string()).unwrap();
    let mut harness = Harness::start(dir.path());

    let started = harness
        .ask(&json!({"op": "serve", "args": ["--script", script, "--replay"], "cwd": dir.path()}));
    let url = started["url"].as_str().unwrap_or_else(|| panic!("{started}"));
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_eq!(started["token"].as_str().map(str::len), Some(32), "{started}");
    let stopped = harness.ask(&json!({"op": "stop"}));
    assert_eq!(stopped["code"], json!(1), "{stopped}");
    let verdict = stopped["stderr"].as_str().unwrap();
    assert!(verdict.starts_with("atif replay: replay not exact:\n- 1 of the 1 recorded exchanges were never requested: #1 POST /v1/chat/completions"), "{verdict}");

    // A script that cannot be read: the status and message of `atif serve`.
    let missing = dir.path().join("missing.json");
    let expected = atif_command(&["serve", "--script", missing.to_str().unwrap(), "--replay"])
        .output()
        .unwrap();
    let refused = harness.ask(&json!({"op": "serve", "args": ["--script", missing, "--replay"]}));
    assert_eq!(refused["code"], json!(expected.status.code().unwrap()), "{refused}");
    assert_eq!(refused["stderr"], json!(stderr(&expected)));
    let nothing = harness.ask(&json!({"op": "stop"}));
    assert_eq!(nothing, json!({"code": 2, "stderr": "error: no server is running\n"}));
    let other = harness.ask(&json!({"op": "check", "args": ["atif", "serve", "--script", "x"]}));
    assert_eq!(
        other["stderr"],
        json!("error: the harness runs only `atif check` and `atif envelope` command lines\n")
    );
    harness.finish();
}

#[test]
fn a_check_of_the_captured_run_writes_the_running_servers_trajectory_first() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let exchange = json!({
        "method": "POST", "path": "/v1/chat/completions",
        "request": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        "status": 200,
        "body": {"model": "m", "choices": [{"message": {"role": "assistant", "content": "hello"}}]},
    });
    let script_doc = json!({"format": "atif-replay-script", "version": 2, "model": null, "calls": [], "recording": {}, "exchanges": [exchange]});
    std::fs::write(&script, script_doc.to_string()).unwrap();
    let mut harness = Harness::start(dir.path());
    let captured = dir.path().join("captured.json");
    let line = ["atif", "check", "golden.json", "captured.json"];

    // Before any server: refused with the reason, and nothing written.
    let refused = harness.ask(&json!({"op": "check", "args": line, "captured": captured}));
    assert_eq!(refused["code"], json!(2), "{refused}");
    assert_eq!(
        refused["stderr"],
        json!("error: no server is running, so no trajectory was captured\n")
    );
    assert!(!captured.exists());

    let started = harness
        .ask(&json!({"op": "serve", "args": ["--script", script, "--replay"], "cwd": dir.path()}));
    let url = started["url"].as_str().unwrap_or_else(|| panic!("{started}")).to_owned();
    // No model call yet: no trajectory, and the reason.
    let early = harness.ask(&json!({"op": "check", "args": line, "captured": captured}));
    assert_eq!(early["code"], json!(2), "{early}");
    let why = early["stderr"].as_str().unwrap();
    assert!(
        why.starts_with("error: no trajectory could be captured from the test's model traffic: "),
        "{why}"
    );

    let addr = url.trim_start_matches("http://");
    let reply = http(addr, "POST", "/v1/chat/completions", &exchange["request"].to_string(), "");
    assert!(reply.contains("hello"), "{reply}");
    // The captured run is written, then checked by the command line (CI: the golden is missing).
    let checked = harness.ask(&json!({"op": "check", "args": line, "captured": captured}));
    assert_eq!(checked["code"], json!(1), "{checked}");
    assert_eq!(
        checked["stdout"],
        json!(
            "golden file golden.json does not exist; record it with: atif check --update golden.json captured.json\n"
        )
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&captured).unwrap()).unwrap();
    assert_eq!(written["steps"][1]["message"], json!("hello"), "{written}");
    // Once the golden is that run, the same request matches it.
    let update = atif_command(&["check", "--update", "golden.json", "captured.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(update.status.success(), "{}", stderr(&update));
    std::fs::remove_file(&captured).unwrap();
    let matched = harness.ask(&json!({"op": "check", "args": line, "captured": captured}));
    assert_eq!(matched["code"], json!(0), "{matched}");
    assert!(captured.is_file());
    let stopped = harness.ask(&json!({"op": "stop"}));
    assert_eq!(stopped["code"], json!(0), "{stopped}");
    harness.finish();
}
