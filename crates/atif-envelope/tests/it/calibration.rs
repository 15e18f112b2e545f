//! The verdict's error rates, measured on runs drawn from the fake provider's seeded sampling
//! model (`atif_fake_provider::Sampling`): how often an unchanged agent is called `changed`
//! (at most α + 0.03), how often a real shift is seen, and what a reordering or a missing turn
//! does under each tool order.

use atif_envelope::{Conclusion, Envelope, Run, ToolOrder, VerdictOptions, compare};
use atif_fake_provider::Sampling;
use serde_json::Value;

use crate::trajectory;

/// The tools the agent offers: the sampling provider calls `read` then `grep`, with `write`
/// between them as its extra call.
const TOOLS: [&str; 3] = ["read", "grep", "write"];

const NOISY: Sampling = Sampling { seed: 0, extra: 0.1, swap: 0.3, fail: 0.05, token_band: 0.1 };

/// The trajectory of conversation `conversation` of a provider sampling as `sampling`: one
/// agent step per call, then the final answer; a failed conversation crashes after its first
/// call. Tokens are the provider's (100 + 10 per message in, the reply's length out) scaled by
/// the conversation's factor.
fn sample(sampling: Sampling, conversation: u64) -> Value {
    let plan = sampling.plan(conversation);
    let calls = sampling.calls(&plan, &TOOLS);
    let mut steps: Vec<&[&str]> = calls.iter().map(std::slice::from_ref).collect();
    steps.push(&[]);
    if plan.fail {
        steps.truncate(1);
    }
    let turns = steps.len() as u64;
    let prompt: u64 = (0..turns).map(|turn| 110 + 20 * turn).sum();
    let scale = |count: u64| (count as f64 * plan.token_factor).round() as u64;
    trajectory(&steps, (scale(prompt), scale(12 * turns)), plan.fail)
}

fn batch(sampling: Sampling, n: usize) -> Vec<Run> {
    let options = atif_normalize::NormalizeOptions::default();
    (0..n)
        .map(|i| {
            let run = sample(sampling, i as u64);
            Run::new(&format!("run {}", i + 1), run, &options).unwrap()
        })
        .collect()
}

/// Over `seeds` seeds, how often `n` new runs of `actual` are called `changed` against an
/// envelope of `n_golden` runs of `golden` (each side drawn with its own seed).
fn changed_rate(
    (golden, n_golden): (Sampling, usize),
    (actual, n): (Sampling, usize),
    order: ToolOrder,
    seeds: u64,
) -> f64 {
    let changed = (0..seeds)
        .filter(|&seed| {
            let golden = Sampling { seed: 2 * seed, ..golden };
            let actual = Sampling { seed: 2 * seed + 1, ..actual };
            let envelope = Envelope::build(&batch(golden, n_golden), order).unwrap();
            let runs = batch(actual, n);
            let options = VerdictOptions::new().set_seed(seed).clone();
            compare(&envelope, &runs, &options).unwrap().verdict == Conclusion::Changed
        })
        .count();
    changed as f64 / seeds as f64
}

#[test]
fn an_unchanged_agent_is_called_changed_at_most_alpha_plus_three_points_of_the_time() {
    let cases = [
        (ToolOrder::Exact, 20),
        (ToolOrder::InOrder, 20),
        (ToolOrder::AnyOrder, 20),
        (ToolOrder::Subset, 20),
        (ToolOrder::Superset, 20),
        (ToolOrder::Exact, 40),
    ];
    for (order, n_golden) in cases {
        let rate = changed_rate((NOISY, n_golden), (NOISY, 20), order, 200);
        eprintln!("false-positive rate ({order}, 200 seeds, {n_golden} + 20 runs): {rate:.3}");
        assert!(rate <= 0.05 + 0.03, "false-positive rate {rate} under {order}");
    }
}

#[test]
fn an_extra_tool_moving_from_ten_to_sixty_percent_is_seen_with_twenty_runs() {
    let moved = Sampling { extra: 0.6, ..NOISY };
    // 20 new runs against an envelope of 40: with an envelope of only 20, no exact test of a
    // 2×2 table reaches 90% once α is shared by two fields (Boschloo's, the most powerful,
    // reaches 0.894 at α/2; Fisher's 0.846), so docs/live.md advises recording 40.
    let power = changed_rate((NOISY, 40), (moved, 20), ToolOrder::Exact, 200);
    eprintln!("power (extra tool 0.1 -> 0.6, 200 seeds, 40 + 20 runs): {power:.3}");
    assert!(power >= 0.9, "power {power}");
    let power = changed_rate((NOISY, 20), (moved, 20), ToolOrder::Exact, 200);
    eprintln!("power (extra tool 0.1 -> 0.6, 200 seeds, 20 + 20 runs): {power:.3}");
    assert!(power >= 0.6, "power {power}");
}

#[test]
fn swapped_calls_are_never_changed_in_any_order_and_always_changed_in_exact() {
    // A frozen tape: every run the same but for the order of the two calls. The orders that
    // compare multisets never see it; those that compare sequences always do.
    let frozen = Sampling { extra: 0.0, swap: 0.0, fail: 0.0, token_band: 0.0, ..NOISY };
    let swapped = Sampling { swap: 1.0, ..frozen };
    let orders = [
        (ToolOrder::AnyOrder, 0.0),
        (ToolOrder::Subset, 0.0),
        (ToolOrder::Superset, 0.0),
        (ToolOrder::Exact, 1.0),
        (ToolOrder::InOrder, 1.0),
    ];
    for (order, expected) in orders {
        let rate = changed_rate((frozen, 20), (swapped, 20), order, 50);
        assert_eq!(rate, expected, "{order}");
    }
}

#[test]
fn runs_missing_a_turn_are_changed_in_every_order() {
    // Every new run fails after its first call: a turn (and the answer) is missing.
    let frozen = Sampling { extra: 0.0, swap: 0.0, fail: 0.0, ..NOISY };
    let short = Sampling { fail: 1.0, ..frozen };
    let orders = [
        ToolOrder::Exact,
        ToolOrder::InOrder,
        ToolOrder::AnyOrder,
        ToolOrder::Subset,
        ToolOrder::Superset,
    ];
    for order in orders {
        assert_eq!(changed_rate((frozen, 20), (short, 20), order, 50), 1.0, "{order}");
    }
}
