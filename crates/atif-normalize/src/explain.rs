//! A step-level account of what moved between two runs: steps aligned by source and called
//! functions, then named as inserted, removed or changed.

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

use serde_json::Value;
use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

use crate::shape::{step_functions, step_llm_calls};

/// What happened to one step between the golden run and the actual one.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepChangeKind {
    /// The step exists only in the actual run.
    Inserted,
    /// The step exists only in the golden run.
    Removed,
    /// The step exists in both runs but differs.
    Changed,
}

/// One step that differs between two runs, as [`explain`] reports it.
///
/// Displays as `step 5 (agent) inserted: calls grep` or
/// `step 7 (agent) changed: calls rg instead of grep; 2 fewer LLM calls`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepChange {
    /// Inserted, removed or changed.
    pub kind: StepChangeKind,
    /// The 1-based position of the step in the golden run (`None` when inserted).
    pub golden_step: Option<usize>,
    /// The 1-based position of the step in the actual run (`None` when removed).
    pub actual_step: Option<usize>,
    /// The step's `source` (the actual one when both exist).
    pub source: String,
    /// What differs, one short phrase each (`calls grep`, `message changed`).
    pub details: Vec<String>,
}

impl fmt::Display for StepChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (step, kind) = match self.kind {
            StepChangeKind::Inserted => (self.actual_step, "inserted"),
            StepChangeKind::Removed => (self.golden_step, "removed"),
            StepChangeKind::Changed => (self.actual_step, "changed"),
        };
        write!(f, "step {} ({}", step.unwrap_or(0), self.source)?;
        if self.kind == StepChangeKind::Changed && self.golden_step != self.actual_step {
            write!(f, ", step {} in golden", self.golden_step.unwrap_or(0))?;
        }
        write!(f, ") {kind}")?;
        if !self.details.is_empty() {
            write!(f, ": {}", self.details.join("; "))?;
        }
        Ok(())
    }
}

/// Explains, step by step, how the root steps of `actual` differ from those of `golden` (both
/// normalised).
///
/// The two step sequences are aligned on each step's source and called function names (a
/// longest-common-subsequence alignment); steps left over are inserted or removed, steps paired
/// in a replaced stretch or aligned but not equal are changed.
///
/// Steps are compared without what only their position decides: `step_id`, and the
/// trajectory-wide `call_N` numbering that shifts when an earlier step gains or loses a call.
/// Within a step, calls are told apart by their place in the step, so the join between a call
/// and its result still counts.
pub fn explain(golden: &Value, actual: &Value) -> Vec<StepChange> {
    let golden_steps: Vec<Value> = steps(golden).iter().map(position_free).collect();
    let actual_steps: Vec<Value> = steps(actual).iter().map(position_free).collect();
    let golden_keys: Vec<StepKey<'_>> = golden_steps.iter().map(StepKey::of).collect();
    let actual_keys: Vec<StepKey<'_>> = actual_steps.iter().map(StepKey::of).collect();

    let removed = |g: usize| lone(StepChangeKind::Removed, g, &golden_steps[g]);
    let inserted = |a: usize| lone(StepChangeKind::Inserted, a, &actual_steps[a]);
    let mut changes = Vec::new();
    // The alignment costs O((N + M) D) for D differences; the deadline bounds pathological
    // inputs (tens of thousands of steps, all different), where it settles for a coarser one.
    let deadline = Instant::now() + Duration::from_secs(5);
    let ops =
        capture_diff_slices_deadline(Algorithm::Myers, &golden_keys, &actual_keys, Some(deadline));
    for op in ops {
        match op {
            DiffOp::Equal { old_index, new_index, len } => {
                for offset in 0..len {
                    let (g, a) = (old_index + offset, new_index + offset);
                    if golden_steps[g] != actual_steps[a] {
                        changes.push(changed(g, &golden_steps[g], a, &actual_steps[a]));
                    }
                }
            }
            DiffOp::Delete { old_index, old_len, .. } => {
                changes.extend((old_index..old_index + old_len).map(removed));
            }
            DiffOp::Insert { new_index, new_len, .. } => {
                changes.extend((new_index..new_index + new_len).map(inserted));
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                let paired = old_len.min(new_len);
                for offset in 0..paired {
                    let (g, a) = (old_index + offset, new_index + offset);
                    changes.push(changed(g, &golden_steps[g], a, &actual_steps[a]));
                }
                changes.extend((old_index + paired..old_index + old_len).map(removed));
                changes.extend((new_index + paired..new_index + new_len).map(inserted));
            }
        }
    }
    changes
}

/// What a step is aligned on: who spoke and which tools it called.
#[derive(Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct StepKey<'a> {
    source: &'a str,
    functions: Vec<&'a str>,
}

impl StepKey<'_> {
    fn of(step: &Value) -> StepKey<'_> {
        StepKey { source: source(step), functions: step_functions(step).collect() }
    }
}

