//! Streamable-HTTP MCP servers fronted by the record/replay server (`--mcp NAME=URL`), against
//! the pinned `@modelcontextprotocol/server-everything` serving Streamable HTTP and a Python
//! agent on the official `mcp` SDK's streamable-http client and the `openai` SDK:
//!
//! 1. `atif record --mcp everything=URL` puts the model's exchanges and the server's messages
//!    on one tape, each MCP message with how it travelled, and never the session id;
//! 2. `atif replay --mcp everything`, in another directory with the server stopped, gives the
//!    agent the same results and captures the same trajectory, byte for byte;
//! 3. a changed tool result on the tape fails the replay naming the server and the tool;
//! 4. `atif record --replay-tools`, the server still stopped, records the model again live
//!    while the front answers the server from the tape: the same trajectory, a tape that
//!    replays, and a call with new arguments counted as a miss;
//! 5. the front keeps the model routes' access rules: a web page's `Origin` is refused, and a
//!    server name the run does not front fails naming the ones it does;
//! 6. the pinned Claude Code, given the front as an `"type": "http"` server, records and
//!    replays the same way.
//!
//! Skipped with a notice where `cargo xtask e2e-setup` has not installed the server, the venv
//! or Claude Code.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tests::e2e;

/// server-everything serving Streamable HTTP on a free loopback port, stopped with the test.
struct Everything {
    child: Child,
    url: String,
}

