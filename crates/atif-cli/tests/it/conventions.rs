//! The conventions every subcommand follows (docs/cli.md): the same exit statuses for the same
//! situations, and output errors that never panic.
//!
//! Adding a subcommand: add a [`Row`] to [`ROWS`]. `IN` in its arguments is where the input goes;
//! the fixture folder (the current directory of every run) holds the files named below.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::{atif_command, stderr, stdout};

/// One subcommand in the exit-status table.
struct Row {
    /// The arguments, with `IN` standing for the input under test.
    args: &'static [&'static str],
    /// The input that succeeds (exit 0).
    ok: &'static str,
    /// An input for which the command reports a difference or an invalid document (exit 1),
    /// when the command has such a case.
    mismatch: Option<&'static str>,
    /// Whether `IN` is read as a file (then broken JSON, JSON that is not what the command
    /// reads, a missing file and a directory are tried too).
    reads_input: bool,
    /// Whether a folder is one of the inputs the command reads (`import` reads a session
    /// folder): then a folder without what it looks for is invalid input (1), not unreadable.
    reads_folders: bool,
    /// Whether `IN` is a file the command writes (`record`'s script): then a directory is
    /// tried too.
    writes_input: bool,
    /// Whether the command runs until SIGTERM (`serve`): it is sent once the command prints
    /// `listening on`.
    until_stopped: bool,
}

