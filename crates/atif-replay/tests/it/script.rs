//! The script file: bad input gives clear errors naming the file and the position.

use std::path::Path;

use atif_replay::support::read_script_with;
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
    // A version 1 script is a script of the newest version without HTTP exchanges.
    assert_eq!(script.version, atif_replay::SCRIPT_VERSION);
    assert!(script.exchanges.is_empty() && script.recording.is_none());
}

const HTTP: &str = r#"{
  "format": "atif-replay-script",
  "version": 2,
  "calls": [],
  "recording": {"cwd": "/rec", "masks": ["seed [0-9]+"]},
  "exchanges": [
    {
      "method": "POST",
      "path": "/v1/chat/completions",
      "request": {"model": "m"},
      "status": 200,
      "headers": {"content-type": "text/event-stream"},
      "events": [{"data": {"choices": []}}, {"data": "[DONE]"}]
    }
  ]
}
"#;

#[test]
fn a_script_of_http_exchanges_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("http.json");
    std::fs::write(&path, HTTP).unwrap();
    let script = read_script(&path).unwrap();
    let exchange = &script.exchanges[0];
    assert_eq!(exchange.content_type(), Some("text/event-stream"));
    assert_eq!(exchange.events_wire().concat(), "data: {\"choices\":[]}\n\ndata: [DONE]\n\n");
    assert_eq!(script.recording.as_ref().unwrap().cwd.as_deref(), Some("/rec"));
    // Written again, the old script loses the recorder's absolute directories.
    atif_replay::write_script(&path, &script, &[]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("/rec"), "{text}");
    assert_eq!(read_script(&path).unwrap().recording.unwrap().cwd, None);
}

#[test]
fn a_hand_edited_exchange_is_an_error_naming_its_position() {
    check_error(
        &HTTP.replace("\"status\": 200", "\"status\": 900"),
        "$PATH: at /exchanges/0/status: expected an HTTP status from 100 to 599, found 900",
    );
    check_error(
        &HTTP.replace("\"status\": 200,", "\"status\": 200, \"body\": {},"),
        "$PATH: at /exchanges/0: expected at most one of `body`, `text` or `events`",
    );
    check_error(
        &HTTP.replace("\"method\": \"POST\"", "\"method\": \"post\""),
        "$PATH: at /exchanges/0/method: expected an upper-case HTTP method, found \"post\"",
    );
    check_error(
        &HTTP.replace("seed [0-9]+", "seed ("),
        "$PATH: at /recording/masks/0: expected a regular expression: regex parse error:\n    seed (\n         ^\nerror: unclosed group",
    );
    check_error(
        &HTTP.replace("\"data\": \"[DONE]\"", "\"date\": \"[DONE]\""),
        "$PATH:13:51: at /exchanges/0/events/1/date: unknown field `date`, expected one of `comments`, `event`, `id`, `retry`, `data`",
    );
}

#[test]
fn a_missing_file_names_the_path() {
    let err = read_script(Path::new("/nonexistent/dir/s.json")).unwrap_err();
    assert!(matches!(err, Error::Io { action: "read", .. }), "{err:?}");
    // The message names the file; the operating system's reason is the source, shown once.
    assert_eq!(err.to_string(), "cannot read /nonexistent/dir/s.json");
    let Error::Io { source, .. } = &err else { unreachable!() };
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
    let shown = crate::chain(&err);
    assert_eq!(shown, format!("cannot read /nonexistent/dir/s.json: {source}"));
    assert_eq!(shown.matches("(os error ").count(), 1, "{shown}");
}

