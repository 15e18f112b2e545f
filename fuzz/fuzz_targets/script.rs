//! The replay script reader on arbitrary bytes: a script or an error naming where, never a
//! panic; a script read, redacted and written reads back.
#![no_main]

use std::path::Path;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(script) = atif_replay::parse_script(data, Path::new("fuzz.script.json")) else { return };
    let redacted = atif_replay::redact_script(&script, &[]).expect("default patterns compile");
    let text = serde_json::to_vec(&redacted).expect("a script serialises");
    atif_replay::parse_script(&text, Path::new("again.script.json")).expect("a written script reads back");
});
