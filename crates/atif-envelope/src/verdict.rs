//! Comparing new runs with an envelope: one test per field, Holm's correction, one verdict.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::{Value, json};

use crate::envelope::{describe_calls, known_tokens, tool_runs};
use crate::order::Calls;
use crate::stats::{self, SplitMix64};
use crate::{Envelope, Result, Run, Variant};

/// How [`compare`] decides.
///
/// Defaults: family-wise `alpha` 0.05, `seed` 0, 1,999 `resamples` for the permutation test, a
/// detectable shift of a tool's rate from 10% to 60% at 80% power, pass@k for k in 1, 3, 5, 10.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictOptions {
    alpha: f64,
    seed: u64,
    resamples: u32,
    shift: (f64, f64),
    power: f64,
    ks: Vec<u64>,
}

impl Default for VerdictOptions {
    fn default() -> VerdictOptions {
        VerdictOptions {
            alpha: 0.05,
            seed: 0,
            resamples: 1999,
            shift: (0.1, 0.6),
            power: 0.8,
            ks: vec![1, 3, 5, 10],
        }
    }
}

impl VerdictOptions {
    /// The default options; the same as [`VerdictOptions::default`].
    pub fn new() -> VerdictOptions {
        VerdictOptions::default()
    }

    /// The family-wise error rate: the chance, when nothing changed, that any field is called
    /// changed. Values outside (0, 1) and NaN keep the current value.
    pub fn set_alpha(&mut self, alpha: f64) -> &mut VerdictOptions {
        if alpha > 0.0 && alpha < 1.0 {
            self.alpha = alpha;
        }
        self
    }

    /// The seed of the permutation test; the same runs and seed always give the same verdict.
    pub fn set_seed(&mut self, seed: u64) -> &mut VerdictOptions {
        self.seed = seed;
        self
    }

    /// How many relabellings the permutation test draws (at least 99).
    pub fn set_resamples(&mut self, resamples: u32) -> &mut VerdictOptions {
        self.resamples = resamples.max(99);
        self
    }

    /// The shift a conclusive comparison must be able to see: a tool's rate moving from `from`
    /// to `to` (each clamped to [0, 1]).
    pub fn set_shift(&mut self, from: f64, to: f64) -> &mut VerdictOptions {
        let clamp = |rate: f64| if rate.is_nan() { 0.0 } else { rate.clamp(0.0, 1.0) };
        self.shift = (clamp(from), clamp(to));
        self
    }

    /// The ks of pass@k and pass^k (each k at most the number of runs is reported).
    pub fn set_ks(&mut self, ks: &[u64]) -> &mut VerdictOptions {
        self.ks = ks.iter().copied().filter(|&k| k > 0).collect();
        self
    }

    /// The family-wise error rate.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The permutation test's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The shift a conclusive comparison must be able to see, as (from, to) rates.
    pub fn shift(&self) -> (f64, f64) {
        self.shift
    }
}

/// The three verdicts, for a whole comparison; a field is only ever `Changed` or
/// `NoClearChange`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Conclusion {
    /// At least one field moved, beyond what sampling explains at the family-wise α.
    Changed,
    /// No field moved, and the runs were enough to see the configured shift.
    NoClearChange,
    /// No field moved, but too few runs to see the configured shift.
    Inconclusive,
}

impl Conclusion {
    /// `changed`, `no-clear-change` or `inconclusive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Conclusion::Changed => "changed",
            Conclusion::NoClearChange => "no-clear-change",
            Conclusion::Inconclusive => "inconclusive",
        }
    }
}

impl fmt::Display for Conclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one field did: its test's p-value, Holm's adjustment of it, and the effect in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldVerdict {
    /// The field: `tool_sequence`, `tool_runs.NAME`, `step_count`, `llm_calls`,
    /// `prompt_tokens`, `completion_tokens`, `crash_rate` or `pass_rate`.
    pub field: String,
    /// `Changed` or `NoClearChange`.
    pub verdict: Conclusion,
    /// The field's distribution in the envelope.
    pub golden: Value,
    /// The field's distribution in the new runs.
    pub actual: Value,
    /// The test's two-sided p-value (1 when every run of both sides agrees).
    pub p_value: f64,
    /// The p-value after Holm's correction across the fields that vary.
    pub p_holm: f64,
    /// What moved, in words: "`grep` called in 9/10 runs, was 1/10".
    pub effect: String,
    /// The labels of the new runs that show the effect (all of them; the text report names
    /// the first five).
    pub runs: Vec<String>,
}

