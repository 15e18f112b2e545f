//! `normalize_json`, the fast path: the same bytes as `normalize` then `to_canonical_string`.

use std::path::PathBuf;

use atif_normalize::{
    Error, JsonDocument, Masker, NormalizeOptions, SelectorAction, normalize, normalize_json,
    to_canonical_string,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Value, json};

use crate::{call_step, corpus_dir, corpus_files, trajectory};

fn fast(json: &[u8], options: &NormalizeOptions) -> Result<String, Error> {
    let mut out = Vec::new();
    normalize_json(json, options, &mut out)?;
    Ok(String::from_utf8(out).unwrap())
}

/// The fast path and the general path agree on `json`, whether both succeed or both fail; and
/// the document the fast path keeps (`JsonDocument::normalize`) is the general path's value,
/// whose canonical text it recognises.
fn check_with(json: &str, options: &NormalizeOptions) {
    let general_value =
        serde_json::from_str::<Value>(json).ok().map(|doc| normalize(&doc, options));
    let general = general_value
        .as_ref()
        .map(|n| n.as_ref().map(to_canonical_string).map_err(|e| e.to_string()));
    let fast = fast(json.as_bytes(), options).map_err(|e| e.to_string());
    match general {
        Some(general) => assert_eq!(fast, general, "for {json}"),
        None => assert!(fast.is_err(), "serde_json rejects {json} but the fast path accepted it"),
    }
    let Some(Ok(general_value)) = general_value else { return };
    let (kept, _) = JsonDocument::parse(json.as_bytes()).unwrap().normalize(options).unwrap();
    let text = to_canonical_string(&general_value);
    assert!(kept.is_canonical_text_of(text.as_bytes()), "for {json}");
    assert!(!kept.is_canonical_text_of(&text.as_bytes()[..text.len() - 1]), "for {json}");
    assert_eq!(kept.to_canonical_string(), text, "for {json}");
    assert_eq!(kept.into_value(), general_value, "for {json}");
}

fn check(json: &str) {
    check_with(json, &NormalizeOptions::default());
}

#[test]
fn the_fast_path_agrees_with_normalize_on_our_trajectories() {
    let mut doc = trajectory(json!([
        {"step_id": 1, "source": "user", "message": "at 0x7f3c2a1b4c50 \"quoted\"\n\ttab é 😀", "extra": {"timestamp": 1}},
        call_step(2, "grep", "toolu_1"),
        call_step(3, "read_file", "toolu_2"),
    ]));
    doc["subagent_trajectories"] = json!([
        {"trajectory_id": "b", "agent": {"name": "web", "version": "1"}, "steps": [call_step(1, "x", "c1")]},
        {"trajectory_id": "a", "agent": {"name": "code", "version": "1"}, "steps": [call_step(1, "y", "c1")]},
    ]);
    doc["steps"][2]["observation"]["results"]
        .as_array_mut()
        .unwrap()
        .push(json!({"subagent_trajectory_ref": [{"trajectory_id": "a"}, {"trajectory_id": "b"}]}));
    let text = serde_json::to_string_pretty(&doc).unwrap();
    check(&text);
    let mut options = NormalizeOptions::default();
    options.add_volatile_key("message").set_sort_subagents(false);
    check_with(&text, &options);
    // Extra maskers run on string values, escaped characters included.
    options.add_masker(Masker::new(r"\n\t|o", "<$0>").unwrap());
    options.add_masker(Masker::new(r"<o>", "\"0\"").unwrap());
    check_with(&text, &options);
    // Redactions apply on the fast path too.
    options.add_selector(".**.function_name", SelectorAction::Replace(json!("f"))).unwrap();
    check_with(&text, &options);
}

#[test]
fn escapes_numbers_and_keys_are_written_as_the_general_path_writes_them() {
    for json in [
        r#"{"s": "\u00e9\u0041\/\ud83d\ude00\u0000\u001f\u007f\u2028", "k\u0065y": 1, "key\n": 2, "\n": 3}"#,
        r#"{"n": [0, -0, -1, 1.0, -0.0, 1e2, 1E-7, 12345678901234567890, 1.23456789012345678901234567890e29, -9223372036854775808]}"#,
        r#"{"tool_call_id": "x", "steps": [{"tool_calls": [{"tool_call_id": "a\/b", "arguments": {"a": null}}], "observation": {"results": [{"source_call_id": "a/b"}]}}]}"#,
        r#"{"deep": [[[[{"extra": {}}]]]], "extra": {"session_id": null}}"#,
        " {\"a\" : [ 1 , { } , [ ] ] } \n",
        "{\"masked\": \"0x1234567\\n0x\\u00301234567 \\b0xabcdef12\"}",
    ] {
        check(json);
    }
    // An integer beyond 64 bits is refused, as atif-schema refuses it, not rounded to a float.
    for json in [r#"{"n": 123456789012345678901234567890}"#, r#"{"n": -9223372036854775809}"#] {
        let err = fast(json.as_bytes(), &NormalizeOptions::default()).unwrap_err().to_string();
        assert!(err.contains("an integer outside -2^63 … 2^64-1"), "{err}");
    }
}

