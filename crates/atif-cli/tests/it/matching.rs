//! `atif diff` with match modes: the run judged by how loosely it must do what its golden does.

use std::path::Path;

use crate::{atif_command, stderr, stdout};

/// A run whose agent calls `tools` one per step, with `path` as the argument, then answers.
fn write_run(dir: &Path, name: &str, tools: &[&str], path: &str) {
    let mut steps: Vec<serde_json::Value> = tools
        .iter()
        .enumerate()
        .map(|(idx, tool)| {
            serde_json::json!({
                "step_id": idx + 1, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": format!("c{idx}"), "function_name": tool, "arguments": {"path": path}}]
            })
        })
        .collect();
    steps.push(
        serde_json::json!({"step_id": tools.len() + 1, "source": "agent", "message": "done"}),
    );
    let run = serde_json::json!({
        "schema_version": "ATIF-v1.8", "session_id": name, "agent": {"name": "a", "version": "1"}, "steps": steps,
    });
    std::fs::write(dir.join(name), run.to_string()).unwrap();
}

fn diff(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    atif_command(&all).current_dir(dir).env_remove("CI").output().unwrap()
}

#[test]
fn any_order_allows_a_reordering_and_says_so_exact_does_not() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "g.json", &["grep", "read"], "a");
    write_run(dir.path(), "swapped.json", &["read", "grep"], "a");
    let any = diff(dir.path(), &["--sequence", "any-order", "g.json", "swapped.json"]);
    assert_eq!(any.status.code(), Some(0), "{}", stderr(&any));
    assert_eq!(
        stdout(&any),
        "the run matches its golden under the match modes\n  allowed: calls reordered: grep, read -> read, grep (any-order)\n"
    );
    let exact = diff(dir.path(), &["--sequence", "exact", "g.json", "swapped.json"]);
    assert_eq!(exact.status.code(), Some(1));
    assert!(
        stdout(&exact).contains("  calls reordered: grep, read -> read, grep (exact)\n"),
        "{}",
        stdout(&exact)
    );
    let json = diff(
        dir.path(),
        &["--sequence", "any-order", "--format", "json", "g.json", "swapped.json"],
    );
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["passed"], true);
    assert_eq!(value["sequence"], "any-order");
}

#[test]
fn a_missing_turn_fails_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "g.json", &["read", "grep"], "a");
    write_run(dir.path(), "short.json", &["read"], "a");
    for mode in ["exact", "in-order", "any-order", "subset", "superset"] {
        let output =
            diff(dir.path(), &["--sequence", mode, "--step-band", "5", "g.json", "short.json"]);
        assert_eq!(output.status.code(), Some(1), "{mode}");
        assert!(
            stdout(&output).contains("fewer turns: 2 agent turn(s), the golden has 3"),
            "{mode}: {}",
            stdout(&output)
        );
    }
}

#[test]
fn arguments_per_tool_and_bad_modes() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "g.json", &["read"], "a.txt");
    write_run(dir.path(), "other.json", &["read"], "b.txt");
    let strict = diff(dir.path(), &["--arguments", "exact", "g.json", "other.json"]);
    assert_eq!(strict.status.code(), Some(1));
    let ignored = diff(dir.path(), &["--arguments-for", "read=ignore", "g.json", "other.json"]);
    assert_eq!(ignored.status.code(), Some(0), "{}", stdout(&ignored));
    let bad = diff(dir.path(), &["--sequence", "sideways", "g.json", "other.json"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad)
            .contains("expected exact, in-order, any-order, subset or superset, got `sideways`"),
        "{}",
        stderr(&bad)
    );
    let bad_band = diff(dir.path(), &["--token-band", "ten", "g.json", "other.json"]);
    assert_eq!(bad_band.status.code(), Some(2));
}

#[test]
fn check_takes_the_match_modes_too() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "run.json", &["grep", "read"], "a");
    write_run(dir.path(), "swapped.json", &["read", "grep"], "a");
    let check = |args: &[&str]| {
        let mut all = vec!["check"];
        all.extend_from_slice(args);
        atif_command(&all).current_dir(dir.path()).env_remove("CI").output().unwrap()
    };
    let missing = check(&["--sequence", "any-order", "g.json", "run.json"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        stderr(&missing),
        "error: golden file g.json does not exist; record it with: atif check --update --sequence any-order g.json run.json\n"
    );
    let made = check(&["--update", "--sequence", "any-order", "g.json", "run.json"]);
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let any = check(&["--sequence", "any-order", "g.json", "swapped.json"]);
    assert_eq!(any.status.code(), Some(0), "{}", stdout(&any));
    assert!(
        stdout(&any).contains("allowed: calls reordered: grep, read -> read, grep (any-order)")
    );
    let exact = check(&["--sequence", "exact", "g.json", "swapped.json"]);
    assert_eq!(exact.status.code(), Some(1), "{}", stdout(&exact));
    assert!(!dir.path().join("g.json.new").exists(), "a match-mode check writes nothing");
}

