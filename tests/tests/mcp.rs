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
//!    a whole script; a recording relay passes replies for as long as the agent's side is
//!    open, and ends when its server does (a shell server, no npm package needed);
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

/// A server of one shell line that answers each request line with an empty result, under the
/// request's id (it reads the id from the line's text).
const ECHO_SERVER: &str = r#"while read -r line; do id=${line#*\"id\":}; id=${id%%,*}; echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{}}"; done"#;

/// A relay recording server `name` into `script` standalone, the server being the shell line
/// `server`, with the relay flags `flags`.
fn shell_relay(dir: &Path, name: &str, script: &Path, flags: &[&str], server: &str) -> Client {
    let script = script.to_str().unwrap();
    let mut args = vec!["--name", name, "--script", script, "--record"];
    args.extend(flags);
    args.extend(["--", "sh", "-c", server]);
    Client::start(dir, &args, &[])
}

/// Reads the next line the relay writes, or `None` when none comes within `seconds` (or its
/// output ended).
fn next_line_within(
    stdout: BufReader<ChildStdout>,
    seconds: u64,
) -> (Option<String>, BufReader<ChildStdout>) {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stdout = stdout;
        let mut line = String::new();
        let read = stdout.read_line(&mut line).unwrap_or(0);
        let _ = sender.send(((read > 0).then_some(line), stdout));
    });
    match receiver.recv_timeout(std::time::Duration::from_secs(seconds)) {
        Ok(read) => read,
        Err(_) => panic!("the relay wrote nothing within {seconds} s"),
    }
}

