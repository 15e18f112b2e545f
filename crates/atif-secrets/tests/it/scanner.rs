//! The scanner on text and on JSON.

use atif_secrets::{Error, Scanner, is_secret_name};
use serde_json::json;

use crate::samples::{SAMPLES, SURVIVORS, assert_clean, planted_text};

fn check(input: &str, expected: &str) {
    let scanner = Scanner::new();
    let actual = scanner.redact_text(input).unwrap_or_else(|| input.to_owned());
    assert_eq!(actual, expected, "input: {input}");
    // Redacting is idempotent: the markers match nothing.
    assert_eq!(scanner.redact_text(&actual), None, "second pass over {actual}");
}

#[test]
fn every_default_kind_is_redacted_with_its_marker() {
    for (kind, input, expected) in SAMPLES {
        assert!(expected.contains(&format!("<redacted:{kind}>")), "{kind}: {expected}");
        check(input, expected);
    }
    let kinds: std::collections::BTreeSet<&str> =
        atif_secrets::DEFAULT_PATTERNS.iter().map(|(kind, _)| *kind).collect();
    for kind in kinds {
        assert!(SAMPLES.iter().any(|(sample, _, _)| *sample == kind), "no sample of {kind}");
    }
}

#[test]
fn only_the_value_of_a_secret_assignment_is_redacted() {
    check("api_key=abc123 next=word", "api_key=<redacted:api-key> next=word");
    check("a&token=abcdef&page=2", "a&token=<redacted:token>&page=2");
    check("export DB_PASSWORD='p a s s' && run", "export DB_PASSWORD='<redacted:password>' && run");
    check(
        r#"{\"api_key\": \"abcdef\", \"b\": 1}"#,
        r#"{\"api_key\": \"<redacted:api-key>\", \"b\": 1}"#,
    );
    check("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic <redacted:secret>");
}

#[test]
fn ordinary_text_code_and_identifiers_survive() {
    for text in [
        "nothing secret here",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b is on main",
        "request 123e4567-e89b-12d3-a456-426614174000 took 3 s",
        "prompt_tokens: 1234, completion_tokens=56, max_tokens=4096",
        "login: (username: string, password: string) => Promise<void>;",
        "def f(api_key: Optional[str] = None):",
        "struct C { password: Option<String>, }",
        "if token == expected { return }",
        "use auth::token::Token;",
        "token: ab",
        "the task-runner-configuration-file is fine",
        "password=$DB_PASSWORD and token=${TOKEN}",
        "https://example.com:8443/path?q=1",
        "api_key: <redacted:api-key>",
    ] {
        check(text, text);
    }
}

#[test]
fn base64_image_data_survives() {
    // A PNG's base64 with `AIza` and `AKIA` planted inside, where they are not keys.
    let body = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg";
    let data = format!(
        "data:image/png;base64,{body}AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW{body}AKIAIOSFODNN7EXAMPLE{body}=="
    );
    check(&data, &data);
    let mut doc = json!({"source": {"type": "base64", "media_type": "image/png", "data": data}});
    let before = doc.clone();
    assert!(Scanner::new().redact_value(&mut doc).is_empty());
    assert_eq!(doc, before);
}

#[test]
fn a_private_key_block_cut_short_loses_its_whole_body() {
    check(
        "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\nabc",
        "<redacted:private-key>",
    );
}

#[test]
fn two_secrets_side_by_side_are_both_redacted() {
    check(
        "AKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPL2",
        "<redacted:aws-access-key-id> <redacted:aws-access-key-id>",
    );
}

#[test]
fn json_values_under_secret_keys_are_redacted_and_schemas_kept() {
    let scanner = Scanner::new();
    let mut value = json!({
        "headers": {"Authorization": "xyz123", "X-Api-Key": 42, "Accept": "json"},
        "env": {"GITHUB_TOKEN": "plainvalue", "PATH": "/usr/bin", "PWD": "/home/me"},
        "parameters": {"properties": {"password": {"type": "string"}}},
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        "empty": {"password": ""},
        "flag": {"has_password": true}
    });
    let report = scanner.redact_value(&mut value);
    assert_eq!(
        value,
        json!({
            "headers": {"Authorization": "<redacted:secret>", "X-Api-Key": "<redacted:api-key>", "Accept": "json"},
            "env": {"GITHUB_TOKEN": "<redacted:token>", "PATH": "/usr/bin", "PWD": "/home/me"},
            "parameters": {"properties": {"password": {"type": "string"}}},
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            "empty": {"password": ""},
            "flag": {"has_password": true}
        })
    );
    let pointers: Vec<&str> = report.findings().iter().map(|f| f.pointer.as_str()).collect();
    assert_eq!(pointers, ["/env/GITHUB_TOKEN", "/headers/Authorization", "/headers/X-Api-Key"]);
    // A second pass finds nothing.
    assert!(scanner.redact_value(&mut value).is_empty());
}

