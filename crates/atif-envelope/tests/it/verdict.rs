//! The verdict on crafted runs: each field, Holm's correction, inconclusive, pass@k.

use atif_envelope::{Conclusion, Envelope, ToolOrder, VerdictOptions, compare};
use serde_json::json;

use crate::{runs, trajectory};

fn golden(n: usize) -> Envelope {
    let batch = runs(n, |i| trajectory(&[&["read"]], (100 + (i % 5) as u64, 10), false));
    Envelope::build(&batch, ToolOrder::Exact).unwrap()
}

#[test]
fn an_extra_tool_in_most_runs_is_changed_naming_the_effect_and_the_runs() {
    let batch = runs(10, |i| match i {
        0 => trajectory(&[&["read"]], (100, 10), false),
        _ => trajectory(&[&["read"], &["grep"]], (100, 10), false),
    });
    let verdict = compare(&golden(10), &batch, &VerdictOptions::default()).unwrap();
    assert_eq!(verdict.verdict, Conclusion::Changed);
    let grep = verdict.fields.iter().find(|f| f.field == "tool_runs.grep").unwrap();
    assert_eq!(grep.verdict, Conclusion::Changed);
    assert_eq!(grep.effect, "`grep` called in 9/10 runs, was 0/10");
    assert!(grep.p_value < 0.001, "{}", grep.p_value);
    assert_eq!(grep.runs.len(), 9);
    assert!(!grep.runs.contains(&"run 1".to_owned()));
    let text = verdict.to_string();
    assert!(text.starts_with("changed: "), "{text}");
    assert!(text.contains("tool_runs.grep: `grep` called in 9/10 runs, was 0/10 (p = "), "{text}");
    // The one-screen report names the first five runs and counts the rest; JSON names them all.
    assert!(text.contains("; runs: run 2, run 3, run 4, run 5, run 6 and 4 more\n"), "{text}");
    // Untouched fields are listed as such.
    let read = verdict.fields.iter().find(|f| f.field == "tool_runs.read").unwrap();
    assert_eq!(read.verdict, Conclusion::NoClearChange);
    assert_eq!(read.p_value, 1.0);
}

#[test]
fn counts_that_move_are_changed_with_their_medians() {
    let batch = runs(20, |i| trajectory(&[&["read"]], (200 + (i % 5) as u64, 10), false));
    let verdict = compare(&golden(20), &batch, &VerdictOptions::default()).unwrap();
    let tokens = verdict.fields.iter().find(|f| f.field == "prompt_tokens").unwrap();
    assert_eq!(tokens.verdict, Conclusion::Changed);
    assert_eq!(tokens.effect, "median 202 prompt tokens, was 102 (range 200–204, was 100–104)");
    assert_eq!(tokens.golden, json!({"median": 102.0, "min": 100, "max": 104}));
    assert_eq!(tokens.runs.len(), 20);
    let completion = verdict.fields.iter().find(|f| f.field == "completion_tokens").unwrap();
    assert_eq!(completion.verdict, Conclusion::NoClearChange);
}

#[test]
fn crashes_and_failures_are_rates() {
    let mut batch = runs(20, |i| trajectory(&[&["read"]], (100 + (i % 5) as u64, 10), i < 12));
    for (i, run) in batch.iter_mut().enumerate() {
        run.set_passed(Some(i >= 12));
    }
    let mut golden_runs = runs(20, |i| trajectory(&[&["read"]], (100 + (i % 5) as u64, 10), false));
    for run in &mut golden_runs {
        run.set_passed(Some(true));
    }
    let golden = Envelope::build(&golden_runs, ToolOrder::Exact).unwrap();
    let verdict = compare(&golden, &batch, &VerdictOptions::default()).unwrap();
    let crash = verdict.fields.iter().find(|f| f.field == "crash_rate").unwrap();
    assert_eq!(
        (crash.verdict, crash.effect.as_str()),
        (Conclusion::Changed, "crashed in 12/20 runs, was 0/20")
    );
    let pass = verdict.fields.iter().find(|f| f.field == "pass_rate").unwrap();
    assert_eq!(
        (pass.verdict, pass.effect.as_str()),
        (Conclusion::Changed, "passed 8/20 runs, was 20/20")
    );
    assert_eq!(pass.runs.len(), 12, "the failing runs: {:?}", pass.runs);
    // pass@1 is the pass rate; pass^k falls with k, pass@k rises.
    let at = verdict.pass_at_k.as_ref().unwrap();
    let hat = verdict.pass_hat_k.as_ref().unwrap();
    assert!((at[&1] - 0.4).abs() < 1e-12 && (hat[&1] - 0.4).abs() < 1e-12);
    assert!(at[&10] > at[&5] && hat[&10] < hat[&5]);
    assert!(verdict.to_string().contains("pass@1 0.40"), "{verdict}");
}

