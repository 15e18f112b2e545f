//! The small exact statistics the verdict needs: Fisher's exact test, Mann-Whitney's U test, a
//! seeded permutation test on a 2×K table, Holm's correction, pass@k and pass^k.
//!
//! Each is a few dozen lines, so they are written here rather than pulled in with a statistics
//! crate and its linear-algebra dependencies.

/// A small, seeded pseudo-random generator (SplitMix64): the same seed gives the same stream on
/// every machine, which is what makes a verdict reproducible.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..bound` (`bound` > 0), without modulo bias worth measuring at
    /// the sizes used here (bound below 2^32).
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        (((self.next_u64() >> 32) * bound as u64) >> 32) as usize
    }
}

/// `ln(n!)` for every `n` in `0..=max`.
fn ln_factorials(max: u64) -> Vec<f64> {
    let mut table = Vec::with_capacity(max as usize + 1);
    let mut acc = 0.0;
    table.push(acc);
    for n in 1..=max {
        acc += (n as f64).ln();
        table.push(acc);
    }
    table
}

/// The two-sided p-value of Fisher's exact test on the 2×2 table
/// `[[a, b], [c, d]]` (rows: golden, actual; columns: has the property, has not): the
/// probability, with the margins fixed, of a table no more likely than this one.
pub(crate) fn fisher_exact(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let n = a + b + c + d;
    let row1 = a + b;
    let col1 = a + c;
    let lf = ln_factorials(n);
    let ln_p = |x: u64| -> f64 {
        // The hypergeometric probability of `x` in the top-left cell.
        let (xa, xb, xc) = (x, row1 - x, col1 - x);
        let xd = n - row1 - xc;
        lf[row1 as usize] + lf[(n - row1) as usize] + lf[col1 as usize] + lf[(n - col1) as usize]
            - lf[n as usize]
            - lf[xa as usize]
            - lf[xb as usize]
            - lf[xc as usize]
            - lf[xd as usize]
    };
    let low = col1.saturating_sub(n - row1);
    let high = row1.min(col1);
    let observed = ln_p(a);
    // Tables within a relative 1e-7 of the observed probability count as equally likely, as R's
    // fisher.test does, so rounding never drops the observed table itself.
    let p: f64 = (low..=high).map(ln_p).filter(|&lp| lp <= observed + 1e-7).map(f64::exp).sum();
    p.min(1.0)
}

