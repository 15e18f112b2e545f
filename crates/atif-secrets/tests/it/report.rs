//! The report line: counts and pointers, never a secret.

use atif_secrets::{Redactions, Scanner};
use serde_json::json;

#[test]
fn the_report_names_kinds_counts_and_pointers_but_no_secret() {
    let secret = "sk-abcdefghijklmnopqrstuv1234";
    let mut doc = json!({"steps": [
        {"message": format!("use {secret}")},
        {"tool_calls": [{"arguments": {"cmd": format!("curl -u x {secret}"), "password": "hunter22"}}]}
    ]});
    let report = Scanner::new().redact_value(&mut doc);
    let line = report.to_string();
    assert_eq!(
        line,
        "redacted 3 secrets (2 openai-key, 1 password) at /steps/0/message, \
         /steps/1/tool_calls/0/arguments/cmd, /steps/1/tool_calls/0/arguments/password"
    );
    assert!(!line.contains("hunter22") && !line.contains(secret));
}

#[test]
fn long_reports_say_how_many_more_places_there_are() {
    let mut report = Redactions::new();
    for idx in 0..12 {
        report.push("jwt", format!("/steps/{idx}/message"));
    }
    let line = report.to_string();
    assert!(line.starts_with("redacted 12 secrets (12 jwt) at /steps/0/message, "), "{line}");
    assert!(line.ends_with("/steps/9/message and 2 more"), "{line}");
    assert_eq!(Redactions::new().to_string(), "no secrets redacted");
}

#[test]
fn pointers_escape_tilde_and_slash_in_keys_and_names_are_matched_in_any_case() {
    let mut doc = json!({"a/b": {"x~y": [0, "Bearer abcdefghijklmnopqrstuvwxyz012345"]},
        "Proxy-Authorization": "Basic dXNlcjpwYXNz", "prompt_tokens": 12});
    let report = Scanner::new().redact_value(&mut doc);
    let pointers = report.pointers();
    assert!(pointers.contains(&"/a~1b/x~0y/1"), "{pointers:?}");
    assert!(pointers.contains(&"/Proxy-Authorization"), "{pointers:?}");
    assert_eq!(doc["prompt_tokens"], 12);
}