#[test]
fn the_same_runs_give_no_clear_change_and_too_few_runs_are_inconclusive() {
    let same = runs(20, |i| trajectory(&[&["read"]], (100 + (i % 5) as u64, 10), false));
    let verdict = compare(&golden(20), &same, &VerdictOptions::default()).unwrap();
    assert_eq!(verdict.verdict, Conclusion::NoClearChange);
    assert!(verdict.fields.iter().all(|f| f.verdict == Conclusion::NoClearChange));

    let few = runs(5, |i| trajectory(&[&["read"]], (100 + i as u64, 10), false));
    let verdict = compare(&golden(20), &few, &VerdictOptions::default()).unwrap();
    assert_eq!(verdict.verdict, Conclusion::Inconclusive);
    assert_eq!(verdict.runs_needed, 14);
    assert!(
        verdict.to_string().starts_with(
            "inconclusive: no field moved, but 5 runs per side cannot reliably see a tool's rate move from 10% to 60% (80% power at α = 0.05); 14 runs would"
        ),
        "{verdict}"
    );
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(json["verdict"], json!("inconclusive"));
    assert_eq!(json["runs"], json!(5));
    for key in ["field", "verdict", "golden", "actual", "p_value", "effect"] {
        assert!(json["fields"][0].get(key).is_some(), "{key} missing from {json}");
    }
}

#[test]
fn holm_keeps_a_borderline_field_from_being_called_changed() {
    // 0/10 against 5/10 gives p ≈ 0.033: below α alone, but not after Holm's correction over
    // the three fields that vary (tool_runs.grep, tool_sequence and step_count).
    let batch = runs(10, |i| match i {
        0..5 => trajectory(&[&["read"], &["grep"]], (100 + (i % 5) as u64, 10), false),
        _ => trajectory(&[&["read"]], (100 + (i % 5) as u64, 10), false),
    });
    let verdict = compare(&golden(10), &batch, &VerdictOptions::default()).unwrap();
    let grep = verdict.fields.iter().find(|f| f.field == "tool_runs.grep").unwrap();
    assert!(grep.p_value < 0.05 && grep.p_holm > 0.05, "{grep:?}");
    assert_ne!(verdict.verdict, Conclusion::Changed);
}

#[test]
fn the_verdict_is_seeded() {
    let batch = runs(12, |i| match i % 3 {
        0 => trajectory(&[&["write"], &["read"]], (100, 10), false),
        _ => trajectory(&[&["read"]], (100, 10), false),
    });
    let options = VerdictOptions::default();
    let first = compare(&golden(12), &batch, &options).unwrap();
    let second = compare(&golden(12), &batch, &options).unwrap();
    assert_eq!(first, second);
    let sequence = first.fields.iter().find(|f| f.field == "tool_sequence").unwrap();
    let other = compare(&golden(12), &batch, VerdictOptions::new().set_seed(99)).unwrap();
    let reseeded = other.fields.iter().find(|f| f.field == "tool_sequence").unwrap();
    assert_ne!(sequence.p_value, reseeded.p_value, "another seed draws other relabellings");
}

#[test]
fn any_order_envelopes_do_not_see_a_reordering() {
    let ordered = runs(20, |_| trajectory(&[&["read"], &["write"]], (100, 10), false));
    let swapped = runs(20, |_| trajectory(&[&["write"], &["read"]], (100, 10), false));
    let any = Envelope::build(&ordered, ToolOrder::AnyOrder).unwrap();
    let exact = Envelope::build(&ordered, ToolOrder::Exact).unwrap();
    let options = VerdictOptions::default();
    assert_eq!(compare(&any, &swapped, &options).unwrap().verdict, Conclusion::NoClearChange);
    let verdict = compare(&exact, &swapped, &options).unwrap();
    assert_eq!(verdict.verdict, Conclusion::Changed);
    let sequence = verdict.fields.iter().find(|f| f.field == "tool_sequence").unwrap();
    assert_eq!(sequence.verdict, Conclusion::Changed);
}