/// The outcome of [`compare`]: the verdict, each field's test, pass@k and pass^k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The verdict.
    pub verdict: Conclusion,
    /// How many new runs were compared.
    pub runs: u64,
    /// How many runs the envelope holds.
    pub golden_runs: u64,
    /// The family-wise error rate used.
    pub alpha: f64,
    /// How tool calls were grouped into variants.
    pub order: crate::ToolOrder,
    /// Every field, in a fixed order.
    pub fields: Vec<FieldVerdict>,
    /// pass@k of the new runs per k, when they had outcomes.
    pub pass_at_k: Option<BTreeMap<u64, f64>>,
    /// pass^k of the new runs per k, when they had outcomes.
    pub pass_hat_k: Option<BTreeMap<u64, f64>>,
    /// How many runs per side would see the configured shift.
    pub runs_needed: u64,
    /// The configured shift, as (from, to) rates.
    pub shift: (f64, f64),
}

/// Compares new `runs` with the `golden` envelope: one test per field (a permutation test on
/// the tool-call variants, Fisher's exact test on each tool's rate, the crash rate and the
/// pass rate, Mann-Whitney's on the counts), Holm's correction across the fields that vary, and
/// a verdict at the family-wise α.
///
/// # Errors
///
/// [`Error::NoRuns`](crate::Error::NoRuns) for an empty slice,
/// [`Error::MixedOutcomes`](crate::Error::MixedOutcomes) when some runs have an outcome and
/// others do not.
pub fn compare(golden: &Envelope, runs: &[Run], options: &VerdictOptions) -> Result<Verdict> {
    let actual = Envelope::summarize(runs, golden.order(), false)?;
    let mut rng = SplitMix64::new(options.seed);
    let mut tests = vec![variant_test(golden, runs, options, &mut rng)];
    tests.extend(tool_tests(golden, runs));
    for field in ["step_count", "llm_calls", "prompt_tokens", "completion_tokens"] {
        tests.push(count_test(field, golden, &actual, runs));
    }
    tests.push(crash_test(golden, runs));
    tests.extend(pass_test(golden, runs));

    // A field on which every run agrees cannot move, and a count field whose samples are those
    // of an earlier one on both sides (most agents make one LLM call per step) is the same test:
    // neither takes a share of α.
    let varying: Vec<usize> = (0..tests.len())
        .filter(|&i| {
            tests[i].varies && !tests[..i].iter().any(|t| t.varies && t.same_test(&tests[i]))
        })
        .collect();
    let adjusted = stats::holm(&varying.iter().map(|&i| tests[i].p_value).collect::<Vec<_>>());
    let twins: Vec<Option<usize>> = (0..tests.len())
        .map(|j| varying.iter().copied().find(|&i| i < j && tests[i].same_test(&tests[j])))
        .collect();
    let mut fields: Vec<FieldVerdict> = tests.into_iter().map(FieldTest::into_verdict).collect();
    for (&i, p_holm) in varying.iter().zip(adjusted) {
        for j in (i..fields.len()).filter(|&j| j == i || twins[j] == Some(i)) {
            fields[j].p_holm = p_holm;
            if p_holm <= options.alpha {
                fields[j].verdict = Conclusion::Changed;
            }
        }
    }

    let (from, to) = options.shift;
    let runs_needed = stats::runs_needed(from, to, options.alpha, options.power);
    let verdict = if fields.iter().any(|field| field.verdict == Conclusion::Changed) {
        Conclusion::Changed
    } else if golden.runs().min(actual.runs()) < runs_needed {
        Conclusion::Inconclusive
    } else {
        Conclusion::NoClearChange
    };
    let pass_k = |estimate: fn(u64, u64, u64) -> f64| {
        actual.passed_runs().map(|passed| {
            let n = actual.runs();
            let ks = options.ks.iter().filter(|&&k| k <= n);
            ks.map(|&k| (k, estimate(n, passed, k))).collect::<BTreeMap<_, _>>()
        })
    };
    Ok(Verdict {
        verdict,
        runs: actual.runs(),
        golden_runs: golden.runs(),
        alpha: options.alpha,
        order: golden.order(),
        fields,
        pass_at_k: pass_k(stats::pass_at_k),
        pass_hat_k: pass_k(stats::pass_hat_k),
        runs_needed,
        shift: options.shift,
    })
}

