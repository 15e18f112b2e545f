//! Building an envelope, writing it as canonical JSON and reading it back.

use atif_envelope::{Envelope, Error, Run, ToolOrder};
use atif_normalize::NormalizeOptions;
use serde_json::{Value, json};

use crate::{runs, trajectory};

#[test]
fn an_envelope_holds_each_fields_distribution_over_the_runs() {
    let batch = runs(4, |i| match i {
        0 | 1 => trajectory(&[&["read"], &["write"]], (100 + i as u64, 10), false),
        2 => trajectory(&[&["write"], &["read"]], (90, 12), false),
        _ => trajectory(&[&["read"]], (80, 9), true),
    });
    let envelope = Envelope::build(&batch, ToolOrder::Exact).unwrap();
    assert_eq!(envelope.runs(), 4);
    let variants: Vec<(u64, Vec<Vec<String>>)> =
        envelope.variants().iter().map(|v| (v.runs(), v.calls().to_vec())).collect();
    let calls = |steps: &[&[&str]]| -> Vec<Vec<String>> {
        steps.iter().map(|s| s.iter().map(|n| n.to_string()).collect()).collect()
    };
    assert_eq!(
        variants,
        vec![
            (2, calls(&[&["read"], &["write"]])),
            (1, calls(&[&["read"]])),
            (1, calls(&[&["write"], &["read"]])),
        ]
    );
    assert_eq!(envelope.samples("step_count").unwrap(), &[1, 2, 2, 2]);
    assert_eq!(envelope.samples("prompt_tokens").unwrap(), &[80, 90, 100, 101]);
    assert_eq!(envelope.tool_runs().get("read"), Some(&4));
    assert_eq!(envelope.tool_runs().get("write"), Some(&3));
    assert_eq!(envelope.crashed_runs(), 1);
    assert_eq!(envelope.passed_runs(), None);
    // The representative is the first run of its variant, normalised.
    let representative = envelope.variants()[0].representative();
    assert_eq!(representative["steps"][0]["metrics"]["prompt_tokens"], json!(100));
}

#[test]
fn any_order_groups_runs_that_call_the_same_tools_in_another_order() {
    let batch = runs(2, |i| match i {
        0 => trajectory(&[&["read"], &["write"]], (1, 1), false),
        _ => trajectory(&[&["write", "read"]], (1, 1), false),
    });
    let envelope = Envelope::build(&batch, ToolOrder::AnyOrder).unwrap();
    assert_eq!(envelope.variants().len(), 1);
    assert_eq!(envelope.variants()[0].runs(), 2);
    assert_eq!(Envelope::build(&batch, ToolOrder::Exact).unwrap().variants().len(), 2);
}

/// The variants `order` groups `steps` (one run each) into: (runs, calls) in the file's order.
fn check_variants(order: ToolOrder, steps: &[&[&[&str]]], expected: &[(u64, &[&[&str]])]) {
    let batch = runs(steps.len(), |i| trajectory(steps[i], (1, 1), false));
    let envelope = Envelope::build(&batch, order).unwrap();
    let found: Vec<(u64, Vec<Vec<String>>)> =
        envelope.variants().iter().map(|v| (v.runs(), v.calls().to_vec())).collect();
    let expected: Vec<(u64, Vec<Vec<String>>)> = expected
        .iter()
        .map(|(n, calls)| {
            (*n, calls.iter().map(|list| list.iter().map(|c| c.to_string()).collect()).collect())
        })
        .collect();
    assert_eq!(found, expected, "order {order}");
    // Each order's envelope reads back as written.
    assert_eq!(Envelope::from_json(&envelope.to_json()).unwrap(), envelope, "order {order}");
}

#[test]
fn in_order_groups_runs_by_their_sequence_of_calls_whatever_the_steps() {
    // Calls within one step are a multiset, listed by name: `grep, read` either way.
    let steps: &[&[&[&str]]] = &[
        &[&["read"], &["grep"]],
        &[&["read", "grep"]],
        &[&["grep"], &["read"]],
        &[&["read"], &["write"], &["grep"]],
        &[&[]],
    ];
    check_variants(
        ToolOrder::InOrder,
        steps,
        &[
            (2, &[&["grep", "read"]]),
            (1, &[]),
            (1, &[&["read", "grep"]]),
            (1, &[&["read", "write", "grep"]]),
        ],
    );
    let exact: &[(u64, &[&[&str]])] = &[
        (1, &[]),
        (1, &[&["grep"], &["read"]]),
        (1, &[&["grep", "read"]]),
        (1, &[&["read"], &["grep"]]),
        (1, &[&["read"], &["write"], &["grep"]]),
    ];
    check_variants(ToolOrder::Exact, steps, exact);
}

#[test]
fn subset_and_superset_group_runs_by_their_multiset_of_calls() {
    // An envelope's own runs are its variants; the looser modes only credit new runs to the
    // variant they match (tests/it/verdict.rs), so a run doing less is a variant of its own.
    let steps: &[&[&[&str]]] = &[
        &[&["read"], &["grep"]],
        &[&["grep"], &["read"]],
        &[&["read"], &["write"], &["grep"]],
        &[&["read"]],
    ];
    for order in [ToolOrder::AnyOrder, ToolOrder::Subset, ToolOrder::Superset] {
        check_variants(
            order,
            steps,
            &[(2, &[&["grep", "read"]]), (1, &[&["grep", "read", "write"]]), (1, &[&["read"]])],
        );
    }
}

