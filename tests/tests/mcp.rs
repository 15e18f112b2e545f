//! `atif mcp`, the stdio MCP relay, against the real reference servers from npm
//! (`@modelcontextprotocol/server-filesystem`, `server-everything`), driven by a small JSON-RPC
//! client that writes a request and waits for its response, as an agent does:
//!
//! 1. a recording relays every message unchanged and keeps it, in order, in the script;
//! 2. a replay in another directory, with the server's command absent, answers the same
//!    requests with the same results (ids rewritten to the client's), server-everything's
//!    unrequested notification included;
//! 3. an unrecorded tool call fails naming the server and tool with the argument diff, and the
//!    recorded call never made is listed; `--drift warn` serves it anyway;
//! 4. server-everything's `get-env` output reaches the script only redacted;
//! 5. a relay killed with SIGKILL leaves no file at all, and one stopped with SIGTERM saves
//!    a whole script;
//! 6. `atif script show` lists the MCP messages;
//! 7. a Python agent on the official `mcp` SDK and the `openai` SDK, run under `atif record`
//!    against the fake model, puts its model exchanges and its MCP messages on one tape, which
//!    `atif replay` answers in another directory with the server off `PATH`; a recorded call
//!    never made and a call never recorded fail that replay.
//!
//! Skipped with a notice where `cargo xtask e2e-setup` has not installed the servers.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};
use tests::e2e;

/// A reference server's executable in the cache, or `None` after a skip notice.
fn server(bin: &str) -> Option<PathBuf> {
    e2e::cached(&format!("node_modules/.bin/{bin}"), &format!("the MCP server `{bin}`"))
}

/// One `atif mcp` process and a JSON-RPC client on its standard input and output.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// Every message the relay wrote, in order.
    received: Vec<Value>,
}

impl Client {
    fn start(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Client {
        let mut command = Command::new(e2e::atif_binary());
        command.arg("mcp").args(args).current_dir(cwd);
        command.env_remove("ATIF_PROXY_URL").env_remove("ATIF_PROXY_TOKEN");
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("atif mcp starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Client { child, stdin, stdout, received: Vec::new() }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its response, keeping whatever came before it.
    fn request(&mut self, message: Value) -> Value {
        self.send(&message);
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the relay ended before answering {message}"
            );
            let received: Value = serde_json::from_str(&line).unwrap();
            self.received.push(received.clone());
            if received.get("id") == message.get("id") && received.get("method").is_none() {
                return received;
            }
        }
    }

    /// Closes the agent's side and waits: the exit status and standard error.
    fn finish(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let output = self.child.wait_with_output().unwrap();
        (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

fn initialize(client: &mut Client) -> Value {
    let reply = client.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "mcp-test", "version": "1.0.0"}}}));
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    reply
}

fn read_call(id: u64, path: &Path) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "read_text_file", "arguments": {"path": path}}})
}

/// A session with server-filesystem: initialize, list the tools, read two files.
fn filesystem_session(client: &mut Client, cwd: &Path, first_id: u64) -> Vec<Value> {
    let mut replies = vec![initialize(client)];
    replies.push(client.request(json!({"jsonrpc": "2.0", "id": first_id, "method": "tools/list"})));
    replies.push(client.request(read_call(first_id + 1, &cwd.join("notes.txt"))));
    replies.push(client.request(read_call(first_id + 2, &cwd.join("todo.txt"))));
    replies
}

fn sandbox(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "the meeting moved to Thursday\n").unwrap();
    std::fs::write(dir.join("todo.txt"), "water the plants\n").unwrap();
    // The fake model calls a tool with the smallest arguments its schema allows: a string is
    // `fake`, so `read_text_file` reads this file.
    std::fs::write(dir.join("fake"), "the fake model read this file\n").unwrap();
    dir
}

/// `value` without its `id`, for comparing answers to requests with other ids.
fn without_id(mut value: Value) -> Value {
    if let Some(map) = value.as_object_mut() {
        map.remove("id");
    }
    value
}

