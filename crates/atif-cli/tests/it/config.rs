//! The project file, `atif.toml`: the example of docs/config.md, used as written by the real
//! binary in a project in a temp folder.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::{atif_command, stderr, stdout};

fn docs() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
    std::fs::read_to_string(path).unwrap()
}

/// The first block of `lang` in docs/config.md.
fn block(lang: &str) -> String {
    let docs = docs();
    let fence = format!("```{lang}\n");
    let start = docs.find(&fence).unwrap() + fence.len();
    docs[start..start + docs[start..].find("```").unwrap()].to_owned()
}

/// `atif ARGS` in `dir`, with `CI` set so that nothing is written unless asked.
fn atif_in(dir: &Path, args: &[&str]) -> Output {
    atif_command(args).current_dir(dir).env("CI", "1").output().unwrap()
}

/// A run of one user step and one agent step that calls `grep`, with `prompt_tokens` tokens.
fn run(message: &str, prompt_tokens: u64) -> Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "demo", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": message},
            {
                "step_id": 2, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": "c", "function_name": "grep", "arguments": {}}],
                "observation": {"results": [{"source_call_id": "c", "content": "found"}]},
                "metrics": {"prompt_tokens": prompt_tokens, "completion_tokens": 5}
            }
        ]
    })
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

#[test]
fn the_documented_project_file_sets_each_goldens_preset_tolerance_content_and_masks() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("atif.toml"), block("toml")).unwrap();
    // Commands run in a folder below the project's: the file is found upward.
    let below = root.join("tests");
    std::fs::create_dir_all(&below).unwrap();

    // A Claude Code import written before imports recorded their log format: only the file's
    // preset makes a run with other message and request ids match, and nothing is said.
    let log = atif_test_support::workspace_path(
        "crates/atif-import/tests/fixtures/claude-stream/basic.jsonl",
    );
    let imported = atif_in(root, &["import", "-q", log.to_str().unwrap()]);
    let mut claude: Value = serde_json::from_slice(&imported.stdout).unwrap();
    claude["agent"]["extra"].as_object_mut().unwrap().remove("log_format");
    write(&root.join("claude.json"), &claude);
    claude["steps"][0]["extra"]["message_id"] = json!("msg_01XFDUDYJgAACzvnptvVoYEL");
    claude["steps"][0]["extra"]["request_id"] = json!("req_011CUdMKKFGtjoLjYExNYXcN");
    write(&root.join("claude-rerun.json"), &claude);
    let golden = "golden/claude/run.json";
    let made = atif_command(&["check", "--update", golden, "../claude.json"])
        .current_dir(&below)
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let checked = atif_in(&below, &["check", golden, "../claude-rerun.json"]);
    assert_eq!(checked.status.code(), Some(0), "{}{}", stdout(&checked), stderr(&checked));
    assert_eq!(stderr(&checked), "");
    // A positive control: the same golden checked from outside the project has no preset.
    let outside = tempfile::tempdir().unwrap();
    let golden_path = below.join(golden);
    let rerun_path = root.join("claude-rerun.json");
    let (golden_path, rerun_path) = (golden_path.to_str().unwrap(), rerun_path.to_str().unwrap());
    let unconfigured = atif_in(outside.path(), &["check", golden_path, rerun_path]);
    assert_eq!(unconfigured.status.code(), Some(1), "{}", stderr(&unconfigured));

    // Every golden gets the defaults' tolerance of 10%; the flag wins over it. (The token
    // counts are content too: `--no-content` leaves the Shape's token fields alone to decide.)
    write(&root.join("tokens.json"), &run("find it", 100));
    write(&root.join("tokens-rerun.json"), &run("find it", 105));
    let made = atif_command(&["check", "--update", "golden/other/tokens.json", "../tokens.json"])
        .current_dir(&below)
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let tokens = ["golden/other/tokens.json", "../tokens-rerun.json"];
    let checked = atif_in(&below, &[&["check", "--no-content"][..], &tokens].concat());
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
    let strict = atif_in(
        &below,
        &[&["check", "--no-content", "--token-tolerance", "0"][..], &tokens].concat(),
    );
    assert_eq!(strict.status.code(), Some(1), "{}", stdout(&strict));

    // Live goldens: the content does not count, and session names are masked.
    write(&root.join("live.json"), &run("resume sess-0a1b2c3d", 100));
    write(&root.join("live-rerun.json"), &run("resume sess-99887766 now", 100));
    let made = atif_command(&["check", "--update", "golden/live/run.json", "../live.json"])
        .current_dir(&below)
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let text = std::fs::read_to_string(below.join("golden/live/run.json")).unwrap();
    assert!(text.contains("\"resume SESSION\""), "{text}");
    let checked = atif_in(&below, &["check", "golden/live/run.json", "../live-rerun.json"]);
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
    let diff = atif_in(&below, &["diff", "golden/live/run.json", "../live-rerun.json"]);
    assert_eq!(diff.status.code(), Some(0), "diff takes the settings of its first file");
    let other = atif_in(&below, &["diff", "../live.json", "../live-rerun.json"]);
    assert_eq!(other.status.code(), Some(1), "outside the glob the content counts");
}

#[test]
fn a_project_file_with_an_unknown_key_stops_with_the_documented_error() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("atif.toml"), "# a typo\n[defaults]\ncolour = \"red\"\n").unwrap();
    write(&root.join("run.json"), &run("find it", 100));
    let output = atif_in(root, &["shape", "run.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "");
    assert_eq!(stderr(&output), block("text"), "docs/config.md shows the real message");

    for (text, expected) in [
        (
            "[[golden]]\npreset = \"codex\"\n",
            "[[golden]] number 1: expected a `glob` naming the goldens it is for",
        ),
        (
            "[[golden]]\nglob = \"a/**\"\npreset = \"aider\"\n",
            "[[golden]] number 1: preset: unknown normalisation preset `aider`",
        ),
        (
            "[defaults]\nmask = [\"no-equals-sign\"]\n",
            "[defaults]: mask: expected \"REGEX=REPLACEMENT\"",
        ),
        (
            "[defaults]\ntoken_tolerance = -1\n",
            "[defaults]: token_tolerance: expected a finite number of 0 or more",
        ),
        ("[[golden]]\nglob = \"a/[\"\n", "[[golden]] number 1: glob `a/[`"),
    ] {
        std::fs::write(root.join("atif.toml"), text).unwrap();
        let sub = root.join("deep/er");
        std::fs::create_dir_all(&sub).unwrap();
        let output = atif_in(&sub, &["shape", "../../run.json"]);
        assert_eq!(output.status.code(), Some(2), "{text}");
        let message = stderr(&output);
        assert!(
            message.starts_with(&format!("error: ../../atif.toml: {expected}")),
            "{text}: {message}"
        );
    }
}