#[test]
fn a_recording_relay_passes_replies_past_its_exit_grace_and_ends_when_its_server_does() {
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("echo.script.json");
    let mut client = shell_relay(root.path(), "echo", &script, &[], ECHO_SERVER);
    let ping = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    client.send(&ping(1));
    let (first, stdout) = next_line_within(client.stdout, 10);
    assert!(first.unwrap().contains(r#""id":1"#));
    // Longer than the five seconds a server is given to finish once the agent closes its side:
    // the agent has not, so the relay still passes the server's replies on.
    std::thread::sleep(std::time::Duration::from_secs(6));
    client.stdout = stdout;
    client.send(&ping(2));
    let (second, stdout) = next_line_within(client.stdout, 10);
    assert!(second.expect("the reply after six seconds").contains(r#""id":2"#));
    client.stdout = stdout;
    let (status, stderr) = client.finish();
    assert_eq!(status, 0, "{stderr}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&script).unwrap()).unwrap();
    assert_eq!(saved["mcp"].as_array().unwrap().len(), 4, "{saved}");

    // A server that ends ends the relay, with the agent's side still open: the agent reads the
    // end of the relay's output rather than waiting for a reply that cannot come.
    let client = shell_relay(root.path(), "gone", &script, &[], "exit 0");
    let (line, _) = next_line_within(client.stdout, 10);
    assert_eq!(line, None, "the relay's output ends");
}

#[test]
fn a_relay_s_own_failure_reaches_the_verdict_of_the_run_it_reports_to() {
    let root = tempfile::tempdir().unwrap();
    let provider =
        atif_fake_provider::FakeProvider::start(atif_fake_provider::Config::default()).unwrap();
    let atif = e2e::atif_binary();
    // The agent: one model call, then a line that is not UTF-8 to its MCP server's relay, whose
    // exit status it ignores, as agents do.
    let agent = format!(
        "curl -s -o /dev/null -H 'content-type: application/json' -d '{{\"model\":\"m\",\"messages\":[{{\"role\":\"user\",\"content\":\"hi\"}}]}}' \"$OPENAI_BASE_URL/chat/completions\" && printf '\\377\\n' | {} mcp --name echo -- sh -c 'cat > /dev/null'; true",
        atif.display()
    );
    let script = root.path().join("run.script.json");
    let args: Vec<std::ffi::OsString> = ["record", "--script"]
        .iter()
        .map(Into::into)
        .chain([script.clone().into_os_string()])
        .chain([
            "--upstream".into(),
            provider.url().into(),
            "--".into(),
            "sh".into(),
            "-c".into(),
            agent.into(),
        ])
        .collect();
    let run = atif_in(root.path(), &args, false);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("- MCP server `echo`: reading the agent's messages failed"),
        "the relay's failure is one of the run's: {stderr}"
    );
    assert!(!script.exists(), "{stderr}");
}

#[test]
fn a_standalone_recording_keeps_its_masks_for_matching_and_a_failed_one_goes_beside_the_script() {
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("echo.script.json");
    let record =
        || shell_relay(root.path(), "echo", &script, &["--mask", "ticket-[0-9]+"], ECHO_SERVER);
    let mut client = record();
    client.request(
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"ref": "ticket-42"}}),
    );
    let (status, stderr) = client.finish();
    assert_eq!(status, 0, "{stderr}");
    let text = std::fs::read_to_string(&script).unwrap();
    let saved: Value = serde_json::from_str(&text).unwrap();
    assert!(text.contains("ticket-42"), "a mask redacts nothing: {text}");
    assert_eq!(saved["recording"]["masks"], json!(["ticket-[0-9]+"]), "{text}");

    // A line of the agent's that is not UTF-8 fails the recording, which goes beside the
    // script and leaves it as it was; it is made from the script, not from an older failure.
    let failed = root.path().join("echo.script.failed.json");
    let mut stale = saved.clone();
    stale["mcp"][0]["server"] = json!("stale");
    std::fs::write(&failed, stale.to_string()).unwrap();
    let mut client = record();
    let stdin = client.stdin.as_mut().unwrap();
    stdin.write_all(b"{\"jsonrpc\": \"2.0\", \"method\": \"\xff\"}\n").unwrap();
    let (status, stderr) = client.finish();
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("reading the agent's messages failed"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&script).unwrap(), text);
    let failed = std::fs::read_to_string(&failed).unwrap();
    assert!(!failed.contains("stale"), "{failed}");
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

#[test]
fn relays_saving_one_script_at_the_same_time_keep_every_server_s_messages() {
    let Some(filesystem) = server("mcp-server-filesystem") else { return };
    let root = tempfile::tempdir().unwrap();
    let dir = sandbox(root.path(), "run");
    let script = root.path().join("tools.script.json");
    let names: Vec<String> = (0..8).map(|n| format!("files{n}")).collect();
    let mut clients: Vec<Client> = names
        .iter()
        .map(|name| {
            let args = [
                "--name",
                name,
                "--script",
                script.to_str().unwrap(),
                "--record",
                "--",
                filesystem.to_str().unwrap(),
                ".",
            ];
            let mut client = Client::start(&dir, &args, &[]);
            initialize(&mut client);
            client
        })
        .collect();
    // The agent's side closes for all of them at once, so their saves overlap.
    for client in &mut clients {
        drop(client.stdin.take());
    }
    for client in clients {
        let (status, stderr) = client.finish();
        assert_eq!(status, 0, "{stderr}");
    }
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&script).unwrap()).unwrap();
    let mut servers: Vec<&str> =
        saved["mcp"].as_array().unwrap().iter().map(|m| m["server"].as_str().unwrap()).collect();
    servers.dedup();
    servers.sort_unstable();
    servers.dedup();
    assert_eq!(servers, names, "a relay wrote over another's messages");
    assert_eq!(messages_len(&saved), 8 * 3, "initialize, its response, initialized: {saved}");
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

/// The MCP tools the Claude Code run calls, by Claude Code's names for them.
const CLAUDE_MCP_TOOLS: &str = "mcp__files__read_text_file,mcp__memory__create_entities";

/// A fake model that makes Claude Code search for the two MCP tools (it offers an MCP tool
/// only after a `ToolSearch`), read `notes.txt` through server-filesystem, and store what it
/// says as a note through server-memory.
fn claude_mcp_provider() -> atif_fake_provider::FakeProvider {
    use atif_fake_provider::{Config, ScriptedCall};
    let call = |name: &str, arguments: Value| ScriptedCall { name: name.to_owned(), arguments };
    let mut config = Config::default();
    config.set_calls(vec![
        call("ToolSearch", json!({"query": format!("select:{CLAUDE_MCP_TOOLS}")})),
        call("mcp__files__read_text_file", json!({"path": "notes.txt"})),
        call(
            "mcp__memory__create_entities",
            json!({"entities": [{"name": "meeting", "entityType": "note",
                   "observations": ["the meeting moved to Thursday"]}]}),
        ),
    ]);
    atif_fake_provider::FakeProvider::start(config).unwrap()
}

