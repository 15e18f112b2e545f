//! `atif record`, `atif replay` and `atif serve` on the real binary, with a real agent command
//! (`sh` and `curl`) and the fake provider as the upstream.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use atif_fake_provider::{Config, FakeProvider};

use crate::{atif_command, stderr, stdout};

/// An agent: one Chat Completions call through `$OPENAI_BASE_URL` asking `prompt` (which may
/// use shell variables such as `$PWD`), printing the reply.
fn agent(prompt: &str) -> String {
    format!(
        "curl -sS -X POST \"$OPENAI_BASE_URL/chat/completions\" -H 'content-type: application/json' \
         -d \"{{\\\"model\\\":\\\"fake-model\\\",\\\"messages\\\":[{{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"{prompt}\\\"}}]}}\""
    )
}

/// Whether `curl` can be run; the tests that need it print a notice and pass without it.
#[allow(clippy::print_stderr, reason = "a skip notice")]
fn has_curl() -> bool {
    let found =
        Command::new("curl").arg("--version").output().is_ok_and(|out| out.status.success());
    if !found {
        eprintln!("skipped: curl is not installed");
    }
    found
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    atif_command(args).current_dir(dir).output().expect("the atif binary runs")
}

#[test]
fn an_agent_recorded_once_replays_offline_in_another_directory() {
    if !has_curl() {
        return;
    }
    let provider = FakeProvider::start(Config::default()).unwrap();
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let script = first.path().join("agent.script.json");
    let script = script.to_str().unwrap();
    let ask = agent("list $PWD");
    let recorded_trajectory = first.path().join("recorded.trajectory.json");
    let output = run_in(
        first.path(),
        &[
            "record",
            "--script",
            script,
            "--upstream",
            provider.url(),
            "--trajectory",
            recorded_trajectory.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &ask,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("Hello from the atif fake provider."), "{}", stdout(&output));
    assert!(
        stderr(&output)
            .contains("atif record: recording exact: 1 requests served, 1 exchanges recorded"),
        "{}",
        stderr(&output)
    );
    let text = std::fs::read_to_string(script).unwrap();
    assert!(text.contains("list <cwd>"), "the recording's directory is a placeholder:\n{text}");
    // ... and only a placeholder: no absolute directory of the recorder's is in the script.
    let recorded_in = first.path().canonicalize().unwrap();
    assert!(!text.contains(recorded_in.to_str().unwrap()), "{text}");
    assert!(!text.contains(first.path().to_str().unwrap()), "{text}");
    assert!(!text.contains("\"cwd\"") && !text.contains("\"home\""), "{text}");
    let recorded_reply = stdout(&output);
    provider.stop();

    let replayed_trajectory = second.path().join("replayed.trajectory.json");
    let output = run_in(
        second.path(),
        &[
            "replay",
            "--script",
            script,
            "--trajectory",
            replayed_trajectory.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &ask,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), recorded_reply);
    // The trajectory captured from the traffic is the same in both runs, and valid ATIF.
    let captured = std::fs::read_to_string(&replayed_trajectory).unwrap();
    assert_eq!(captured, std::fs::read_to_string(&recorded_trajectory).unwrap());
    assert!(captured.contains("\"name\": \"sh\""), "{captured}");
    assert!(captured.contains("list <cwd>"), "{captured}");
    let validate =
        atif_command(&["validate", replayed_trajectory.to_str().unwrap()]).output().unwrap();
    assert_eq!(validate.status.code(), Some(0), "{}", stderr(&validate));
    assert!(stderr(&output).contains("atif replay: replay exact: 1 requests served"));

    // A changed prompt is drift: the agent gets an error, the run exits 1 with the diff.
    let output = run_in(
        second.path(),
        &["replay", "--script", script, "--", "sh", "-c", &agent("list / please")],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("request #1 to /v1/chat/completions matches no unused recorded exchange"),
        "{err}"
    );
    assert!(err.contains("-        \"content\": \"list <cwd>\","), "{err}");
    assert!(err.contains("+        \"content\": \"list / please\","), "{err}");

    // One call more than recorded: the exhaustion message, exit 1.
    let twice = format!("{ask} && {ask}");
    let output = run_in(second.path(), &["replay", "--script", script, "--", "sh", "-c", &twice]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "the agent made request #2 to /v1/chat/completions, but the script recorded 1."
        ),
        "{}",
        stderr(&output)
    );
    assert!(
        stdout(&output).contains("\"code\":\"atif_replay\""),
        "the agent saw an OpenAI-shaped error"
    );

    // No call at all: the unused exchange is named.
    let output = run_in(second.path(), &["replay", "--script", script, "--", "true"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("1 of the 1 recorded exchanges were never requested: #1 POST /v1/chat/completions (fake-model)"), "{}", stderr(&output));
}

#[test]
fn the_agent_gets_every_base_url_and_in_a_replay_dummy_keys() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_empty_script(dir.path());
    let print = "echo $OPENAI_BASE_URL $OPENAI_API_BASE $ANTHROPIC_BASE_URL $GOOGLE_GEMINI_BASE_URL \
                 $GEMINI_API_BASE_URL $ATIF_PROXY_URL $OPENAI_API_KEY $ANTHROPIC_API_KEY $GEMINI_API_KEY \
                 $ATIF_PROXY_TOKEN";
    let output = atif_command(&["replay", "--script", &script, "--", "sh", "-c", print])
        .env_remove("OPENAI_API_KEY")
        .env("ANTHROPIC_API_KEY", "mine")
        .env_remove("GEMINI_API_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mut words: Vec<String> = stdout(&output).split_whitespace().map(str::to_owned).collect();
    let token = words.pop().unwrap();
    assert_eq!(token.len(), 32, "{token}");
    let url = words[5].clone();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let v1 = format!("{url}/v1");
    assert_eq!(
        words,
        [
            &v1,
            &v1,
            &url,
            &url,
            &url,
            &url,
            "atif-replay-dummy-key",
            "mine",
            "atif-replay-dummy-key"
        ]
    );
}

/// Runs `command` and checks it exits 2 (could not run) printing exactly `expected`.
fn could_not_run(mut command: Command, expected: &str) {
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), expected);
}

