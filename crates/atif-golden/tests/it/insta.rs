//! Tests of the insta bridge (cargo feature `insta`): the snapshot is the canonical text.

use atif_golden::{Settings, assert_trajectory_snapshot, canonical_text};

use crate::macros::on_test_thread;
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

#[test]
fn a_value_that_is_not_a_trajectory_panics_with_the_normaliser_reason() {
    let message = on_test_thread("suite::not_a_trajectory", || {
        assert_trajectory_snapshot!(serde_json::json!([1, 2]));
    })
    .unwrap();
    assert_eq!(
        message,
        "cannot normalise the actual trajectory: not an ATIF trajectory at the root: expected a \
         trajectory object, found an array"
    );
}