#[test]
fn the_project_file_sets_the_modes_and_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "g.json", &["grep", "read"], "a");
    write_run(dir.path(), "swapped.json", &["read", "grep"], "b");
    std::fs::write(
        dir.path().join("atif.toml"),
        "[defaults]\nsequence = \"any-order\"\narguments = \"ignore\"\n",
    )
    .unwrap();
    let by_file = diff(dir.path(), &["g.json", "swapped.json"]);
    assert_eq!(by_file.status.code(), Some(0), "{}{}", stdout(&by_file), stderr(&by_file));
    assert!(stdout(&by_file).contains("(any-order)"), "{}", stdout(&by_file));
    let by_flag = diff(dir.path(), &["--sequence", "exact", "g.json", "swapped.json"]);
    assert_eq!(by_flag.status.code(), Some(1), "{}", stdout(&by_flag));
    std::fs::write(dir.path().join("atif.toml"), "[defaults]\nsequence = \"sideways\"\n").unwrap();
    let bad = diff(dir.path(), &["g.json", "swapped.json"]);
    assert_ne!(bad.status.code(), Some(0));
    assert!(
        stderr(&bad).contains(
            "sequence: expected exact, in-order, any-order, subset or superset, got \"sideways\""
        ),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn with_match_modes_the_page_junit_and_bundle_say_what_the_modes_decided() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "g.json", &["grep", "read"], "a");
    write_run(dir.path(), "swapped.json", &["read", "grep"], "b");
    let check = |args: &[&str]| {
        let mut all = vec!["check"];
        all.extend_from_slice(args);
        atif_command(&all).current_dir(dir.path()).env_remove("CI").output().unwrap()
    };
    // The changed arguments fail under any order; the page lists the failures the modes found.
    let failing = check(&[
        "--sequence",
        "any-order",
        "--html",
        "fail.html",
        "--junit",
        "fail.xml",
        "--artifacts",
        "bundle",
        "g.json",
        "swapped.json",
    ]);
    assert_eq!(failing.status.code(), Some(1), "{}", stderr(&failing));
    let page = std::fs::read_to_string(dir.path().join("fail.html")).unwrap();
    assert!(page.contains("the run does not match under the match modes"), "{page}");
    assert!(page.contains("<p>match modes: sequence any-order</p>"), "{page}");
    assert!(
        page.contains(
            "<li class=\"failure\"><b>failure</b> missing call(s): grep, read (any-order)</li>"
        ),
        "{page}"
    );
    assert!(!page.contains("the behaviour changed"), "the modes' verdict, not the Shape's: {page}");
    let xml = std::fs::read_to_string(dir.path().join("fail.xml")).unwrap();
    assert!(xml.contains("<property name=\"verdict\" value=\"behaviour-changed\"/>"), "{xml}");
    assert!(xml.contains("<failure message=\"the run does not match its golden"), "{xml}");
    let bundled = std::fs::read_to_string(dir.path().join("bundle/g.html")).unwrap();
    assert!(bundled.contains("match modes: sequence any-order"), "{bundled}");
    assert!(
        dir.path().join("bundle/g.json").is_file()
            && dir.path().join("bundle/g.report.txt").is_file()
    );
    assert!(!dir.path().join("g.json.new").exists(), "nothing is written beside the golden");

    write_run(dir.path(), "swapped-a.json", &["read", "grep"], "a");
    let passing = check(&[
        "--sequence",
        "any-order",
        "--html",
        "pass.html",
        "--junit",
        "pass.xml",
        "g.json",
        "swapped-a.json",
    ]);
    assert_eq!(passing.status.code(), Some(0), "{}", stdout(&passing));
    let page = std::fs::read_to_string(dir.path().join("pass.html")).unwrap();
    assert!(page.contains("the run matches under the match modes"), "{page}");
    assert!(
        page.contains("<li class=\"allowed\"><b>allowed</b> calls reordered: grep, read -&gt; read, grep (any-order)</li>"),
        "{page}"
    );
    assert!(!page.contains("class=\"failure\""), "{page}");
    let xml = std::fs::read_to_string(dir.path().join("pass.xml")).unwrap();
    assert!(
        xml.contains("<property name=\"verdict\" value=\"matched\"/>") && !xml.contains("<failure"),
        "{xml}"
    );
    let diffed = diff(
        dir.path(),
        &["--sequence", "any-order", "--html", "diff.html", "g.json", "swapped-a.json"],
    );
    assert_eq!(diffed.status.code(), Some(0));
    let page = std::fs::read_to_string(dir.path().join("diff.html")).unwrap();
    assert!(page.contains("the run matches under the match modes"), "{page}");
}
