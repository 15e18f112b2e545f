//! Each importer on arbitrary bytes: a trajectory or an error naming the line, never a panic.
//! The input's length picks the importer (every format forced, or detection), so every seed is
//! used whole and mutations reach every format.
#![no_main]

use atif_import::{Format, ImportOptions, import};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut options = ImportOptions::default();
    let pick = data.len() % (Format::ALL.len() + 1);
    options.set_format(Format::ALL.get(pick).copied());
    if let Ok(imported) = import(data, &options) {
        let again = atif_secrets::Scanner::new().scan_value(&imported.trajectory());
        assert!(again.is_empty(), "an imported trajectory still holds secrets: {again}");
    }
});
