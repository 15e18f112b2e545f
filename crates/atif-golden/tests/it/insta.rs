//! Tests of the insta bridge (cargo feature `insta`): the snapshot is the canonical text.

use atif_golden::{Settings, assert_trajectory_snapshot, canonical_text};

use crate::run;

#[test]
fn a_trajectory_reaches_insta_as_its_normalised_canonical_text() {
    // Runs that differ only in volatile data produce one snapshot text.
    let first = canonical_text(&run(2, "grep", "a"), &Settings::new()).unwrap();
    let second = canonical_text(&run(2, "grep", "b"), &Settings::new()).unwrap();
    assert_eq!(first, second);
    assert!(!first.contains("session-a"));
    assert_trajectory_snapshot!(run(2, "grep", "b"));
}