#[test]
fn the_text_is_canonical_versioned_and_reads_back_the_same() {
    let mut batch = runs(3, |i| trajectory(&[&["read"]], (10 * i as u64, 1), false));
    for (i, run) in batch.iter_mut().enumerate() {
        run.set_passed(Some(i != 1));
    }
    let envelope = Envelope::build(&batch, ToolOrder::Exact).unwrap();
    let text = envelope.to_json();
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["envelope_version"], json!(1));
    assert_eq!(value["passed_runs"], json!(2));
    assert_eq!(text, format!("{}\n", atif_normalize::to_canonical_string(&value)));
    assert!(text.contains("\n  \"envelope_version\": 1,\n"), "{text}");
    assert_eq!(Envelope::from_json(&text).unwrap(), envelope);
}

#[test]
fn secrets_in_a_run_never_reach_the_envelope() {
    let mut doc = trajectory(&[&["read"]], (1, 1), false);
    doc["steps"][0]["message"] =
        json!("token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD");
    let run = Run::new("run 1", doc, &NormalizeOptions::default()).unwrap();
    let text = Envelope::build(&[run], ToolOrder::Exact).unwrap().to_json();
    assert!(!text.contains("sk-ant-api03"), "{text}");
    assert!(text.contains("<redacted:"), "{text}");
}

#[test]
fn building_needs_runs_and_consistent_outcomes() {
    assert!(matches!(Envelope::build(&[], ToolOrder::Exact), Err(Error::NoRuns)));
    let mut batch = runs(2, |_| trajectory(&[&["read"]], (1, 1), false));
    batch[0].set_passed(Some(true));
    let error = Envelope::build(&batch, ToolOrder::Exact).unwrap_err();
    assert_eq!(
        error.to_string(),
        "run `run 2` has no pass/fail outcome but other runs do; expected every run or none to have one"
    );
    let not_a_trajectory = Run::new("bad.json", json!([1]), &NormalizeOptions::default());
    assert_eq!(not_a_trajectory.unwrap_err().to_string(), "run `bad.json` cannot be normalised");
}

/// Reads `edit` applied to a good envelope's JSON and returns the error message.
fn check_invalid(edit: impl Fn(&mut Value), expected: &str) {
    let batch = runs(2, |_| trajectory(&[&["read"]], (1, 1), false));
    let mut value: Value =
        serde_json::from_str(&Envelope::build(&batch, ToolOrder::Exact).unwrap().to_json())
            .unwrap();
    edit(&mut value);
    let error = Envelope::from_json(&value.to_string()).unwrap_err();
    assert_eq!(error.to_string(), expected);
}

#[test]
fn a_malformed_envelope_is_refused_naming_the_pointer_and_what_was_expected() {
    check_invalid(
        |v| v["envelope_version"] = json!(2),
        "unsupported envelope_version 2; expected 1",
    );
    check_invalid(
        |v| v["step_count"] = json!([2]),
        "invalid envelope at `/step_count`: expected 2 samples (one per run), found 1",
    );
    check_invalid(
        |v| v["llm_calls"] = json!([3, 1]),
        "invalid envelope at `/llm_calls`: expected samples in ascending order",
    );
    check_invalid(
        |v| v["variants"][0]["runs"] = json!(5),
        "invalid envelope at `/variants`: expected variants' runs to add up to 2, found 5",
    );
    check_invalid(
        |v| v["crashed_runs"] = json!("none"),
        "invalid envelope at `/crashed_runs`: invalid type: string \"none\", expected u64",
    );
    check_invalid(
        |v| v["order"] = json!("sideways"),
        "invalid envelope at `/order`: unknown variant `sideways`, expected one of `exact`, `in-order`, `any-order`, `subset`, `superset`",
    );
    check_invalid(
        |v| v["variants"][0]["calls"] = json!([[]]),
        "invalid envelope at `/variants/0/calls`: expected one non-empty list of calls per step under order `exact`",
    );
    check_invalid(
        |v| {
            v["order"] = json!("subset");
            v["variants"][0]["calls"] = json!([["read", "grep"]]);
        },
        "invalid envelope at `/variants/0/calls`: expected at most one non-empty list of calls, sorted under order `subset`",
    );
    check_invalid(
        |v| {
            v["order"] = json!("in-order");
            v["variants"][0]["calls"] = json!([["read"], ["grep"]]);
        },
        "invalid envelope at `/variants/0/calls`: expected at most one non-empty list of calls under order `in-order`",
    );
    check_invalid(
        |v| {
            v["variants"][0]["runs"] = json!(1);
            let twin = v["variants"][0].clone();
            v["variants"].as_array_mut().unwrap().push(twin);
        },
        "invalid envelope at `/variants/1/calls`: expected each variant's calls once, found them in an earlier variant",
    );
    let error = Envelope::from_json("{").unwrap_err();
    assert!(error.to_string().starts_with("invalid envelope at the root: expected a JSON object"));
}
