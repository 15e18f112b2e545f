//! Path placeholders: the run's working directory and home become `<cwd>` and `<home>`.

use atif_normalize::{NormalizeOptions, normalize, normalize_json, preset, to_canonical_string};
use serde_json::{Value, json};

/// A run in `cwd` under `home`, quoting both in messages, tool arguments, results and keys.
fn run(cwd: &str, home: &str) -> Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "demo", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user",
             "message": format!("<environment_context><cwd>{cwd}</cwd></environment_context> skills in {home}/.codex/skills")},
            {"step_id": 2, "source": "agent", "message": format!("Reading {cwd}/a.txt."),
             "tool_calls": [{"tool_call_id": "c1", "function_name": "exec_command",
                             "arguments": {"cmd": format!("cat {cwd}/a.txt"), "workdir": format!("{cwd}/")}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "hello",
                 "extra": {"files": {format!("{cwd}/a.txt"): "read"}}}]}},
            {"step_id": 3, "source": "agent",
             "message": format!("memory in {home}/.claude/projects/{}/memory/", slug(cwd))}
        ],
        "extra": {"cwd": cwd, "home": home}
    })
}

fn slug(path: &str) -> String {
    path.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

fn recorded() -> NormalizeOptions {
    let mut options = NormalizeOptions::default();
    options.set_recorded_paths(true);
    options
}

/// Normalised by both paths, which must agree.
fn canonical(doc: &Value, options: &NormalizeOptions) -> String {
    let general = to_canonical_string(&normalize(doc, options).unwrap());
    let mut fast = Vec::new();
    normalize_json(doc.to_string().as_bytes(), options, &mut fast).unwrap();
    assert_eq!(String::from_utf8(fast).unwrap(), general);
    general
}

#[test]
fn two_runs_in_different_folders_under_different_homes_normalise_alike() {
    let a = canonical(&run("/tmp/e2e.Ab12/work", "/tmp/e2e.Ab12/home"), &recorded());
    let b = canonical(&run("/home/runner/w/checkout-2", "/home/runner"), &recorded());
    assert_eq!(a, b);
    for expected in [
        "<cwd></cwd>",
        "<home>/.codex/skills",
        "\"cat <cwd>/a.txt\"",
        "\"workdir\": \"<cwd>/\"",
        "\"<cwd>/a.txt\": \"read\"",
        "<home>/.claude/projects/<cwd-slug>/memory/",
    ] {
        assert!(a.contains(expected), "{expected} missing in {a}");
    }
    let plain = NormalizeOptions::default();
    assert_ne!(
        canonical(&run("/tmp/a/work", "/tmp/a/home"), &plain),
        canonical(&run("/tmp/b/work", "/tmp/b/home"), &plain)
    );
}

#[test]
fn explicit_paths_work_without_recorded_ones_and_lookalikes_stay() {
    let mut doc = run("/srv/x", "/srv");
    doc["extra"] = json!({});
    doc["steps"][0]["message"] = json!("/srv/x2 and /srv/x/ and /opt/srv/x and /srv/x.");
    let mut options = NormalizeOptions::default();
    options.set_cwd(Some("/srv/x/")).set_home(Some("/srv"));
    let text = canonical(&doc, &options);
    assert!(text.contains("\"<home>/x2 and <cwd>/ and /opt/srv/x and <cwd>.\""), "{text}");
    // Without paths, given or recorded, nothing is replaced.
    let text = canonical(&doc, &recorded());
    assert!(text.contains("/srv/x2 and /srv/x/"), "{text}");
}

#[test]
fn a_subagent_adds_its_own_recorded_working_directory_to_its_parents() {
    let mut doc = run("/r/main", "/r/home");
    doc["subagent_trajectories"] = json!([{
        "trajectory_id": "child", "agent": {"name": "sub", "version": "1"},
        "steps": [{"step_id": 1, "source": "agent", "message": "in /r/worktree, from /r/main"}],
        "extra": {"cwd": "/r/worktree"}
    }]);
    let text = canonical(&doc, &recorded());
    assert!(text.contains("in <cwd>, from <cwd>"), "{text}");
}

#[test]
fn the_import_presets_replace_recorded_paths_and_normalising_twice_changes_nothing() {
    let options = preset("codex").unwrap();
    let once = normalize(&run("/tmp/q/w", "/tmp/q/h"), &options).unwrap();
    let text = to_canonical_string(&once);
    assert!(!text.contains("/tmp/q"), "{text}");
    assert_eq!(to_canonical_string(&normalize(&once, &options).unwrap()), text);
}