/// One field's test before Holm's correction.
struct FieldTest {
    field: String,
    golden: Value,
    actual: Value,
    p_value: f64,
    /// Whether the pooled runs differ at all; a field on which every run agrees cannot move
    /// and is left out of the correction.
    varies: bool,
    effect: String,
    runs: Vec<String>,
    /// For a count field, its samples on both sides, which say whether it is the same test as
    /// another count field.
    samples: Option<(Vec<u64>, Vec<u64>)>,
}

impl FieldTest {
    fn same_test(&self, other: &FieldTest) -> bool {
        self.samples.is_some() && self.samples == other.samples
    }

    fn into_verdict(self) -> FieldVerdict {
        // Every run agrees: the p-value is 1 exactly, not its rounded sum.
        let p_value = if self.varies { self.p_value } else { 1.0 };
        FieldVerdict {
            field: self.field,
            verdict: Conclusion::NoClearChange,
            golden: self.golden,
            actual: self.actual,
            p_value,
            p_holm: 1.0,
            effect: self.effect,
            runs: self.runs,
        }
    }
}

/// The permutation test on the 2×K table of tool-call variants.
fn variant_test(
    golden: &Envelope,
    runs: &[Run],
    options: &VerdictOptions,
    rng: &mut SplitMix64,
) -> FieldTest {
    let order = golden.order();
    let known: Vec<&Calls> = golden.variants().iter().map(Variant::calls_list).collect();
    // Each new run as the variant it counts as: the envelope's with its calls or, under the
    // looser orders, the most specific one it matches; else its own.
    let actual_calls: Vec<Calls> = runs
        .iter()
        .map(|run| {
            let calls = run.variant(order);
            order.credit(&known, &calls).map_or(calls, |idx| known[idx].clone())
        })
        .collect();
    // Every variant of either side, the golden's first, in their order.
    let mut keys: Vec<Calls> = known.iter().map(|calls| (*calls).clone()).collect();
    for calls in &actual_calls {
        if !keys.contains(calls) {
            keys.push(calls.clone());
        }
    }
    let golden_counts: Vec<u64> = keys
        .iter()
        .map(|key| golden.variants().iter().find(|v| v.calls() == key).map_or(0, |v| v.runs()))
        .collect();
    let actual_counts: Vec<u64> =
        keys.iter().map(|key| actual_calls.iter().filter(|c| *c == key).count() as u64).collect();
    let p_value = stats::permutation_test(&golden_counts, &actual_counts, options.resamples, rng);
    let (n1, n2) = (golden.runs(), runs.len() as u64);
    let share_change =
        |k: usize| actual_counts[k] as f64 / n2 as f64 - golden_counts[k] as f64 / n1 as f64;
    let moved = (0..keys.len())
        // The largest move; between equal ones, a variant that grew (the new behaviour).
        .max_by(|&a, &b| {
            let (change_a, change_b) = (share_change(a), share_change(b));
            change_a.abs().total_cmp(&change_b.abs()).then(change_a.total_cmp(&change_b))
        })
        .unwrap_or(0);
    let table = |counts: &[u64]| {
        let described = keys.iter().zip(counts).filter(|(_, count)| **count > 0);
        Value::Object(described.map(|(key, count)| (describe_calls(key), json!(count))).collect())
    };
    let effect = format!(
        "`{}` in {}/{n2} runs, was {}/{n1}",
        keys.get(moved).map_or_else(String::new, |key| describe_calls(key)),
        actual_counts.get(moved).copied().unwrap_or(0),
        golden_counts.get(moved).copied().unwrap_or(0),
    );
    let over: Vec<&Calls> =
        (0..keys.len()).filter(|&k| share_change(k) > 0.0).map(|k| &keys[k]).collect();
    FieldTest {
        field: "tool_sequence".to_owned(),
        golden: table(&golden_counts),
        actual: table(&actual_counts),
        p_value,
        varies: keys.len() > 1,
        effect,
        runs: labels(runs, |i, _| over.contains(&&actual_calls[i])),
        samples: None,
    }
}

