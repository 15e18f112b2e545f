//! Stale temporary files: those of dead writers go, those of live ones stay.

use atif_fs::{remove_stale_temp_files, stale_temp_files, write_atomic};

use crate::{dead_pid, file_names};

#[test]
fn a_write_removes_the_temp_files_of_dead_writers_and_keeps_live_ones() {
    let dir = tempfile::tempdir().unwrap();
    let dead = format!(".atif-{}-AbCdEf.tmp", dead_pid());
    let live = format!(".atif-{}-XyZ123.tmp", std::process::id());
    for name in [&dead, &live, &"unrelated.tmp".to_owned(), &".atif-notapid-x.tmp".to_owned()] {
        std::fs::write(dir.path().join(name), b"half a golden").unwrap();
    }
    assert_eq!(stale_temp_files(dir.path()).unwrap(), vec![dir.path().join(&dead)]);

    write_atomic(&dir.path().join("golden.json"), b"{}\n").unwrap();
    let mut expected = vec![
        live.clone(),
        ".atif-notapid-x.tmp".to_owned(),
        "golden.json".to_owned(),
        "unrelated.tmp".to_owned(),
    ];
    expected.sort();
    assert_eq!(file_names(dir.path()), expected);
}

#[test]
fn remove_stale_temp_files_says_what_it_removed_and_a_missing_folder_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let stale = dir.path().join(format!(".golden.json.{}.0.tmp", dead_pid()));
    std::fs::write(&stale, b"x").unwrap();
    assert_eq!(remove_stale_temp_files(dir.path()).unwrap(), vec![stale.clone()]);
    assert!(!stale.exists());
    assert!(remove_stale_temp_files(&dir.path().join("absent")).unwrap().is_empty());
}
