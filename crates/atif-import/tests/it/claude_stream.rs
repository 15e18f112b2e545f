//! `claude -p --output-format stream-json`, on our own fixtures.

use crate::support::{crashed, errors, functions, import_fixture, joins, sources, steps, totals};

#[test]
fn steps_merge_split_messages_and_subagent_lines_nest_under_their_call() {
    let imported = import_fixture("claude-stream/basic.jsonl");
    let t = &imported.trajectory();
    assert_eq!(sources(t), "aa");
    assert_eq!(functions(t), ["Task"]);
    assert_eq!(steps(t)[0]["message"], "I'll delegate the search.");
    assert_eq!(joins(t), [(1, "toolu_01TTTTTTTTTTTTTTTTTTTTT1".to_owned())]);
    let result = &steps(t)[0]["observation"]["results"][0];
    assert_eq!(result["content"], "config/app.toml");
    assert_eq!(
        result["subagent_trajectory_ref"][0]["trajectory_id"],
        "toolu_01TTTTTTTTTTTTTTTTTTTTT1"
    );
    let sub = &t["subagent_trajectories"][0];
    assert_eq!(sub["trajectory_id"], "toolu_01TTTTTTTTTTTTTTTTTTTTT1");
    assert_eq!(sources(sub), "aa");
    assert_eq!(functions(sub), ["Bash"]);
    assert_eq!(sub["agent"]["model_name"], "claude-haiku-4-5");
    assert_eq!(sub["agent"]["version"], "2.0.27");
    assert_eq!(joins(sub), [(1, "toolu_01SUBSUBSUBSUBSUBSUBSUB1".to_owned())]);
}

#[test]
fn final_metrics_are_the_result_lines_totals_and_the_init_line_names_the_run() {
    let imported = import_fixture("claude-stream/basic.jsonl");
    let t = &imported.trajectory();
    // result.usage: input 16 + cache read 7000 + cache write 7090; output 95 (the steps'
    // output_tokens are streaming snapshots: 9 + 2).
    assert_eq!(totals(t), (Some(14106), Some(95), Some(7000)));
    assert_eq!(steps(t)[0]["metrics"]["completion_tokens"], 9);
    assert_eq!(t["final_metrics"]["total_cost_usd"], 0.0421);
    assert!(t["notes"].as_str().unwrap().contains("streaming snapshots"));
    assert_eq!(t["session_id"], "strm-0001");
    assert_eq!(t["agent"]["version"], "2.0.27");
    assert_eq!(t["agent"]["model_name"], "claude-sonnet-4-5");
    assert_eq!(t["extra"]["outcome"], "success");
    assert!(!crashed(t));
}

#[test]
fn an_error_result_is_an_error_step_and_a_crash() {
    let imported = import_fixture("claude-stream/max-turns.jsonl");
    let t = &imported.trajectory();
    assert_eq!(sources(t), "as");
    assert_eq!(errors(t), [(2, "error_max_turns".to_owned())]);
    assert!(crashed(t));
}

#[test]
fn a_stream_without_its_result_line_is_a_crash() {
    let imported = import_fixture("claude-stream/killed.jsonl");
    let t = &imported.trajectory();
    assert_eq!(sources(t), "a");
    assert!(crashed(t));
    assert!(t["notes"].as_str().unwrap().contains("no closing result line"));
    // Totals fall back to the sums of the steps.
    assert_eq!(totals(t), (Some(5004), Some(9), Some(0)));
}

#[test]
fn inline_images_are_written_to_files_and_the_text_points_at_them() {
    let mut imported = import_fixture("claude-stream/image-result.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let written = imported.write_media(&dir.path().join("media"), "media").unwrap();
    assert_eq!(written.len(), 1);
    let bytes = std::fs::read(&written[0]).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"));
    // Named by the first 16 hex digits of the SHA-256 of its bytes, whatever the output's name.
    let name = written[0].file_name().unwrap().to_str().unwrap().to_owned();
    let (hash, ext) = name.split_once('.').unwrap();
    assert_eq!((hash.len(), ext), (16, "png"), "{name}");
    assert!(hash.bytes().all(|byte| byte.is_ascii_hexdigit() && !byte.is_ascii_uppercase()));
    let part = &imported.trajectory()["steps"][0]["observation"]["results"][0]["content"][0];
    assert_eq!(part["source"]["path"], format!("media/{name}"));
    let mut again = import_fixture("claude-stream/image-result.jsonl");
    let other = tempfile::tempdir().unwrap();
    again.write_media(&other.path().join("media"), "media").unwrap();
    assert_eq!(again.json(), imported.json(), "the same log gives the same trajectory");
    assert_eq!(std::fs::read(other.path().join("media").join(&name)).unwrap(), bytes);
    assert!(!imported.json().contains("data:"));
    crate::support::assert_pretty(&imported, "after write_media");

    let mut plain = import_fixture("claude-stream/basic.jsonl");
    let before = plain.json();
    assert!(plain.write_media(&dir.path().join("none"), "none").unwrap().is_empty());
    assert!(!dir.path().join("none").exists());
    assert_eq!(plain.json(), before);
}

#[test]
fn user_patterns_redact_the_same_text_and_report_as_a_walk_over_the_whole_document() {
    let log = crate::support::fixture("claude-stream/basic.jsonl");
    let mut scanner = atif_secrets::Scanner::new();
    scanner.add_user_pattern("config|agent").unwrap();
    let mut options = atif_import::ImportOptions::default();
    options.set_secret_scanner(Some(scanner.clone()));
    let imported = atif_import::import(&log, &options).unwrap();
    options.set_secret_scanner(None);
    let mut whole = atif_import::import(&log, &options).unwrap().into_trajectory();
    let report = scanner.redact_value(&mut whole);
    assert!(report.pointers().contains(&"/steps/0/source"), "{:?}", report.pointers());
    assert_eq!(imported.secrets(), &report);
    assert!(imported.json() == serde_json::to_string_pretty(&whole).unwrap());
}