#[test]
fn our_canonical_fixtures_come_out_the_same_by_both_paths() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/canonical");
    for name in ["strings.json", "numbers.json"] {
        check(&std::fs::read_to_string(dir.join(name)).unwrap());
    }
}

#[test]
fn every_corpus_file_comes_out_the_same_by_both_paths() {
    let Some(atif) = corpus_dir() else { return };
    for path in corpus_files(&atif, "valid").into_iter().chain(corpus_files(&atif, "invalid")) {
        check(&std::fs::read_to_string(&path).unwrap());
    }
}

#[test]
fn input_that_is_not_strict_json_is_an_error_with_line_and_column() {
    for (json, message) in [
        (
            "{\"a\": 1,\n \"a\": 2}",
            "invalid JSON at line 1 column 1: duplicate key `a` in an object",
        ),
        ("\u{feff}{}", "invalid JSON at line 1 column 1: a byte-order mark before the document"),
        ("{\"a\": NaN}", "invalid JSON at line 1 column 7: expected a JSON value, found `N`"),
        (
            "{} x",
            "invalid JSON at line 1 column 4: expected the end of the document after the value, found `x`",
        ),
        (
            "{\"a\": \"\u{1}\"}",
            "invalid JSON at line 1 column 8: expected no raw control character in a string, found `\\u{1}`",
        ),
        (
            "{\"a\": 01}",
            "invalid JSON at line 1 column 7: expected digits without a leading zero, found `0`",
        ),
        (
            "{\"a\": 1e400}",
            "invalid JSON at line 1 column 7: a number in the range of a 64-bit float",
        ),
        (
            "{\"a\": \"\\ud800\"}",
            "invalid JSON at line 1 column 8: a low surrogate after a high one",
        ),
        ("", "invalid JSON at line 1 column 1: expected a JSON value, found the end of the input"),
    ] {
        let err = fast(json.as_bytes(), &NormalizeOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), message, "for {json:?}");
    }
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let err = fast(deep.as_bytes(), &NormalizeOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid JSON at line 1 column 128: nesting deeper than 127 levels"
    );
}

#[test]
fn a_root_that_is_not_an_object_is_not_a_trajectory_on_the_fast_path_too() {
    let err = fast(b"[1]", &NormalizeOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "not an ATIF trajectory at the root: expected a trajectory object, found an array"
    );
    let nested = r#"{"subagent_trajectories": [{"subagent_trajectories": [{}, "x"]}]}"#;
    let err = fast(nested.as_bytes(), &NormalizeOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "not an ATIF trajectory at `/subagent_trajectories/0/subagent_trajectories/1`: expected a trajectory object, found a string"
    );
    check(nested);
}