impl Everything {
    fn start(bin: &Path) -> Everything {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(bin)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .env("PATH", e2e::path_with_cache())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server-everything starts");
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "server-everything did not listen within 30 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        Everything { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The agent's command line: the Python agent offering the model server-everything's `echo`,
/// reached at `$ATIF_PROXY_URL/mcp/everything`.
fn agent(python: &Path) -> Vec<OsString> {
    let script = e2e::assets_dir().join("python").join("mcp_agent.py");
    vec![python.into(), script.into(), "echo".into(), "--http".into(), "everything".into()]
}

/// Runs `atif ARGS` in a fresh `dir`, in the clean environment of the end-to-end tests.
fn atif_in(dir: &Path, args: Vec<OsString>) -> std::process::Output {
    std::fs::create_dir_all(dir).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    e2e::atif_in_clean_env(dir, path).args(args).output().unwrap()
}

fn args(items: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    items.iter().map(|item| item.as_ref().to_owned()).collect()
}

#[test]
fn a_streamable_http_server_is_recorded_on_the_tape_and_replayed_without_the_server() {
    let Some(python) = e2e::python() else { return };
    let Some(bin) = e2e::cached(
        "node_modules/.bin/mcp-server-everything",
        "the MCP server `server-everything`",
    ) else {
        return;
    };
    let provider = echo_provider("hello over http");
    let everything = Everything::start(&bin);
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("agent.script.json");
    let recorded_run = root.path().join("recorded.trajectory.json");
    let front = format!("everything={}", everything.url);
    let mut record = args(&[&"record", &"--script", &script, &"--trajectory", &recorded_run]);
    record.extend(args(&[&"--upstream", &provider.url(), &"--mcp", &front, &"--"]));
    record.extend(agent(&python));
    let live = atif_in(&root.path().join("recorded"), record);
    assert!(live.status.success(), "record failed: {}", e2e::describe(&live));
    let stdout = String::from_utf8_lossy(&live.stdout).into_owned();
    assert_eq!(
        stdout,
        "tool echo \"Echo: hello over http\"\nfinal \"The command printed: Echo: hello over http\"\n",
        "the model called the server's tool through the front"
    );

    let text = std::fs::read_to_string(&script).unwrap();
    let saved: Value = serde_json::from_str(&text).unwrap();
    let mcp = saved["mcp"].as_array().unwrap();
    assert!(mcp.iter().all(|m| m["server"] == "everything"), "{text}");
    let call = mcp.iter().find(|m| m["message"]["method"] == "tools/call").unwrap();
    assert_eq!(call["http"], json!({"via": "post"}));
    let result = mcp
        .iter()
        .find(|m| m["message"]["id"] == call["message"]["id"] && m["from"] == "server")
        .unwrap();
    assert_eq!(result["message"]["result"]["content"][0]["text"], "Echo: hello over http");
    assert_eq!(result["http"], json!({"via": "reply-stream", "session": true}), "{result}");
    // server-everything's session ids are UUIDs: none reaches the tape.
    let uuid = regex::Regex::new("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    assert!(!uuid.unwrap().is_match(&text), "a session id was kept: {text}");

    // The server and the model gone, another directory: the tape answers both.
    drop(everything);
    drop(provider);
    let replay = |script: &Path, name: &str| {
        let run = root.path().join(format!("{name}.trajectory.json"));
        let mut replay = args(&[&"replay", &"--script", &script, &"--trajectory", &run]);
        replay.extend(args(&[&"--mcp", &"everything", &"--"]));
        replay.extend(agent(&python));
        (atif_in(&root.path().join(name), replay), run)
    };
    let (replayed, replayed_run) = replay(&script, "replayed");
    assert!(replayed.status.success(), "replay failed: {}", e2e::describe(&replayed));
    assert_eq!(String::from_utf8_lossy(&replayed.stdout), stdout);
    assert_eq!(
        std::fs::read(&replayed_run).unwrap(),
        std::fs::read(&recorded_run).unwrap(),
        "the replay captures the recorded trajectory byte for byte"
    );

    // A tool result that changed reaches the model, whose request then fails as drift, naming
    // the tool and its server.
    let mut edited = saved.clone();
    for message in edited["mcp"].as_array_mut().unwrap() {
        if message["message"]["id"] == call["message"]["id"] && message["from"] == "server" {
            message["message"]["result"]["content"][0]["text"] = json!("Echo: something else");
        }
    }
    let edited_path = root.path().join("edited.script.json");
    std::fs::write(&edited_path, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    let (drifted, _) = replay(&edited_path, "drifted");
    assert_eq!(drifted.status.code(), Some(1), "{}", e2e::describe(&drifted));
    let stderr = String::from_utf8_lossy(&drifted.stderr);
    assert!(stderr.contains("the result of tool `echo` of MCP server `everything`"), "{stderr}");

    hybrid_answers_the_server_from_the_tape(&script, root.path(), &python, &stdout);
    refuses_web_pages_and_unknown_servers(&script, root.path());
}

/// The fake model, calling server-everything's `echo` with `message` once.
fn echo_provider(message: &str) -> atif_fake_provider::FakeProvider {
    use atif_fake_provider::{Config, ScriptedCall};
    let mut config = Config::default();
    let arguments = json!({"message": message});
    config.set_calls(vec![ScriptedCall { name: "echo".to_owned(), arguments }]);
    atif_fake_provider::FakeProvider::start(config).unwrap()
}

/// `atif record --replay-tools TAPE --mcp everything`, server-everything stopped: the model is
/// recorded live, the front answers from the tape, and the new tape replays to the same
/// trajectory; a call with new arguments is a miss.
fn hybrid_answers_the_server_from_the_tape(tape: &Path, root: &Path, python: &Path, out: &str) {
    let recorded_run = std::fs::read(root.join("recorded.trajectory.json")).unwrap();
    let record = |message: &str, name: &str| {
        let provider = echo_provider(message);
        let script = root.join(format!("{name}.script.json"));
        let run = root.join(format!("{name}.trajectory.json"));
        let mut record = args(&[&"record", &"--script", &script, &"--trajectory", &run]);
        record.extend(args(&[&"--replay-tools", &tape, &"--upstream", &provider.url()]));
        record.extend(args(&[&"--mcp", &"everything", &"--"]));
        record.extend(agent(python));
        (atif_in(&root.join(name), record), script, run)
    };
    let (hybrid, script, run) = record("hello over http", "hybrid");
    assert!(hybrid.status.success(), "hybrid: {}", e2e::describe(&hybrid));
    assert_eq!(String::from_utf8_lossy(&hybrid.stdout), out, "the result came from the tape");
    let stderr = String::from_utf8_lossy(&hybrid.stderr);
    assert!(stderr.contains("MCP tool calls from the tools tape: 1 served, 0 missed"), "{stderr}");
    assert_eq!(std::fs::read(&run).unwrap(), recorded_run);

    let replayed_run = root.join("hybrid-replayed.trajectory.json");
    let mut replay = args(&[&"replay", &"--script", &script, &"--trajectory", &replayed_run]);
    replay.extend(args(&[&"--mcp", &"everything", &"--"]));
    replay.extend(agent(python));
    let replayed = atif_in(&root.join("hybrid-replayed"), replay);
    assert!(replayed.status.success(), "replay of the hybrid tape: {}", e2e::describe(&replayed));
    assert_eq!(std::fs::read(&replayed_run).unwrap(), recorded_run);

    let (missed, script, _) = record("something new", "missed");
    assert_eq!(missed.status.code(), Some(1), "{}", e2e::describe(&missed));
    let stderr = String::from_utf8_lossy(&missed.stderr);
    assert!(stderr.contains("MCP tool calls from the tools tape: 0 served, 1 missed"), "{stderr}");
    assert!(
        stderr.contains("MCP server `everything`: tools/call of `echo` matches no recorded call"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&missed.stdout);
    assert!(stdout.starts_with("tool echo \"tool miss (not on the tools tape"), "{stdout}");
    assert!(!script.exists(), "a recording with a miss never replaces the script");
    assert!(root.join("missed.script.failed.json").exists());
}

/// `atif serve --replay --mcp everything` answers `/mcp/everything` only as it answers the
/// model routes: a web page's `Origin` gets 403; an unknown server name gets 404 naming the
/// servers the run fronts, and fails the run.
fn refuses_web_pages_and_unknown_servers(script: &Path, root: &Path) {
    let dir = root.join("served");
    std::fs::create_dir_all(&dir).unwrap();
    let mut serve = e2e::atif_in_clean_env(&dir, std::env::var_os("PATH").unwrap_or_default())
        .args(["serve", "--replay", "--mcp", "everything", "--script"])
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(serve.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let addr = first.trim().strip_prefix("listening on http://").unwrap().to_owned();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let page = post(&addr, "/mcp/everything", &["Origin: https://evil.example"], ping);
    assert!(page.starts_with("HTTP/1.1 403"), "{page}");
    let unknown = post(&addr, "/mcp/nothing", &[], ping);
    assert!(unknown.starts_with("HTTP/1.1 404"), "{unknown}");
    assert!(
        unknown.contains("no MCP server is named `nothing` (this run fronts: everything)"),
        "{unknown}"
    );
    interrupt(&serve);
    let output = serve.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "the unknown server failed the run");
}

/// One HTTP/1.1 POST of `body` with `headers`; the whole reply as text.
fn post(addr: &str, path: &str, headers: &[&str], body: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for header in headers {
        request.push_str(&format!("{header}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
}

/// Stops `atif serve` as a user's Ctrl-C does.
fn interrupt(child: &Child) {
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
}

/// A Claude Code sandbox in `root` whose MCP config names server-everything over HTTP at the
/// front of a server listening on `port`.
fn claude_http_sandbox(root: &Path, port: u16) -> tests::agents::Sandbox {
    use tests::agents::{Agent, Sandbox};
    // Claude Code is pointed at the run's server by `atif`, which sets ANTHROPIC_BASE_URL.
    let sandbox = Sandbox::new(Agent::ClaudeCode, root, "http://127.0.0.1:9").unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp/everything");
    let config = json!({"mcpServers": {"everything": {"type": "http", "url": url}}});
    std::fs::write(sandbox.cwd().join("mcp.json"), config.to_string()).unwrap();
    sandbox
}

/// `atif ARGS -- claude …` in `sandbox`, listening on `port`: the run, and the tool results
/// Claude Code reported on its stream.
fn claude_http_run(
    sandbox: &tests::agents::Sandbox,
    program: &Path,
    port: u16,
    atif_args: Vec<OsString>,
) -> (tests::agents::AgentRun, Vec<String>) {
    let mut argv: Vec<OsString> = vec![e2e::atif_binary().into()];
    argv.extend(atif_args);
    argv.extend(args(&[&"--listen", &format!("127.0.0.1:{port}"), &"--", &program]));
    let prompt = "Echo a greeting through the everything server.";
    argv.extend(args(&[&"-p", &prompt, &"--output-format", &"stream-json", &"--verbose"]));
    argv.extend(args(&[&"--mcp-config", &"mcp.json", &"--strict-mcp-config"]));
    argv.extend(args(&[&"--allowedTools", &"mcp__everything__echo"]));
    let run = sandbox.run(sandbox.command_for(&argv)).unwrap();
    let mut results = Vec::new();
    for event in run.stdout.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()) {
        let blocks = event["message"]["content"].as_array().cloned().unwrap_or_default();
        let is_result = |block: &&Value| block["type"] == "tool_result";
        results.extend(blocks.iter().filter(is_result).map(|block| block["content"].to_string()));
    }
    (run, results)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn claude_code_calls_a_streamable_http_server_through_the_front_and_replays_without_it() {
    use tests::agents::Agent;
    let Some(program) = Agent::ClaudeCode.program() else { return };
    let Some(bin) = e2e::cached(
        "node_modules/.bin/mcp-server-everything",
        "the MCP server `server-everything`",
    ) else {
        return;
    };
    let provider = {
        use atif_fake_provider::{Config, ScriptedCall};
        let call = |name: &str, arguments: Value| ScriptedCall { name: name.to_owned(), arguments };
        let mut config = Config::default();
        config.set_calls(vec![
            call("ToolSearch", json!({"query": "select:mcp__everything__echo"})),
            call("mcp__everything__echo", json!({"message": "hello over http"})),
        ]);
        atif_fake_provider::FakeProvider::start(config).unwrap()
    };
    let everything = Everything::start(&bin);
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("claude.script.json");
    let (port, recorded) = (free_port(), root.path().join("record"));
    let sandbox = claude_http_sandbox(&recorded, port);
    let recorded_run = root.path().join("recorded.trajectory.json");
    let front = format!("everything={}", everything.url);
    let mut record = args(&[&"record", &"--script", &script, &"--trajectory", &recorded_run]);
    record.extend(args(&[&"--upstream", &provider.url(), &"--mcp", &front]));
    let (live, results) = claude_http_run(&sandbox, &program, port, record);
    assert!(live.status.success(), "record: {}\n{}\n{}", live.status, live.stdout, live.stderr);
    assert_eq!(results.len(), 2, "ToolSearch, echo: {}", live.stdout);
    assert!(results[1].contains("Echo: hello over http"), "{results:?}");
    let saved = std::fs::read_to_string(&script).unwrap();
    assert!(saved.contains("\"via\": \"post\""), "the echo went through the front: {saved}");

    // The server and the model gone, another directory, HOME and port.
    drop(everything);
    drop(provider);
    let port = free_port();
    let replayed = claude_http_sandbox(&root.path().join("replay"), port);
    let replayed_run = root.path().join("replayed.trajectory.json");
    let replay = args(&[&"replay", &"--script", &script, &"--trajectory", &replayed_run]);
    let mut replay = replay;
    replay.extend(args(&[&"--mcp", &"everything"]));
    let (run, replayed_results) = claude_http_run(&replayed, &program, port, replay);
    assert!(run.status.success(), "replay: {}\n{}\n{}", run.status, run.stdout, run.stderr);
    assert_eq!(replayed_results, results);
    let placed = |file: &Path, sandbox: &tests::agents::Sandbox| {
        let text = std::fs::read_to_string(file).unwrap();
        let cwd = text.replace(&sandbox.cwd().display().to_string(), "<cwd>");
        cwd.replace(&sandbox.home().display().to_string(), "<home>")
    };
    assert_eq!(placed(&replayed_run, &replayed), placed(&recorded_run, &sandbox));
    assert!(placed(&recorded_run, &sandbox).contains("\"mcp_server\": \"everything\""));
}