#[test]
fn every_occurrence_of_a_key_is_judged_alike_however_many_distinct_keys_the_document_has() {
    // The walk remembers what it learnt about the first keys it meets; keys past what it
    // remembers, long keys and repeated ones must be treated as the first occurrence was.
    let long_name = format!("{}_password", "x".repeat(80));
    let mut items = Vec::new();
    for idx in 0..1500 {
        items.push(json!({
            format!("key{idx}_token"): format!("value{idx}xyz"),
            "prompt_tokens": idx,
            long_name.as_str(): "hunter22",
            "ghp_abcdefghijklmnopqrstuvwxyz0123": "owner",
        }));
    }
    let mut value = json!({ "items": items });
    let report = Scanner::new().redact_value(&mut value);
    for (idx, item) in value["items"].as_array().unwrap().iter().enumerate() {
        let expected = json!({
            format!("key{idx}_token"): "<redacted:token>",
            "prompt_tokens": idx,
            long_name.as_str(): "<redacted:password>",
            "<redacted:github-token>": "owner",
        });
        assert_eq!(item, &expected, "item {idx}");
    }
    assert_eq!(report.len(), 1500 * 3);
    let pointers: Vec<&str> =
        report.findings().iter().take(3).map(|f| f.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/items/0/<redacted:github-token>",
            "/items/0/key0_token",
            &format!("/items/0/{long_name}"),
        ]
    );
}

#[test]
fn two_keys_that_redact_to_the_same_marker_become_one() {
    let mut value =
        json!({"ghp_abcdefghijklmnopqrstuvwxyz0123": 1, "ghp_zyxwvutsrqponmlkjihgfedcba3210": 2});
    let report = Scanner::new().redact_value(&mut value);
    assert_eq!(value.as_object().unwrap().len(), 1);
    assert!(value.get("<redacted:github-token>").is_some());
    assert_eq!(report.len(), 2);
}

#[test]
fn a_secret_used_as_an_object_key_is_redacted() {
    let mut value = json!({"tokens": {"ghp_abcdefghijklmnopqrstuvwxyz0123": "owner"}});
    let report = Scanner::new().redact_value(&mut value);
    assert_eq!(value, json!({"tokens": {"<redacted:github-token>": "owner"}}));
    assert_eq!(report.findings()[0].pointer, "/tokens/<redacted:github-token>");
}

#[test]
fn user_patterns_are_applied_and_bad_ones_are_errors() {
    let mut scanner = Scanner::new();
    scanner.add_user_pattern("corp-[0-9]{4}").unwrap();
    scanner.add_pattern("internal-id", r"id=(?P<secret>[a-f]{6})").unwrap();
    assert_eq!(
        scanner.redact_text("t corp-1234 id=abcdef").as_deref(),
        Some("t <redacted:custom> id=<redacted:internal-id>")
    );
    // A pattern that matches inside a marker does not touch it.
    scanner.add_user_pattern("redacted").unwrap();
    assert_eq!(scanner.redact_text("<redacted:custom>"), None);

    let err = Scanner::new().add_user_pattern("(").unwrap_err();
    assert_eq!(err.to_string(), "invalid secret pattern `(`");
    assert!(std::error::Error::source(&err).unwrap().to_string().contains("unclosed group"));
    assert!(matches!(Scanner::new().add_user_pattern("a*"), Err(Error::EmptyMatch { .. })));
    assert!(matches!(Scanner::new().add_pattern("Bad Kind", "x"), Err(Error::InvalidKind { .. })));
}

#[test]
fn secret_names_are_recognised_by_their_ending() {
    for name in [
        "OPENAI_API_KEY",
        "x-api-key",
        "clientSecret",
        "Proxy-Authorization",
        "auth",
        "db.password",
        "aws_secret_access_key",
        "set-cookie",
        "apiKey",
    ] {
        assert!(is_secret_name(name), "{name}");
    }
    for name in [
        "prompt_tokens",
        "max_tokens",
        "oauth_url",
        "cache_key",
        "PWD",
        "author",
        "tokenizer",
        "keyboard",
    ] {
        assert!(!is_secret_name(name), "{name}");
    }
}

