//! Integration tests of `atif-schema`, one module per area of the crate.
#![allow(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "tests fail loudly and print skip notices"
)]

mod builder;
mod field_table;
mod json_schema;
mod load;
mod types;
mod upgrade;
mod validate;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The ATIF trajectories of the shared corpus (its `atif` folder), or `None` after a skip
/// notice.
pub(crate) fn corpus_dir() -> Option<PathBuf> {
    atif_test_support::corpus("atif")
}

/// Every `*.json` file in `dir`, sorted, with its parsed value.
pub(crate) fn json_files(dir: &Path) -> Vec<(PathBuf, Value)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let value = serde_json::from_str(&text).unwrap();
            (path, value)
        })
        .collect()
}

/// The valid corpus files, or nothing (after a skip notice) without the corpus.
pub(crate) fn valid_corpus() -> Vec<(PathBuf, Value)> {
    corpus_dir().map(|dir| json_files(&dir.join("valid"))).unwrap_or_default()
}

/// Our own valid fixtures, in `tests/fixtures/valid/`.
pub(crate) fn valid_fixtures() -> Vec<(PathBuf, Value)> {
    json_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid"))
}
