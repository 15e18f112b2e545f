//! Tests of `atif golden`: the real binary on pending files in temp dirs, and a real crate
//! outside this workspace going from a failing golden test through review to a passing one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::{atif_command, dead_pid, stderr, stdout};

/// A trajectory of `n_steps` agent steps, each calling `grep`.
fn trajectory(n_steps: usize) -> Value {
    let steps: Vec<Value> = (1..=n_steps)
        .map(|step_id| json!({"step_id": step_id, "source": "agent", "message": "working"}))
        .collect();
    json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": steps})
}

/// `atif golden ARGS` in `dir`.
fn atif_golden(dir: &Path, args: &[&str]) -> Output {
    let mut command = atif_command(&["golden"]);
    command.current_dir(dir).args(args);
    command.output().unwrap()
}

/// A project with a golden `tests/golden/one.json` of one step, a pending run of two steps
/// beside it, and a pending first run of `tests/golden/fresh.json`, made with `atif check`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests/golden")).unwrap();
    for (name, doc) in [("one.json", trajectory(1)), ("two.json", trajectory(2))] {
        std::fs::write(dir.path().join(name), doc.to_string()).unwrap();
    }
    let check =
        |args: &[&str]| atif_command(&["check"]).current_dir(dir.path()).args(args).output();
    check(&["--update", "tests/golden/one.json", "one.json"]).unwrap();
    assert_eq!(check(&["tests/golden/one.json", "two.json"]).unwrap().status.code(), Some(1));
    assert_eq!(check(&["tests/golden/fresh.json", "one.json"]).unwrap().status.code(), Some(1));
    dir
}

