//! Every ```` ```console ```` session in README.md and docs/*.md, run as written against the
//! real binaries, with its output checked line by line.
//!
//! A session is a list of `$ COMMAND` lines, each followed by the output it prints (standard
//! output and standard error, as a terminal shows them). Each page runs in a sandbox folder of
//! its own, which holds copies of `examples/` and `python/examples/` (the README's commands name
//! them from the repository's root) and the page's stand-in files ([`FIXTURES`]); the sessions
//! of a page run in order, in one sandbox, each command through `bash -c`.
//!
//! What runs where a reader's machine would run something else:
//! - `atif` is the binary of this build, and `cargo run -q -p PKG -- ARGS` runs the binary `PKG`
//!   of this build (a shim named `cargo` stands in front of the real one);
//! - `python` is the Python of the end-to-end venv (`cargo xtask e2e-setup`), activated; without
//!   it, a page
//!   stops before its first command that names it, with a notice (a failure under
//!   `ATIF_E2E_REQUIRED=1`);
//! - a command ending with `&` starts in the background and its first line of output is
//!   checked; `kill %N` stops the N-th one;
//! - every `127.0.0.1:PORT` of a page becomes a free port, the same one throughout the page;
//! - `$?` is the exit status of the command before, as in one shell;
//! - the commands of [`NOT_RUN`] are not run, each for the reason given, and show no output.
//!
//! In the expected output, a line `…` stands for any number of lines, and a line ending with
//! `…` for any line starting with what comes before it.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]
#![allow(clippy::print_stderr, reason = "a skipped page prints why")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use atif_test_support::{atif_binary, workspace_root};

/// Files a page's sessions use, by page: the name in the sandbox and the committed file it is.
const FIXTURES: &[(&str, &str, &str)] = &[
    ("docs/import.md", "run.jsonl", "crates/atif-import/tests/fixtures/claude-stream/basic.jsonl"),
    (
        "docs/import.md",
        "killed.jsonl",
        "crates/atif-import/tests/fixtures/claude-stream/killed.jsonl",
    ),
    ("docs/import.md", "events.jsonl", "crates/atif-import/tests/fixtures/codex-exec/basic.jsonl"),
    ("docs/validation.md", "old.json", "tests/fixtures/docs/old.json"),
    ("docs/golden.md", "run.json", "tests/fixtures/crash.json"),
    ("docs/golden.md", "next-run.json", "tests/fixtures/docs/crash-execute-sql.json"),
    ("docs/live.md", "agent.py", "tests/fixtures/docs/agent.py"),
    ("docs/mcp.md", "mcp_agent.py", "tests/e2e/python/mcp_agent.py"),
    ("docs/mcp.md", "notes_server.py", "tests/fixtures/docs/notes_server.py"),
];

/// Folders of this checkout copied into every sandbox.
const COPIED: &[&str] = &["examples", "python/examples", "tests/scripts"];

/// Commands shown but not run, and why.
const NOT_RUN: &[(&str, &str)] =
    &[("pip install openai", "it installs from the network; the end-to-end venv has the SDK")];

/// How long a background command may take to print its first line.
const FIRST_LINE_TIMEOUT: Duration = Duration::from_secs(30);

#[test]
fn every_console_session_in_the_docs_prints_what_it_shows() {
    let pages = pages();
    let mut failures = Vec::new();
    let mut n_commands = 0;
    for (page, sessions) in &pages {
        match run_page(page, sessions) {
            Ok(ran) => n_commands += ran,
            Err(failure) => failures.push(failure),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(n_commands >= 12, "only {n_commands} commands ran: the sessions were not found");
}

#[test]
fn the_matcher_accepts_elisions_and_rejects_a_changed_line() {
    let expected = |lines: &[&str]| lines.iter().map(|line| (*line).to_owned()).collect::<Vec<_>>();
    let actual = ["a", "b", "c", "d: long tail"];
    assert!(matches(&expected(&["a", "…", "d: long…"]), &actual));
    assert!(matches(&expected(&["…", "c", "d: long tail"]), &actual));
    assert!(matches(&expected(&["a", "b", "…"]), &actual));
    assert!(!matches(&expected(&["a", "c", "…"]), &actual), "a line went missing");
    assert!(!matches(&expected(&["a", "b", "c", "d: short tail"]), &actual), "a line changed");
    assert!(!matches(&expected(&["a", "b", "c"]), &actual), "a line too many");
    assert!(!matches(&expected(&["a", "b", "c", "d: long tail", "e"]), &actual), "one too few");
}

#[test]
fn sessions_are_read_with_their_commands_and_outputs() {
    let page =
        "text\n```console\n$ one\nout 1\nout 2\n$ two &\n```\n```text\n$ not a session\n```\n";
    let sessions = sessions(page);
    assert_eq!(sessions.len(), 1);
    let steps: Vec<(&str, usize)> =
        sessions[0].iter().map(|step| (step.command.as_str(), step.expected.len())).collect();
    assert_eq!(steps, [("one", 2), ("two &", 0)]);
    assert_eq!(sessions[0][0].line, 3);
}

/// One command of a session, with the output the page shows for it.
#[derive(Debug, Clone)]
struct Step {
    /// 1-based line of the `$ ` line in its page.
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// README.md and every docs/*.md page that has sessions, with them.
fn pages() -> BTreeMap<String, Vec<Vec<Step>>> {
    let root = workspace_root();
    let mut names = vec!["README.md".to_owned()];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            names.push(format!("docs/{name}"));
        }
    }
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(root.join(&name)).unwrap();
            (name, sessions(&text))
        })
        .filter(|(_, sessions)| !sessions.is_empty())
        .collect()
}