#[test]
fn a_filesystem_session_recorded_replays_without_the_server_in_another_directory() {
    let Some(filesystem) = server("mcp-server-filesystem") else { return };
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("tools.script.json");
    let script_arg = script.to_str().unwrap();

    let recorded_dir = sandbox(root.path(), "recorded");
    let args = [
        "--name",
        "files",
        "--script",
        script_arg,
        "--record",
        "--",
        filesystem.to_str().unwrap(),
        ".",
    ];
    let mut client = Client::start(&recorded_dir, &args, &[]);
    let recorded = filesystem_session(&mut client, &recorded_dir, 1);
    let (status, stderr) = client.finish();
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains(&format!("atif mcp: wrote {script_arg} (files: 9 messages)")),
        "{stderr}"
    );
    assert_eq!(recorded[2]["result"]["content"][0]["text"], "the meeting moved to Thursday\n");

    let text = std::fs::read_to_string(&script).unwrap();
    let saved: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(saved["version"], 4);
    let directions: Vec<&str> =
        saved["mcp"].as_array().unwrap().iter().map(|m| m["from"].as_str().unwrap()).collect();
    assert_eq!(
        directions,
        ["client", "server", "client", "client", "server", "client", "server", "client", "server"]
    );
    assert!(
        !text.contains(recorded_dir.to_str().unwrap()),
        "the recording's directory is `<cwd>` in the script"
    );
    assert!(text.contains("<cwd>/notes.txt"));
    let shown =
        Command::new(e2e::atif_binary()).args(["script", "show", script_arg]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(
        shown.contains(
            "mcp messages: 9\nmcp 1: files client: initialize\nmcp 2: files server: response to 1\n"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("mcp 8: files client: tools/call read_text_file {\"path\":\"<cwd>/todo.txt\"}\nmcp 9: files server: response to 8 \"water the plants\\n\"\n"),
        "{shown}"
    );

    // Another directory, the server's command gone, other request ids.
    let replay_dir = sandbox(root.path(), "replayed");
    let args = [
        "--name",
        "files",
        "--script",
        script_arg,
        "--replay",
        "--",
        "/nonexistent/mcp-server-filesystem",
        ".",
    ];
    let mut client = Client::start(&replay_dir, &args, &[]);
    let replayed = filesystem_session(&mut client, &replay_dir, 101);
    let (status, stderr) = client.finish();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(replayed[3]["id"], 103, "the response carries the replaying client's id");
    let same = |values: Vec<Value>| values.into_iter().map(without_id).collect::<Vec<_>>();
    assert_eq!(same(replayed), same(recorded));
}

#[test]
fn an_unrecorded_call_fails_naming_the_tool_and_a_call_never_made_is_listed() {
    let Some(filesystem) = server("mcp-server-filesystem") else { return };
    let root = tempfile::tempdir().unwrap();
    let dir = sandbox(root.path(), "run");
    let script = root.path().join("tools.script.json");
    let script_arg = script.to_str().unwrap();
    let args = [
        "--name",
        "files",
        "--script",
        script_arg,
        "--record",
        "--",
        filesystem.to_str().unwrap(),
        ".",
    ];
    let mut client = Client::start(&dir, &args, &[]);
    filesystem_session(&mut client, &dir, 1);
    assert_eq!(client.finish().0, 0);

    let replay = |drift: &str| {
        let args = [
            "--name", "files", "--script", script_arg, "--replay", "--drift", drift, "--", "absent",
        ];
        let mut client = Client::start(&dir, &args, &[]);
        initialize(&mut client);
        let first = client.request(read_call(2, &dir.join("notes.txt")));
        let changed = client.request(read_call(3, &dir.join("todo.md")));
        let (status, stderr) = client.finish();
        (first, changed, status, stderr)
    };
    let (first, changed, status, stderr) = replay("strict");
    assert_eq!(first["result"]["content"][0]["text"], "the meeting moved to Thursday\n");
    let message = changed["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("MCP server `files`: tools/call of `read_text_file` matches no unused recorded call; against the nearest recorded one"),
        "{message}"
    );
    assert!(
        message.contains("-    \"path\": \"<cwd>/todo.txt\"\n+    \"path\": \"<cwd>/todo.md\""),
        "{message}"
    );
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("1 of the 2 recorded MCP calls were never made: #8 files: tools/call of `read_text_file`"), "{stderr}");

    let (_, changed, status, stderr) = replay("warn");
    assert_eq!(changed["result"]["content"][0]["text"], "water the plants\n", "served the nearest");
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("atif mcp: warning: MCP server `files`: tools/call of `read_text_file` matches no unused"), "{stderr}");
}