/// Fisher's exact test on each tool's rate: in how many runs it is called at least once.
fn tool_tests(golden: &Envelope, runs: &[Run]) -> Vec<FieldTest> {
    let actual = tool_runs(runs);
    let mut names: Vec<&String> = golden.tool_runs().keys().chain(actual.keys()).collect();
    names.sort();
    names.dedup();
    let (n1, n2) = (golden.runs(), runs.len() as u64);
    names
        .into_iter()
        .map(|name| {
            let g = golden.tool_runs().get(name).copied().unwrap_or(0);
            let a = actual.get(name).copied().unwrap_or(0);
            let more = a as f64 / n2 as f64 >= g as f64 / n1 as f64;
            let calls = |run: &Run| run.calls(name);
            FieldTest {
                field: format!("tool_runs.{name}"),
                golden: json!(format!("{g}/{n1}")),
                actual: json!(format!("{a}/{n2}")),
                p_value: stats::fisher_exact(g, n1 - g, a, n2 - a),
                varies: g + a > 0 && g + a < n1 + n2,
                effect: format!("`{name}` called in {a}/{n2} runs, was {g}/{n1}"),
                runs: labels(runs, |_, run| calls(run) == more),
                samples: None,
            }
        })
        .collect()
}

/// Mann-Whitney's test on one count field's samples.
fn count_test(field: &str, golden: &Envelope, actual: &Envelope, runs: &[Run]) -> FieldTest {
    let g = golden.samples(field).unwrap_or(&[]);
    let a = actual.samples(field).unwrap_or(&[]);
    let summary = |samples: &[u64]| {
        json!({
            "median": median(samples),
            "min": samples.first().copied().unwrap_or(0),
            "max": samples.last().copied().unwrap_or(0),
        })
    };
    let (g_min, g_max) = (g.first().copied().unwrap_or(0), g.last().copied().unwrap_or(0));
    let (g_median, a_median) = (median(g), median(a));
    let value_of = |run: &Run| count_of(field, run) as f64;
    let up = a_median >= g_median;
    // The runs outside the envelope's range in the direction of the move; when none is, those
    // beyond its median.
    let (edge, middle) = if up { (g_max as f64, g_median) } else { (g_min as f64, g_median) };
    let beyond =
        |run: &Run, bound: f64| if up { value_of(run) > bound } else { value_of(run) < bound };
    let bound = if runs.iter().any(|run| beyond(run, edge)) { edge } else { middle };
    let unit = match field {
        "step_count" => "steps",
        "llm_calls" => "LLM calls",
        "prompt_tokens" => "prompt tokens",
        _ => "completion tokens",
    };
    let effect = format!(
        "median {} {unit}, was {} (range {}–{}, was {g_min}–{g_max})",
        number(a_median),
        number(g_median),
        a.first().copied().unwrap_or(0),
        a.last().copied().unwrap_or(0),
    );
    FieldTest {
        field: field.to_owned(),
        golden: summary(g),
        actual: summary(a),
        p_value: stats::mann_whitney(g, a),
        varies: g.iter().chain(a).any(|&v| v != g_min),
        effect,
        runs: labels(runs, |_, run| beyond(run, bound)),
        samples: Some((g.to_vec(), a.to_vec())),
    }
}

/// Fisher's exact test on the crash rate.
fn crash_test(golden: &Envelope, runs: &[Run]) -> FieldTest {
    let (n1, n2) = (golden.runs(), runs.len() as u64);
    let g = golden.crashed_runs();
    let a = runs.iter().filter(|run| run.shape().crashed).count() as u64;
    let more = a as f64 / n2 as f64 >= g as f64 / n1 as f64;
    FieldTest {
        field: "crash_rate".to_owned(),
        golden: json!(format!("{g}/{n1}")),
        actual: json!(format!("{a}/{n2}")),
        p_value: stats::fisher_exact(g, n1 - g, a, n2 - a),
        varies: g + a > 0 && g + a < n1 + n2,
        effect: format!("crashed in {a}/{n2} runs, was {g}/{n1}"),
        runs: labels(runs, |_, run| run.shape().crashed == more),
        samples: None,
    }
}

