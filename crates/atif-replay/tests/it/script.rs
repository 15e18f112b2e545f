//! The script file: bad input gives clear errors naming the file and the position.

use std::path::Path;

use atif_replay::{Error, ReplayClient, read_script, redact_file};

use crate::{ask, echo_model, record_to};

const VALID: &str = r#"{
  "format": "atif-replay-script",
  "version": 1,
  "model": "m",
  "calls": [
    {
      "request_sha256": "0000000000000000000000000000000000000000000000000000000000000000",
      "response": {"content": {"text": "hi"}, "finish_reason": "stop", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cached_tokens": 0}}
    }
  ]
}
"#;

/// Writes `text` to a script file in a temp dir and reads it back, returning the error message.
fn check_error(text: &str, expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, text).unwrap();
    let err = ReplayClient::from_file(&path).unwrap_err();
    let message = err.to_string();
    let expected = expected.replace("$PATH", &path.display().to_string());
    assert_eq!(message, expected);
}

#[test]
fn a_hand_written_valid_script_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ok.json");
    std::fs::write(&path, VALID).unwrap();
    let script = read_script(&path).unwrap();
    assert_eq!(script.calls.len(), 1);
    assert_eq!(script.calls[0].response.as_ref().unwrap().text(), "hi");
}

#[test]
fn a_missing_file_names_the_path() {
    let err = read_script(Path::new("/nonexistent/dir/s.json")).unwrap_err();
    assert!(matches!(err, Error::Io { action: "read", .. }), "{err:?}");
    assert!(err.to_string().starts_with("cannot read /nonexistent/dir/s.json: "), "{err}");
}

#[test]
fn a_truncated_script_names_the_line_and_column() {
    let cut = &VALID[..VALID.find("\"response\"").unwrap()];
    check_error(cut, "$PATH:8:6: EOF while parsing a value (the file is truncated)");
}

#[test]
fn an_unknown_field_names_the_field_and_its_line() {
    let edited = VALID.replace("\"model\": \"m\",", "\"model\": \"m\",\n  \"temperature\": 1,");
    check_error(
        &edited,
        "$PATH:5:15: unknown field `temperature`, expected one of `format`, `version`, `model`, `calls`",
    );
}

#[test]
fn another_format_version_is_its_own_error() {
    check_error(
        &VALID.replace("\"version\": 1", "\"version\": 2"),
        "$PATH: unsupported script format version 2 at /version: this build reads version 1; \
         re-record the script with this version of atif-replay",
    );
}

#[test]
fn a_file_that_is_not_a_script_says_so() {
    check_error("[1, 2]", "$PATH: at : expected a script object, found another JSON value");
    check_error(
        r#"{"schema_version": "ATIF-v1.8"}"#,
        "$PATH: at : missing field `format`: expected \"atif-replay-script\"; is this a replay script?",
    );
    check_error(
        &VALID.replace("atif-replay-script", "cassette"),
        "$PATH: at /format: expected \"atif-replay-script\", found \"cassette\"",
    );
}

#[test]
fn hand_edited_calls_are_checked_with_a_json_pointer() {
    check_error(
        &VALID.replace("0000000000000000000000000000000000000000000000000000000000000000", "abc"),
        "$PATH: at /calls/0/request_sha256: expected 64 lower-case hex digits, found \"abc\"",
    );
    let empty_call = VALID.replace(
        "\"response\": {\"content\": {\"text\": \"hi\"}, \"finish_reason\": \"stop\", \"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 1, \"cached_tokens\": 0}}",
        "\"request\": {\"messages\": []}",
    );
    check_error(&empty_call, "$PATH: at /calls/0: expected one of `response`, `chunks` or `error`");
    check_error(
        &VALID.replace("\"prompt_tokens\": 1", "\"prompt_tokens\": \"many\""),
        "$PATH:8:104: invalid type: string \"many\", expected u64",
    );
}

#[test]
fn a_script_that_is_not_utf8_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bin.json");
    std::fs::write(&path, b"{\n  \"format\": \"\xff\"}").unwrap();
    let err = read_script(&path).unwrap_err();
    assert_eq!(err.to_string(), format!("{}:2:14: the file is not UTF-8 text", path.display()));
}

#[tokio::test]
async fn redacting_a_clean_file_leaves_it_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    record_to(&path, echo_model(), &[ask("nothing secret")]).await;
    let before = std::fs::read(&path).unwrap();
    assert!(!redact_file(&path, &[]).unwrap());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn an_empty_file_and_a_missing_field_are_reported_with_their_position() {
    check_error("", "$PATH:1:0: EOF while parsing a value (the file is truncated)");
    check_error(
        "{\"format\": \"atif-replay-script\", \"version\": 1}",
        "$PATH:1:46: missing field `calls`",
    );
}