/// The two-sided p-value of the Mann-Whitney U test of `golden` against `actual`, by the normal
/// approximation with the correction for ties and for continuity; 1 when every value is equal.
pub(crate) fn mann_whitney(golden: &[u64], actual: &[u64]) -> f64 {
    let (n1, n2) = (golden.len() as f64, actual.len() as f64);
    if golden.is_empty() || actual.is_empty() {
        return 1.0;
    }
    let mut pooled: Vec<(u64, bool)> = golden.iter().map(|&v| (v, true)).collect();
    pooled.extend(actual.iter().map(|&v| (v, false)));
    pooled.sort_unstable();
    let n = pooled.len() as f64;
    let (mut rank_sum, mut ties) = (0.0, 0.0);
    let mut start = 0;
    while start < pooled.len() {
        let end = start + pooled[start..].iter().take_while(|(v, _)| *v == pooled[start].0).count();
        // Positions start+1 ..= end share their mean rank.
        let mid_rank = (start + 1 + end) as f64 / 2.0;
        let in_golden = pooled[start..end].iter().filter(|(_, golden)| *golden).count() as f64;
        rank_sum += mid_rank * in_golden;
        let t = (end - start) as f64;
        ties += t * t * t - t;
        start = end;
    }
    let u = rank_sum - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if variance <= 0.0 {
        return 1.0;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / variance.sqrt();
    (2.0 * normal_upper_tail(z)).min(1.0)
}

/// The p-value of a permutation test on a 2×K table of counts (`golden[k]`, `actual[k]` runs in
/// category `k`), with the chi-square statistic, over `resamples` seeded relabellings of the
/// pooled runs: `(1 + as extreme) / (1 + resamples)`, which is exact in level.
pub(crate) fn permutation_test(
    golden: &[u64],
    actual: &[u64],
    resamples: u32,
    rng: &mut SplitMix64,
) -> f64 {
    let n1: u64 = golden.iter().sum();
    let n2: u64 = actual.iter().sum();
    let categories = golden.iter().zip(actual).filter(|(g, a)| **g + **a > 0).count();
    if n1 == 0 || n2 == 0 || categories < 2 {
        return 1.0;
    }
    let totals: Vec<u64> = golden.iter().zip(actual).map(|(g, a)| g + a).collect();
    let observed = chi_square(golden, &totals, n1, n2);
    let mut labels: Vec<usize> = totals
        .iter()
        .enumerate()
        .flat_map(|(k, &count)| std::iter::repeat_n(k, count as usize))
        .collect();
    let mut drawn = vec![0u64; totals.len()];
    let mut as_extreme = 0u64;
    for _ in 0..resamples {
        // A partial Fisher-Yates shuffle: the first n1 labels are a uniform draw for the golden.
        drawn.iter_mut().for_each(|count| *count = 0);
        for i in 0..n1 as usize {
            let j = i + rng.below(labels.len() - i);
            labels.swap(i, j);
            drawn[labels[i]] += 1;
        }
        if chi_square(&drawn, &totals, n1, n2) >= observed - 1e-9 {
            as_extreme += 1;
        }
    }
    (1 + as_extreme) as f64 / (1 + u64::from(resamples)) as f64
}

/// Pearson's chi-square statistic of the 2×K table whose golden row is `golden` and whose
/// column totals are `totals`.
fn chi_square(golden: &[u64], totals: &[u64], n1: u64, n2: u64) -> f64 {
    let n = (n1 + n2) as f64;
    golden
        .iter()
        .zip(totals)
        .filter(|(_, total)| **total > 0)
        .map(|(&g, &total)| {
            let (g, a, t) = (g as f64, (total - g) as f64, total as f64);
            let (eg, ea) = (t * n1 as f64 / n, t * n2 as f64 / n);
            (g - eg).powi(2) / eg + (a - ea).powi(2) / ea
        })
        .sum()
}

/// Holm's step-down adjustment: the adjusted p-values, in the input's order. A field is
/// significant at family-wise level α when its adjusted p-value is at most α.
pub(crate) fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]).then(a.cmp(&b)));
    let mut adjusted = vec![1.0; m];
    let mut running = 0.0f64;
    for (rank, &idx) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[idx]).min(1.0));
        adjusted[idx] = running;
    }
    adjusted
}

/// pass@k: the chance that at least one of `k` runs drawn without replacement from `n` runs,
/// `passed` of which passed, passes (the unbiased estimator of Chen et al. 2021).
pub(crate) fn pass_at_k(n: u64, passed: u64, k: u64) -> f64 {
    if n - passed < k {
        return 1.0;
    }
    1.0 - ((n - passed + 1)..=n).map(|i| 1.0 - k as f64 / i as f64).product::<f64>()
}

/// pass^k: the chance that all of `k` runs drawn without replacement from `n` runs, `passed` of
/// which passed, pass (the estimator of τ-bench).
pub(crate) fn pass_hat_k(n: u64, passed: u64, k: u64) -> f64 {
    if passed < k {
        return 0.0;
    }
    (0..k).map(|i| (passed - i) as f64 / (n - i) as f64).product()
}

