//! Detection of a log's format from its content, and forced formats.

use atif_import::{Error, Format, ImportOptions, detect, import, import_path};

use crate::support::fixture;

#[test]
fn every_fixture_is_detected_as_its_format() {
    let cases = [
        ("claude-code/basic.jsonl", Format::ClaudeCode),
        ("claude-code/project/sess-0002/subagents/agent-a7f3.jsonl", Format::ClaudeCode),
        ("claude-stream/basic.jsonl", Format::ClaudeStream),
        ("codex-rollout/usage-before.jsonl", Format::CodexRollout),
        ("codex-rollout/usage-after.jsonl", Format::CodexRollout),
        ("codex-exec/basic.jsonl", Format::CodexExec),
    ];
    for (rel, format) in cases {
        assert_eq!(detect(&fixture(rel)).unwrap(), format, "{rel}");
        let imported = import(&fixture(rel), &ImportOptions::default()).unwrap();
        assert_eq!(imported.format(), format, "{rel}");
        assert!(imported.detected());
    }
}

#[test]
fn detection_ignores_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let misleading = dir.path().join("claude-session.json");
    std::fs::write(&misleading, fixture("codex-exec/basic.jsonl")).unwrap();
    let imported = import_path(&misleading, &ImportOptions::default()).unwrap();
    assert_eq!(imported.format(), Format::CodexExec);
}

#[test]
fn format_names_parse_and_an_unknown_name_lists_the_known_ones() {
    for format in Format::ALL {
        assert_eq!(format.name().parse::<Format>().unwrap(), *format);
    }
    let err = "gemini".parse::<Format>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown log format `gemini` (known: claude-code, claude-stream, codex-rollout, codex-exec, gemini-session, gemini-stream, opencode-run, opencode-export, pi-json, pi-session, otel)"
    );
}

#[test]
fn a_forced_format_that_matches_no_record_says_what_the_log_looks_like() {
    let mut options = ImportOptions::new();
    options.set_format(Some(Format::CodexRollout));
    let err = import(&fixture("claude-code/basic.jsonl"), &options).unwrap_err();
    assert!(matches!(err, Error::WrongFormat { .. }), "{err:?}");
    assert_eq!(err.to_string(), "no codex-rollout records in the log (it looks like claude-code)");
}

#[test]
fn a_forced_format_is_reported_as_not_detected() {
    let mut options = ImportOptions::new();
    options.set_format(Some(Format::ClaudeStream));
    let imported = import(&fixture("claude-stream/basic.jsonl"), &options).unwrap();
    assert_eq!(imported.format(), Format::ClaudeStream);
    assert!(!imported.detected());
}
