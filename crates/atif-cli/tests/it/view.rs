//! Tests of `atif view`: the page is written atomically, embeds the images beside the
//! trajectory (and nothing from elsewhere), and shows the run redacted.
#![allow(clippy::unwrap_used, reason = "test helpers")]

use serde_json::json;

use crate::{atif_command, stderr};

/// A PNG's first bytes: enough for the page, which embeds bytes as they are.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\nfake";

#[test]
fn view_writes_a_page_with_the_images_beside_the_trajectory_and_the_secrets_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    std::fs::create_dir_all(run_dir.join("images")).unwrap();
    std::fs::write(run_dir.join("images/shot.png"), PNG).unwrap();
    std::fs::write(dir.path().join("outside.png"), PNG).unwrap();
    let image =
        |path: &str| json!({"type": "image", "source": {"media_type": "image/png", "path": path}});
    let run = json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "viewer", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": [
                {"type": "text", "text": "key OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuv here"},
                image("images/shot.png"), image("../outside.png"), image("images/missing.png")
            ]}
        ]
    });
    std::fs::write(run_dir.join("run.json"), run.to_string()).unwrap();
    let output = atif_command(&["view", "run/run.json", "-o", "run.html"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let page = std::fs::read_to_string(dir.path().join("run.html")).unwrap();
    let data = "data:image/png;base64,iVBORw0KGgpmYWtl";
    assert_eq!(page.matches(data).count(), 1, "only the image beside the trajectory");
    assert!(page.contains("image ../outside.png (not beside the trajectory)"));
    assert!(page.contains("image images/missing.png (not beside the trajectory)"));
    assert!(
        stderr(&output).contains("note: image images/missing.png is not shown"),
        "{}",
        stderr(&output)
    );
    assert!(!page.contains("abcdefghijklmnopqrstuv"), "the secret reached the page");
    assert!(page.contains("&lt;redacted:"), "the redaction marker is shown, escaped");
}

#[test]
fn view_of_something_that_is_not_a_trajectory_fails_with_status_1_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list.json"), "[1, 2]").unwrap();
    let output = atif_command(&["view", "list.json", "-o", "page.html"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(!dir.path().join("page.html").exists());
}

/// A one-step run whose agent used `prompt_tokens` and called `function`.
fn tiny_run(function: &str, prompt_tokens: u64) -> serde_json::Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "tiny", "version": "1"},
        "steps": [{"step_id": 1, "source": "agent", "message": "working",
                   "tool_calls": [{"tool_call_id": "c", "function_name": function, "arguments": {}}],
                   "metrics": {"prompt_tokens": prompt_tokens, "completion_tokens": 5}}]
    })
}

#[test]
fn diff_html_writes_both_runs_side_by_side_and_keeps_the_text_report_and_status() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), tiny_run("read", 100).to_string()).unwrap();
    std::fs::write(dir.path().join("b.json"), tiny_run("grep", 100).to_string()).unwrap();
    let output = atif_command(&["diff", "--html", "page.html", "a.json", "b.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(crate::stdout(&output).contains("step 1 (agent) changed: calls grep instead of read"));
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    assert!(page.contains("a.json ⟷ b.json"), "the runs are named as given");
    assert!(page.contains("<div class=\"row changed first\" id=\"first\" data-step=\"1\">"));
    assert!(page.contains("id=\"g-1\"") && page.contains("id=\"a-1\""));
}

#[test]
fn check_html_follows_the_checks_settings_so_what_is_marked_is_what_failed() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("golden.json");
    std::fs::write(dir.path().join("run.json"), tiny_run("read", 100).to_string()).unwrap();
    let update = atif_command(&["check", "--update", "golden.json", "run.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(update.status.code(), Some(0), "{}", stderr(&update));
    assert!(golden.exists());
    std::fs::write(dir.path().join("run.json"), tiny_run("read", 120).to_string()).unwrap();
    let check = |extra: &[&str]| {
        let mut command = atif_command(&["check", "--html", "page.html"]);
        command
            .args(extra)
            .args(["golden.json", "run.json"])
            .current_dir(dir.path())
            .env_remove("CI");
        let output = command.env("ATIF_GOLDEN", "check").output().unwrap();
        (output.status.code(), std::fs::read_to_string(dir.path().join("page.html")).unwrap())
    };
    let (code, page) = check(&[]);
    assert_eq!(code, Some(1));
    assert!(
        page.contains("<tr><th>prompt_tokens</th><td>prompt_tokens: 100 -&gt; 120</td></tr>"),
        "{page}"
    );
    let (code, page) = check(&["--token-tolerance", "0.5", "--no-content"]);
    assert_eq!(code, Some(0));
    assert!(page.contains("the same Shape"), "the page judges as the check did");
    assert!(!page.contains("<th>prompt_tokens</th><td>prompt_tokens:"));
}

#[test]
fn check_html_shows_masked_values_as_their_placeholders_and_no_volatile_key_or_secret() {
    let dir = tempfile::tempdir().unwrap();
    let run = |order: &str, function: &str| {
        json!({
            "schema_version": "ATIF-v1.8",
            "agent": {"name": "masked", "version": "1"},
            "steps": [{"step_id": 1, "source": "agent",
                       "message": format!("order {order} paid with sk-proj-abcdefghijklmnopqrstuv"),
                       "tool_calls": [{"tool_call_id": "c", "function_name": function,
                                       "arguments": {"q": "x"}}],
                       "extra": {"request_id": format!("req-{order}")}}]
        })
        .to_string()
    };
    let check = |extra: &[&str]| {
        let mut command = atif_command(&["check"]);
        command
            .args(["--mask", "[0-9]{5}=<order>", "--volatile", "request_id"])
            .args(extra)
            .args(["golden.json", "run.json"])
            .current_dir(dir.path())
            .env_remove("CI")
            .env("ATIF_GOLDEN", "check");
        command.output().unwrap()
    };
    std::fs::write(dir.path().join("run.json"), run("48213", "read")).unwrap();
    let made = check(&["--update"]);
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    std::fs::write(dir.path().join("run.json"), run("77120", "grep")).unwrap();
    let failed = check(&["--html", "page.html"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    // Both lanes show the placeholder, where the golden holds it.
    assert_eq!(
        page.matches("order &lt;order&gt; paid with").count(),
        4,
        "preview and lanes: {page}"
    );
    for leaked in ["48213", "77120", "request_id", "req-", "abcdefghijklmnopqrstuv"] {
        assert!(!page.contains(leaked), "{leaked} reached the page");
    }
    assert!(page.contains("&lt;redacted:"), "the secret's marker is shown, escaped");
}