/// The verdict on 20 new runs calling `new` (one step per call) against an envelope of 20
/// runs calling `golden`, grouped by `order`: the whole verdict and the `tool_sequence` field's.
fn sequence_verdict(order: ToolOrder, golden: &[&str], new: &[&str]) -> (Conclusion, Conclusion) {
    let make = |calls: &[&str]| {
        let steps: Vec<&[&str]> = calls.iter().map(std::slice::from_ref).collect();
        runs(20, |_| trajectory(&steps, (100, 10), false))
    };
    let envelope = Envelope::build(&make(golden), order).unwrap();
    let verdict = compare(&envelope, &make(new), &VerdictOptions::default()).unwrap();
    let sequence = verdict.fields.iter().find(|f| f.field == "tool_sequence").unwrap();
    (verdict.verdict, sequence.verdict)
}

#[test]
fn each_order_credits_a_new_run_to_the_variant_its_mode_would_pass() {
    use Conclusion::{Changed, NoClearChange};
    use ToolOrder::{AnyOrder, Exact, InOrder, Subset, Superset};
    let (read_grep, grep_read) = (&["read", "grep"][..], &["grep", "read"][..]);
    let (interleaved, less) = (&["read", "ls", "grep"][..], &["read"][..]);
    // (order, envelope's calls, new runs' calls, whole verdict, tool_sequence's verdict). A new
    // tool is always seen (tool_runs.ls), and so is doing less (step_count, tool_runs.grep),
    // even where the mode lets the sequence pass.
    let cases = [
        (Exact, read_grep, grep_read, Changed, Changed),
        (InOrder, read_grep, grep_read, Changed, Changed),
        (AnyOrder, read_grep, grep_read, NoClearChange, NoClearChange),
        (Subset, read_grep, grep_read, NoClearChange, NoClearChange),
        (Superset, read_grep, grep_read, NoClearChange, NoClearChange),
        (Exact, read_grep, interleaved, Changed, Changed),
        (InOrder, read_grep, interleaved, Changed, NoClearChange),
        (AnyOrder, read_grep, interleaved, Changed, Changed),
        (Subset, read_grep, interleaved, Changed, Changed),
        (Superset, read_grep, interleaved, Changed, NoClearChange),
        (InOrder, read_grep, less, Changed, Changed),
        (Subset, read_grep, less, Changed, NoClearChange),
        (Superset, read_grep, less, Changed, Changed),
    ];
    for (order, golden, new, whole, sequence) in cases {
        let found = sequence_verdict(order, golden, new);
        assert_eq!(found, (whole, sequence), "{order}: {golden:?} -> {new:?}");
    }
}

#[test]
fn a_new_run_counts_as_the_most_specific_variant_its_mode_passes() {
    // The envelope: half the runs `read, grep`, half `read, write, grep`. Under in-order a new
    // run `read, write, ls, grep` passes both; it counts as the longer, so the variants' shares
    // stay where they were and only the new tool moves.
    let golden_runs = runs(20, |i| match i % 2 {
        0 => trajectory(&[&["read"], &["grep"]], (100, 10), false),
        _ => trajectory(&[&["read"], &["write"], &["grep"]], (100, 10), false),
    });
    let new_runs = runs(20, |i| match i % 2 {
        0 => trajectory(&[&["read"], &["grep"]], (100, 10), false),
        _ => trajectory(&[&["read"], &["write"], &["ls"], &["grep"]], (100, 10), false),
    });
    let envelope = Envelope::build(&golden_runs, ToolOrder::InOrder).unwrap();
    let verdict = compare(&envelope, &new_runs, &VerdictOptions::default()).unwrap();
    let sequence = verdict.fields.iter().find(|f| f.field == "tool_sequence").unwrap();
    assert_eq!(sequence.actual, json!({"read, grep": 10, "read, write, grep": 10}));
    assert_eq!(sequence.p_value, 1.0);
    let moved: Vec<&str> = verdict
        .fields
        .iter()
        .filter(|f| f.verdict == Conclusion::Changed)
        .map(|f| f.field.as_str())
        .collect();
    assert_eq!(moved, ["tool_runs.ls"], "{verdict}");
    assert!(verdict.to_string().contains("grouped as variants by order `in-order`"), "{verdict}");
}