#[test]
fn everything_s_opening_notification_replays_and_get_env_is_redacted() {
    let Some(everything) = server("mcp-server-everything") else { return };
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("everything.script.json");
    let script_arg = script.to_str().unwrap();
    // A key-shaped value in the server's environment, which get-env returns.
    let key = "sk-ant-api03-mcpRelayTestKey0123456789abcdefABCDEF0123456789xyzw-AA";
    let session = |client: &mut Client| {
        let mut replies = vec![initialize(client)];
        let get_env = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get-env", "arguments": {}}});
        replies.push(client.request(get_env));
        let echo = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}});
        replies.push(client.request(echo));
        replies
    };
    let args = [
        "--name",
        "everything",
        "--script",
        script_arg,
        "--record",
        "--",
        everything.to_str().unwrap(),
    ];
    let mut client = Client::start(root.path(), &args, &[("ANTHROPIC_API_KEY", key)]);
    let recorded = session(&mut client);
    let received = client.received.clone();
    assert_eq!(client.finish().0, 0);
    let env_text = recorded[1]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(env_text.contains(key), "the real server got the real environment");
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(!text.contains(key), "the key reached the script");
    assert!(text.contains("<redacted:"), "the key is marked as redacted");

    let args = ["--name", "everything", "--script", script_arg, "--replay", "--", "absent"];
    let mut client = Client::start(root.path(), &args, &[]);
    let replayed = session(&mut client);
    let replay_received = client.received.clone();
    assert_eq!(client.finish().0, 0);
    assert_eq!(replayed[2]["result"], recorded[2]["result"]);
    let notifications = |messages: &[Value]| -> Vec<Value> {
        messages.iter().filter(|m| m.get("id").is_none()).map(|m| m["method"].clone()).collect()
    };
    assert!(!notifications(&received).is_empty(), "server-everything sends notifications unasked");
    assert_eq!(notifications(&replay_received), notifications(&received));
}

#[test]
fn a_killed_relay_leaves_no_half_written_script_and_a_stopped_one_saves_it_whole() {
    let Some(filesystem) = server("mcp-server-filesystem") else { return };
    let root = tempfile::tempdir().unwrap();
    let dir = sandbox(root.path(), "run");
    for signal in ["KILL", "TERM"] {
        let script = root.path().join(format!("{signal}.script.json"));
        let args = [
            "--name",
            "files",
            "--script",
            script.to_str().unwrap(),
            "--record",
            "--",
            filesystem.to_str().unwrap(),
            ".",
        ];
        let mut client = Client::start(&dir, &args, &[]);
        initialize(&mut client);
        client.request(read_call(1, &dir.join("notes.txt")));
        let killed = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(client.child.id().to_string())
            .status()
            .unwrap();
        assert!(killed.success());
        let (status, stderr) = client.finish();
        let files: Vec<String> = std::fs::read_dir(root.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(signal) || name.starts_with('.'))
            .collect();
        match signal {
            "KILL" => assert!(files.is_empty(), "a killed relay left {files:?}"),
            _ => {
                assert_eq!(status, 0, "{stderr}");
                assert_eq!(files, [format!("{signal}.script.json")]);
                let saved: Value =
                    serde_json::from_str(&std::fs::read_to_string(&script).unwrap()).unwrap();
                assert_eq!(saved["mcp"].as_array().unwrap().len(), 5, "{saved}");
            }
        }
    }
}

fn messages_len(script: &Value) -> usize {
    script["mcp"].as_array().unwrap().len()
}

/// Runs `atif ARGS` in `dir` with a clean environment: no real keys, no proxies, no CI, the
/// MCP servers on `PATH` only when `with_servers`.
fn atif_in(dir: &Path, args: &[std::ffi::OsString], with_servers: bool) -> std::process::Output {
    let path = match with_servers {
        true => e2e::path_with_cache(),
        false => std::env::var_os("PATH").unwrap_or_default(),
    };
    e2e::atif_in_clean_env(dir, path).args(args).output().unwrap()
}

