//! The canonical text: byte-for-byte Python's `json.dumps(indent=2, sort_keys=True,
//! ensure_ascii=False) + "\n"`, checked against committed outputs and against python3 itself.

use std::path::{Path, PathBuf};
use std::process::Command;

use atif_normalize::{content_hash, to_canonical_string};
use serde_json::{Value, json};

use crate::{corpus_dir, corpus_files, normalized};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/canonical")
}

fn parse(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn check(input: Value, expected: &str) {
    assert_eq!(to_canonical_string(&input), expected);
}

/// The canonical text python3 writes for each document, or `None` (with a skip notice) when
/// python3 is not installed.
fn python_dumps(docs: &[Value]) -> Option<Vec<String>> {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipping: python3 not found, canonical text not compared with Python");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut args = Vec::new();
    for (idx, doc) in docs.iter().enumerate() {
        let path = dir.path().join(format!("{idx}.json"));
        // Compact serde_json output reads back exactly (float_roundtrip), so Python sees the
        // same values we do.
        std::fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
        args.push(path);
    }
    let script = "import json, sys\n\
        for path in sys.argv[1:]:\n\
        \x20   with open(path, encoding='utf-8') as f:\n\
        \x20       text = json.dumps(json.load(f), indent=2, sort_keys=True, ensure_ascii=False) + '\\n'\n\
        \x20   with open(path + '.py', 'w', encoding='utf-8', newline='') as f:\n\
        \x20       f.write(text)\n";
    let status = Command::new("python3").arg("-c").arg(script).args(&args).status().unwrap();
    assert!(status.success(), "python3 failed");
    Some(
        args.iter()
            .map(|path| std::fs::read_to_string(path.with_extension("json.py")).unwrap())
            .collect(),
    )
}

fn assert_matches_python(names: &[String], docs: &[Value]) {
    let Some(expected) = python_dumps(docs) else { return };
    for ((name, doc), expected) in names.iter().zip(docs).zip(expected) {
        assert_eq!(
            to_canonical_string(doc),
            expected,
            "canonical text of {name} differs from Python"
        );
    }
}

#[test]
fn small_documents_have_the_documented_layout() {
    check(json!({}), "{}\n");
    check(json!([]), "[]\n");
    check(json!("x"), "\"x\"\n");
    check(
        json!({"b": {}, "a": [1, {"c": null}]}),
        "{\n  \"a\": [\n    1,\n    {\n      \"c\": null\n    }\n  ],\n  \"b\": {}\n}\n",
    );
}

#[test]
fn our_fixtures_match_their_committed_expected_outputs() {
    for name in ["strings", "numbers"] {
        let doc = parse(&fixtures().join(format!("{name}.json")));
        let expected =
            std::fs::read_to_string(fixtures().join(format!("{name}.expected"))).unwrap();
        assert_eq!(to_canonical_string(&doc), expected, "fixture {name}");
    }
}

#[test]
fn our_fixtures_match_python_byte_for_byte() {
    let names = vec!["strings".to_owned(), "numbers".to_owned()];
    let docs: Vec<Value> =
        names.iter().map(|n| parse(&fixtures().join(format!("{n}.json")))).collect();
    assert_matches_python(&names, &docs);
}

#[test]
fn every_corpus_file_matches_python_byte_for_byte_raw_and_normalised() {
    let Some(atif) = corpus_dir() else { return };
    let mut names = Vec::new();
    let mut docs = Vec::new();
    for path in corpus_files(&atif, "valid").into_iter().chain(corpus_files(&atif, "invalid")) {
        let Ok(doc) = serde_json::from_slice::<Value>(&std::fs::read(&path).unwrap()) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if let Ok(norm) = atif_normalize::normalize(&doc, &Default::default()) {
            names.push(format!("{name} (normalised)"));
            docs.push(norm);
        }
        names.push(name);
        docs.push(doc);
    }
    assert!(!docs.is_empty());
    assert_matches_python(&names, &docs);
}

#[test]
fn integer_literals_serde_json_reads_as_floats_are_written_as_floats() {
    // The documented difference from Python, which keeps these as integers (`0`, every digit).
    let doc: Value = serde_json::from_str("[-0, 123456789012345678901234567890]").unwrap();
    assert_eq!(to_canonical_string(&doc), "[\n  -0.0,\n  1.2345678901234568e+29\n]\n");
}

#[test]
fn the_content_hash_is_twelve_hex_digits_of_the_sha256_of_the_canonical_text() {
    // `printf '{}\n' | sha256sum` prints ca3d163bab05…
    assert_eq!(content_hash(&json!({})), "ca3d163bab05");
    let doc = normalized(&crate::trajectory(json!([])));
    let hash = content_hash(&doc);
    assert_eq!(hash.len(), 12);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    assert_ne!(hash, content_hash(&json!({"other": 1})));
}

/// A document whose canonical text is several blocks of the streaming writers long.
fn large_document() -> Value {
    let steps: Vec<Value> = (0..400)
        .map(|idx| json!({"step_id": idx, "message": "é\n\"quoted\" ".repeat(40), "x": [1.5, null, {}]}))
        .collect();
    json!({"steps": steps})
}

#[test]
fn streaming_to_a_writer_gives_the_same_text_in_blocks() {
    let doc = large_document();
    let text = to_canonical_string(&doc);
    assert!(text.len() > 4 * 64 * 1024);
    let mut written = Vec::new();
    atif_normalize::write_canonical(&doc, &mut written).unwrap();
    assert_eq!(String::from_utf8(written).unwrap(), text);
}

#[test]
fn a_failing_writer_is_reported_and_the_rest_not_written() {
    struct FailAfter(usize);
    impl std::io::Write for FailAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::other("disk full"));
            }
            self.0 -= 1;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let err = atif_normalize::write_canonical(&large_document(), FailAfter(1)).unwrap_err();
    assert_eq!(err.to_string(), "disk full");
}

#[test]
fn the_hash_computed_block_by_block_is_the_hash_of_the_whole_text() {
    use sha2::{Digest, Sha256};
    let doc = large_document();
    let digest = Sha256::digest(to_canonical_string(&doc).as_bytes());
    let expected: String = digest[..6].iter().map(|byte| format!("{byte:02x}")).collect();
    assert_eq!(content_hash(&doc), expected);
}

#[test]
fn a_text_is_the_canonical_text_of_a_document_only_when_every_byte_matches() {
    let doc = large_document();
    let text = to_canonical_string(&doc).into_bytes();
    assert!(atif_normalize::is_canonical_text_of(&doc, &text));
    // A difference in the first block, in a later block, in the last byte, and a text that is
    // one byte too long or too short.
    for at in [10, 3 * 64 * 1024 + 7, text.len() - 1] {
        let mut changed = text.clone();
        changed[at] ^= 1;
        assert!(!atif_normalize::is_canonical_text_of(&doc, &changed), "changed at {at}");
    }
    let mut longer = text.clone();
    longer.push(b'\n');
    assert!(!atif_normalize::is_canonical_text_of(&doc, &longer));
    assert!(!atif_normalize::is_canonical_text_of(&doc, &text[..text.len() - 1]));
    assert!(!atif_normalize::is_canonical_text_of(&doc, b""));
}
