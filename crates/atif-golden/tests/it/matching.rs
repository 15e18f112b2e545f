//! Match modes in `Settings`: a run that differs from its golden is judged by the modes, as
//! `atif check --sequence …` judges it, and fewer turns never pass.

use atif_golden::{Error, GoldenConfig, Mode, Outcome, ProjectConfig, check};
use atif_normalize::{Band, MatchOptions, SequenceMatch};
use serde_json::{Value, json};

use crate::{run, settings};

/// A run whose steps call `tools`, one a step, in that order, with no arguments.
fn calls(tools: &[&str]) -> Value {
    let mut value = run(tools.len(), "x", "a");
    for (step, tool) in value["steps"].as_array_mut().unwrap().iter_mut().zip(tools) {
        step["tool_calls"][0]["function_name"] = json!(tool);
        step["tool_calls"][0]["arguments"] = json!({});
    }
    value
}

fn modes(sequence: SequenceMatch) -> MatchOptions {
    let mut modes = MatchOptions::default();
    modes.set_sequence(sequence);
    modes
}

fn write_golden(dir: &std::path::Path, tools: &[&str]) -> std::path::PathBuf {
    let path = dir.join("golden.json");
    check(&path, calls(tools), &settings(Mode::Update)).unwrap();
    path
}

#[test]
fn any_order_passes_a_reordering_that_exact_and_in_order_fail_naming_what_the_mode_forbids() {
    let dir = tempfile::tempdir().unwrap();
    let golden = write_golden(dir.path(), &["grep", "read"]);
    let swapped = calls(&["read", "grep"]);

    let mut any_order = settings(Mode::Check);
    any_order.set_match_options(Some(modes(SequenceMatch::AnyOrder)));
    let outcome = check(&golden, swapped.clone(), &any_order).unwrap();
    assert!(matches!(outcome, Outcome::Matched { .. }), "{outcome:?}");

    // Without modes, the Shape comparison fails it.
    let err = check(&golden, swapped.clone(), &settings(Mode::Check)).unwrap_err();
    assert!(matches!(err, Error::BehaviourChanged { .. }), "{err}");

    let mut in_order = settings(Mode::Check);
    in_order.set_match_options(Some(modes(SequenceMatch::InOrder)));
    let Error::BehaviourChanged { deltas, report, .. } =
        check(&golden, swapped, &in_order).unwrap_err()
    else {
        panic!("expected a behaviour change");
    };
    assert!(!deltas.is_empty());
    assert!(report.starts_with("the run does not match its golden"), "{report}");
    assert!(deltas.iter().all(|delta| report.contains(delta.as_str())), "{report}");
}

#[test]
fn fewer_turns_fail_under_every_mode_and_an_extra_call_passes_only_where_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let golden = write_golden(dir.path(), &["grep", "read"]);
    let every = [
        SequenceMatch::Exact,
        SequenceMatch::InOrder,
        SequenceMatch::AnyOrder,
        SequenceMatch::Subset,
        SequenceMatch::Superset,
    ];
    for sequence in every {
        // A band wide enough for the extra step's tokens: only the sequence decides.
        let mut options = modes(sequence);
        let tokens = Band { absolute: 0, relative: 1.0 };
        options.set_bands(Band::default(), Band::default(), tokens);
        let mut with_modes = settings(Mode::Check);
        with_modes.set_match_options(Some(options));
        let short = check(&golden, calls(&["grep"]), &with_modes);
        assert!(short.is_err(), "{sequence:?}: a run missing a turn passed");
        let extra = check(&golden, calls(&["grep", "ls", "read"]), &with_modes);
        let allowed = matches!(sequence, SequenceMatch::InOrder | SequenceMatch::Superset);
        assert_eq!(extra.is_ok(), allowed, "{sequence:?}: {extra:?}");
    }
}

#[test]
fn the_project_files_sequence_key_sets_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let golden = write_golden(dir.path(), &["grep", "read"]);
    let file = dir.path().join("atif.toml");
    let project = ProjectConfig::parse("[defaults]\nsequence = \"any-order\"\n", &file).unwrap();
    let config: GoldenConfig = project.config_for(&golden);
    assert_eq!(config.match_options().map(|m| m.sequence()), Some(SequenceMatch::AnyOrder));
    let mut from_file = settings(Mode::Check);
    config.apply(&mut from_file).unwrap();
    assert!(check(&golden, calls(&["read", "grep"]), &from_file).is_ok());

    // A file without the keys leaves the Shape comparison, which fails the reordering.
    let plain = ProjectConfig::parse("[defaults]\n", &file).unwrap().config_for(&golden);
    assert!(plain.match_options().is_none());
    let mut shape_only = settings(Mode::Check);
    plain.apply(&mut shape_only).unwrap();
    assert!(check(&golden, calls(&["read", "grep"]), &shape_only).is_err());
}