#[test]
fn a_python_agent_on_the_mcp_sdk_records_model_and_tools_on_one_tape_and_replays_it() {
    use std::ffi::OsString;
    let Some(python) = e2e::python() else { return };
    if server("mcp-server-filesystem").is_none() {
        return;
    }
    let provider =
        atif_fake_provider::FakeProvider::start(atif_fake_provider::Config::default()).unwrap();
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("agent.script.json");
    let agent = |dir: &Path| -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![
            python.clone().into(),
            e2e::assets_dir().join("python").join("mcp_agent.py").into(),
        ];
        argv.extend(["read_text_file".into(), e2e::atif_binary().into()]);
        argv.extend(["mcp", "--name", "files", "--", "mcp-server-filesystem"].map(OsString::from));
        argv.push(dir.into());
        argv
    };
    let recorded_dir = sandbox(root.path(), "recorded");
    let recorded_run = root.path().join("recorded.trajectory.json");
    let mut args: Vec<OsString> = vec!["record".into(), "--script".into(), script.clone().into()];
    args.extend(["--trajectory".into(), recorded_run.clone().into()]);
    args.extend(["--upstream".into(), provider.url().into(), "--".into()]);
    args.extend(agent(&recorded_dir));
    let live = atif_in(&recorded_dir, &args, true);
    assert!(live.status.success(), "record failed: {}", e2e::describe(&live));
    let stdout = String::from_utf8_lossy(&live.stdout).into_owned();
    assert!(
        stdout.starts_with("tool read_text_file \"the fake model read this file\\n\"\n"),
        "the model called the MCP tool: {stdout}"
    );

    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&script).unwrap()).unwrap();
    assert_eq!(saved["version"], 4);
    assert!(
        saved["exchanges"].as_array().unwrap().len() >= 2,
        "the model's exchanges are on the tape"
    );
    let calls: Vec<&Value> = saved["mcp"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["message"]["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1, "the tool call is on the same tape: {saved}");
    assert_eq!(calls[0]["server"], "files");

    // Another directory, the model gone and the server's package off PATH.
    drop(provider);
    let replay_dir = sandbox(root.path(), "replayed");
    let mut args: Vec<OsString> =
        vec!["replay".into(), "--script".into(), script.clone().into(), "--".into()];
    args.extend(agent(&replay_dir));
    let replayed = atif_in(&replay_dir, &args, false);
    assert!(replayed.status.success(), "replay failed: {}", e2e::describe(&replayed));
    assert_eq!(String::from_utf8_lossy(&replayed.stdout), stdout);

    // A recorded tool call the agent never makes fails the replay, listed in the one verdict.
    let mut longer = saved.clone();
    let messages = longer["mcp"].as_array_mut().unwrap();
    let call_at = messages.iter().position(|m| m["message"]["method"] == "tools/call").unwrap();
    let mut extra_call = messages[call_at].clone();
    extra_call["message"]["id"] = json!(9999);
    extra_call["message"]["params"]["arguments"] = json!({"path": "<cwd>/todo.txt"});
    let extra_result = json!({"server": "files", "from": "server", "message": {"jsonrpc": "2.0", "id": 9999, "result": {"content": [{"type": "text", "text": "water the plants\n"}]}}});
    messages.push(extra_call);
    messages.push(extra_result);
    let longer_path = root.path().join("longer.script.json");
    std::fs::write(&longer_path, serde_json::to_string_pretty(&longer).unwrap()).unwrap();
    let mut args: Vec<OsString> =
        vec!["replay".into(), "--script".into(), longer_path.into(), "--".into()];
    args.extend(agent(&replay_dir));
    let fewer = atif_in(&replay_dir, &args, false);
    assert_eq!(fewer.status.code(), Some(1), "{}", e2e::describe(&fewer));
    assert_eq!(String::from_utf8_lossy(&fewer.stdout), stdout, "the agent itself ran as recorded");
    let stderr = String::from_utf8_lossy(&fewer.stderr);
    let listed = format!(
        "1 of the 2 recorded MCP calls were never made: #{} files: tools/call of `read_text_file`",
        messages_len(&saved) + 1
    );
    assert!(stderr.contains(&listed), "{stderr}");

    // A tool call the tape does not hold fails the call, naming the server and the tool; the
    // agent fails with it, and so does the replay.
    let mut edited = saved.clone();
    for message in edited["mcp"].as_array_mut().unwrap() {
        if message["from"] == "client" && message["message"]["method"] == "tools/call" {
            message["message"]["params"]["name"] = json!("read_media_file");
        }
    }
    let edited_path = root.path().join("edited.script.json");
    std::fs::write(&edited_path, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    let mut args: Vec<OsString> =
        vec!["replay".into(), "--script".into(), edited_path.into(), "--".into()];
    args.extend(agent(&replay_dir));
    let drifted = atif_in(&replay_dir, &args, false);
    assert_eq!(drifted.status.code(), Some(1), "{}", e2e::describe(&drifted));
    let stderr = String::from_utf8_lossy(&drifted.stderr);
    assert!(stderr.contains("MCP server `files`: tools/call of `read_text_file` was never recorded (recorded: read_media_file)"), "{stderr}");
}
