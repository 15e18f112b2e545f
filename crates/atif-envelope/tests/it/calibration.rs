//! The verdict's error rates, measured on a seeded model of a sampling agent: how often it
//! calls an unchanged agent `changed` (at most α + 0.03), and how often it sees a real shift.

use atif_envelope::{Conclusion, Envelope, Run, ToolOrder, VerdictOptions, compare};
use serde_json::Value;

use crate::trajectory;

/// A sampling agent: it reads then writes, and per run, with these probabilities, also greps
/// (`extra`), writes before reading (`swap`) or crashes after its first step (`fail`); its
/// token counts vary uniformly within ±`band` of 1,000 and 100.
#[derive(Clone, Copy)]
struct Model {
    extra: f64,
    swap: f64,
    fail: f64,
    band: f64,
}

const NOISY: Model = Model { extra: 0.1, swap: 0.3, fail: 0.05, band: 0.1 };

/// SplitMix64, so every seed draws the same runs on every machine.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn sample(model: Model, rng: &mut Rng) -> Value {
    let mut steps: Vec<&[&str]> = vec![&["read"], &["write"]];
    if rng.uniform() < model.swap {
        steps.swap(0, 1);
    }
    if rng.uniform() < model.extra {
        steps.insert(1, &["grep"]);
    }
    let crashed = rng.uniform() < model.fail;
    if crashed {
        steps.truncate(1);
    }
    let mut vary = |base: f64| (base * (1.0 + model.band * (2.0 * rng.uniform() - 1.0))) as u64;
    let tokens = (vary(1000.0), vary(100.0));
    trajectory(&steps, tokens, crashed)
}

fn batch(model: Model, n: usize, rng: &mut Rng) -> Vec<Run> {
    let options = atif_normalize::NormalizeOptions::default();
    (0..n)
        .map(|i| Run::new(&format!("run {}", i + 1), &sample(model, rng), &options).unwrap())
        .collect()
}

/// Over `seeds` seeds, how often `n` new runs of `actual` are called `changed` against an
/// envelope of `n_golden` runs of `golden`.
fn changed_rate(
    (golden, n_golden): (Model, usize),
    (actual, n): (Model, usize),
    order: ToolOrder,
    seeds: u64,
) -> f64 {
    let mut changed = 0;
    for seed in 0..seeds {
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xA7);
        let envelope = Envelope::build(&batch(golden, n_golden, &mut rng), order).unwrap();
        let runs = batch(actual, n, &mut rng);
        let verdict = compare(&envelope, &runs, VerdictOptions::new().set_seed(seed)).unwrap();
        if verdict.verdict == Conclusion::Changed {
            changed += 1;
        }
    }
    changed as f64 / seeds as f64
}

#[test]
fn an_unchanged_agent_is_called_changed_at_most_alpha_plus_three_points_of_the_time() {
    for (order, n_golden) in
        [(ToolOrder::Exact, 20), (ToolOrder::AnyOrder, 20), (ToolOrder::Exact, 40)]
    {
        let rate = changed_rate((NOISY, n_golden), (NOISY, 20), order, 200);
        eprintln!("false-positive rate ({order}, 200 seeds, {n_golden} + 20 runs): {rate:.3}");
        assert!(rate <= 0.05 + 0.03, "false-positive rate {rate} under {order}");
    }
}

#[test]
fn an_extra_tool_moving_from_ten_to_sixty_percent_is_seen_with_twenty_runs() {
    let moved = Model { extra: 0.6, ..NOISY };
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