/// Fisher's exact test on the pass rate, when both sides have outcomes.
fn pass_test(golden: &Envelope, runs: &[Run]) -> Option<FieldTest> {
    let g = golden.passed_runs()?;
    runs.first()?.passed()?;
    let (n1, n2) = (golden.runs(), runs.len() as u64);
    let a = runs.iter().filter(|run| run.passed() == Some(true)).count() as u64;
    let more = a as f64 / n2 as f64 >= g as f64 / n1 as f64;
    Some(FieldTest {
        field: "pass_rate".to_owned(),
        golden: json!(format!("{g}/{n1}")),
        actual: json!(format!("{a}/{n2}")),
        p_value: stats::fisher_exact(g, n1 - g, a, n2 - a),
        varies: g + a > 0 && g + a < n1 + n2,
        effect: format!("passed {a}/{n2} runs, was {g}/{n1}"),
        runs: labels(runs, |_, run| (run.passed() == Some(true)) == more),
        samples: None,
    })
}

/// The labels of the runs for which `shows` holds.
fn labels(runs: &[Run], shows: impl Fn(usize, &Run) -> bool) -> Vec<String> {
    let shown = runs.iter().enumerate().filter(|(i, run)| shows(*i, run));
    shown.map(|(_, run)| run.label().to_owned()).collect()
}

fn count_of(field: &str, run: &Run) -> u64 {
    let shape = run.shape();
    match field {
        "step_count" => shape.step_count,
        "llm_calls" => shape.llm_calls,
        "prompt_tokens" => known_tokens(shape.prompt_tokens),
        _ => known_tokens(shape.completion_tokens),
    }
}

/// The median of sorted samples (the mean of the middle two for an even count); 0 when empty.
fn median(sorted: &[u64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2] as f64,
        n => (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0,
    }
}

/// How many of a field's runs the one-screen report names; the JSON report names them all.
const RUNS_SHOWN: usize = 5;

/// The first [`RUNS_SHOWN`] of `runs`, and how many more there are: `run 1, run 2 and 8 more`.
fn some_runs(runs: &[String]) -> String {
    match runs.len() {
        n if n <= RUNS_SHOWN => runs.join(", "),
        n => format!("{} and {} more", runs[..RUNS_SHOWN].join(", "), n - RUNS_SHOWN),
    }
}

/// A number as a reader writes it: `12`, `12.5`.
fn number(value: f64) -> String {
    if value.fract() == 0.0 { format!("{value:.0}") } else { format!("{value:.1}") }
}

impl fmt::Display for Verdict {
    /// The one-screen report: the verdict and why, each field that moved with its effect,
    /// p-values and runs, the fields that did not, and pass@k / pass^k.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, golden) = (self.runs, self.golden_runs);
        let moved: Vec<&FieldVerdict> =
            self.fields.iter().filter(|field| field.verdict == Conclusion::Changed).collect();
        match self.verdict {
            Conclusion::Changed => writeln!(
                f,
                "changed: {} of {} fields moved ({n} runs against an envelope of {golden}; family-wise α = {}, Holm)",
                moved.len(),
                self.fields.len(),
                self.alpha
            )?,
            Conclusion::NoClearChange => writeln!(
                f,
                "no clear change: no field moved ({n} runs against an envelope of {golden}; family-wise α = {}, Holm)",
                self.alpha
            )?,
            Conclusion::Inconclusive => writeln!(
                f,
                "inconclusive: no field moved, but {} runs per side cannot reliably see a tool's rate move from {:.0}% to {:.0}% (80% power at α = {}); {} runs would",
                n.min(golden),
                self.shift.0 * 100.0,
                self.shift.1 * 100.0,
                self.alpha,
                self.runs_needed
            )?,
        }
        for field in &moved {
            writeln!(
                f,
                "  {}: {} (p = {:.2e}, after Holm {:.2e}); runs: {}",
                field.field,
                field.effect,
                field.p_value,
                field.p_holm,
                some_runs(&field.runs)
            )?;
        }
        let still: Vec<&str> = self
            .fields
            .iter()
            .filter(|field| field.verdict != Conclusion::Changed)
            .map(|field| field.field.as_str())
            .collect();
        if !still.is_empty() {
            writeln!(f, "  no clear change in: {}", still.join(", "))?;
        }
        writeln!(f, "  tool calls grouped as variants by order `{}`", self.order)?;
        if let (Some(at), Some(hat)) = (&self.pass_at_k, &self.pass_hat_k) {
            let list = |map: &BTreeMap<u64, f64>, name: &str| {
                map.iter().map(|(k, v)| format!("{name}{k} {v:.2}")).collect::<Vec<_>>().join(", ")
            };
            writeln!(f, "  {}; {}", list(at, "pass@"), list(hat, "pass^"))?;
        }
        Ok(())
    }
}
