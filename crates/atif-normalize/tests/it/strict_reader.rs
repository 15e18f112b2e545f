//! The fast path's reader accepts exactly the JSON that `atif-schema`'s strict reader accepts,
//! so `atif normalize`, which reads a trajectory only once, through the fast path, refuses what
//! every other command refuses.

use atif_normalize::JsonDocument;
use atif_test_support::json_files_below;

use crate::corpus_dir;

/// Whether each reader accepts `bytes`, and what each says when it does not.
fn both(bytes: &[u8]) -> (Result<(), String>, Result<(), String>) {
    let fast = JsonDocument::parse(bytes).map(drop).map_err(|err| err.to_string());
    let strict = atif_schema::parse_json(bytes).map(drop).map_err(|err| err.to_string());
    (fast, strict)
}

fn assert_agree(bytes: &[u8], what: &str) {
    let (fast, strict) = both(bytes);
    assert_eq!(
        fast.is_ok(),
        strict.is_ok(),
        "{what}: fast path {fast:?}, strict reader {strict:?}"
    );
}

#[test]
fn both_readers_accept_and_refuse_the_same_text() {
    let depth = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let cases: Vec<(String, bool)> = vec![
        (r#"{"a": 18446744073709551615, "b": -9223372036854775808}"#.to_owned(), true),
        (r#"{"a": 18446744073709551616}"#.to_owned(), false),
        (r#"{"a": -9223372036854775809}"#.to_owned(), false),
        (r#"{"a": 100000000000000000000000}"#.to_owned(), false),
        (r#"{"a": 1e400}"#.to_owned(), false),
        (r#"{"a": 1e300, "b": -0, "c": 1.5E+3, "d": 100000000000000000000000.0}"#.to_owned(), true),
        (r#"{"a": 1, "a": 2}"#.to_owned(), false),
        (r#"{"a": {"b": 1, "c": {}, "b": 2}}"#.to_owned(), false),
        (r#"{"a": 1, "\u0061": 2}"#.to_owned(), false),
        ("\u{feff}{}".to_owned(), false),
        (r#"{"a": NaN}"#.to_owned(), false),
        (r#"{"a": -Infinity}"#.to_owned(), false),
        (r#"{"a": "\ud800"}"#.to_owned(), false),
        (r#"{"a": "\udc00\ud800"}"#.to_owned(), false),
        (r#"{"a": "\ud83d\ude00 \u00e9 \/ \" \\ \b\f\n\r\t"}"#.to_owned(), true),
        (r#"{"a": "\x"}"#.to_owned(), false),
        ("{\"a\": \"tab\tinside\"}".to_owned(), false),
        (r#"{"a": [1, 2,]}"#.to_owned(), false),
        (r#"{"a": 1} x"#.to_owned(), false),
        (r#"{"a": 01}"#.to_owned(), false),
        (r#"{"a": .5}"#.to_owned(), false),
        (r#"{"a": tru}"#.to_owned(), false),
        (" \r\n\t{} \n".to_owned(), true),
        (String::new(), false),
        ("   ".to_owned(), false),
        // At most 127 levels of arrays and objects, the root's included.
        (depth(127), true),
        (depth(128), false),
        (format!("{{\"a\": {}}}", depth(126)), true),
        (format!("{{\"a\": {}}}", depth(127)), false),
    ];
    for (text, accepted) in &cases {
        let (fast, strict) = both(text.as_bytes());
        assert_eq!(strict.is_ok(), *accepted, "the strict reader on {text:.60}: {strict:?}");
        assert_eq!(fast.is_ok(), *accepted, "the fast path on {text:.60}: {fast:?}");
    }
    for bytes in [&b"{\"a\": \"\xff\"}"[..], b"{\"a\": \"\xc3\"}", b"{\"a\": \"\xed\xa0\x80\"}"] {
        assert_agree(bytes, &format!("{bytes:?}"));
    }
}

#[test]
fn both_readers_agree_on_every_file_and_its_broken_copies() {
    let mut files = Vec::new();
    for crate_dir in ["atif-normalize", "atif-schema", "atif-golden", "atif-import"] {
        let fixtures = atif_test_support::workspace_path(&format!("crates/{crate_dir}/tests"));
        files.extend(json_files_below(&fixtures));
    }
    assert!(files.len() >= 20, "{} fixture files", files.len());
    if let Some(corpus) = corpus_dir() {
        files.extend(json_files_below(&corpus));
    }
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let name = path.display().to_string();
        assert_agree(&bytes, &name);
        // Cut short, and with a repeated key or a big integer before the last `}`.
        if let Some(end) = bytes.iter().rposition(|&byte| byte == b'}') {
            assert_agree(&bytes[..end], &format!("{name} cut short"));
            for tail in
                [&br#", "schema_version": "ATIF-v1.8"}"#[..], br#", "n": 99999999999999999999}"#]
            {
                let mut changed = bytes[..end].to_vec();
                changed.extend_from_slice(tail);
                assert_agree(&changed, &format!("{name} ending {}", String::from_utf8_lossy(tail)));
            }
        }
    }
}