/// The ```` ```console ```` blocks of a page, as steps.
fn sessions(page: &str) -> Vec<Vec<Step>> {
    let mut sessions = Vec::new();
    let mut current: Option<Vec<Step>> = None;
    for (idx, line) in page.lines().enumerate() {
        match (&mut current, line) {
            (None, "```console") => current = Some(Vec::new()),
            (Some(_), "```") => sessions.extend(current.take()),
            (Some(steps), _) => match line.strip_prefix("$ ") {
                Some(command) => steps.push(Step {
                    line: idx + 1,
                    command: command.to_owned(),
                    expected: vec![],
                }),
                None => match steps.last_mut() {
                    Some(step) => step.expected.push(line.trim_end().to_owned()),
                    None => panic!("line {}: a session starts with `$ `, not {line:?}", idx + 1),
                },
            },
            (None, _) => {}
        }
    }
    sessions
}

/// Runs a page's sessions in one sandbox; the number of commands run, or what went wrong.
fn run_page(page: &str, sessions: &[Vec<Step>]) -> Result<usize, String> {
    let steps: Vec<Step> = sessions.iter().flatten().cloned().collect();
    // The steps before the first one that needs Python run without the venv.
    let needs_python = steps.iter().position(|step| step.command.contains("python"));
    let python = needs_python.and_then(|_| tests::e2e::python());
    let steps = match (needs_python, &python) {
        (Some(first), None) => {
            eprintln!("skipped: the sessions of {page} from line {} on", steps[first].line);
            steps[..first].to_vec()
        }
        _ => steps,
    };
    let steps = with_free_ports(steps);
    let sandbox = Sandbox::new(page, python.as_deref());
    let mut jobs: Vec<Child> = Vec::new();
    let mut ran = 0;
    let mut result = Ok(());
    for step in &steps {
        let outcome = run_step(&sandbox, step, &mut jobs);
        ran += 1;
        if let Err(actual) = outcome {
            result = Err(format!(
                "{page}:{}: `$ {}` printed what the page does not show.\n--- the page shows:\n{}\n\
                 --- it printed:\n{actual}\n(update the page, or the code; `…` elides lines)",
                step.line,
                step.command,
                step.expected.join("\n"),
            ));
            break;
        }
    }
    for mut job in jobs {
        let _ = job.kill();
        let _ = job.wait();
    }
    result.map(|()| ran)
}

/// Runs one step; `Err` with what it printed when that is not what the page shows.
fn run_step(sandbox: &Sandbox, step: &Step, jobs: &mut Vec<Child>) -> Result<(), String> {
    if let Some((_, why)) = NOT_RUN.iter().find(|(command, _)| *command == step.command) {
        assert!(step.expected.is_empty(), "`{}` is not run ({why}): show no output", step.command);
        return Ok(());
    }
    if let Some(job) = step.command.strip_prefix("kill %") {
        let job: usize = job.parse().unwrap();
        let child = jobs.get_mut(job - 1).unwrap_or_else(|| panic!("no job %{job}"));
        child.kill().unwrap();
        child.wait().unwrap();
        return compare(&step.expected, "");
    }
    if let Some(command) = step.command.strip_suffix('&') {
        let mut child = sandbox
            .command(&format!("exec {}", command.trim_end()))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        jobs.push(child);
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = send.send(line);
        });
        let first = receive.recv_timeout(FIRST_LINE_TIMEOUT).unwrap_or_default();
        return compare(&step.expected, &first);
    }
    let output = sandbox.command(&step.command).output().unwrap();
    sandbox.last_status.set(output.status.code().unwrap_or(128));
    compare(&step.expected, &String::from_utf8_lossy(&output.stdout))
}

