//! Runs, and the envelope golden built from them: the distribution of each Shape field.

use std::collections::BTreeMap;

use atif_normalize::support::shape_without_hash;
use atif_normalize::{NormalizeOptions, Shape, normalize_owned, to_canonical_string};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::order::Calls;
use crate::{Error, Result, ToolOrder};

/// The envelope format this crate writes and reads.
pub const ENVELOPE_VERSION: u32 = 1;

/// One run of the agent, normalised and reduced to what an envelope holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    label: String,
    normalized: Value,
    shape: Shape,
    step_calls: Vec<Vec<String>>,
    passed: Option<bool>,
}

impl Run {
    /// Normalises `trajectory` in place (which redacts secrets) and keeps its Shape; `label`
    /// names the run in verdicts (a file name, or `run 3`).
    ///
    /// The trajectory is taken by value so that a long run is never copied: normalising it in
    /// place is most of what building a run costs.
    ///
    /// # Errors
    ///
    /// [`Error::Normalize`] when the document is not a trajectory.
    pub fn new(label: &str, trajectory: Value, options: &NormalizeOptions) -> Result<Run> {
        let normalized = normalize_owned(trajectory, options)
            .map_err(|source| Error::Normalize { run: label.to_owned(), source })?;
        // An envelope compares behaviour, never content: hashing the canonical text of the run
        // would be more than half of the cost of a long one.
        let shape = shape_without_hash(&normalized);
        let step_calls = step_calls(&normalized);
        Ok(Run { label: label.to_owned(), normalized, shape, step_calls, passed: None })
    }

    /// Records whether the run passed (the command's exit status, or a user's assertion).
    pub fn set_passed(&mut self, passed: Option<bool>) -> &mut Run {
        self.passed = passed;
        self
    }

    /// The run's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The run's Shape; its `content_hash` is empty, since an envelope compares behaviour and
    /// never content.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Whether the run passed, when known.
    pub fn passed(&self) -> Option<bool> {
        self.passed
    }

    /// Whether the run calls the tool `name` at least once.
    pub(crate) fn calls(&self, name: &str) -> bool {
        self.step_calls.iter().flatten().any(|call| call == name)
    }

    /// The run's variant under `order`: per step that calls tools, the sorted function names
    /// (`exact`); every call in step order, as one list (`in-order`); or every call, sorted, as
    /// one list (`any-order`, `subset`, `superset`). A run that calls no tool has no list.
    pub fn variant(&self, order: ToolOrder) -> Vec<Vec<String>> {
        order.key(&self.step_calls)
    }
}

/// Per root step that calls tools, its function names, sorted.
fn step_calls(normalized: &Value) -> Vec<Vec<String>> {
    let steps = normalized.get("steps").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    steps
        .iter()
        .filter_map(|step| {
            let calls = step.get("tool_calls")?.as_array()?;
            let mut names: Vec<String> = calls
                .iter()
                .filter_map(|call| call.get("function_name")?.as_str().map(str::to_owned))
                .collect();
            names.sort();
            (!names.is_empty()).then_some(names)
        })
        .collect()
}

/// A variant's calls in words: steps apart with `; `, calls within a step with `, `.
pub(crate) fn describe_calls(calls: &[Vec<String>]) -> String {
    if calls.is_empty() {
        return "(no tool calls)".to_owned();
    }
    calls.iter().map(|step| step.join(", ")).collect::<Vec<_>>().join("; ")
}

/// One tool-call variant of an envelope: how many runs took it, and one of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    runs: u64,
    calls: Calls,
    representative: Value,
}

impl Variant {
    /// How many runs took this variant.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// The variant's calls, as [`Run::variant`] gives them.
    pub fn calls(&self) -> &[Vec<String>] {
        &self.calls
    }

    /// The variant's calls as the order's key holds them, for the verdict.
    pub(crate) fn calls_list(&self) -> &Calls {
        &self.calls
    }

    /// The normalised trajectory of the first run that took this variant.
    pub fn representative(&self) -> &Value {
        &self.representative
    }
}

/// The behaviour of N runs: per Shape field, its distribution over the runs.
///
/// Its file format (`envelope_version` 1) is the canonical JSON text of this value, described
/// in `docs/live.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    envelope_version: u32,
    runs: u64,
    order: ToolOrder,
    variants: Vec<Variant>,
    tool_runs: BTreeMap<String, u64>,
    step_count: Vec<u64>,
    llm_calls: Vec<u64>,
    prompt_tokens: Vec<u64>,
    completion_tokens: Vec<u64>,
    crashed_runs: u64,
    passed_runs: Option<u64>,
}

