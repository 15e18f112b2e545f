//! `NormalizedDocument`, the borrowed tree of the fast path: the same Shapes, explanations and
//! reports as the functions on `serde_json::Value`s, for any pair of runs.

use atif_normalize::{
    DiffOptions, JsonDocument, NormalizeOptions, NormalizedDocument, ReportOptions, compare, diff,
    explain, render, report, shape,
};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::{call_step, corpus_dir, corpus_files, normalized, trajectory};

/// Asserts that reading `golden` and `actual` as JSON text into `NormalizedDocument`s gives
/// what normalising them as `Value`s gives: Shapes, explanation, report, and the full diff.
pub(crate) fn agree(golden: &Value, actual: &Value) {
    let options = NormalizeOptions::default();
    let (golden_text, actual_text) = (golden.to_string(), actual.to_string());
    let golden_doc =
        JsonDocument::parse(golden_text.as_bytes()).unwrap().normalize(&options).unwrap().0;
    let actual_doc =
        JsonDocument::parse(actual_text.as_bytes()).unwrap().normalize(&options).unwrap().0;
    let (golden_value, actual_value) = (normalized(golden), normalized(actual));

    let shapes = (shape(&golden_value), shape(&actual_value));
    assert_eq!((golden_doc.shape(), actual_doc.shape()), shapes);
    let deltas = diff(&shapes.0, &shapes.1, &DiffOptions::default());
    let changes = explain(&golden_value, &actual_value);
    let mut options = ReportOptions::new();
    options.set_max_places(2).set_full_command(Some("atif diff --full a b".to_owned()));
    let expected = report(&golden_value, &actual_value, &deltas, &options);
    // The one comparison every caller makes gives the same, whatever hashes it knew before.
    let comparison = compare(&golden_doc, &actual_doc, &DiffOptions::default());
    assert_eq!((comparison.golden_shape(), comparison.actual_shape()), (&shapes.0, &shapes.1));
    assert_eq!(comparison.deltas(), &deltas[..]);
    assert_eq!(comparison.changes(), &changes[..], "{golden}\n{actual}");
    assert_eq!(comparison.is_same(), deltas.is_empty());
    assert_eq!(comparison.report(&options), expected);
    // The diff it reports: the report's last section when cut, the whole unified diff when full.
    let cut = comparison.report_diff(&options);
    if deltas.is_empty() {
        assert!(expected.is_empty());
    } else {
        assert!(!cut.text.is_empty(), "{expected}");
        let section = format!("unified diff (golden -> actual){}:\n{}", cut.title, cut.text);
        assert!(expected.ends_with(&section), "{expected}\n---\n{section}");
    }
    options.set_full(true);
    let full = comparison.report_diff(&options);
    assert_eq!(full.text, render(&golden_value, &actual_value));
    assert!(full.title.is_empty());
    assert_eq!(golden_doc.member("schema_version"), golden_value.get("schema_version").cloned());

    // A document normalised from a `Value` is the same document.
    let (from_value, _) =
        NormalizedDocument::from_value(actual.clone(), &NormalizeOptions::default()).unwrap();
    assert_eq!(compare(&golden_doc, &from_value, &DiffOptions::default()).changes(), changes);
    assert_eq!(from_value.into_value(), actual_value);
}

#[test]
fn changes_of_every_kind_read_the_same_from_either_tree() {
    let steps = |n: u64| -> Vec<Value> {
        (1..=n).map(|i| call_step(i, "grep", &format!("c{i}"))).collect()
    };
    let golden = trajectory(json!(steps(4)));
    let mut inserted = steps(4);
    inserted.insert(2, call_step(9, "probe", "c9"));
    let mut escaped = steps(4);
    escaped[1]["message"] = json!("line one\nline \"two\"\t\u{1}é");
    escaped[3]["metrics"]["prompt_tokens"] = json!(-0.0);
    let mut outside = trajectory(json!(steps(4)));
    outside["agent"]["model_name"] = json!("model-b");
    outside["final_metrics"] = json!({"total_prompt_tokens": 7});
    for actual in [trajectory(json!(inserted)), trajectory(json!(escaped)), outside, golden.clone()]
    {
        agree(&golden, &actual);
        agree(&actual, &golden);
    }
}

#[test]
fn corpus_runs_read_the_same_from_either_tree() {
    let Some(atif) = corpus_dir() else { return };
    let docs: Vec<Value> = corpus_files(&atif, "valid")
        .iter()
        .filter_map(|path| serde_json::from_slice(&std::fs::read(path).unwrap()).ok())
        .filter(|doc: &Value| atif_normalize::normalize(doc, &NormalizeOptions::default()).is_ok())
        .collect();
    for pair in docs.windows(2) {
        agree(&pair[0], &pair[1]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn generated_pairs_read_the_same_from_either_tree(
        golden in crate::properties::trajectory_with_subagents(),
        actual in crate::properties::trajectory_with_subagents(),
    ) {
        agree(&golden, &actual);
    }
}
