//! Tests of atomic writes under concurrency, through `atif_fs::write_atomic` and `check`.

use std::sync::atomic::{AtomicBool, Ordering};

use atif_fs::write_atomic;
use atif_golden::review::{accept_pending, pending_path, reject_pending};
use atif_golden::{Mode, Outcome, check};

use crate::{file_names, run, settings};

#[test]
fn concurrent_readers_only_ever_see_the_old_or_the_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.json");
    // Big enough that a non-atomic write would be observed half done.
    let old = "o".repeat(1 << 20);
    let new = "n".repeat(1 << 20);
    write_atomic(&path, old.as_bytes()).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let mut reads = 0;
                while !done.load(Ordering::Relaxed) || reads == 0 {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(text == old || text == new, "a partial file of {} bytes", text.len());
                    // Whatever else is in the folder mid-write is a hidden temporary file
                    // named with the writer's process id.
                    let temp = format!(".atif-{}-", std::process::id());
                    for name in file_names(dir.path()) {
                        assert!(name == "g.json" || name.starts_with(&temp), "{name}");
                    }
                    reads += 1;
                }
            });
        }
        for round in 0..40 {
            let contents = if round % 2 == 0 { &new } else { &old };
            write_atomic(&path, contents.as_bytes()).unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });
    assert_eq!(file_names(dir.path()), ["g.json"]);
}

#[test]
fn thirty_two_threads_updating_thirty_two_goldens_all_land_intact() {
    let dir = tempfile::tempdir().unwrap();
    let golden_dir = dir.path().join("tests/golden");
    std::thread::scope(|scope| {
        for idx in 0..32 {
            let golden_dir = &golden_dir;
            scope.spawn(move || {
                let path = golden_dir.join(format!("test_{idx}.json"));
                let outcome =
                    check(&path, run(idx + 1, "grep", "x"), &settings(Mode::Update)).unwrap();
                assert_eq!(outcome, Outcome::Created { path });
            });
        }
    });
    assert_eq!(file_names(&golden_dir).len(), 32);
    for idx in 0..32 {
        let path = golden_dir.join(format!("test_{idx}.json"));
        let outcome = check(&path, run(idx + 1, "grep", "y"), &settings(Mode::Check)).unwrap();
        assert_eq!(outcome, Outcome::Matched { path });
    }
}

#[test]
fn accepting_a_pending_file_moves_it_over_the_golden_and_rejecting_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    check(&golden, run(2, "grep", "a"), &settings(Mode::Review)).unwrap_err();
    let pending = pending_path(&golden);
    assert_eq!(accept_pending(&pending).unwrap(), golden);
    assert_eq!(file_names(dir.path()), ["g.json"]);
    assert!(matches!(
        check(&golden, run(2, "grep", "a"), &settings(Mode::Check)),
        Ok(Outcome::Matched { .. })
    ));

    check(&golden, run(3, "grep", "a"), &settings(Mode::Review)).unwrap_err();
    reject_pending(&pending).unwrap();
    assert_eq!(file_names(dir.path()), ["g.json"]);
    let err = accept_pending(&golden).unwrap_err();
    assert!(err.to_string().starts_with("cannot accept "), "{err}");
}

#[test]
fn a_pending_file_that_is_not_a_trajectory_is_never_accepted_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.json");
    check(&golden, run(1, "grep", "a"), &settings(Mode::Update)).unwrap();
    let before = std::fs::read(&golden).unwrap();
    let pending = pending_path(&golden);
    std::fs::write(&pending, r#"{"hello": "world"}"#).unwrap();
    let message = accept_pending(&pending).unwrap_err().to_string();
    assert!(message.starts_with(&format!("{}: /schema_version", pending.display())), "{message}");
    assert_eq!(std::fs::read(&golden).unwrap(), before, "the golden is left alone");
    assert!(pending.exists(), "the pending file stays for a look");
}