/// Writes `value` as JSON, escaping characters at random (`\uXXXX`, `\/`) and adding spaces,
/// so the parser sees every way of spelling the same document.
fn spell(value: &Value, choices: &mut dyn Iterator<Item = u8>, out: &mut String) {
    fn pick(choices: &mut dyn Iterator<Item = u8>) -> u8 {
        choices.next().unwrap_or(0)
    }
    fn string(s: &str, choices: &mut dyn Iterator<Item = u8>, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '/' if pick(choices) % 2 == 0 => out.push_str("\\/"),
                c if (c as u32) < 0x20 || pick(choices) % 5 == 0 => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
    match value {
        Value::String(s) => string(s, choices, out),
        Value::Array(items) => {
            out.push('[');
            for (idx, item) in items.iter().enumerate() {
                if idx > 0 {
                    out.push_str(if pick(choices) % 2 == 0 { "," } else { " ,\n " });
                }
                spell(item, choices, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (idx, (key, item)) in map.iter().enumerate() {
                if idx > 0 {
                    out.push(',');
                }
                string(key, choices, out);
                out.push_str(": ");
                spell(item, choices, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[test]
fn the_fast_path_agrees_with_normalize_on_arbitrary_documents() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 256, failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, b"atif-normalize-fast-path-seed-01"),
    );
    let strategy = (crate::properties::arbitrary_json(), prop::collection::vec(any::<u8>(), 64));
    runner
        .run(&strategy, |(doc, choices)| {
            let mut text = String::new();
            spell(&doc, &mut choices.into_iter().cycle(), &mut text);
            check(&text);
            check(&serde_json::to_string(&doc).unwrap());
            let mut options = NormalizeOptions::default();
            options.add_volatile_key("x").set_sort_subagents(false);
            options.add_masker(Masker::new("[a\n]|ADDR", "\"$0\\").unwrap());
            check_with(&text, &options);
            let mut paths = NormalizeOptions::default();
            paths.set_home(Some("/w")).set_recorded_paths(true);
            check_with(&text, &paths);
            paths.set_cwd(Some("/w/a/"));
            check_with(&text, &paths);
            Ok(())
        })
        .unwrap();
}

/// A trajectory as agents write them: messages and tool arguments quoting addresses, paths and
/// escapes, tool calls whose ids the results cite, timestamps and costs, maybe a recorded
/// working directory, and subagents referred to from a step.
fn generated_trajectory() -> impl Strategy<Value = Value> {
    (
        crate::properties::trajectory_with_calls(),
        crate::properties::trajectory_with_subagents(),
        prop::collection::vec(crate::properties::string(), 1..5),
        prop::option::of(prop::sample::select(vec!["/w/a", "/w", "/tmp/run1"])),
    )
        .prop_map(|(mut doc, with_subagents, messages, cwd)| {
            let steps = doc["steps"].as_array_mut().unwrap();
            for (step, message) in steps.iter_mut().zip(messages.iter().cycle()) {
                step["message"] = json!(message);
                step["timestamp"] = json!("2026-01-01T00:00:00Z");
                step["metrics"] = json!({"prompt_tokens": 1, "cost_usd": 0.5, "extra": {}});
                step["tool_calls"][0]["arguments"] =
                    json!({"path": message, "timestamp": 1, "none": null});
            }
            steps.extend(with_subagents["steps"].as_array().unwrap().iter().cloned());
            doc["subagent_trajectories"] = with_subagents["subagent_trajectories"].clone();
            if let Some(cwd) = cwd {
                doc["extra"] = json!({"cwd": cwd, "home": "/w"});
                doc["extra"][cwd] = json!("a key that is a path");
            }
            doc
        })
}

#[test]
fn the_fast_path_agrees_with_normalize_on_generated_trajectories() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 256, failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, b"atif-normalize-one-contract-0001"),
    );
    let mut recorded = NormalizeOptions::default();
    recorded.set_recorded_paths(true).add_volatile_key("prompt_tokens");
    recorded.add_masker(Masker::new("call_[0-9]+|é", "<$0>").unwrap());
    let mut unsorted = NormalizeOptions::default();
    unsorted.set_sort_subagents(false).set_cwd(Some("/w/a"));
    unsorted.add_selector(".steps[].observation", SelectorAction::Remove).unwrap();
    let strategy = (generated_trajectory(), prop::collection::vec(any::<u8>(), 64));
    runner
        .run(&strategy, |(doc, choices)| {
            let mut text = String::new();
            spell(&doc, &mut choices.into_iter().cycle(), &mut text);
            for options in [&NormalizeOptions::default(), &recorded, &unsorted] {
                check_with(&text, options);
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn damaged_json_gives_an_error_never_a_panic() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 512, failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, b"atif-normalize-damaged-json-0001"),
    );
    let strategy = (
        crate::properties::arbitrary_json(),
        any::<prop::sample::Index>(),
        prop::collection::vec(any::<u8>(), 0..4),
    );
    runner
        .run(&strategy, |(doc, at, garbage)| {
            // Cut the text somewhere (possibly inside a character) and splice in random bytes.
            let text = serde_json::to_vec(&doc).unwrap();
            let cut = at.index(text.len() + 1);
            let mut damaged = text[..cut].to_vec();
            damaged.extend(&garbage);
            damaged.extend(&text[cut..]);
            for input in [&text[..cut], damaged.as_slice()] {
                match fast(input, &NormalizeOptions::default()) {
                    Ok(_) | Err(Error::InvalidJson { .. } | Error::NotATrajectory { .. }) => {}
                    Err(other) => prop_assert!(false, "unexpected error {other}"),
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn secrets_anywhere_take_the_scanners_path_and_come_out_redacted() {
    let secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123";
    let documents = [
        format!(r#"{{"schema_version": "ATIF-v1.8", "steps": [{{"message": "key {secret}"}}]}}"#),
        format!(r#"{{"schema_version": "ATIF-v1.8", "steps": [{{"message": "a\nb {secret}"}}]}}"#),
        format!(
            r#"{{"schema_version": "ATIF-v1.8", "steps": [{{"message": "\u0041 {secret}"}}]}}"#
        ),
        format!(r#"{{"schema_version": "ATIF-v1.8", "steps": [], "extra": {{"{secret}": 1}}}}"#),
        r#"{"schema_version": "ATIF-v1.8", "steps": [], "extra": {"api_key": "plain"}}"#.to_owned(),
        format!(r#"{{"steps": [[["deep", ["{secret}"]]]], "schema_version": "ATIF-v1.8"}}"#),
    ];
    let options = NormalizeOptions::default();
    for json in &documents {
        check(json);
        let written = fast(json.as_bytes(), &options).unwrap();
        assert!(!written.contains(secret), "{written}");
        assert!(written.contains("<redacted:"), "{written}");
        let (kept, report) = JsonDocument::parse_for(json.as_bytes(), &options)
            .unwrap()
            .normalize(&options)
            .unwrap();
        assert!(!report.is_empty(), "{json}");
        assert!(!kept.to_canonical_string().contains(secret));
    }
    // Without secrets, nothing is reported, whichever way the document was read.
    let plain = r#"{"schema_version": "ATIF-v1.8", "steps": [{"message": "a token of thanks"}]}"#;
    for document in
        [JsonDocument::parse(plain.as_bytes()), JsonDocument::parse_for(plain.as_bytes(), &options)]
    {
        assert!(document.unwrap().normalize(&options).unwrap().1.is_empty());
    }
}
