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