impl Envelope {
    /// The envelope of `runs`, with tool calls grouped into variants by `order`.
    ///
    /// # Errors
    ///
    /// [`Error::NoRuns`] for an empty slice, [`Error::MixedOutcomes`] when some runs have a
    /// pass/fail outcome and others do not.
    pub fn build(runs: &[Run], order: ToolOrder) -> Result<Envelope> {
        Envelope::summarize(runs, order, true)
    }

    /// [`Envelope::build`], with the representatives only when `representatives` is true (a
    /// comparison's own side needs none, and copying long runs is most of its cost).
    pub(crate) fn summarize(
        runs: &[Run],
        order: ToolOrder,
        representatives: bool,
    ) -> Result<Envelope> {
        let first = runs.first().ok_or(Error::NoRuns)?;
        if let Some(run) = runs.iter().find(|run| run.passed.is_some() != first.passed.is_some()) {
            let without = if run.passed.is_none() { run } else { first };
            return Err(Error::MixedOutcomes { run: without.label.clone() });
        }
        let mut variants: Vec<Variant> = Vec::new();
        for run in runs {
            let calls = run.variant(order);
            match variants.iter_mut().find(|variant| variant.calls == calls) {
                Some(variant) => variant.runs += 1,
                None => variants.push(Variant {
                    runs: 1,
                    calls,
                    representative: match representatives {
                        true => run.normalized.clone(),
                        false => Value::Null,
                    },
                }),
            }
        }
        variants.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.calls.cmp(&b.calls)));
        let sorted = |field: fn(&Shape) -> u64| {
            let mut values: Vec<u64> = runs.iter().map(|run| field(&run.shape)).collect();
            values.sort_unstable();
            values
        };
        Ok(Envelope {
            envelope_version: ENVELOPE_VERSION,
            runs: runs.len() as u64,
            order,
            variants,
            tool_runs: tool_runs(runs),
            step_count: sorted(|s| s.step_count),
            llm_calls: sorted(|s| s.llm_calls),
            prompt_tokens: sorted(|s| known_tokens(s.prompt_tokens)),
            completion_tokens: sorted(|s| known_tokens(s.completion_tokens)),
            crashed_runs: runs.iter().filter(|run| run.shape.crashed).count() as u64,
            passed_runs: first
                .passed
                .map(|_| runs.iter().filter(|run| run.passed == Some(true)).count() as u64),
        })
    }

    /// Reads an envelope from its JSON text, checking that its counts agree with each other.
    ///
    /// # Errors
    ///
    /// [`Error::Version`] for another `envelope_version`, [`Error::Invalid`] naming the JSON
    /// Pointer of a malformed or inconsistent field.
    pub fn from_json(text: &str) -> Result<Envelope> {
        let value: Value = serde_json::from_str(text).map_err(|source| Error::Invalid {
            pointer: String::new(),
            message: format!("expected a JSON object ({source})"),
            source: Some(source),
        })?;
        match value.get("envelope_version") {
            Some(version) if version.as_u64() == Some(u64::from(ENVELOPE_VERSION)) => {}
            Some(version) => {
                return Err(Error::Version {
                    found: version.to_string(),
                    expected: ENVELOPE_VERSION,
                });
            }
            None => return Err(invalid("", "expected an object with `envelope_version`")),
        }
        let envelope: Envelope = serde_path_to_error::deserialize(&value).map_err(|error| {
            let pointer = pointer_of(error.path());
            let source = error.into_inner();
            Error::Invalid { pointer, message: source.to_string(), source: Some(source) }
        })?;
        envelope.check_consistent()?;
        Ok(envelope)
    }

    /// The canonical JSON text of the envelope: sorted keys, two-space indent, a final newline.
    pub fn to_json(&self) -> String {
        let value = serde_json::to_value(self)
            .expect("an envelope serialises, because every field is a plain JSON type");
        let mut text = to_canonical_string(&value);
        text.push('\n');
        text
    }

    /// How many runs the envelope holds.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// How tool calls group into variants.
    pub fn order(&self) -> ToolOrder {
        self.order
    }

    /// The tool-call variants, most frequent first.
    pub fn variants(&self) -> &[Variant] {
        &self.variants
    }

    /// Per function name, how many runs called it at least once.
    pub fn tool_runs(&self) -> &BTreeMap<String, u64> {
        &self.tool_runs
    }

    /// The sorted samples of one count field: `step_count`, `llm_calls`, `prompt_tokens` or
    /// `completion_tokens`; `None` for another name.
    pub fn samples(&self, field: &str) -> Option<&[u64]> {
        match field {
            "step_count" => Some(&self.step_count),
            "llm_calls" => Some(&self.llm_calls),
            "prompt_tokens" => Some(&self.prompt_tokens),
            "completion_tokens" => Some(&self.completion_tokens),
            _ => None,
        }
    }

    /// How many runs crashed.
    pub fn crashed_runs(&self) -> u64 {
        self.crashed_runs
    }

    /// How many runs passed, when the runs had an outcome.
    pub fn passed_runs(&self) -> Option<u64> {
        self.passed_runs
    }

    /// Checks that every count agrees with `runs`.
    fn check_consistent(&self) -> Result<()> {
        let runs = self.runs;
        if runs == 0 {
            return Err(invalid("/runs", "expected at least 1 run, found 0"));
        }
        for field in ["step_count", "llm_calls", "prompt_tokens", "completion_tokens"] {
            let samples = self.samples(field).unwrap_or(&[]);
            if samples.len() as u64 != runs {
                let found = samples.len();
                return Err(invalid(
                    &format!("/{field}"),
                    &format!("expected {runs} samples (one per run), found {found}"),
                ));
            }
            if samples.windows(2).any(|pair| pair[0] > pair[1]) {
                return Err(invalid(&format!("/{field}"), "expected samples in ascending order"));
            }
        }
        self.check_variants()?;
        let in_variants: u64 = self.variants.iter().map(|variant| variant.runs).sum();
        if in_variants != runs {
            return Err(invalid(
                "/variants",
                &format!("expected variants' runs to add up to {runs}, found {in_variants}"),
            ));
        }
        let over = |count: u64| count > runs;
        if let Some((name, _)) = self.tool_runs.iter().find(|(_, count)| over(**count)) {
            let pointer = format!("/tool_runs/{}", name.replace('~', "~0").replace('/', "~1"));
            return Err(invalid(&pointer, &format!("expected at most {runs} runs")));
        }
        if over(self.crashed_runs) {
            return Err(invalid("/crashed_runs", &format!("expected at most {runs} runs")));
        }
        if self.passed_runs.is_some_and(over) {
            return Err(invalid("/passed_runs", &format!("expected at most {runs} runs")));
        }
        Ok(())
    }

    /// Checks that each variant's calls are in the shape the order gives them, and distinct.
    fn check_variants(&self) -> Result<()> {
        for (idx, variant) in self.variants.iter().enumerate() {
            let order = self.order;
            if !order.holds_shape(&variant.calls) {
                let expected = match order {
                    ToolOrder::Exact => "one non-empty list of calls per step",
                    ToolOrder::InOrder => "at most one non-empty list of calls",
                    _ => "at most one non-empty list of calls, sorted",
                };
                return Err(invalid(
                    &format!("/variants/{idx}/calls"),
                    &format!("expected {expected} under order `{order}`"),
                ));
            }
            if self.variants[..idx].iter().any(|earlier| earlier.calls == variant.calls) {
                return Err(invalid(
                    &format!("/variants/{idx}/calls"),
                    "expected each variant's calls once, found them in an earlier variant",
                ));
            }
        }
        Ok(())
    }
}

/// Per function name, how many of `runs` call it at least once.
pub(crate) fn tool_runs(runs: &[Run]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for run in runs {
        let mut names: Vec<&String> = run.step_calls.iter().flatten().collect();
        names.sort();
        names.dedup();
        for name in names {
            *counts.entry(name.clone()).or_insert(0) += 1;
        }
    }
    counts
}

/// A run's token count as an envelope's sample. The envelope keeps one sample per run, and a
/// run whose provider reported no usage (its Shape says `unknown`) counts 0 here: explicitly,
/// so that the same unreporting provider on both sides of a verdict moves nothing.
pub(crate) fn known_tokens(count: Option<u64>) -> u64 {
    count.unwrap_or(0)
}

fn invalid(pointer: &str, message: &str) -> Error {
    Error::Invalid { pointer: pointer.to_owned(), message: message.to_owned(), source: None }
}

/// A serde path as a JSON Pointer.
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|segment| match segment {
            Segment::Seq { index } => Some(format!("/{index}")),
            Segment::Map { key } => Some(format!("/{}", key.replace('~', "~0").replace('/', "~1"))),
            Segment::Enum { variant } => Some(format!("/{variant}")),
            Segment::Unknown => None,
        })
        .collect()
}