/// `P(Z > z)` for a standard normal `Z`, from the complementary error function.
pub(crate) fn normal_upper_tail(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function, by the Chebyshev fit of Numerical Recipes (`erfcc`),
/// with a relative error below 1.2e-7 everywhere.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// The `z` with `P(Z > z) = tail`, by bisection (tail in (0, 0.5]).
fn normal_quantile_upper(tail: f64) -> f64 {
    let (mut low, mut high) = (0.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = (low + high) / 2.0;
        if normal_upper_tail(mid) > tail { low = mid } else { high = mid }
    }
    (low + high) / 2.0
}

/// How many runs per side a two-sided test at level `alpha` needs to detect a rate moving from
/// `from` to `to` with probability `power`, by the usual normal approximation for two
/// proportions; at least 2.
pub(crate) fn runs_needed(from: f64, to: f64, alpha: f64, power: f64) -> u64 {
    let shift = (to - from).abs();
    if shift.is_nan() || shift == 0.0 {
        return u64::MAX;
    }
    let z_alpha = normal_quantile_upper(alpha / 2.0);
    let z_beta = normal_quantile_upper(1.0 - power);
    let mean = (from + to) / 2.0;
    let root = z_alpha * (2.0 * mean * (1.0 - mean)).sqrt()
        + z_beta * (from * (1.0 - from) + to * (1.0 - to)).sqrt();
    ((root / shift).powi(2).ceil() as u64).max(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn fisher_matches_known_values() {
        // The tea-tasting table: p = 0.4857 (R: fisher.test(matrix(c(3,1,1,3),2))).
        assert!(close(fisher_exact(3, 1, 1, 3), 0.485_714, 1e-5));
        // 1/10 against 9/10: R gives 0.001094.
        assert!(close(fisher_exact(1, 9, 9, 1), 0.001_094, 1e-5), "{}", fisher_exact(1, 9, 9, 1));
        assert!(close(fisher_exact(5, 5, 5, 5), 1.0, 1e-12));
    }

    #[test]
    fn mann_whitney_matches_known_values() {
        // R: wilcox.test(1:10, 11:20, exact=FALSE, correct=TRUE)$p.value = 0.0001817
        let (a, b): (Vec<u64>, Vec<u64>) = ((1..=10).collect(), (11..=20).collect());
        assert!(close(mann_whitney(&a, &b), 0.000_181_7, 1e-6), "{}", mann_whitney(&a, &b));
        assert_eq!(mann_whitney(&[3, 3, 3], &[3, 3]), 1.0);
    }

    #[test]
    fn holm_adjusts_step_down_and_keeps_order() {
        let adjusted = holm(&[0.01, 0.04, 0.03]);
        assert_eq!(adjusted, vec![0.03, 0.06, 0.06]);
    }

    #[test]
    fn pass_at_k_and_pass_hat_k_match_their_definitions() {
        // 10 runs, 3 passed, k = 2: pass@2 = 1 - C(7,2)/C(10,2) = 1 - 21/45.
        assert!(close(pass_at_k(10, 3, 2), 1.0 - 21.0 / 45.0, 1e-12));
        // pass^2 = C(3,2)/C(10,2) = 3/45.
        assert!(close(pass_hat_k(10, 3, 2), 3.0 / 45.0, 1e-12));
        assert_eq!(pass_at_k(10, 10, 5), 1.0);
        assert_eq!(pass_hat_k(10, 0, 1), 0.0);
    }

    #[test]
    fn the_normal_tail_and_the_sample_size_match_tables() {
        assert!(close(normal_upper_tail(1.96), 0.025, 1e-4));
        assert!(close(normal_quantile_upper(0.025), 1.959_964, 1e-4));
        // From 10% to 60% at α = 0.05 with 80% power: (1.96·0.675 + 0.842·0.574)² / 0.5² = 13.04,
        // so 14 per side.
        assert_eq!(runs_needed(0.1, 0.6, 0.05, 0.8), 14);
    }

    #[test]
    fn the_permutation_test_is_seeded_and_sees_a_strong_shift() {
        let p1 = permutation_test(&[10, 0], &[0, 10], 999, &mut SplitMix64::new(7));
        let p2 = permutation_test(&[10, 0], &[0, 10], 999, &mut SplitMix64::new(7));
        assert_eq!(p1, p2);
        assert!(p1 <= 0.002, "{p1}");
        let same = permutation_test(&[5, 5], &[5, 5], 999, &mut SplitMix64::new(7));
        assert!(same > 0.9, "{same}");
    }
}