#[test]
fn pending_lists_each_pending_file_with_its_deltas_and_exits_1() {
    let dir = project();
    let output = atif_golden(dir.path(), &["pending"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(
        text.lines().collect::<Vec<_>>()[0],
        "tests/golden/fresh.json: new golden",
        "{text}"
    );
    assert!(text.contains("tests/golden/one.json: step_count: 1 -> 2; "), "{text}");

    let output = atif_golden(dir.path(), &["pending", "one", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(listed["dir"], ".");
    assert_eq!(listed["pending"].as_array().unwrap().len(), 1);
    let item = &listed["pending"][0];
    assert_eq!(item["golden"], "tests/golden/one.json");
    assert_eq!(item["pending"], "tests/golden/one.json.new");
    assert_eq!(item["status"], "changed");
    assert_eq!(item["deltas"][0], "step_count: 1 -> 2");

    let nothing = atif_golden(dir.path(), &["pending", "no-such-golden"]);
    assert_eq!(nothing.status.code(), Some(0));
    assert_eq!(stdout(&nothing), "no pending golden files matching `no-such-golden`\n");
}

#[test]
fn review_without_a_terminal_only_lists_and_accept_and_reject_act() {
    let dir = project();
    let output = atif_golden(dir.path(), &["review"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with("== tests/golden/fresh.json\nnew golden (none recorded yet)"),
        "{text}"
    );
    assert!(
        text.contains("== tests/golden/one.json\nagent behaviour changed (4 difference(s)):\n"),
        "{text}"
    );
    assert!(text.ends_with("\n2 pending (no terminal, so nothing was asked); accept with `atif golden accept`, reject with `atif golden reject`\n"), "{text}");
    assert!(dir.path().join("tests/golden/one.json.new").exists(), "review asked nothing");

    let accepted = atif_golden(dir.path(), &["accept", "one"]);
    assert_eq!(accepted.status.code(), Some(0));
    assert_eq!(stdout(&accepted), "accepted tests/golden/one.json\n");
    let check = atif_command(&["check", "tests/golden/one.json", "two.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));

    let rejected = atif_golden(dir.path(), &["reject", "--dir", "tests"]);
    assert_eq!(stdout(&rejected), "rejected golden/fresh.json.new\n");
    assert!(!dir.path().join("tests/golden/fresh.json").exists());
    assert_eq!(stdout(&atif_golden(dir.path(), &["pending"])), "no pending golden files\n");
}

/// `atif golden review --interactive ARGS` in `dir`, answering with `answers`, colour as `env`
/// and the flags say.
fn review(dir: &Path, args: &[&str], answers: &str, env: &[(&str, &str)]) -> Output {
    let mut command = atif_command(&["golden", "review", "--interactive"]);
    command.current_dir(dir).args(args).env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    for (name, value) in env {
        command.env(name, value);
    }
    crate::run_with_stdin(command, answers.as_bytes())
}

#[test]
fn the_review_shows_a_new_goldens_content_and_names_the_keys_of_an_unknown_answer() {
    let dir = project();
    let output = review(dir.path(), &[], "what\ns\nr\n", &[]);
    // One skipped: something is left pending.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with(
            "[1/2] == tests/golden/fresh.json\nnew golden (none recorded yet), shape:\n"
        ),
        "{text}"
    );
    assert!(text.contains("\ncontent:\n  step 1 (agent): \"working\"\n"), "{text}");
    assert!(
        text.contains("? unknown answer `what`: a accepts the pending file as the golden, r rejects (deletes) it, s skips it, q quits\naccept (a)"),
        "{text}"
    );
    // A changed golden: the Shape deltas first, then what moved, step by step.
    let changed = text.find("[2/2] == tests/golden/one.json\nagent behaviour changed (4 difference(s)):\n  step_count: 1 -> 2\n").unwrap();
    assert!(
        text[changed..].find("what moved, step by step:").unwrap()
            < text[changed..].find("--- golden").unwrap()
    );
    assert!(
        text.ends_with("rejected tests/golden/one.json.new\n0 accepted, 1 rejected, 1 skipped\n"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "no terminal, no colour: {text}");
    assert!(dir.path().join("tests/golden/fresh.json.new").exists());
    assert!(!dir.path().join("tests/golden/one.json.new").exists());
}

#[test]
fn the_review_colours_as_check_does() {
    let dir = project();
    let coloured = |args: &[&str], env: &[(&str, &str)]| {
        let output = review(dir.path(), args, "s\ns\n", env);
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        stdout(&output).contains("\u{1b}[")
    };
    assert!(coloured(&["--color", "always"], &[]));
    assert!(coloured(&[], &[("CLICOLOR_FORCE", "1")]));
    assert!(!coloured(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]), "NO_COLOR wins");
    assert!(!coloured(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]));
    let output = review(dir.path(), &["--color", "always", "one"], "s\n", &[]);
    let text = stdout(&output);
    assert!(text.contains("\u{1b}[32m+"), "additions are green, as in check: {text}");
    assert!(text.contains("\u{1b}[1magent behaviour changed (4 difference(s)):"), "{text}");
}

#[test]
fn a_long_new_golden_is_folded_after_a_screen_and_m_unfolds_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("long.json"), trajectory(60).to_string()).unwrap();
    let made = atif_command(&["check", "golden/long.json", "long.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(1), "{}", stderr(&made));
    // Without a terminal the listing is folded the same way, and says where the rest is.
    let listing = stdout(&atif_golden(dir.path(), &["review"]));
    assert!(!listing.contains("step 60 (agent)"), "{listing}");
    assert!(
        listing.contains(" more lines (the whole run is in ./golden/long.json.new)\n"),
        "{listing}"
    );
    let output = review(dir.path(), &[], "m\na\n", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let fold = text
        .find(" more lines (m shows them)\naccept (a), reject (r), skip (s), quit (q), more (m)? ")
        .unwrap();
    assert!(!text[..fold].contains("step 60 (agent)"), "the end is folded: {text}");
    assert!(text[fold..].contains("  step 60 (agent): \"working\"\n"), "m shows it: {text}");
    assert_eq!(text.lines().take_while(|line| !line.starts_with("...")).count(), 40, "{text}");
    assert!(
        text.ends_with("accepted golden/long.json\n1 accepted, 0 rejected, 0 skipped\n"),
        "{text}"
    );
}

#[test]
fn the_commands_review_suggests_keep_its_filter_and_folder() {
    let dir = project();
    let output = atif_golden(dir.path(), &["review", "one", "--dir", "tests"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    let hint = "accept with `atif golden accept one --dir tests`, reject with `atif golden reject one --dir tests`";
    assert!(
        text.ends_with(&format!("\n1 pending (no terminal, so nothing was asked); {hint}\n")),
        "{text}"
    );
    let accepted = atif_golden(dir.path(), &["accept", "one", "--dir", "tests"]);
    assert_eq!(stdout(&accepted), "accepted golden/one.json\n");
}

#[test]
fn the_command_a_failure_suggests_accepts_that_golden_and_no_other() {
    let dir = project();
    let check = |golden: &str| {
        atif_command(&["check", golden, "two.json"]).current_dir(dir.path()).output().unwrap()
    };
    assert_eq!(check("tests/golden/another_one.json").status.code(), Some(1));
    let output = check("tests/golden/one.json");
    let text = stdout(&output);
    let suggested = text
        .lines()
        .find_map(|line| line.strip_prefix("review it: "))
        .and_then(|line| line.split(", or accept it: ").nth(1))
        .unwrap_or_else(|| panic!("no accept command in {text}"));
    assert_eq!(suggested, "atif golden accept one.json");
    let words: Vec<&str> = suggested.split(' ').skip(2).collect();
    let accepted = atif_golden(dir.path(), &words);
    assert_eq!(stdout(&accepted), "accepted tests/golden/one.json\n", "{}", stderr(&accepted));
    assert!(dir.path().join("tests/golden/another_one.json.new").exists(), "not accepted too");
    let substring = atif_golden(dir.path(), &["pending", "one"]);
    assert!(stdout(&substring).contains("another_one.json"), "a partial filter still matches");
}

#[test]
fn a_pending_file_that_is_not_a_trajectory_is_refused_with_exit_1_and_never_accepted() {
    let dir = project();
    let golden = dir.path().join("tests/golden/one.json");
    let before = std::fs::read(&golden).unwrap();
    let duplicate = r#"{"schema_version": "ATIF-v1.8", "steps": [], "steps": []}"#;
    std::fs::write(dir.path().join("tests/golden/one.json.new"), duplicate).unwrap();
    for verb in ["accept", "pending", "review"] {
        let output = atif_golden(dir.path(), &[verb, "one"]);
        assert_eq!(output.status.code(), Some(1), "{verb}: {}", stderr(&output));
        let expected =
            "error: ./tests/golden/one.json.new: /steps: this key repeats an earlier key";
        assert!(stderr(&output).starts_with(expected), "{verb}: {}", stderr(&output));
    }
    assert_eq!(std::fs::read(&golden).unwrap(), before, "the golden is left alone");
}

#[test]
fn pending_lists_temp_files_of_dead_writers_and_clean_removes_only_those() {
    let dir = project();
    let golden_dir = dir.path().join("tests/golden");
    let dead_name = format!(".atif-{}-AbCdEf.tmp", dead_pid());
    let dead = golden_dir.join(&dead_name);
    let live = golden_dir.join(format!(".atif-{}-GhIjKl.tmp", std::process::id()));
    for path in [&dead, &live] {
        std::fs::write(path, "half a golden").unwrap();
    }

    let output = atif_golden(dir.path(), &["pending"]);
    assert_eq!(output.status.code(), Some(1), "the goldens are still pending");
    let text = stdout(&output);
    let listed = format!(
        "tests/golden/{dead_name}: temporary file of a writer that is gone\n\
         remove the temporary files with `atif golden clean`\n"
    );
    assert!(text.ends_with(&listed), "{text}");
    assert!(!text.contains("GhIjKl"), "a live writer's file is not listed: {text}");

    let output = atif_golden(dir.path(), &["pending", "--format", "json"]);
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["stale_temp_files"], json!([format!("tests/golden/{dead_name}")]));
    let output = atif_golden(dir.path(), &["pending", "elsewhere", "--format", "json"]);
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["stale_temp_files"], json!([]), "the filter applies to them too");
    let output = atif_golden(dir.path(), &["pending", "golden/", "--dir", "tests"]);
    assert!(stdout(&output).ends_with("`atif golden clean golden/ --dir tests`\n"));

    let output = atif_golden(dir.path(), &["clean", "--dir", "tests"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), format!("removed golden/{dead_name}\n"));
    assert!(!dead.exists());
    assert!(live.exists(), "a file a running process writes stays");
    assert!(dir.path().join("tests/golden/one.json.new").exists(), "pending files stay");
    let again = atif_golden(dir.path(), &["clean"]);
    assert_eq!(stdout(&again), "no stale temporary files\n");
}

#[test]
fn update_runs_the_given_test_command_in_update_mode_and_sums_it_up() {
    let dir = project();
    // Any test runner: here a shell re-recording one golden through `atif check`.
    let script = format!(
        "{} check tests/golden/one.json two.json",
        atif_test_support::atif_binary().display()
    );
    let output = atif_golden(dir.path(), &["update", "--", "sh", "-c", &script]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with("golden update:\ncreated (0):\nchanged (1):\n  tests/golden/one.json\n"),
        "{text}"
    );
    assert!(text.contains("\ntests/golden/one.json erased:\n--- golden (erased)\n"), "{text}");

    // `--dir` is the goldens' folder, as for `review`: the tests still run here, in the
    // project, and the goldens are named relative to it.
    let script = format!(
        "{} check tests/golden/one.json one.json",
        atif_test_support::atif_binary().display()
    );
    let output =
        atif_golden(dir.path(), &["update", "--dir", "tests/golden", "--", "sh", "-c", &script]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).starts_with("golden update:\ncreated (0):\nchanged (1):\n  one.json\n"),
        "{}",
        stdout(&output)
    );

    let no_command = atif_golden(dir.path(), &["update"]);
    assert_eq!(no_command.status.code(), Some(2));
    assert!(stderr(&no_command).contains("has no Cargo.toml, so there is no default test command"));
}

#[test]
fn a_missing_folder_is_an_error_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = atif_golden(dir.path(), &["pending", "--dir", "nope"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "error: cannot search nope: expected a folder\n");
}

/// A crate outside this workspace that depends on `atif-golden` by path, with one golden test
/// whose number of steps comes from `STEPS`, so behaviour changes without recompiling.
fn downstream_crate(dir: &Path) {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let golden_crate = repo.join("crates/atif-golden").canonicalize().unwrap();
    let manifest = format!(
        "[package]\nname = \"downstream\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dev-dependencies]\natif-golden = {{ path = {:?} }}\nserde_json = \"1\"\n\n[workspace]\n",
        golden_crate.display().to_string()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock file pins the same versions, so nothing new is fetched or built twice.
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "//! A crate with an agent.\n").unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let test = r#"
#[test]
fn greets() {
    let n_steps: u64 = std::env::var("STEPS").ok().and_then(|n| n.parse().ok()).unwrap_or(1);
    let steps: Vec<_> = (1..=n_steps)
        .map(|step_id| serde_json::json!({"step_id": step_id, "source": "agent", "message": "hi"}))
        .collect();
    let run = serde_json::json!({
        "schema_version": "ATIF-v1.8",
        "session_id": "changes-every-run",
        "agent": {"name": "downstream", "version": "1"},
        "steps": steps,
    });
    atif_golden::assert_golden!(run);
}
"#;
    std::fs::write(dir.join("tests/agent.rs"), test).unwrap();
}

/// `cargo test --offline` in the downstream crate, with `STEPS` set and nothing inherited that
/// changes the golden mode; its stdout and stderr together.
fn cargo_test(dir: &Path, steps: u32) -> (bool, String) {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    // A target folder of its own (cargo holds the workspace's while this test runs), kept
    // between runs so only the first one compiles the dependencies.
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/downstream-golden");
    let output = Command::new(cargo)
        .args(["test", "--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env("STEPS", steps.to_string())
        .env_remove("CI")
        .env_remove("ATIF_GOLDEN")
        .env_remove("ATIF_GOLDEN_LOG")
        .output()
        .unwrap();
    (output.status.success(), format!("{}{}", stdout(&output), stderr(&output)))
}

#[test]
fn a_crate_outside_the_workspace_goes_from_failure_through_review_and_accept_to_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    downstream_crate(dir.path());
    let golden = dir.path().join("tests/golden/agent__greets.json");

    let (passed, log) = cargo_test(dir.path(), 1);
    assert!(!passed, "a missing golden fails:\n{log}");
    assert!(log.contains("golden file ") && log.contains(" does not exist"), "{log}");
    assert!(
        log.contains(
            "\nreview it: atif golden review agent__greets.json, or accept it: atif golden accept agent__greets.json\n"
        ),
        "the failure names the atif golden command:\n{log}"
    );
    assert!(
        log.contains("record it with: ATIF_GOLDEN=update cargo test -p downstream greets"),
        "{log}"
    );
    let review = atif_golden(dir.path(), &["review"]);
    assert_eq!(review.status.code(), Some(1));
    assert!(stdout(&review).starts_with("== tests/golden/agent__greets.json\nnew golden"));
    let accept = atif_golden(dir.path(), &["accept"]);
    assert_eq!(stdout(&accept), "accepted tests/golden/agent__greets.json\n");
    let (passed, log) = cargo_test(dir.path(), 1);
    assert!(passed, "the accepted golden passes:\n{log}");

    let (passed, log) = cargo_test(dir.path(), 2);
    assert!(!passed, "one more step fails:\n{log}");
    assert!(
        log.contains("agent behaviour changed (4 difference(s)):\n  step_count: 1 -> 2\n"),
        "{log}"
    );
    assert!(
        log.contains(
            "if this change is intended: ATIF_GOLDEN=update cargo test -p downstream greets"
        ),
        "{log}"
    );
    let pending = atif_golden(dir.path(), &["pending", "--format", "json"]);
    let listed: Value = serde_json::from_str(&stdout(&pending)).unwrap();
    assert_eq!(listed["pending"][0]["status"], "changed");
    assert_eq!(
        stdout(&atif_golden(dir.path(), &["accept", "greets"])),
        "accepted tests/golden/agent__greets.json\n"
    );
    let (passed, log) = cargo_test(dir.path(), 2);
    assert!(passed, "the reviewed change passes:\n{log}");
    assert!(std::fs::read_to_string(&golden).unwrap().contains("\"step_id\": 2"));
}