fn compare(expected: &[String], printed: &str) -> Result<(), String> {
    let actual: Vec<&str> = printed.lines().map(str::trim_end).collect();
    if matches(expected, &actual) { Ok(()) } else { Err(printed.to_owned()) }
}

/// Whether `actual` is what `expected` shows: `…` alone elides any number of lines, a line
/// ending with `…` matches any line starting with what precedes it.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "…" => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => match actual.split_first() {
            Some((line, more)) => {
                let same = match first.strip_suffix('…') {
                    Some(prefix) => line.starts_with(prefix),
                    None => line == first,
                };
                same && matches(rest, more)
            }
            None => false,
        },
    }
}

/// Every `127.0.0.1:PORT` of `steps` replaced by a free port, the same for the same port.
fn with_free_ports(mut steps: Vec<Step>) -> Vec<Step> {
    let pattern = regex::Regex::new(r"127\.0\.0\.1:(\d{2,5})").unwrap();
    let mut ports = BTreeMap::new();
    for step in &steps {
        for found in pattern.captures_iter(&step.command) {
            ports.entry(found[1].to_owned()).or_insert_with(free_port);
        }
    }
    for step in &mut steps {
        for (shown, free) in &ports {
            let (shown, free) = (format!("127.0.0.1:{shown}"), format!("127.0.0.1:{free}"));
            step.command = step.command.replace(&shown, &free);
            for line in &mut step.expected {
                *line = line.replace(&shown, &free);
            }
        }
    }
    steps
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A page's folder: the copied examples, the page's fixtures, and a `bin/` in front of `PATH`.
struct Sandbox {
    dir: tempfile::TempDir,
    path: std::ffi::OsString,
    /// The exit status of the last command run, which the next one sees as `$?`.
    last_status: std::cell::Cell<i32>,
}

impl Sandbox {
    fn new(page: &str, python: Option<&Path>) -> Sandbox {
        let root = workspace_root();
        let dir = tempfile::tempdir().unwrap();
        for folder in COPIED {
            copy_dir(&root.join(folder), &dir.path().join(folder));
        }
        for (_, name, source) in FIXTURES.iter().filter(|(on, _, _)| *on == page) {
            std::fs::copy(root.join(source), dir.path().join(name)).unwrap();
        }
        let bin = dir.path().join(".bin");
        std::fs::create_dir(&bin).unwrap();
        let atif = atif_binary();
        std::os::unix::fs::symlink(&atif, bin.join("atif")).unwrap();
        let shim = format!(
            "#!/bin/sh\n# `cargo run -q -p PKG -- ARGS` runs the binary PKG of this build.\n\
             if [ \"$1 $2 $3\" != \"run -q -p\" ] || [ \"$5\" != -- ]; then\n  \
             echo \"doc sessions: only 'cargo run -q -p PKG -- ARGS' runs here\" >&2\n  exit 2\nfi\n\
             pkg=$4\nshift 5\nexec \"{}/$pkg\" \"$@\"\n",
            atif.parent().unwrap().display()
        );
        std::fs::write(bin.join("cargo"), shim).unwrap();
        let mut permissions = std::fs::metadata(bin.join("cargo")).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(bin.join("cargo"), permissions).unwrap();
        let rest = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![bin];
        // The venv's folder of executables, as `activate` puts it on PATH (a link to its
        // python would not find the venv).
        paths.extend(python.and_then(Path::parent).map(Path::to_owned));
        paths.extend(std::env::split_paths(&rest));
        let path = std::env::join_paths(paths).unwrap();
        Sandbox { dir, path, last_status: std::cell::Cell::new(0) }
    }

    /// `bash -c COMMAND` in the sandbox, standard error into standard output, with none of
    /// the variables that change what atif writes.
    fn command(&self, command: &str) -> Command {
        let mut bash = Command::new("bash");
        bash.arg("-c")
            .arg(format!("exec 2>&1\n(exit {})\n{command}", self.last_status.get()))
            .current_dir(self.dir.path())
            .env("PATH", &self.path)
            .stdin(Stdio::null());
        for name in ["CI", "ATIF_GOLDEN", "ATIF_GOLDEN_LOG", "ATIF_RECORD", "CLICOLOR_FORCE"] {
            bash.env_remove(name);
        }
        bash
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target: PathBuf = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