fn write_empty_script(dir: &Path) -> String {
    let path = dir.join("empty.script.json");
    let mut script = atif_replay::Script::new(None);
    script.exchanges = Vec::new();
    atif_replay::write_script(&path, &script, &[]).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_command_that_cannot_run_fails_or_is_killed_gets_a_clear_error_and_no_script() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("never.script.json");
    let script = script.to_str().unwrap();
    let output =
        atif_command(&["record", "--script", script, "--", "no-such-agent-xyz"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: cannot run `no-such-agent-xyz`: No such file or directory (os error 2)\n"
    );
    let output =
        atif_command(&["record", "--script", script, "--", "sh", "-c", "exit 3"]).output().unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr(&output),
        "atif record: `sh` exited with status 3; the script was not saved\n"
    );
    let output = atif_command(&["record", "--script", script, "--", "sh", "-c", "kill -9 $$"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(137));
    assert_eq!(
        stderr(&output),
        "atif record: `sh` was killed by signal 9; the script was not saved\n"
    );
    assert!(!Path::new(script).exists(), "nothing was written");
}

#[test]
fn the_trajectory_of_a_run_that_fails_or_is_killed_is_written_all_the_same() {
    if !has_curl() {
        return;
    }
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("failed.script.json");
    let script = script.to_str().unwrap();
    let trajectory = dir.path().join("failed.trajectory.json");
    // A recording that failed never replaces what is there: the trajectory goes beside it.
    let written = dir.path().join("failed.trajectory.failed.json");
    // So does the recording: what the agent asked before it failed, for a look, beside the
    // script it leaves as it was.
    let saved = dir.path().join("failed.script.failed.json");
    let ask = agent("hello");
    for (how, status, failure) in [
        ("exit 3", 3, "`sh` exited with status 3"),
        ("kill -9 $$", 137, "`sh` was killed by signal 9"),
    ] {
        let _ = std::fs::remove_file(&written);
        let command = format!("{ask}; {how}");
        let output = run_in(
            dir.path(),
            &[
                "record",
                "--script",
                script,
                "--upstream",
                provider.url(),
                "--trajectory",
                trajectory.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                &command,
            ],
        );
        assert_eq!(output.status.code(), Some(status), "{}", stderr(&output));
        assert_eq!(
            stderr(&output),
            format!(
                "atif record: wrote {} (the run failed: {failure})\natif record: {failure}; the \
                 script was left as it was; wrote {}\n",
                written.display(),
                saved.display()
            )
        );
        assert!(!Path::new(script).exists(), "a failed recording is no script");
        let recorded = std::fs::read_to_string(&saved).unwrap();
        assert!(recorded.contains("Hello from the atif fake provider."), "{recorded}");
        let show = atif_command(&["script", "show", saved.to_str().unwrap()]).output().unwrap();
        assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
        assert!(!trajectory.exists(), "a failed recording replaces no trajectory");
        let text = std::fs::read_to_string(&written).unwrap();
        let captured: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(captured["extra"]["crashed"], true, "{text}");
        assert_eq!(captured["extra"]["error"], failure, "{text}");
        assert!(text.contains("Hello from the atif fake provider."), "{text}");
        for profile in ["strict", "harbor"] {
            let validate =
                atif_command(&["validate", "--profile", profile, written.to_str().unwrap()])
                    .output()
                    .unwrap();
            assert_eq!(validate.status.code(), Some(0), "{profile}: {}", stderr(&validate));
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| {
                name != "failed.trajectory.failed.json" && name != "failed.script.failed.json"
            })
            .collect();
        assert!(leftovers.is_empty(), "only the failed run was written: {leftovers:?}");
    }

    // A run that failed before any model call has no trajectory to write, and says so.
    let _ = std::fs::remove_file(&trajectory);
    let output = run_in(
        dir.path(),
        &[
            "record",
            "--script",
            script,
            "--trajectory",
            trajectory.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "exit 4",
        ],
    );
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.starts_with(&format!(
            "atif record: no trajectory written to {}: ",
            trajectory.display()
        )),
        "{err}"
    );
    assert!(!trajectory.exists());
}