/// A Claude Code sandbox with `notes.txt` and an MCP config naming both servers through
/// `atif mcp`, by their bare commands, so `PATH` decides whether they can start.
fn claude_mcp_sandbox(root: &Path) -> tests::agents::Sandbox {
    use tests::agents::{Agent, Sandbox};
    // Claude Code is pointed at the run's server by `atif`, which sets ANTHROPIC_BASE_URL.
    let sandbox = Sandbox::new(Agent::ClaudeCode, root, "http://127.0.0.1:9").unwrap();
    std::fs::write(sandbox.cwd().join("notes.txt"), "the meeting moved to Thursday\n").unwrap();
    let atif = e2e::atif_binary();
    // server-memory resolves a relative MEMORY_FILE_PATH against its own package folder.
    let memory_file = sandbox.cwd().join("memory.jsonl");
    let config = json!({"mcpServers": {
        "files": {"type": "stdio", "command": atif,
                  "args": ["mcp", "--name", "files", "--", "mcp-server-filesystem", "."]},
        "memory": {"type": "stdio", "command": atif,
                   "args": ["mcp", "--name", "memory", "--", "mcp-server-memory"],
                   "env": {"MEMORY_FILE_PATH": memory_file}},
    }});
    std::fs::write(sandbox.cwd().join("mcp.json"), config.to_string()).unwrap();
    sandbox
}

/// Claude Code's command line: the prompt, the MCP config alone, the two MCP tools allowed.
fn claude_mcp_argv(program: &Path) -> Vec<std::ffi::OsString> {
    let prompt = "Read notes.txt and keep what it says as a note.";
    let args = ["-p", prompt, "--output-format", "stream-json", "--verbose"];
    let mut argv = vec![program.as_os_str().to_owned()];
    argv.extend(args.map(std::ffi::OsString::from));
    argv.extend(
        ["--mcp-config", "mcp.json", "--strict-mcp-config", "--allowedTools"].map(Into::into),
    );
    argv.push(CLAUDE_MCP_TOOLS.into());
    argv
}