/// Every subcommand. The fixture files: `run.json` (a trajectory), `other.json` (the same run
/// with another tool), `invalid-run.json` (JSON with a trajectory's form that breaks an ATIF
/// rule), `golden.json` (the golden of `run.json`), `script.json` (a model script),
/// `empty-script.json` (an HTTP script with no exchange), `http-script.json` (an HTTP script with
/// two recorded exchanges), `log.jsonl`
/// (a Codex log), `broken.json` (not JSON), `hello.json` (`{"hello": "world"}`), `folder/` (a
/// directory), `pending/` (a folder with a pending golden file, `g.json.new`) and `missing.json`
/// (does not exist).
const ROWS: &[Row] = &[
    Row {
        args: &["validate", "IN"],
        ok: "run.json",
        mismatch: Some("invalid-run.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["schema"],
        ok: "",
        mismatch: None,
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["upgrade", "IN"],
        ok: "run.json",
        mismatch: Some("invalid-run.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["normalize", "IN"],
        ok: "run.json",
        mismatch: None,
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["shape", "IN"],
        ok: "run.json",
        mismatch: None,
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["view", "IN", "-o", "page.html"],
        ok: "run.json",
        mismatch: None,
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["diff", "run.json", "IN"],
        ok: "run.json",
        mismatch: Some("other.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["diff", "IN", "run.json"],
        ok: "run.json",
        mismatch: Some("other.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["check", "golden.json", "IN"],
        ok: "run.json",
        mismatch: Some("other.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["check", "--format", "json", "golden.json", "IN"],
        ok: "run.json",
        mismatch: Some("other.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["diff", "--format", "json", "run.json", "IN"],
        ok: "run.json",
        mismatch: Some("other.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    // `IN` twenty times: twenty runs against `envelope.json`, the envelope of twenty copies of
    // `run.json`; twenty copies of `other.json` call another tool in every run (changed).
    Row {
        args: &[
            "envelope",
            "envelope.json",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
            "IN",
        ],
        ok: "run.json",
        mismatch: Some("other.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    // Three live runs of an agent asking the fake provider (`UPSTREAM`) once, against the
    // envelope of three such runs (no clear change) or of `run.json` (changed). A missing
    // envelope is a failure (1), as a missing golden is for `check`, so IN is not tried as the
    // table's other inputs.
    Row {
        args: &[
            "live",
            "--runs",
            "3",
            "--jobs",
            "2",
            "--format",
            "json",
            "--golden",
            "IN",
            "--upstream",
            "UPSTREAM",
            "--",
            "sh",
            "-c",
            ASK_ONCE,
        ],
        ok: "live-envelope.json",
        mismatch: Some("envelope.json"),
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["script", "show", "IN"],
        ok: "script.json",
        mismatch: None,
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["script", "show", "--format", "json", "IN"],
        ok: "script.json",
        mismatch: None,
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["import", "IN"],
        ok: "log.jsonl",
        mismatch: None,
        reads_input: true,
        reads_folders: true,
        writes_input: false,
        until_stopped: false,
    },
    // `atif golden` reads folders: `folder/` holds no pending file, `pending/` holds one.
    Row {
        args: &["golden", "pending", "--dir", "IN"],
        ok: "folder",
        mismatch: Some("pending"),
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["golden", "pending", "--format", "json", "--dir", "IN"],
        ok: "folder",
        mismatch: Some("pending"),
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["golden", "review", "--dir", "IN"],
        ok: "folder",
        mismatch: Some("pending"),
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["golden", "accept", "--dir", "IN"],
        ok: "folder",
        mismatch: None,
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["golden", "reject", "--dir", "IN"],
        ok: "folder",
        mismatch: None,
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["golden", "clean", "--dir", "IN"],
        ok: "folder",
        mismatch: None,
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    // `true` stands for an agent that makes no model call: an empty script replays exactly,
    // and a script with exchanges that were never requested is a replay that was not exact.
    Row {
        args: &["replay", "--script", "IN", "--", "true"],
        ok: "empty-script.json",
        mismatch: Some("http-script.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    // An agent that asks the fake provider (`UPSTREAM`) for its models: a recording of one
    // exchange. Writing over a folder cannot run.
    Row {
        args: &[
            "record",
            "--script",
            "IN",
            "--upstream",
            "UPSTREAM",
            "--",
            "sh",
            "-c",
            "curl -sS -o /dev/null \"$OPENAI_BASE_URL/models\"",
        ],
        ok: "new.script.json",
        mismatch: None,
        reads_input: false,
        reads_folders: false,
        writes_input: true,
        until_stopped: false,
    },
    Row {
        args: &["serve", "--replay", "--script", "IN"],
        ok: "empty-script.json",
        mismatch: Some("http-script.json"),
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: true,
    },
    // A relay replaying a script to an agent that closes its side at once (standard input is
    // empty): a script without MCP messages owes nothing.
    Row {
        args: &["mcp", "--name", "files", "--script", "IN", "--replay", "--", "absent-server"],
        ok: "script.json",
        mismatch: None,
        reads_input: true,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["man", "man-pages"],
        ok: "",
        mismatch: None,
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
    Row {
        args: &["completions", "bash"],
        ok: "",
        mismatch: None,
        reads_input: false,
        reads_folders: false,
        writes_input: false,
        until_stopped: false,
    },
];

/// An agent that asks the model at `$OPENAI_BASE_URL` one question offering a shell tool.
const ASK_ONCE: &str = r#"curl -sS -o /dev/null "$OPENAI_BASE_URL/chat/completions" -H 'content-type: application/json' -d '{"model": "m", "messages": [{"role": "user", "content": "list files"}], "tools": [{"type": "function", "function": {"name": "shell", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]}'"#;

/// The situations of the table, with the exit status every subcommand gives for them.
const CASES: &[(&str, u8)] = &[
    ("success", 0),
    ("mismatch", 1),
    ("invalid JSON", 1),
    ("not what the command reads", 1),
    ("missing file", 2),
    ("directory", 2),
];

#[test]
fn every_subcommand_gives_the_same_exit_status_in_the_same_situation() {
    let fixture = Fixture::new();
    let mut failures = Vec::new();
    for row in ROWS {
        for &(case, expected) in CASES {
            let input = match case {
                "success" => Some(row.ok),
                "mismatch" => row.mismatch,
                "directory" if row.writes_input => Some("folder"),
                _ if !row.reads_input => None,
                "invalid JSON" => Some("broken.json"),
                "not what the command reads" => Some("hello.json"),
                "missing file" => Some("missing.json"),
                _ => Some("folder"),
            };
            let Some(input) = input else { continue };
            let expected = if case == "directory" && row.reads_folders { 1 } else { expected };
            let args = with_input(row.args, input);
            let output = match row.until_stopped {
                true => fixture.run_until_listening(&args),
                false => fixture.run(&args, Stdio::piped(), Stdio::piped()),
            };
            if output.status.code() != Some(i32::from(expected)) {
                failures.push(format!(
                    "atif {} ({case}): exit {:?}, expected {expected}\n{}",
                    args.join(" "),
                    output.status.code(),
                    stderr(&output)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_full_disk_is_exit_2_with_a_message_and_a_closed_pipe_is_quiet() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("skipped: /dev/full does not exist on this system");
        return;
    }
    let fixture = Fixture::new();
    let mut failures = Vec::new();
    // `serve` writes only its address on standard output, and tests/it/proxy.rs covers it.
    for row in ROWS.iter().filter(|row| !row.until_stopped) {
        for input in [Some(row.ok), row.mismatch, row.reads_input.then_some("broken.json")] {
            let Some(input) = input else { continue };
            let args = with_input(row.args, input);
            let name = format!("atif {}", args.join(" "));
            let normal = fixture.run(&args, Stdio::piped(), Stdio::piped());
            let normal_code = normal.status.code();

            let on_full = fixture.run(&args, open(full), Stdio::piped());
            let expected = if normal.stdout.is_empty() { normal_code } else { Some(2) };
            if on_full.status.code() != expected {
                failures.push(format!("{name} > /dev/full: exit {:?}", on_full.status.code()));
            }
            if !normal.stdout.is_empty()
                && !stderr(&on_full).contains("cannot write to standard output")
            {
                failures.push(format!("{name} > /dev/full: no message: {}", stderr(&on_full)));
            }

            let err_full = fixture.run(&args, Stdio::piped(), open(full));
            // When standard error fails, an error keeps its own status; a note that cannot be
            // written makes a successful run exit 2.
            let expected = match normal_code {
                Some(0) if !normal.stderr.is_empty() => Some(2),
                code => code,
            };
            if err_full.status.code() != expected {
                failures.push(format!("{name} 2> /dev/full: exit {:?}", err_full.status.code()));
            }

            let mut command = fixture.command(&args);
            let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            drop(child.stdout.take());
            let closed = child.wait_with_output().unwrap();
            if closed.status.code() != normal_code {
                failures.push(format!("{name} | (closed): exit {:?}", closed.status.code()));
            }
            if stderr(&closed).to_lowercase().contains("broken pipe") {
                failures.push(format!("{name} | (closed): {}", stderr(&closed)));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn quiet_leaves_only_errors_on_standard_error() {
    let fixture = Fixture::new();
    let noisy = fixture.run(&["import", "log.jsonl"], Stdio::piped(), Stdio::piped());
    assert_eq!(noisy.status.code(), Some(0));
    assert!(stderr(&noisy).starts_with("atif import: format codex-exec"), "{}", stderr(&noisy));
    let quiet = fixture.run(&["import", "-q", "log.jsonl"], Stdio::piped(), Stdio::piped());
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(stderr(&quiet), "");
    assert_eq!(quiet.stdout, noisy.stdout);
    let failed =
        fixture.run(&["--quiet", "normalize", "broken.json"], Stdio::piped(), Stdio::piped());
    assert_eq!(failed.status.code(), Some(1));
    assert!(stderr(&failed).starts_with("error: broken.json: "), "{}", stderr(&failed));
}

#[test]
fn every_subcommand_under_quiet_says_nothing_on_standard_error_and_json_means_json() {
    let fixture = Fixture::new();
    let mut failures = Vec::new();
    // Subcommands whose output is a JSON document whatever the flags.
    let documents = ["schema", "upgrade", "normalize", "import"];
    for row in ROWS.iter().filter(|row| !row.until_stopped) {
        let subcommand: Vec<&str> = row
            .args
            .iter()
            .copied()
            .take_while(|arg| !arg.contains('.') && !arg.starts_with('-') && *arg != "IN")
            .collect();
        let help =
            fixture.run(&[&subcommand[..], &["--help"]].concat(), Stdio::piped(), Stdio::piped());
        let has_format = stdout(&help).contains("--format <FORMAT>");
        for input in [Some(row.ok), row.mismatch] {
            let Some(input) = input else { continue };
            let args = with_input(row.args, input);
            let name = format!("atif {}", args.join(" "));

            // A mismatch may be an error, which `-q` still prints; a success prints no note.
            let quiet = fixture.run(&[&["-q"], &args[..]].concat(), Stdio::piped(), Stdio::piped());
            if input == row.ok && !quiet.stderr.is_empty() {
                failures.push(format!("{name} -q: standard error: {}", stderr(&quiet)));
            }
            if args[0] == "check"
                && input == row.ok
                && !quiet.stdout.is_empty()
                && !args.contains(&"--format")
            {
                failures.push(format!("{name} -q: a match printed {}", stdout(&quiet)));
            }

            let json_args: Vec<&str> = match (has_format, args.contains(&"--format")) {
                (true, false) => [&args[..], &["--format", "json"]].concat(),
                (true, true) => args.clone(),
                (false, _) if documents.contains(&args[0]) && input == row.ok => args.clone(),
                (false, _) => continue,
            };
            let output = fixture.run(&json_args, Stdio::piped(), Stdio::piped());
            if let Err(err) = serde_json::from_slice::<serde_json::Value>(&output.stdout) {
                failures.push(format!(
                    "atif {}: not one JSON document ({err}): {}",
                    json_args.join(" "),
                    stdout(&output)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn help_completions_and_man_pages_come_from_the_binary_and_name_what_it_knows() {
    let fixture = Fixture::new();
    for args in [&["--help"][..], &["import", "--help"]] {
        let help = stdout(&fixture.run(args, Stdio::piped(), Stdio::piped()));
        for agent in ["Claude Code", "Codex", "Gemini CLI", "OpenCode", "pi"] {
            assert!(help.contains(agent), "atif {args:?} names {agent}:\n{help}");
        }
    }
    // `--preset <TAB>` offers the preset names, not file names.
    let bash = stdout(&fixture.run(&["completions", "bash"], Stdio::piped(), Stdio::piped()));
    let offered = "--preset)\n                    COMPREPLY=($(compgen -W \"claude-code codex gemini-cli opencode pi otel\"";
    assert!(bash.contains(offered), "{bash}");
    let output = fixture.run(&["man", "pages"], Stdio::piped(), Stdio::piped());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let page = std::fs::read_to_string(fixture.dir.path().join("pages/atif-check.1")).unwrap();
    assert!(page.contains("\n.TH atif-check 1 "), "{page}");
}

#[test]
fn color_follows_the_flag_then_no_color_then_clicolor_force() {
    let fixture = Fixture::new();
    let diff = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = fixture.command(args);
        command.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
        for (name, value) in env {
            command.env(name, value);
        }
        let output = command.stdout(Stdio::piped()).stderr(Stdio::piped()).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        stdout(&output).contains("\u{1b}[")
    };
    let args = ["diff", "run.json", "other.json"];
    assert!(!diff(&args, &[]), "not a terminal: no colour");
    assert!(diff(&args, &[("CLICOLOR_FORCE", "1")]));
    assert!(!diff(&args, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]), "NO_COLOR wins");
    assert!(diff(&["--color", "always", "diff", "run.json", "other.json"], &[("NO_COLOR", "1")]));
    assert!(!diff(
        &["diff", "--color=never", "run.json", "other.json"],
        &[("CLICOLOR_FORCE", "1")]
    ));
    let coloured = {
        let output = fixture
            .command(&["diff", "--color", "always", "run.json", "other.json"])
            .output()
            .unwrap();
        stdout(&output)
    };
    assert!(coloured.contains("\u{1b}[32m+"), "additions are green: {coloured}");
    assert!(coloured.contains("\u{1b}[31m-"), "removals are red: {coloured}");
}

#[test]
fn json_output_of_diff_check_and_script_show_has_the_documented_shape() {
    let fixture = Fixture::new();
    let json = |args: &[&str]| -> serde_json::Value {
        let output = fixture.run(args, Stdio::piped(), Stdio::piped());
        serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|err| panic!("{args:?}: {err}: {}", stdout(&output)))
    };
    let diff = json(&["diff", "--format", "json", "run.json", "other.json"]);
    assert_eq!(diff["changed"], true);
    assert!(diff["deltas"].as_array().unwrap().iter().any(|delta| delta["field"] == "functions"));
    assert_eq!(diff["steps"][0]["kind"], "changed");
    assert!(diff["steps"][0]["text"].as_str().unwrap().contains("grep"), "{diff}");
    assert!(diff["diff"].as_str().unwrap().starts_with("--- run.json\n+++ other.json\n"), "{diff}");
    let same = json(&["diff", "--format", "json", "run.json", "run.json"]);
    assert_eq!(
        same,
        serde_json::json!({"changed": false, "deltas": [], "steps": [], "more_steps": 0, "diff": ""})
    );

    let check = json(&["check", "--format", "json", "golden.json", "other.json"]);
    assert_eq!(check["outcome"], "failed");
    assert_eq!(check["failure"], "behaviour-changed");
    assert_eq!(check["golden"], "golden.json");
    assert!(!check["deltas"].as_array().unwrap().is_empty());
    assert_eq!(check["steps"], diff["steps"], "check gives the steps as diff does");
    assert_eq!(check["more_steps"], 0);
    let matched = json(&["check", "--format", "json", "golden.json", "run.json"]);
    assert_eq!(matched["outcome"], "matched");
    assert_eq!(matched["failure"], serde_json::Value::Null);
    assert_eq!(matched["steps"], serde_json::json!([]));

    let script = json(&["script", "show", "--format", "json", "script.json"]);
    assert!(script["calls"].is_array(), "{script}");
    assert!(script["exchanges"].is_array(), "{script}");
}

#[test]
fn json_text_where_a_file_is_expected_gets_advice_and_no_update_suggestion() {
    let fixture = Fixture::new();
    let output =
        fixture.run(&["check", "golden.json", r#"{"a":1}"#], Stdio::piped(), Stdio::piped());
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("looks like JSON text: save the JSON to a file, or pass `-`"), "{text}");
    assert!(!text.contains("--update"), "{text}");
    assert_eq!(stdout(&output), "");
}

/// The fixture folder of the table tests.
struct Fixture {
    dir: tempfile::TempDir,
    /// The upstream `UPSTREAM` stands for.
    provider: atif_fake_provider::FakeProvider,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let write =
            |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();
        write("run.json", trajectory("grep").as_bytes());
        write("other.json", trajectory("rg").as_bytes());
        write("invalid-run.json", br#"{"schema_version": "ATIF-v1.8", "steps": []}"#);
        write("broken.json", b"{\"steps\": [");
        write("hello.json", br#"{"hello": "world"}"#);
        std::fs::create_dir(dir.path().join("folder")).unwrap();
        std::fs::create_dir(dir.path().join("pending")).unwrap();
        write("pending/g.json.new", trajectory("grep").as_bytes());
        let copy = |from: PathBuf, to: &str| std::fs::copy(from, dir.path().join(to)).unwrap();
        copy(root.join("tests/scripts/tool_loop_1_turn.script.json"), "script.json");
        copy(root.join("crates/atif-import/tests/fixtures/codex-exec/basic.jsonl"), "log.jsonl");
        copy(
            root.join("python/examples/tests/scripts/test_calculator_agent__test_calculator_answers_with_one_shell_call.json"),
            "http-script.json",
        );
        write(
            "empty-script.json",
            br#"{"format": "atif-replay-script", "version": 2, "model": null, "calls": [], "exchanges": []}"#,
        );
        let provider =
            atif_fake_provider::FakeProvider::start(atif_fake_provider::Config::default()).unwrap();
        let fixture = Fixture { dir, provider };
        let made = fixture.run(
            &["check", "--update", "golden.json", "run.json"],
            Stdio::piped(),
            Stdio::piped(),
        );
        assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
        let envelope: Vec<&str> = ["envelope", "--update", "envelope.json"]
            .into_iter()
            .chain(std::iter::repeat_n("run.json", 20))
            .collect();
        let made = fixture.run(&envelope, Stdio::piped(), Stdio::piped());
        assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
        let live = ["live", "--runs", "3", "--update", "--golden", "live-envelope.json"];
        let upstream = ["--upstream", "UPSTREAM", "--", "sh", "-c", ASK_ONCE];
        let made =
            fixture.run(&[&live[..], &upstream[..]].concat(), Stdio::piped(), Stdio::piped());
        assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
        fixture
    }

    /// The command, run in the fixture folder, with `CI` set so that nothing is written, except
    /// by `record`: on CI it refuses to replace a script, and the tests record more than once.
    fn command(&self, args: &[&str]) -> Command {
        let args: Vec<&str> = args
            .iter()
            .map(|arg| if *arg == "UPSTREAM" { self.provider.url() } else { arg })
            .collect();
        let mut command = atif_command(&args);
        command.current_dir(self.dir.path()).stdin(Stdio::null());
        if args.first() != Some(&"record") {
            command.env("CI", "1");
        }
        // Live runs are refused on CI unless asked for; here they only reach the fake provider.
        if args.iter().find(|arg| !arg.starts_with('-')) == Some(&"live") {
            command.env("ATIF_LIVE", "1");
        }
        command
    }

    fn run(&self, args: &[&str], out: impl Into<Stdio>, err: impl Into<Stdio>) -> Output {
        let mut command = self.command(args);
        if args.first() == Some(&"check") && args.contains(&"--update") {
            command.env_remove("CI");
        }
        command.stdout(out).stderr(err).output().unwrap()
    }

    /// Runs a command that runs until stopped: SIGTERM once it prints `listening on` (or it
    /// exits on its own when it cannot run).
    fn run_until_listening(&self, args: &[&str]) -> Output {
        use std::io::BufRead as _;
        let mut child =
            self.command(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        if first.starts_with("listening on ") {
            let pid = child.id().to_string();
            let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
            assert!(killed.success());
        }
        let mut output = child.wait_with_output().unwrap();
        output.stdout = first.into_bytes();
        output
    }
}

fn open(path: &Path) -> Stdio {
    std::fs::OpenOptions::new().write(true).open(path).unwrap().into()
}

fn with_input<'a>(args: &[&'a str], input: &'a str) -> Vec<&'a str> {
    args.iter().map(|arg| if *arg == "IN" { input } else { arg }).collect()
}

/// A small valid trajectory whose agent calls `tool`.
fn trajectory(tool: &str) -> String {
    serde_json::json!({
        "schema_version": "ATIF-v1.8",
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "find it"},
            {
                "step_id": 2, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": "c", "function_name": tool, "arguments": {"q": "x"}}],
                "observation": {"results": [{"source_call_id": "c", "content": "found"}]}
            },
            {"step_id": 3, "source": "agent", "message": "done"}
        ]
    })
    .to_string()
}
