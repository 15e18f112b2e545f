//! The loader's check without the tree agrees with the strict parse on real files.

use std::path::Path;

use atif_test_support::json_files_below;

/// What `parse_trajectory` and `check_trajectory_bytes` say of `bytes`, as text.
fn both(bytes: &[u8]) -> (String, String) {
    let parsed = atif_schema::parse_trajectory(bytes, "input").map(drop);
    let checked = atif_schema::support::check_trajectory_bytes(bytes, "input");
    (format!("{parsed:?}"), format!("{checked:?}"))
}

#[test]
fn the_check_without_the_tree_agrees_with_the_parse_on_every_file() {
    let mut files = json_files_below(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"));
    let fixtures = files.len();
    if let Some(corpus) = crate::corpus_dir() {
        files.extend(json_files_below(&corpus));
    }
    assert!(fixtures >= 7, "{fixtures} fixtures");
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let (parsed, checked) = both(&bytes);
        assert_eq!(parsed, checked, "{}", path.display());
        // Our valid fixtures are accepted, so the agreement above is not only on refusals.
        if path.parent().is_some_and(|dir| dir.ends_with("fixtures/valid")) {
            assert_eq!(parsed, "Ok(())", "{}", path.display());
        }
        // The same document with a repeated key in its last step, and cut short.
        if let Some(end) = bytes.iter().rposition(|&byte| byte == b'}') {
            let mut repeated = bytes[..end].to_vec();
            repeated.extend_from_slice(br#", "schema_version": "ATIF-v1.8"}"#);
            let (parsed, checked) = both(&repeated);
            assert_eq!(parsed, checked, "{} with a repeated key", path.display());
            let (parsed, checked) = both(&bytes[..end]);
            assert_eq!(parsed, checked, "{} cut short", path.display());
        }
    }
}