/// The rule of `is_secret_name` written the plain way: normalise the whole name, then look at
/// its end.
fn secret_name_by_definition(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace(['-', '.'], "_");
    let endings = [
        "apikey",
        "api_key",
        "accesskey",
        "access_key",
        "secretkey",
        "secret_key",
        "privatekey",
        "private_key",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "token",
        "credential",
        "credentials",
    ];
    endings.iter().any(|ending| name.ends_with(ending))
        || ["auth", "authorization", "cookie"].iter().any(|word| {
            name.strip_suffix(word).is_some_and(|head| head.is_empty() || head.ends_with('_'))
        })
}

#[test]
fn long_names_and_texts_are_judged_by_their_end() {
    let long = "x".repeat(10_000);
    for (name, secret) in [
        (format!("{long}_auth"), true),
        (format!("{long}auth"), false),
        (format!("{long}.Authorization"), true),
        (format!("{long}_AUTHORIZATION"), true),
        (format!("{long}xauthorization"), false),
        ("a_rather_long_prefix_before_GITHUB_TOKEN".to_owned(), true),
        ("\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}-cookie".to_owned(), true),
        ("\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}cookie".to_owned(), false),
        (format!("{long}token\u{e9}"), false),
    ] {
        assert_eq!(is_secret_name(&name), secret, "{}", &name[name.len().saturating_sub(40)..]);
        assert_eq!(secret_name_by_definition(&name), secret);
    }
}

proptest::proptest! {
    #[test]
    fn secret_names_follow_their_definition(
        head in "[a-zA-Z_.\\-\u{e9}]{0,24}",
        word in proptest::sample::select(vec![
            "", "auth", "Auth", "AUTHORIZATION", "cookie", "token", "Api-Key", "secret",
            "passwd", "credentials", "_", "-", ".",
        ]),
    ) {
        let name = format!("{head}{word}");
        proptest::prop_assert_eq!(is_secret_name(&name), secret_name_by_definition(&name), "{}", name);
    }
}

#[test]
fn all_samples_in_one_text_are_redacted_and_the_survivors_kept() {
    let redacted = Scanner::new().redact_text(&planted_text()).unwrap();
    assert_clean(&redacted, "redact_text", true);
    for survivor in SURVIVORS {
        check(survivor, survivor);
    }
}

#[test]
fn may_hold_secret_is_false_for_token_counts_and_true_for_secrets_and_secret_names() {
    let scanner = Scanner::new();
    for text in ["prompt_tokens", "completion_tokens", "the key to success", "Authorization header"]
    {
        assert!(!scanner.may_hold_secret(text), "{text}");
    }
    for text in ["password", "GITHUB_TOKEN", "use sk-ant-api03-AbCdEf123456-xyz", "token=abcdef"] {
        assert!(scanner.may_hold_secret(text), "{text}");
    }
}

/// `text` as JSON writes it between quotes, using only two-character escapes (no control
/// character other than backspace, form feed, newline, carriage return and tab is generated).
fn escape_two_character(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            other => out.push(other),
        }
    }
    out
}

fn unescape_two_character(escaped: &str) -> String {
    let mut out = String::new();
    let mut chars = escaped.chars();
    while let Some(c) = chars.next() {
        out.push(match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('b') => '\u{8}',
                Some('f') => '\u{c}',
                Some('n') => '\n',
                Some('r') => '\r',
                Some('t') => '\t',
                Some(other) => other,
                None => break,
            },
            (c, false) => c,
        });
    }
    out
}

proptest::proptest! {
    #[test]
    fn the_escaped_check_never_misses_what_the_value_check_finds(
        parts in proptest::collection::vec(proptest::sample::select(vec![
            "sk-proj-", "abcdefghijklmnopqrstuvwxyz0123456789", "ABCDEFGHIJ", "\n", "\t", "\"",
            "\\", "\u{8}", "password", "=", ": ", "token", "_", "-", "Bearer ", "ghp_",
            "://", "user:", "@host", "AKIA", "key", " ", "é", "\\n", "data:image/png;base64,",
            "data:", ";base64,", ",", "QUJD/+=",
        ]), 0..12),
    ) {
        let value: String = parts.concat();
        let escaped = escape_two_character(&value);
        proptest::prop_assert_eq!(unescape_two_character(&escaped), value.clone());
        let scanner = Scanner::new();
        if scanner.may_hold_secret(&value) {
            proptest::prop_assert!(
                scanner.may_hold_secret_escaped(&escaped, unescape_two_character),
                "{:?}", value
            );
        }
    }
}