#[cfg(unix)]
#[test]
fn an_endless_binary_stream_or_a_file_over_the_limit_is_refused_before_it_is_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("z.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let started = std::time::Instant::now();
    let err = read_script(&zero).unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(matches!(err, Error::Load { .. }), "{err:?}");
    assert_eq!(
        crate::chain(&err),
        format!(
            "cannot load the script {0}: {0}: invalid JSON at line 1, column 1: byte 0x00 cannot \
             appear in JSON text: this is binary data, not a replay script",
            zero.display()
        )
    );
    let big = dir.path().join("big.json");
    std::fs::write(&big, format!("{{\"format\": \"{}\"}}", "x".repeat(100))).unwrap();
    let mut options = atif_schema::LoadOptions::new();
    options.set_max_bytes(64);
    let err = read_script_with(&big, &options).unwrap_err();
    assert!(matches!(err, Error::Load { .. }), "{err:?}");
    assert!(
        crate::chain(&err).ends_with("big.json is larger than the input limit of 64 bytes"),
        "{}",
        crate::chain(&err)
    );
}

#[test]
fn a_truncated_script_names_the_line_and_column() {
    let cut = &VALID[..VALID.find("\"response\"").unwrap()];
    check_error(cut, "$PATH:8:6: at /calls/0: EOF while parsing a value (the file is truncated)");
}

#[test]
fn an_unknown_field_names_the_field_and_its_line() {
    let edited = VALID.replace("\"model\": \"m\",", "\"model\": \"m\",\n  \"temperature\": 1,");
    check_error(
        &edited,
        "$PATH:5:15: at /temperature: unknown field `temperature`, expected one of `format`, `version`, `model`, `calls`, `recording`, `exchanges`, `mcp`",
    );
}

#[test]
fn another_format_version_is_its_own_error() {
    check_error(
        &VALID.replace("\"version\": 1", "\"version\": 5"),
        "$PATH: unsupported script format version 5 at /version: this build reads versions 1 to \
         4; use the atif version that wrote it, or re-record the script with this one",
    );
}

#[test]
fn a_version_that_is_not_a_number_says_what_was_expected() {
    check_error(
        &VALID.replace("\"version\": 1", "\"version\": \"1\""),
        "$PATH: at /version: expected the format version as a number (4), found \"1\"",
    );
}

#[test]
fn a_file_that_is_not_a_script_says_so() {
    check_error("[1, 2]", "$PATH: expected a script object, found another JSON value");
    check_error(
        r#"{"schema_version": "ATIF-v1.8"}"#,
        "$PATH: missing field `format`: expected \"atif-replay-script\"; is this a replay script?",
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
        "$PATH:8:104: at /calls/0/response/usage/prompt_tokens: invalid type: string \"many\", expected u64",
    );
}

#[test]
fn a_script_that_is_not_utf8_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bin.json");
    std::fs::write(&path, b"{\n  \"format\": \"\xff\"}").unwrap();
    let err = read_script(&path).unwrap_err();
    // The bounded reader stops at the first byte that UTF-8 never holds, before parsing.
    assert_eq!(
        crate::chain(&err),
        format!(
            "cannot load the script {0}: {0}: invalid JSON at line 2, column 14: byte 0xFF cannot \
             appear in JSON text: this is binary data, not a replay script",
            path.display()
        )
    );
    // A byte sequence that is invalid only as a whole is still found by the parser.
    std::fs::write(&path, b"{\n  \"format\": \"\xc3\x28\"}").unwrap();
    let err = read_script(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}:2:14: at /format: the file is not UTF-8 text", path.display())
    );
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
fn errors_deep_inside_a_call_name_the_json_pointer_of_the_value() {
    check_error(
        &VALID.replace("\"finish_reason\": \"stop\"", "\"finish_reason\": \"stop\", \"seed\": 7"),
        "$PATH:8:77: at /calls/0/response/seed: unknown field `seed`, expected one of `content`, \
         `tool_calls`, `finish_reason`, `reasoning`, `usage`, `usage_unknown`, `model`",
    );
    check_error(
        &VALID.replace(
            "\"response\"",
            "\"request\": {\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"developer\"}]},\n      \"response\"",
        ),
        "$PATH:8:85: at /calls/0/request/messages/1/role: unknown variant `developer`, expected one \
         of `system`, `user`, `assistant`, `tool`",
    );
    check_error(
        &VALID.replace(
            "\"finish_reason\": \"stop\"",
            "\"tool_calls\": [{\"id\": \"c\", \"arguments\": {}}]",
        ),
        "$PATH:8:89: at /calls/0/response/tool_calls/0: missing field `name`",
    );
}

