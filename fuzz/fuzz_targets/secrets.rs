//! The secret scanner on arbitrary text: redacting is idempotent and never panics.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let scanner = atif_secrets::Scanner::new();
    if let Some(redacted) = scanner.redact_text(text) {
        assert_eq!(scanner.redact_text(&redacted), None, "a second pass changed {redacted:?}");
    }
});
