//! The normaliser on arbitrary bytes: the fast path reads exactly the JSON that
//! `atif-schema`'s strict reader reads, the fast path and the general path give the same text,
//! and normalising that text again changes nothing.
#![no_main]

use atif_normalize::{NormalizeOptions, normalize_json, normalize_owned, to_canonical_string};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let fast_reads = atif_normalize::JsonDocument::parse(data).is_ok();
    let strict_reads = atif_schema::parse_json(data).is_ok();
    assert_eq!(fast_reads, strict_reads, "the fast path and atif-schema's reader disagree");
    let options = NormalizeOptions::default();
    let mut fast = Vec::new();
    if normalize_json(data, &options, &mut fast).is_err() {
        return;
    }
    let value: serde_json::Value = serde_json::from_slice(data).expect("normalize_json read it");
    let general = normalize_owned(value, &options).expect("the fast path normalised it");
    assert_eq!(String::from_utf8_lossy(&fast), to_canonical_string(&general), "the two paths differ");
    let mut twice = Vec::new();
    normalize_json(&fast, &options, &mut twice).expect("normalised text normalises");
    assert_eq!(fast, twice, "normalising twice changed the text");
});