#[test]
fn a_missing_script_a_directory_and_a_port_in_use_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    could_not_run(
        atif_command(&["replay", "--script", missing.to_str().unwrap(), "--", "true"]),
        &format!(
            "error: cannot read {}: No such file or directory (os error 2)\n",
            missing.display()
        ),
    );

    let folder = dir.path().to_str().unwrap();
    let output = atif_command(&["record", "--script", folder, "--", "true"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        format!("error: {folder} is a directory; give the path of a script file\n")
    );

    could_not_run(
        // Refused before anything is read or bound.
        atif_command(&[
            "serve",
            "--replay",
            "--script",
            missing.to_str().unwrap(),
            "--listen",
            "0.0.0.0:0",
        ]),
        "error: refusing to listen on 0.0.0.0:0: other machines could reach it, be served the \
         script's replies and record through the server; listen on 127.0.0.1, or pass \
         --allow-remote (Options::set_allow_remote) if that is intended\n",
    );

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let script = write_empty_script(dir.path());
    let output = atif_command(&["replay", "--script", &script, "--listen", &addr, "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with(&format!("error: cannot listen on {addr}: ")),
        "{}",
        stderr(&output)
    );
}

#[test]
fn on_ci_a_recording_never_overwrites_a_script() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_empty_script(dir.path());
    let before = std::fs::read(&script).unwrap();
    let mut command = atif_command(&["record", "--script", &script, "--", "true"]);
    command.env("CI", "true");
    could_not_run(
        command,
        &format!(
            "error: refusing to overwrite {script} on CI (CI is set): record on your machine and \
             commit the script, or delete it first\n"
        ),
    );
    assert_eq!(std::fs::read(&script).unwrap(), before);
}

/// Sends one request to `addr` with the lines of `headers` (each ending in CRLF) and reads the
/// whole reply.
pub(crate) fn http(addr: &str, method: &str, path: &str, body: &str, headers: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\n{headers}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
}

#[test]
fn serve_prints_its_url_answers_until_terminated_and_exits_with_the_verdict() {
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("served.script.json");
    let script = script.to_str().unwrap();
    let body =
        r#"{"model":"fake-model","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}"#;

    let (status, err, reply) =
        serve_once(&["--record", "--upstream", provider.url()], script, body);
    assert_eq!(status, Some(0), "{err}");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(err.contains("atif record: wrote"), "{err}");
    assert_eq!(atif_replay::read_script(Path::new(script)).unwrap().exchanges.len(), 1);
    provider.stop();

    let (status, err, reply) = serve_once(&["--replay"], script, body);
    assert_eq!(status, Some(0), "{err}");
    assert!(reply.contains("Hello from the atif fake provider."), "{reply}");

    let (status, err, reply) = serve_once(&["--replay"], script, "{}");
    assert_eq!(status, Some(1), "{err}");
    assert!(reply.starts_with("HTTP/1.1 400"), "{reply}");
}