/// The text of each tool result Claude Code reports on its stream, in order.
fn claude_tool_results(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "user")
        .flat_map(|event| event["message"]["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].to_string())
        .collect()
}

/// A trajectory's text with a run's working directory and HOME as placeholders.
fn with_placeholders(text: &str, sandbox: &tests::agents::Sandbox) -> String {
    text.replace(&sandbox.cwd().display().to_string(), "<cwd>")
        .replace(&sandbox.home().display().to_string(), "<home>")
}

/// Replays `script` with Claude Code in a fresh sandbox `root/name`, with neither server's
/// package on `PATH` (only Claude Code's executable is): the sandbox, the run and the
/// trajectory captured from the traffic.
fn claude_mcp_replay(
    root: &Path,
    name: &str,
    program: &Path,
    script: &Path,
) -> (tests::agents::Sandbox, tests::agents::AgentRun, PathBuf) {
    use std::ffi::OsString;
    let sandbox = claude_mcp_sandbox(&root.join(name));
    let bin = root.join(name).join("bin-without-servers");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(program, bin.join("claude")).unwrap();
    let mut path = vec![bin];
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let path = std::env::join_paths(path).unwrap();
    let trajectory = root.join(name).join("trajectory.json");
    let mut argv: Vec<OsString> = vec![e2e::atif_binary().into(), "replay".into()];
    argv.extend(["--script".into(), script.into()]);
    argv.extend(["--trajectory".into(), trajectory.clone().into(), "--".into()]);
    argv.extend(claude_mcp_argv(Path::new("claude")));
    let mut command = sandbox.command_for(&argv);
    command.env("PATH", &path);
    let run = sandbox.run(command).unwrap();
    (sandbox, run, trajectory)
}

/// A copy of the script at `from`, changed by `edit`, written to `to`.
fn edited_script(from: &Path, to: &Path, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut script: Value = serde_json::from_str(&std::fs::read_to_string(from).unwrap()).unwrap();
    edit(&mut script);
    std::fs::write(to, serde_json::to_string_pretty(&script).unwrap()).unwrap();
    to.to_path_buf()
}

/// `atif check` of a captured trajectory against the committed golden `name`, with the run's
/// directories and the dates masked (`cargo xtask golden-update mcp` rewrites it).
fn check_golden(name: &str, trajectory: &Path, sandbox: &tests::agents::Sandbox, masks: &[&str]) {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("golden").join(name);
    let mut command = Command::new(e2e::atif_binary());
    command.env_remove("CI").args(["check", "--update-command", "cargo xtask golden-update mcp"]);
    for (dir, placeholder) in [(sandbox.cwd(), "<cwd>"), (sandbox.home(), "<home>")] {
        let dir = dir.display().to_string();
        let slug: String =
            dir.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        command.arg("--mask").arg(format!("{}={placeholder}", regex::escape(&dir)));
        command.arg("--mask").arg(format!("{}={placeholder}-slug", regex::escape(&slug)));
    }
    command.args(["--mask", r"\d{4}-\d{2}-\d{2}=<date>"]);
    // Claude Code names the kernel release, which another machine may not share.
    command.args(["--mask", r"OS Version: [^\n]*=OS Version: <os>"]);
    for mask in masks {
        command.arg("--mask").arg(format!("{mask}=<masked>"));
    }
    let checked = command.arg(&golden).arg(trajectory).output().unwrap();
    assert!(checked.status.success(), "{}: {}", golden.display(), e2e::describe(&checked));
}

#[test]
fn claude_code_reads_a_file_and_stores_a_note_through_mcp_and_replays_bit_for_bit_without_the_servers()
 {
    use std::ffi::OsString;
    use tests::agents::Agent;
    let Some(program) = Agent::ClaudeCode.program() else { return };
    if server("mcp-server-filesystem").is_none() || server("mcp-server-memory").is_none() {
        return;
    }
    let provider = claude_mcp_provider();
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("agent.script.json");

    let recorded = claude_mcp_sandbox(&root.path().join("record"));
    let recorded_trajectory = root.path().join("record.trajectory.json");
    let mut argv: Vec<OsString> = vec![e2e::atif_binary().into(), "record".into()];
    argv.extend(["--script".into(), script.clone().into(), "--upstream".into()]);
    argv.extend([provider.url().into(), "--trajectory".into(), recorded_trajectory.clone().into()]);
    argv.push("--".into());
    argv.extend(claude_mcp_argv(&program));
    let live = recorded.run(recorded.command_for(&argv)).unwrap();
    assert!(live.status.success(), "record: {}\n{}\n{}", live.status, live.stdout, live.stderr);
    let results = claude_tool_results(&live.stdout);
    assert_eq!(results.len(), 3, "ToolSearch, read, store: {}", live.stdout);
    assert!(results[1].contains("the meeting moved to Thursday"), "{results:?}");
    let memory = std::fs::read_to_string(recorded.cwd().join("memory.jsonl")).unwrap();
    assert!(memory.contains("the meeting moved to Thursday"), "server-memory stored: {memory}");
    drop(provider);

    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&script).unwrap()).unwrap();
    let calls: Vec<(String, String)> = saved["mcp"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["message"]["method"] == "tools/call")
        .map(|m| {
            (
                m["server"].as_str().unwrap().to_owned(),
                m["message"]["params"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [("files", "read_text_file"), ("memory", "create_entities")];
    assert_eq!(calls, expected.map(|(s, t)| (s.to_owned(), t.to_owned())), "{saved}");

    // Another directory and HOME, the model gone and neither server on PATH: only Claude Code.
    let (replayed, replay, replayed_trajectory) =
        claude_mcp_replay(root.path(), "replay", &program, &script);
    assert!(
        replay.status.success(),
        "replay: {}\n{}\n{}",
        replay.status,
        replay.stdout,
        replay.stderr
    );
    assert_eq!(claude_tool_results(&replay.stdout), results);
    assert!(!replayed.cwd().join("memory.jsonl").exists(), "no server ran in the replay");

    // The trajectories captured from the traffic are the same, byte for byte, but for the
    // directories, and each marks the MCP tool results with their server.
    let captured =
        |file: &Path, sandbox| with_placeholders(&std::fs::read_to_string(file).unwrap(), sandbox);
    let recorded_text = captured(&recorded_trajectory, &recorded);
    assert_eq!(captured(&replayed_trajectory, &replayed), recorded_text);
    for server in ["files", "memory"] {
        assert!(
            recorded_text.contains(&format!("\"mcp_server\": \"{server}\"")),
            "{recorded_text}"
        );
    }
    check_golden("mcp__claude_code_capture.json", &recorded_trajectory, &recorded, &[]);
    check_golden("mcp__claude_code_capture.json", &replayed_trajectory, &replayed, &[]);

    // A tool result that changed on the tape fails as drift of the next model request,
    // naming the tool and its server.
    let changed = edited_script(&script, &root.path().join("changed.script.json"), |script| {
        for message in script["mcp"].as_array_mut().unwrap() {
            let text = message.to_string();
            if message["from"] == "server" && text.contains("moved to Thursday") {
                *message = serde_json::from_str(&text.replace("Thursday", "Friday")).unwrap();
                break;
            }
        }
    });
    let (_, drifted, _) = claude_mcp_replay(root.path(), "changed", &program, &changed);
    assert!(!drifted.status.success(), "{}", drifted.stderr);
    assert!(
        drifted.stderr.contains("the result of tool `mcp__files__read_text_file` of MCP server `files` (call toolu_fake_4), as the agent sent it back, changed"),
        "{}",
        drifted.stderr
    );

    // A recorded tool call the agent no longer makes, and a call the tape never saw.
    let longer = edited_script(&script, &root.path().join("longer.script.json"), |script| {
        let messages = script["mcp"].as_array_mut().unwrap();
        let mut call = messages
            .iter()
            .find(|m| m["message"]["params"]["name"] == "read_text_file")
            .unwrap()
            .clone();
        call["message"]["id"] = json!(9999);
        call["message"]["params"]["arguments"] = json!({"path": "todo.txt"});
        messages.push(call);
    });
    let (_, fewer, _) = claude_mcp_replay(root.path(), "fewer", &program, &longer);
    assert!(!fewer.status.success(), "{}", fewer.stderr);
    assert!(
        fewer.stderr.contains("1 of the 3 recorded MCP calls were never made"),
        "{}",
        fewer.stderr
    );
    assert!(fewer.stderr.contains("files: tools/call of `read_text_file`"), "{}", fewer.stderr);
    let renamed = edited_script(&script, &root.path().join("renamed.script.json"), |script| {
        for message in script["mcp"].as_array_mut().unwrap() {
            if message["message"]["params"]["name"] == "create_entities" {
                message["message"]["params"]["name"] = json!("add_observations");
            }
        }
    });
    let (_, extra, _) = claude_mcp_replay(root.path(), "extra", &program, &renamed);
    assert!(!extra.status.success(), "{}", extra.stderr);
    assert!(
        extra.stderr.contains("MCP server `memory`: tools/call of `create_entities` was never recorded (recorded: add_observations)"),
        "{}",
        extra.stderr
    );
}

/// What Codex's tool outputs carry that changes from run to run: the measured wall time.
const CODEX_MASK: &str = r"Wall time: [0-9.]+ seconds";

/// Runs Codex on the MCP prompt under `atif ARGS…` (record or replay) in a fresh sandbox at
/// `root`, the servers started through `atif mcp` by their bare commands, with `path` as
/// `PATH`: the sandbox, the run and the captured trajectory.
fn codex_mcp_run(
    root: &Path,
    program: &Path,
    args: &[std::ffi::OsString],
    path: &std::ffi::OsStr,
) -> (tests::agents::Sandbox, tests::agents::AgentRun, PathBuf) {
    use std::ffi::OsString;
    use tests::agents::{Agent, Sandbox};
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let sandbox = Sandbox::new(Agent::Codex, root, &format!("http://127.0.0.1:{port}")).unwrap();
    std::fs::write(sandbox.cwd().join("notes.txt"), "the meeting moved to Thursday\n").unwrap();
    let trajectory = root.join("trajectory.json");
    let atif = e2e::atif_binary().display().to_string();
    let memory_file = sandbox.cwd().join("memory.jsonl").display().to_string();
    let mut argv: Vec<OsString> = vec![e2e::atif_binary().into()];
    argv.extend(args.iter().cloned());
    argv.extend(["--listen".into(), format!("127.0.0.1:{port}").into()]);
    argv.extend(["--trajectory".into(), trajectory.clone().into(), "--".into()]);
    argv.push(program.into());
    argv.extend(
        ["exec", "--json", "--skip-git-repo-check", "--sandbox", "danger-full-access"]
            .map(OsString::from),
    );
    argv.push("Read notes.txt and keep what it says as a note.".into());
    for (name, server) in
        [("files", "[\"mcp-server-filesystem\", \".\"]"), ("memory", "[\"mcp-server-memory\"]")]
    {
        let server = server.trim_start_matches('[');
        for setting in [
            format!("mcp_servers.{name}.command={atif:?}"),
            format!("mcp_servers.{name}.args=[\"mcp\", \"--name\", \"{name}\", \"--\", {server}"),
            format!("mcp_servers.{name}.env_vars=[\"ATIF_PROXY_URL\", \"ATIF_PROXY_TOKEN\"]"),
            // A server still starting after Codex's 10 s would miss the first request's tools.
            format!("mcp_servers.{name}.startup_timeout_sec=60"),
        ] {
            argv.extend(["-c".into(), setting.into()]);
        }
    }
    argv.extend([
        "-c".into(),
        format!("mcp_servers.memory.env.MEMORY_FILE_PATH={memory_file:?}").into(),
    ]);
    let mut command = sandbox.command_for(&argv);
    command.env("PATH", path);
    let run = sandbox.run(command).unwrap();
    (sandbox, run, trajectory)
}

/// Codex's MCP tool calls as its stream reports them: server, tool and result text.
fn codex_mcp_calls(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| {
            event["type"] == "item.completed" && event["item"]["type"] == "mcp_tool_call"
        })
        .map(|event| {
            let item = &event["item"];
            format!("{} {} {}", item["server"], item["tool"], item["result"])
        })
        .collect()
}

#[test]
fn codex_reads_a_file_and_stores_a_note_through_mcp_and_replays_without_the_servers() {
    use atif_fake_provider::{Config, ScriptedCall};
    use std::ffi::OsString;
    use tests::agents::Agent;
    let Some(program) = Agent::Codex.program() else { return };
    if server("mcp-server-filesystem").is_none() || server("mcp-server-memory").is_none() {
        return;
    }
    // Codex offers each server's tools inside a namespace tool `mcp__SERVER`.
    let call = |name: &str, arguments: Value| ScriptedCall { name: name.to_owned(), arguments };
    let mut config = Config::default();
    config.set_calls(vec![
        call("mcp__files__read_text_file", json!({"path": "notes.txt"})),
        call(
            "mcp__memory__create_entities",
            json!({"entities": [{"name": "meeting", "entityType": "note",
                   "observations": ["the meeting moved to Thursday"]}]}),
        ),
    ]);
    let provider = atif_fake_provider::FakeProvider::start(config).unwrap();
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("agent.script.json");
    let mut args: Vec<OsString> = vec!["record".into(), "--script".into(), script.clone().into()];
    args.extend(["--upstream".into(), provider.url().into(), "--mask".into(), CODEX_MASK.into()]);
    let (recorded, live, recorded_trajectory) =
        codex_mcp_run(&root.path().join("record"), &program, &args, &e2e::path_with_cache());
    assert!(live.status.success(), "record: {}\n{}\n{}", live.status, live.stdout, live.stderr);
    let calls = codex_mcp_calls(&live.stdout);
    assert_eq!(calls.len(), 2, "{}", live.stdout);
    assert!(
        calls[0].starts_with("\"files\" \"read_text_file\"")
            && calls[0].contains("moved to Thursday"),
        "{calls:?}"
    );
    assert!(calls[1].starts_with("\"memory\" \"create_entities\""), "{calls:?}");
    let memory = std::fs::read_to_string(recorded.cwd().join("memory.jsonl")).unwrap();
    assert!(memory.contains("the meeting moved to Thursday"), "server-memory stored: {memory}");
    drop(provider);

    // Another directory and HOME, no model, and only Codex on PATH.
    let bin = root.path().join("bin-without-servers");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&program, bin.join("codex")).unwrap();
    let mut path = vec![bin];
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let path = std::env::join_paths(path).unwrap();
    let args: Vec<OsString> = vec!["replay".into(), "--script".into(), script.clone().into()];
    let (replayed, replay, replayed_trajectory) =
        codex_mcp_run(&root.path().join("replay"), Path::new("codex"), &args, &path);
    assert!(
        replay.status.success(),
        "replay: {}\n{}\n{}",
        replay.status,
        replay.stdout,
        replay.stderr
    );
    assert_eq!(codex_mcp_calls(&replay.stdout), calls);
    assert!(!replayed.cwd().join("memory.jsonl").exists(), "no server ran in the replay");
    let recorded_text = std::fs::read_to_string(&recorded_trajectory).unwrap();
    for server in ["files", "memory"] {
        assert!(
            recorded_text.contains(&format!("\"mcp_server\": \"{server}\"")),
            "{recorded_text}"
        );
    }
    check_golden("mcp__codex_capture.json", &recorded_trajectory, &recorded, &[CODEX_MASK]);
    check_golden("mcp__codex_capture.json", &replayed_trajectory, &replayed, &[CODEX_MASK]);
    codex_drift_fails_naming_the_server_and_tool(root.path(), &script, &path);
}

/// Codex replays of the recorded `script`, each edited to drift one way, with only Codex on
/// `path`: a changed tool result, a recorded call never made, and a call never recorded each
/// fail the replay, naming the server and the tool.
fn codex_drift_fails_naming_the_server_and_tool(
    root: &Path,
    script: &Path,
    path: &std::ffi::OsStr,
) {
    use std::ffi::OsString;
    let replay = |name: &str, edit: &dyn Fn(&mut Value)| {
        let edited = edited_script(script, &root.join(format!("{name}.script.json")), edit);
        let args: Vec<OsString> = vec!["replay".into(), "--script".into(), edited.into()];
        let (_, run, _) = codex_mcp_run(&root.join(name), Path::new("codex"), &args, path);
        assert!(!run.status.success(), "{name}: the replay passed\n{}", run.stderr);
        run.stderr
    };
    let changed = replay("changed", &|script| {
        for message in script["mcp"].as_array_mut().unwrap() {
            let text = message.to_string();
            if message["from"] == "server" && text.contains("moved to Thursday") {
                *message = serde_json::from_str(&text.replace("Thursday", "Friday")).unwrap();
            }
        }
    });
    assert!(
        changed.contains("read_text_file` of MCP server `files` (call ")
            && changed.contains("as the agent sent it back, changed"),
        "{changed}"
    );
    let fewer = replay("fewer", &|script| {
        let messages = script["mcp"].as_array_mut().unwrap();
        let mut call = messages
            .iter()
            .find(|m| m["message"]["params"]["name"] == "read_text_file")
            .unwrap()
            .clone();
        call["message"]["id"] = json!(9999);
        call["message"]["params"]["arguments"] = json!({"path": "todo.txt"});
        messages.push(call);
    });
    assert!(
        fewer.contains("1 of the 3 recorded MCP calls were never made: #")
            && fewer.contains(" files: tools/call of `read_text_file`"),
        "{fewer}"
    );
    let extra = replay("extra", &|script| {
        for message in script["mcp"].as_array_mut().unwrap() {
            if message["message"]["params"]["name"] == "create_entities" {
                message["message"]["params"]["name"] = json!("add_observations");
            }
        }
    });
    assert!(
        extra.contains("MCP server `memory`: tools/call of `create_entities` was never recorded (recorded: add_observations)"),
        "{extra}"
    );
}

/// The Python `mcp` SDK agent, with `prompt` as the user's message when given, offered
/// server-filesystem's `read_text_file` through `atif mcp --name files` serving `dir`.
fn python_mcp_agent(python: &Path, prompt: Option<&str>, dir: &Path) -> Vec<std::ffi::OsString> {
    use std::ffi::OsString;
    let agent = e2e::assets_dir().join("python").join("mcp_agent.py");
    let mut argv: Vec<OsString> = vec![python.into(), agent.into()];
    if let Some(prompt) = prompt {
        argv.extend(["--prompt".into(), prompt.into()]);
    }
    argv.extend(["read_text_file".into(), e2e::atif_binary().into()]);
    argv.extend(["mcp", "--name", "files", "--", "mcp-server-filesystem"].map(OsString::from));
    argv.push(dir.into());
    argv
}

/// `atif record --script SCRIPT --upstream URL [--replay-tools TAPE] -- AGENT…`.
fn record_args(
    script: &Path,
    upstream: &str,
    tools: Option<&Path>,
    agent: Vec<std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = vec!["record".into(), "--script".into()];
    args.extend([script.into(), "--upstream".into(), upstream.into()]);
    if let Some(tools) = tools {
        args.extend(["--replay-tools".into(), tools.into()]);
    }
    args.push("--".into());
    args.extend(agent);
    args
}

#[test]
fn a_hybrid_recording_re_records_the_model_with_tool_results_from_the_tape_and_counts_a_miss() {
    use atif_fake_provider::{Config, FakeProvider, ScriptedCall};
    let Some(python) = e2e::python() else { return };
    if server("mcp-server-filesystem").is_none() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let provider = FakeProvider::start(Config::default()).unwrap();
    // The tools tape: a whole recording, the server on PATH.
    let tape = root.path().join("tools.script.json");
    let recorded_dir = sandbox(root.path(), "recorded");
    let agent = python_mcp_agent(&python, None, &recorded_dir);
    let live = atif_in(&recorded_dir, &record_args(&tape, provider.url(), None, agent), true);
    assert!(live.status.success(), "record: {}", e2e::describe(&live));
    let read = "tool read_text_file \"the fake model read this file\\n\"\n";
    assert!(String::from_utf8_lossy(&live.stdout).starts_with(read), "{}", e2e::describe(&live));

    // A prompt change, recorded hybrid in a directory without the file the tool reads, with
    // the server off PATH: the model is recorded live, the tool result comes from the tape.
    let prompt = "Summarise the notes file in one line.";
    let hybrid_dir = sandbox(root.path(), "hybrid");
    std::fs::remove_file(hybrid_dir.join("fake")).unwrap();
    let script = root.path().join("agent.script.json");
    let agent = python_mcp_agent(&python, Some(prompt), &hybrid_dir);
    let args = record_args(&script, provider.url(), Some(&tape), agent);
    let hybrid = atif_in(&hybrid_dir, &args, false);
    assert!(hybrid.status.success(), "hybrid: {}", e2e::describe(&hybrid));
    let stdout = String::from_utf8_lossy(&hybrid.stdout).into_owned();
    assert!(stdout.starts_with(read), "the tool result came from the tape: {stdout}");
    let stderr = String::from_utf8_lossy(&hybrid.stderr);
    assert!(stderr.contains("MCP tool calls from the tools tape: 1 served, 0 missed"), "{stderr}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&script).unwrap()).unwrap();
    let exchanges = saved["exchanges"].as_array().unwrap();
    assert!(exchanges.len() >= 2, "the model's exchanges: {saved}");
    assert!(exchanges[0].to_string().contains(prompt), "the new prompt is on the new tape");
    let mcp = saved["mcp"].as_array().unwrap();
    let call = mcp.iter().position(|m| m["message"]["method"] == "tools/call").unwrap();
    assert_eq!(mcp[call]["message"]["params"]["arguments"], json!({"path": "fake"}));
    let result = mcp[call + 1..].iter().find(|m| m["message"]["id"] == mcp[call]["message"]["id"]);
    assert!(
        result.unwrap().to_string().contains("the fake model read this file"),
        "the tool traffic as served is on the new tape: {saved}"
    );

    // The new tape replays offline, model and tools, in a third directory.
    let replay_dir = sandbox(root.path(), "replayed");
    let mut args: Vec<std::ffi::OsString> = vec!["replay".into(), "--script".into()];
    args.extend([script.clone().into(), "--".into()]);
    args.extend(python_mcp_agent(&python, Some(prompt), &replay_dir));
    drop(provider);
    let replayed = atif_in(&replay_dir, &args, false);
    assert!(replayed.status.success(), "replay: {}", e2e::describe(&replayed));
    assert_eq!(String::from_utf8_lossy(&replayed.stdout), stdout);

    // A tool call with new arguments is a miss: the agent reads a tool error naming the tool,
    // the verdict counts it, and the recording goes beside the script, not over it.
    let mut config = Config::default();
    let arguments = json!({"path": "todo.txt"});
    config.set_calls(vec![ScriptedCall { name: "read_text_file".to_owned(), arguments }]);
    let provider = FakeProvider::start(config).unwrap();
    let missed = root.path().join("missed.script.json");
    let agent = python_mcp_agent(&python, Some(prompt), &hybrid_dir);
    let run =
        atif_in(&hybrid_dir, &record_args(&missed, provider.url(), Some(&tape), agent), false);
    assert_eq!(run.status.code(), Some(1), "{}", e2e::describe(&run));
    let stderr = String::from_utf8_lossy(&run.stderr);
    for expected in [
        "MCP tool calls from the tools tape: 0 served, 1 missed",
        "tool miss (not on the tools tape tools.script.json; answered with a tool error, the server was not started): MCP server `files`: tools/call of `read_text_file` matches no recorded call",
        "-    \"path\": \"fake\"\n+    \"path\": \"todo.txt\"",
        "To serve it, record the tools live to add the call: `atif record` without --replay-tools",
    ] {
        assert!(stderr.contains(expected), "{expected}\n---\n{stderr}");
    }
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.starts_with("tool read_text_file \"tool miss (not on the tools tape"),
        "{stdout}"
    );
    assert!(!missed.exists(), "a recording with a miss never replaces the script");
    assert!(root.path().join("missed.script.failed.json").exists());
}