#[test]
fn an_empty_file_and_a_missing_field_are_reported_with_their_position() {
    check_error("", "$PATH:1:0: EOF while parsing a value (the file is truncated)");
    check_error(
        "{\"format\": \"atif-replay-script\", \"version\": 1}",
        "$PATH:1:46: missing field `calls`",
    );
}

#[tokio::test]
async fn every_truncation_of_a_script_is_an_error_naming_a_position_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let tricky = "quote \" brace } bracket ] slash / tilde ~ and ünïcödé ✓";
    record_to(&path, echo_model(), &[ask(tricky), ask("second")]).await;
    let bytes = std::fs::read(&path).unwrap();
    atif_replay::parse_script(&bytes, &path).unwrap();
    for cut in 0..bytes.len() - 1 {
        let err = atif_replay::parse_script(&bytes[..cut], &path).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("{}:", path.display())),
            "cut at byte {cut}: {message}"
        );
        assert!(matches!(err, Error::Parse { line: 1.., .. }), "cut at byte {cut}: {err:?}");
    }
    // Brackets and quotes inside strings do not confuse the pointer.
    let text = String::from_utf8(bytes).unwrap();
    let cut = text.find("bracket ]").unwrap() + "bracket ]".len();
    let err = atif_replay::parse_script(&text.as_bytes()[..cut], &path).unwrap_err();
    assert!(
        matches!(&err, Error::Parse { pointer, .. } if pointer == "/calls/0/request/messages/0/content"),
        "{err:?}"
    );
}

#[test]
fn a_byte_order_mark_is_ignored() {
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend_from_slice(VALID.as_bytes());
    let script = atif_replay::parse_script(&bytes, Path::new("bom.json")).unwrap();
    assert_eq!(script.calls.len(), 1);
}

#[test]
fn a_secret_pattern_matching_a_word_of_the_format_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let text = VALID.replace(
        "\"response\"",
        "\"request\": {\"messages\": [{\"role\": \"user\", \"content\": \"a\"}]},\n      \"response\"",
    );
    std::fs::write(&path, &text).unwrap();
    let err = redact_file(&path, &["user".to_owned()]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: redaction produced a value that is not a script (unknown variant `<redacted:custom>`, \
             expected one of `system`, `user`, `assistant`, `tool`): a secret pattern matched a \
             word of the format itself, such as a role; make the pattern more specific",
            path.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "nothing written");
}

#[cfg(unix)]
#[test]
fn writing_a_script_through_a_link_updates_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.script.json");
    let text = format!(
        r#"{{"format": "atif-replay-script", "version": 1, "calls": [{{"request_sha256": "{}", "error": "bad key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"}}]}}"#,
        "a".repeat(64)
    );
    std::fs::write(&real, text).unwrap();
    let link = dir.path().join("link.script.json");
    std::os::unix::fs::symlink("real.script.json", &link).unwrap();
    assert!(redact_file(&link, &[]).unwrap());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "still a link");
    let script = read_script(&real).unwrap();
    assert_eq!(script.calls[0].error.as_deref(), Some("bad key <redacted:openai-key>"));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["link.script.json", "real.script.json"]);
}

#[test]
fn a_script_is_written_in_the_oldest_version_that_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("http.json");
    std::fs::write(&path, HTTP).unwrap();
    let mut script = read_script(&path).unwrap();
    let written_version = |script: &atif_replay::Script| {
        atif_replay::write_script(&path, script, &[]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["version"].as_u64().unwrap()
    };
    // Without keep-alive comments or `retry:`, version 2, which older builds read.
    assert_eq!(written_version(&script), 2);
    let events = script.exchanges[0].events.as_mut().unwrap();
    events.insert(0, atif_replay::SseEvent::comment(vec![" ping".to_owned()]));
    // With them, version 3: an older build says it cannot read the version, not the field.
    assert_eq!(written_version(&script), 3);
    let read_back = read_script(&path).unwrap();
    assert_eq!(read_back.exchanges[0].events.as_ref().unwrap()[0].comments, [" ping"]);
}