/// Runs `atif serve` with `mode_args`, sends it `body` on `/v1/messages`, reads the verdict,
/// terminates it, and returns its exit code, standard error and the reply.
fn serve_once(mode_args: &[&str], script: &str, body: &str) -> (Option<i32>, String, String) {
    let (status, err, mut replies, _) = serve_with(mode_args, script, &[("/v1/messages", body)]);
    (status, err, replies.remove(0))
}

/// Runs `atif serve` with `mode_args`, POSTs each `(path, body)` of `requests` to it, reads the
/// verdict, terminates it, and returns its exit code, standard error, the replies and the
/// verdict's reply.
fn serve_with(
    mode_args: &[&str],
    script: &str,
    requests: &[(&str, &str)],
) -> (Option<i32>, String, Vec<String>, String) {
    let mut args = vec!["serve", "--script", script];
    args.extend(mode_args);
    let mut child =
        atif_command(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    let url = first.trim().strip_prefix("listening on http://").unwrap().to_owned();
    assert!(url.starts_with("127.0.0.1:"), "a loopback URL, whatever the address bound: {url}");
    let mut second = String::new();
    lines.read_line(&mut second).unwrap();
    let token = second.trim().strip_prefix("control token: ").unwrap().to_owned();
    let replies = requests.iter().map(|(path, body)| http(&url, "POST", path, body, "")).collect();
    assert!(http(&url, "GET", "/_atif/verdict", "", "").starts_with("HTTP/1.1 401"));
    let verdict = http(&url, "GET", "/_atif/verdict", "", &format!("x-atif-token: {token}\r\n"));
    assert!(verdict.contains("\"requests_served\":"), "{verdict}");
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    (output.status.code(), stderr(&output), replies, verdict)
}

#[test]
fn a_token_in_an_unknown_path_never_reaches_the_reply_the_verdict_or_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_empty_script(dir.path());
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let path = format!("/v1/chat/completions/{token}");
    let (status, err, replies, verdict) =
        serve_with(&["--replay"], &script, &[(&path, r#"{"model":"m","messages":[]}"#)]);
    assert_eq!(status, Some(1), "{err}");
    assert!(replies[0].starts_with("HTTP/1.1 404"), "{}", replies[0]);
    for (what, text) in [("the reply", &replies[0]), ("the verdict", &verdict), ("stderr", &err)] {
        assert!(!text.contains("abcdefghijklmnop"), "the token reached {what}:\n{text}");
        assert!(
            text.contains("/v1/chat/completions/<redacted:github-token>"),
            "{what} names the path without it:\n{text}"
        );
    }
}

#[test]
fn a_password_in_the_upstream_url_never_reaches_the_agent_or_stderr() {
    if !has_curl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.json");
    let password = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    let down = atif_fake_provider::unreachable_url().unwrap();
    let upstream = down.replace("http://", &format!("http://alice:{password}@"));
    let output = run_in(
        dir.path(),
        &[
            "record",
            "--script",
            script.to_str().unwrap(),
            "--upstream",
            &upstream,
            "--",
            "sh",
            "-c",
            &agent("hi"),
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let masked = down.replace("http://", "http://<redacted:userinfo>@");
    for (what, text) in [("the 502", stdout(&output)), ("stderr", stderr(&output))] {
        assert!(!text.contains("abcdefghijklmnop") && !text.contains("alice"), "{what}:\n{text}");
        assert!(text.contains(&format!("cannot reach the upstream {masked}")), "{what}:\n{text}");
    }
    // An upstream that is no http(s) URL is refused, without its password either.
    let bad = format!("ftp://alice:{password}@example.com");
    let output = atif_command(&[
        "record",
        "--script",
        script.to_str().unwrap(),
        "--upstream",
        &bad,
        "--",
        "true",
    ])
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: invalid upstream `ftp://<redacted:userinfo>@example.com`: expected an http:// or \
         https:// URL such as https://api.openai.com\n"
    );
}

#[test]
fn script_show_lists_each_exchange_with_its_model_tool_calls_and_tokens() {
    use atif_replay::{HttpExchange, Script, SseEvent};
    use serde_json::json;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("http.script.json");
    let mut script = Script::new(None);
    let tool_use = json!({
        "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}],
        "usage": {"input_tokens": 30, "output_tokens": 7},
    });
    let request = json!({"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]});
    script.exchanges.push(
        HttpExchange::new("POST", "/v1/messages?beta=true", request, 200).with_body(tool_use),
    );
    // A keep-alive comment is not an event the client sees, and is not counted as one.
    let events = vec![
        SseEvent::from_text(None, r#"{"choices":[{"index":0,"delta":{"content":"done"}}]}"#),
        SseEvent::comment(vec![" ping".to_owned()]),
        SseEvent::from_text(
            None,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":1}}"#,
        ),
        SseEvent::from_text(None, "[DONE]"),
    ];
    script.exchanges.push(
        HttpExchange::new(
            "POST",
            "/v1/chat/completions",
            json!({"model": "gpt-test", "stream": true}),
            200,
        )
        .with_events(events),
    );
    script.exchanges.push(
        HttpExchange::new("POST", "/v1beta/models/gemini-x:generateContent", json!({}), 429)
            .with_body(json!({"error": {"code": 429}})),
    );
    atif_replay::write_script(&path, &script, &[]).unwrap();
    let output = atif_command(&["script", "show", path.to_str().unwrap()]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "model: (none)\ncalls: 0\nexchanges: 3\n\
         exchange 1: POST /v1/messages?beta=true (claude-test); tool calls: bash {\"command\":\"ls\"}; tokens: prompt 30, completion 7, cached 0\n\
         exchange 2: POST /v1/chat/completions (gpt-test); no tool calls (text \"done\"); tokens: prompt 12, completion 1, cached 0; streamed in 3 events\n\
         exchange 3: POST /v1beta/models/gemini-x:generateContent (gemini-x); status 429\n"
    );
}

#[test]
fn a_replay_whose_command_fails_blames_the_failure_not_fewer_model_calls() {
    if !has_curl() {
        return;
    }
    let provider = FakeProvider::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("one.script.json");
    let script = script.to_str().unwrap();
    let recorded = run_in(
        dir.path(),
        &[
            "record",
            "--script",
            script,
            "--upstream",
            provider.url(),
            "--",
            "sh",
            "-c",
            &agent("hi"),
        ],
    );
    assert_eq!(recorded.status.code(), Some(0), "{}", stderr(&recorded));

    // The agent dies before its model call: the unused exchange is the failure's doing.
    let replayed = run_in(dir.path(), &["replay", "--script", script, "--", "sh", "-c", "exit 3"]);
    assert_eq!(replayed.status.code(), Some(3), "{}", stderr(&replayed));
    let text = stderr(&replayed);
    assert!(
        text.starts_with("atif replay: `sh` exited with status 3; replay not exact:\n"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "The agent's run failed before requesting them: that failure is the one to fix\n"
        ),
        "{text}"
    );
    assert!(!text.contains("fewer model calls"), "{text}");
}

/// Writes a script of ten recorded exchanges to `dir/name` and returns its path and bytes.
fn ten_exchange_script(dir: &Path, name: &str) -> (String, Vec<u8>) {
    use atif_replay::HttpExchange;
    use serde_json::json;

    let path = dir.join(name);
    let mut script = atif_replay::Script::new(None);
    script.exchanges = (0..10)
        .map(|n| {
            let request = json!({"model": "fake-model", "messages": [{"role": "user", "content": format!("q{n}")}]});
            HttpExchange::new("POST", "/v1/chat/completions", request, 200)
                .with_body(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": format!("a{n}")}}]}))
        })
        .collect();
    atif_replay::write_script(&path, &script, &[]).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path.to_str().unwrap().to_owned(), bytes)
}

#[test]
fn a_recording_that_is_not_exact_leaves_the_script_and_the_trajectory_as_they_were() {
    if !has_curl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (script, before) = ten_exchange_script(dir.path(), "s.json");
    let trajectory = dir.path().join("t.json");
    std::fs::write(&trajectory, "the committed trajectory\n").unwrap();
    let failed_script = dir.path().join("s.failed.json");
    let failed_trajectory = dir.path().join("t.failed.json");

    // The upstream is down and the agent exits 0 all the same (curl without --fail): nothing
    // was recorded, so nothing is written.
    let down = atif_fake_provider::unreachable_url().unwrap();
    let record = |upstream: &str, ask: &str| {
        run_in(
            dir.path(),
            &[
                "record",
                "--script",
                &script,
                "--upstream",
                upstream,
                "--trajectory",
                trajectory.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                ask,
            ],
        )
    };
    let output = record(&down, &agent("hello"));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("- cannot reach the upstream"), "{err}");
    assert!(err.contains("- no exchange was recorded"), "{err}");
    assert!(err.contains(&format!("atif record: nothing written; {script} was left as it was")));
    assert!(err.contains("atif record: no trajectory written to "), "{err}");
    assert_eq!(std::fs::read(&script).unwrap(), before, "the script is byte-identical");
    assert_eq!(std::fs::read_to_string(&trajectory).unwrap(), "the committed trajectory\n");
    assert!(
        !failed_script.exists() && !failed_trajectory.exists(),
        "an empty recording is kept nowhere"
    );

    // A stream cut midway: the recording is kept beside the script, redacted, and named.
    let mut config = Config::default();
    config.set_fault(Some(atif_fake_provider::Fault::CutStream { after_events: 2 }));
    let provider = FakeProvider::start(config).unwrap();
    let ask = "curl -sS -X POST \"$OPENAI_BASE_URL/chat/completions\" -H 'content-type: application/json' \
               -H 'authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123456789' \
               -d '{\"model\":\"fake-model\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi ghp_abcdefghijklmnopqrstuvwxyz0123456789\"}]}'; true";
    let output = record(provider.url(), ask);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("the reply was cut off midway"), "{err}");
    assert!(
        err.contains(&format!(
            "atif record: wrote {} instead of {script}, which was left as it was\n",
            failed_script.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read(&script).unwrap(), before, "the script is byte-identical");
    assert_eq!(std::fs::read_to_string(&trajectory).unwrap(), "the committed trajectory\n");
    let kept = atif_replay::read_script(&failed_script).unwrap();
    assert_eq!(kept.exchanges.len(), 1);
    assert!(kept.exchanges[0].cut.is_some());
    let text = std::fs::read_to_string(&failed_script).unwrap();
    assert!(!text.contains("ghp_abcdefghij"), "the kept recording is redacted:\n{text}");
    assert!(err.contains(&format!("atif record: wrote {}", failed_trajectory.display())), "{err}");
    assert!(std::fs::read_to_string(&failed_trajectory).unwrap().contains("\"schema_version\""));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| {
            !["s.json", "t.json", "s.failed.json", "t.failed.json"].contains(&name.as_str())
        })
        .collect();
    assert!(leftovers.is_empty(), "no temporary file is left: {leftovers:?}");
}

#[test]
fn a_recording_without_a_model_call_writes_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("new.script.json");
    let trajectory = dir.path().join("t.json");
    let output = run_in(
        dir.path(),
        &[
            "record",
            "--script",
            script.to_str().unwrap(),
            "--trajectory",
            trajectory.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains(
            "recording not exact:\n- no exchange was recorded: no model request reached the server"
        ),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "atif record: nothing written; {} was left as it was\n",
            script.display()
        )),
        "{err}"
    );
    assert!(!script.exists() && !trajectory.exists());
    assert!(!dir.path().join("new.script.failed.json").exists());
}

#[test]
fn serve_record_stopped_before_any_traffic_leaves_the_script_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let (script, before) = ten_exchange_script(dir.path(), "served.json");
    for signal in ["-TERM", "-INT"] {
        let mut child = atif_command(&["serve", "--record", "--script", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        assert!(first.starts_with("listening on http://127.0.0.1:"), "{first}");
        let killed = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
        assert!(killed.success());
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{signal}: {}", stderr(&output));
        let err = stderr(&output);
        assert!(err.contains("recording not exact:\n- no exchange was recorded"), "{err}");
        assert!(err.contains(&format!("nothing written; {script} was left as it was")), "{err}");
        assert_eq!(std::fs::read(&script).unwrap(), before, "{signal}: byte-identical");
        assert!(!dir.path().join("served.failed.json").exists());
    }
}

/// Runs `atif` with `args` in `dir`, killing it after `deadline`: its exit code (`None` when it
/// had to be killed), its standard error and how long it ran.
fn run_with_deadline(
    dir: &Path,
    args: &[&str],
    deadline: std::time::Duration,
) -> (Option<i32>, String, std::time::Duration) {
    let started = std::time::Instant::now();
    let mut child = atif_command(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            return (status.code(), err, started.elapsed());
        }
        if started.elapsed() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            return (None, String::new(), started.elapsed());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(unix)]
#[test]
fn a_script_that_never_ends_is_too_large_or_binary_fails_fast_in_replay_and_serve() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("z.json")).unwrap();
    // A sparse file: 2 GB long, no disk used.
    std::fs::File::create(dir.path().join("big.json")).unwrap().set_len(2 << 30).unwrap();
    let binary = |name: &str| {
        format!(
            "error: cannot load the script {name}: {name}: invalid JSON at line 1, column 1: byte \
             0x00 cannot appear in JSON text: this is binary data, not a replay script\n"
        )
    };
    let too_large = "error: cannot load the script big.json: big.json is larger than the input \
                     limit of 10485760 bytes\n";
    let cases: [(&[&str], &str, i32, String); 3] = [
        (&["--max-input-bytes", "10MiB"], "z.json", 1, binary("z.json")),
        (&["--max-input-bytes", "10MiB"], "big.json", 2, too_large.to_owned()),
        (&[], "big.json", 1, binary("big.json")),
    ];
    for (limit, script, code, message) in &cases {
        for mode in [
            &["replay", "--script", script, "--", "true"][..],
            &["serve", "--replay", "--script", script],
        ] {
            let mut args = limit.to_vec();
            args.extend(mode);
            let (status, err, took) =
                run_with_deadline(dir.path(), &args, std::time::Duration::from_secs(20));
            assert_eq!(status, Some(*code), "atif {}: {err}", args.join(" "));
            assert_eq!(&err, message, "atif {}", args.join(" "));
            assert!(
                took < std::time::Duration::from_secs(5),
                "atif {} took {took:?}",
                args.join(" ")
            );
        }
    }
}

#[test]
fn a_client_looping_on_bad_requests_cannot_grow_the_verdict_or_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_empty_script(dir.path());
    let requests = vec![("/v1/embeddings", "{}"); 250];
    let (status, err, replies, verdict) = serve_with(&["--replay"], &script, &requests);
    assert_eq!(status, Some(1), "{err}");
    assert!(replies.iter().all(|reply| reply.starts_with("HTTP/1.1 404")));
    let verdict: serde_json::Value =
        serde_json::from_str(verdict.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(verdict["errors"].as_array().unwrap().len(), 100);
    assert_eq!(verdict["errors_omitted"], 150);
    let unknown = err.lines().filter(|line| line.contains("unknown endpoint")).count();
    // Printed as they happen, then in the final summary: each list of at most 100.
    assert_eq!(unknown, 200, "{err}");
    assert_eq!(err.matches("more than 100 failures: the rest are only counted").count(), 1);
    assert!(err.contains("- and 150 more failures after the first 100, counted but not kept"));
    assert!(err.len() < 100_000, "{} bytes of stderr", err.len());
}

#[test]
fn the_body_limit_is_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_empty_script(dir.path());
    let big = format!(r#"{{"model":"m","messages":[],"pad":"{}"}}"#, "x".repeat(2048));
    let (status, err, replies, _) = serve_with(
        &["--replay", "--max-body-bytes", "1KiB", "--body-read-timeout", "5s"],
        &script,
        &[("/v1/chat/completions", &big)],
    );
    assert_eq!(status, Some(1), "{err}");
    assert!(replies[0].starts_with("HTTP/1.1 413"), "{}", replies[0]);
    assert!(err.contains("it is larger than the limit of 1024 bytes (--max-body-bytes)"), "{err}");
}

#[test]
fn allow_remote_listens_on_every_interface_with_a_warning_and_a_loopback_url() {
    // Bound on every interface, reached over loopback only: no traffic leaves this machine.
    let dir = tempfile::tempdir().unwrap();
    let script = write_empty_script(dir.path());
    let (status, err, _, verdict) =
        serve_with(&["--replay", "--listen", "0.0.0.0:0", "--allow-remote"], &script, &[]);
    assert!(verdict.contains("\"requests_served\":0"), "{verdict}");
    assert_eq!(status, Some(0), "{err}");
    assert!(
        err.starts_with("atif proxy: warning: listening on 0.0.0.0:"),
        "the exposure is named: {err}"
    );
    assert!(err.contains("which other machines can reach (--allow-remote)"), "{err}");
}
