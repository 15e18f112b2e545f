//! The error type: sources kept, variants grouped by what the caller can do, and a `Debug`
//! that reads well where a failing test prints it.

use std::error::Error as _;

use atif_replay::{Error, ErrorKind};
use atif_wire::{Protocol, parse_response};
use serde_json::json;

use crate::chain;

/// What `fn test() -> Result<(), Box<dyn Error>>` prints when it fails: the `Debug` of the box.
fn as_test_prints(err: Error) -> String {
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    format!("{boxed:?}")
}

#[test]
fn debug_of_a_nested_error_prints_the_chain_one_cause_a_line() {
    let wire = parse_response(Protocol::AnthropicMessages, &json!({"content": "hi"})).unwrap_err();
    let exchange = Error::Wire(atif_wire::Error::Exchange {
        exchange: 2,
        path: "/v1/messages".to_owned(),
        source: Box::new(wire),
    });
    let agent = Error::AgentFailed { message: chain(&exchange), source: Box::new(exchange) };
    assert_eq!(
        as_test_prints(agent),
        "agent failed\n\ncaused by:\n    cannot read HTTP exchange #2 (/v1/messages)\n    malformed \
         Anthropic Messages reply at /content: expected an array of content blocks, found a \
         string"
    );
}

#[test]
fn debug_indents_the_lines_of_a_multi_line_cause_and_escapes_nothing() {
    let exhausted = Error::ScriptExhausted {
        requested: 2,
        recorded: 1,
        request_summary: "The extra request carried as its last message (user): \"again\""
            .to_owned(),
        record_command: None,
    };
    let agent = Error::AgentFailed { message: chain(&exhausted), source: Box::new(exhausted) };
    let printed = as_test_prints(agent);
    assert_eq!(
        printed,
        "agent failed\n\ncaused by:\n    agent requested reply #2 but the recorded script has only \
         1. The agent is making more model calls than when this script was recorded — that is \
         the regression. If it is intended, re-record the script.\n      The extra request \
         carried as its last message (user): \"again\""
    );
    assert!(!printed.contains("\\n"), "no escaped newlines: {printed}");
    assert!(!printed.contains("AgentFailed"), "no variant fields: {printed}");
    assert_eq!(printed.matches("agent requested reply #2").count(), 1, "the message once");
}

#[test]
fn a_provider_error_keeps_its_source_and_reads_as_a_message_when_built_from_one() {
    let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection reset");
    let err = Error::provider(io);
    let source = err.source().expect("the provider's error is the source");
    assert!(source.downcast_ref::<std::io::Error>().is_some(), "{source:?}");
    assert_eq!(chain(&err), "model provider error: connection reset");

    let err = Error::provider("rate limited");
    assert_eq!(err.to_string(), "model provider error", "the cause is not repeated");
    assert_eq!(chain(&err), "model provider error: rate limited");
    assert_eq!(format!("{err:?}"), "model provider error\n\ncaused by:\n    rate limited");
}

#[test]
fn each_error_names_the_group_of_what_the_caller_can_do() {
    let check = |err: Error, kind: ErrorKind| assert_eq!(err.kind(), kind, "{err:?}");
    check(
        Error::ScriptExhausted {
            requested: 2,
            recorded: 1,
            request_summary: String::new(),
            record_command: None,
        },
        ErrorKind::Regression,
    );
    check(
        Error::RequestDrift {
            call: 1,
            reply: 1,
            expected: String::new(),
            actual: String::new(),
            changes: String::new(),
            record_command: None,
        },
        ErrorKind::Regression,
    );
    check(Error::AgentPanicked { message: "boom".to_owned() }, ErrorKind::Agent);
    check(Error::provider("down"), ErrorKind::Provider);
    check(
        Error::RecordedFailure { call: 1, message: "down".to_owned(), record_command: None },
        ErrorKind::Provider,
    );
    check(
        Error::ScriptMissing {
            path: "tests/scripts/a.json".into(),
            on_ci: true,
            record_command: "ATIF_RECORD=1 cargo test -p a t".to_owned(),
        },
        ErrorKind::Script,
    );
    check(
        Error::UnknownRecordMode { variable: "ATIF_RECORD", value: "x".to_owned() },
        ErrorKind::Usage,
    );
    let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
    check(Error::Io { action: "read", path: "s.json".into(), source: io }, ErrorKind::Script);
    check(
        Error::Wire(atif_wire::Error::Traffic { message: "no calls".to_owned() }),
        ErrorKind::Script,
    );
    let malformed = parse_response(Protocol::OpenAiChat, &json!({"choices": 1})).unwrap_err();
    check(Error::Wire(malformed), ErrorKind::Provider);
    check(Error::Wire(atif_wire::Error::provider("overloaded")), ErrorKind::Provider);
    check(Error::CallInProgress { call: 1 }, ErrorKind::Usage);
    let bad: serde_json::Error = serde_json::from_str::<u8>("x").unwrap_err();
    check(Error::Serialize { what: "script", source: bad }, ErrorKind::Bug);
}