/// A copy of `step` without its `step_id`, with each `tool_call_id` replaced by the call's place
/// in the step (`#1`, `#2`, …) and each `source_call_id` that names one of those calls rewritten
/// to match.
fn position_free(step: &Value) -> Value {
    let mut step = step.clone();
    let Value::Object(fields) = &mut step else {
        return step;
    };
    fields.remove("step_id");
    let mut local_ids: HashMap<String, String> = HashMap::new();
    if let Some(Value::Array(calls)) = fields.get_mut("tool_calls") {
        for (call_idx, call) in calls.iter_mut().enumerate() {
            if let Some(id) = call.get_mut("tool_call_id") {
                let local = format!("#{}", call_idx + 1);
                if let Value::String(recorded) = id {
                    local_ids.entry(recorded.clone()).or_insert_with(|| local.clone());
                }
                *id = Value::String(local);
            }
        }
    }
    let results = fields
        .get_mut("observation")
        .and_then(|observation| observation.get_mut("results"))
        .and_then(Value::as_array_mut);
    for result in results.into_iter().flatten() {
        if let Some(id) = result.get_mut("source_call_id") {
            let local = id.as_str().and_then(|recorded| local_ids.get(recorded)).cloned();
            if let Some(local) = local {
                *id = Value::String(local);
            }
        }
    }
    step
}

fn steps(doc: &Value) -> &[Value] {
    doc.get("steps").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn source(step: &Value) -> &str {
    step.get("source").and_then(Value::as_str).unwrap_or("?")
}

fn lone(kind: StepChangeKind, idx: usize, step: &Value) -> StepChange {
    let functions: Vec<&str> = step_functions(step).collect();
    let detail = if functions.is_empty() {
        match step.get("message") {
            Some(Value::String(message)) => format!("message {}", preview(message)),
            _ => "no tool calls".to_owned(),
        }
    } else {
        format!("calls {}", functions.join(", "))
    };
    let (golden_step, actual_step) = match kind {
        StepChangeKind::Removed => (Some(idx + 1), None),
        _ => (None, Some(idx + 1)),
    };
    StepChange {
        kind,
        golden_step,
        actual_step,
        source: source(step).to_owned(),
        details: vec![detail],
    }
}

fn changed(g: usize, golden: &Value, a: usize, actual: &Value) -> StepChange {
    let mut details = Vec::new();
    let (golden_source, actual_source) = (source(golden), source(actual));
    if golden_source != actual_source {
        details.push(format!("source {actual_source} instead of {golden_source}"));
    }

    let golden_functions: Vec<&str> = step_functions(golden).collect();
    let actual_functions: Vec<&str> = step_functions(actual).collect();
    if golden_functions != actual_functions {
        details.push(match (golden_functions.is_empty(), actual_functions.is_empty()) {
            (true, _) => format!("now calls {}", actual_functions.join(", ")),
            (_, true) => format!("no longer calls {}", golden_functions.join(", ")),
            _ => format!(
                "calls {} instead of {}",
                actual_functions.join(", "),
                golden_functions.join(", ")
            ),
        });
    } else {
        let golden_calls = golden.get("tool_calls").and_then(Value::as_array);
        let actual_calls = actual.get("tool_calls").and_then(Value::as_array);
        for (call_g, call_a) in
            golden_calls.into_iter().flatten().zip(actual_calls.into_iter().flatten())
        {
            if call_g.get("arguments") != call_a.get("arguments") {
                let name = call_a.get("function_name").and_then(Value::as_str).unwrap_or("?");
                details.push(format!("arguments of {name} changed"));
            }
        }
    }

    let (golden_llm, actual_llm) = (step_llm_calls(golden), step_llm_calls(actual));
    if actual_llm != golden_llm {
        let (n, word) = if actual_llm > golden_llm {
            (actual_llm - golden_llm, "more")
        } else {
            (golden_llm - actual_llm, "fewer")
        };
        let plural = if n == 1 { "" } else { "s" };
        details.push(format!("{n} {word} LLM call{plural}"));
    }

    let golden_model = golden.get("model_name").and_then(Value::as_str);
    let actual_model = actual.get("model_name").and_then(Value::as_str);
    if golden_model != actual_model {
        details.push(format!(
            "model {} instead of {}",
            actual_model.unwrap_or("(none)"),
            golden_model.unwrap_or("(none)")
        ));
    }

    for (field, phrase) in [
        ("message", "message changed"),
        ("reasoning_content", "reasoning changed"),
        ("observation", "observation changed"),
        ("metrics", "metrics changed"),
    ] {
        if golden.get(field) != actual.get(field) {
            details.push(phrase.to_owned());
        }
    }

    if details.is_empty() {
        let mut fields: Vec<&str> = Vec::new();
        if let (Value::Object(g), Value::Object(a)) = (golden, actual) {
            for key in g.keys().chain(a.keys()) {
                if g.get(key) != a.get(key) && !fields.contains(&key.as_str()) {
                    fields.push(key);
                }
            }
        }
        details.push(if fields.is_empty() {
            "changed".to_owned()
        } else {
            format!("{} changed", fields.join(", "))
        });
    }

    StepChange {
        kind: StepChangeKind::Changed,
        golden_step: Some(g + 1),
        actual_step: Some(a + 1),
        source: actual_source.to_owned(),
        details,
    }
}

/// The first 40 characters of `text` on one line, quoted.
fn preview(text: &str) -> String {
    let one_line: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let mut shown: String = one_line.chars().take(40).collect();
    if one_line.chars().count() > 40 {
        shown.push('…');
    }
    format!("{shown:?}")
}