/// 120 kB of base64 holding, by chance, the hint words of several patterns, and ending in a
/// run that the AWS pattern matches (after `=`, which does not join a match it precedes).
fn image_payload() -> String {
    let chance =
        "AKIAIOSFODNN7EXAMPLE/key/Token/sk/Bearer+abcdefgh/AIzaSyA1234567890abcdefghijklmnopqrstu/";
    format!("iVBORw0KGgo{}AAAAASUVORK5CYII==AKIAIOSFODNN7EXAMPLE", chance.repeat(1_300))
}

#[test]
fn the_base64_payload_of_a_data_uri_is_left_alone() {
    let scanner = Scanner::new();
    let image = format!("data:image/png;base64,{}", image_payload());
    assert!(scanner.redact_text(&image_payload()).is_some(), "the payload alone looks secret");
    assert_eq!(scanner.redact_text(&image), None);
    assert!(!scanner.may_hold_secret(&image));
    assert!(!scanner.may_hold_secret_escaped(&image, unescape_two_character));
    let mut value = json!({"source": {"path": image.clone()}, "type": "image"});
    assert!(scanner.redact_value(&mut value).is_empty());
    assert_eq!(value["source"]["path"], image.as_str());
}

#[test]
fn the_part_of_a_data_uri_before_its_payload_is_still_searched() {
    let scanner = Scanner::new();
    let payload = image_payload();
    let image = format!("data:text/plain;token=abcdef123;base64,{payload}");
    assert_eq!(
        scanner.redact_text(&image),
        Some(format!("data:text/plain;token=<redacted:token>;base64,{payload}"))
    );
    assert!(scanner.may_hold_secret_escaped(&image, unescape_two_character));
}

#[test]
fn a_data_uri_whose_payload_is_not_only_base64_is_searched_whole() {
    let scanner = Scanner::new();
    for text in [
        "data:image/png;base64,iVBORw0K sk-proj-abcdefghijklmnopqrstuvwxyz0123",
        "data:image/png;base64,iVBORw0K\nsk-proj-abcdefghijklmnopqrstuvwxyz0123",
        "data:text/plain,sk-proj-abcdefghijklmnopqrstuvwxyz0123",
        "see data:image/png;base64,AKIAIOSFODNN7EXAMPLE",
    ] {
        let redacted = scanner.redact_text(text);
        assert!(redacted.as_deref().is_some_and(|r| r.contains("<redacted:")), "{text}");
        assert!(
            scanner.may_hold_secret_escaped(&escape_two_character(text), unescape_two_character)
        );
    }
}

#[test]
fn the_escaped_check_decodes_only_text_with_a_hint() {
    let scanner = Scanner::new();
    let decoded = std::cell::Cell::new(0);
    let decode = |text: &str| {
        decoded.set(decoded.get() + 1);
        unescape_two_character(text)
    };
    assert!(!scanner.may_hold_secret_escaped(r"plain\nlines\tof output", decode));
    assert!(scanner.may_hold_secret_escaped(r"export GITHUB_TOKEN", decode));
    assert_eq!(decoded.get(), 1, "only the text holding `TOKEN` is decoded");
    assert!(scanner.may_hold_secret_escaped(r"db\npassphrase", decode), "a name, no hint");
    assert_eq!(decoded.get(), 1);
    let mut with_pattern = Scanner::new();
    with_pattern.add_user_pattern("line\\slines").unwrap();
    assert!(with_pattern.may_hold_secret_escaped(r"line\nlines", unescape_two_character));
}

#[test]
fn scan_value_reports_what_redact_value_replaces_in_the_same_order_and_changes_nothing() {
    let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let docs = [
        serde_json::json!({"messages": [{"content": "plain text"}, {"content": format!("use {token}")}]}),
        serde_json::json!({"a/b~c": [[format!("x {token}")]], "env": {"GITHUB_TOKEN": "abc", "PATH": "/bin"}}),
        serde_json::json!({"headers": {token: "v", "other": format!("{token} twice {token}")}}),
        serde_json::json!({"password": {"nested": format!("{token}")}, "api_key": 42, "z": [null, true, 1.5]}),
        serde_json::json!(["no secret at all", {"prompt_tokens": 12}]),
        serde_json::json!(format!("{token}")),
    ];
    let scanner = Scanner::new();
    let mut n_findings = 0;
    for doc in docs {
        let before = doc.clone();
        let scanned = scanner.scan_value(&doc);
        assert_eq!(doc, before, "scanning changes nothing");
        let redacted = scanner.redact_value(&mut doc.clone());
        assert_eq!(scanned.findings(), redacted.findings(), "{doc}");
        n_findings += scanned.findings().len();
    }
    assert!(n_findings >= 9, "the documents hold secrets to find: {n_findings}");
}
