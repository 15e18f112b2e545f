//! A step-level account of what moved between two runs: steps aligned by source and called
//! functions, then named as inserted, removed or changed; subagents paired by name and
//! explained the same way.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;
use similar::DiffOp;

use crate::align::{Budget, align};
use crate::position_free::{PositionFree, SubagentNames};
use crate::shape::{step_functions, step_llm_calls, subagents_of};
use crate::view::View;

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

/// One step (or one whole trajectory) that differs between two runs, as [`explain`] reports it.
///
/// Displays as `step 5 (agent) inserted: calls grep`,
/// `step 7 (agent) changed: calls rg instead of grep; 2 fewer LLM calls`, for a step of a
/// subagent `subagent "web": step 2 (agent) removed: calls fetch`, for a whole subagent
/// `subagent "web" inserted: 3 steps; calls search, fetch`, and for the root changed only
/// outside its steps `trajectory changed: agent changed`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StepChange {
    /// Inserted, removed or changed.
    pub kind: StepChangeKind,
    /// The agent names of the subagents the change is in, outermost first; empty for the
    /// root's own steps.
    pub subagent: Vec<String>,
    /// The 1-based position of the step in the golden run (`None` when inserted, and for a
    /// whole trajectory).
    pub golden_step: Option<usize>,
    /// The 1-based position of the step in the actual run (`None` when removed, and for a
    /// whole trajectory).
    pub actual_step: Option<usize>,
    /// The step's `source` (the actual one when both exist); empty for a whole trajectory.
    pub source: String,
    /// What differs, one short phrase each (`calls grep`, `message changed`).
    pub details: Vec<String>,
}

impl StepChange {
    /// Whether the change is a whole trajectory rather than one step: the subagent named last
    /// in [`StepChange::subagent`] inserted, removed or changed outside its steps, or, when
    /// that is empty, the root changed outside its steps.
    pub fn is_whole_trajectory(&self) -> bool {
        self.golden_step.is_none() && self.actual_step.is_none()
    }
}

impl fmt::Display for StepChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            StepChangeKind::Inserted => "inserted",
            StepChangeKind::Removed => "removed",
            StepChangeKind::Changed => "changed",
        };
        if self.subagent.is_empty() && self.is_whole_trajectory() {
            f.write_str("trajectory")?;
            return write_details(f, kind, &self.details);
        }
        if !self.subagent.is_empty() {
            let names: Vec<String> = self.subagent.iter().map(|name| format!("{name:?}")).collect();
            write!(f, "subagent {}", names.join(" > "))?;
            if self.is_whole_trajectory() {
                return write_details(f, kind, &self.details);
            }
            f.write_str(": ")?;
        }
        let step = match self.kind {
            StepChangeKind::Removed => self.golden_step,
            _ => self.actual_step,
        };
        write!(f, "step {} ({}", step.unwrap_or(0), self.source)?;
        if self.kind == StepChangeKind::Changed && self.golden_step != self.actual_step {
            write!(f, ", step {} in golden", self.golden_step.unwrap_or(0))?;
        }
        f.write_str(")")?;
        write_details(f, kind, &self.details)
    }
}

fn write_details(f: &mut fmt::Formatter<'_>, kind: &str, details: &[String]) -> fmt::Result {
    write!(f, " {kind}")?;
    if !details.is_empty() {
        write!(f, ": {}", details.join("; "))?;
    }
    Ok(())
}

/// Explains, step by step, how `actual` differs from `golden` (both normalised): first the
/// root steps, then the embedded subagents.
///
/// The two step sequences are aligned on each step's source and called function names (a
/// longest-common-subsequence alignment); steps left over are inserted or removed, steps paired
/// in a replaced stretch or aligned but not equal are changed.
///
/// Steps are compared without what only their position decides: `step_id`, the
/// trajectory-wide `call_N` numbering that shifts when an earlier step gains or loses a call,
/// and the `subagent_N` ids of subagent refs (a ref counts by the name of the agent it points
/// to). Within a step, calls are told apart by their place in the step, so the join between a
/// call and its result still counts.
///
/// Subagents are paired by agent name; identical ones pair first, the rest in order. A
/// subagent found in one run only is inserted or removed as a whole; a paired one that differs
/// is explained step by step the same way, recursively, or as changed as a whole when its
/// steps and subagents are the same and something else (its `final_metrics`, say) is not.
/// Likewise, two runs that differ only outside their steps and subagents (the `agent`, say)
/// get one change for the whole trajectory, so a difference never goes unexplained.
pub fn explain(golden: &Value, actual: &Value) -> Vec<StepChange> {
    explain_views(golden, actual)
}

/// [`explain`] for either tree.
pub(crate) fn explain_views<V: View>(golden: &V, actual: &V) -> Vec<StepChange> {
    // The alignment costs O((N + M) D) for D differences; a budget of work, shared by every
    // trajectory, bounds pathological inputs (tens of thousands of steps, all different), where
    // it settles for a coarser alignment, the same one on every machine.
    let mut budget = Budget::new();
    let mut changes = Vec::new();
    explain_trajectory(golden, actual, &[], &mut budget, &mut changes);
    if changes.is_empty() && !golden.json_eq(actual) {
        changes.push(whole(StepChangeKind::Changed, &[], differing_keys(golden, actual, None)));
    }
    changes
}

fn explain_trajectory<V: View>(
    golden: &V,
    actual: &V,
    path: &[String],
    budget: &mut Budget,
    changes: &mut Vec<StepChange>,
) {
    explain_steps(golden, actual, path, budget, changes);
    explain_subagents(golden, actual, path, budget, changes);
}

fn explain_steps<V: View>(
    golden: &V,
    actual: &V,
    path: &[String],
    budget: &mut Budget,
    changes: &mut Vec<StepChange>,
) {
    let golden_names = subagent_names_by_id(golden);
    let actual_names = subagent_names_by_id(actual);
    let (golden_steps, actual_steps) = (steps(golden), steps(actual));
    let golden_keys: Vec<StepKey<'_>> = golden_steps.iter().map(StepKey::of).collect();
    let actual_keys: Vec<StepKey<'_>> = actual_steps.iter().map(StepKey::of).collect();

    let removed = |g: usize| lone(StepChangeKind::Removed, g, &golden_steps[g], path);
    let inserted = |a: usize| lone(StepChangeKind::Inserted, a, &actual_steps[a], path);
    // Aligned steps are compared by their position-free forms, which borrow from the steps:
    // equal when their canonical texts would be.
    let free = |g: usize, a: usize| {
        let golden_step = PositionFree::of(&golden_steps[g], &golden_names);
        let actual_step = PositionFree::of(&actual_steps[a], &actual_names);
        (golden_step, actual_step)
    };
    let paired = |g: usize, a: usize, (golden_free, actual_free): FreePair<'_, V>| {
        let golden_step = Step { value: &golden_steps[g], free: golden_free };
        let actual_step = Step { value: &actual_steps[a], free: actual_free };
        changed(g, &golden_step, a, &actual_step, path)
    };
    let ops = align(&golden_keys, &actual_keys, budget);
    for op in ops {
        match op {
            DiffOp::Equal { old_index, new_index, len } => {
                for offset in 0..len {
                    let (g, a) = (old_index + offset, new_index + offset);
                    let steps = free(g, a);
                    if !steps.0.same_as(&steps.1, V::same_text) {
                        changes.push(paired(g, a, steps));
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
                let n_paired = old_len.min(new_len);
                // A stretch replaced as a whole (past the alignment's budget) may pair steps
                // that are the same; those are not changes.
                for offset in 0..n_paired {
                    let (g, a) = (old_index + offset, new_index + offset);
                    let steps = free(g, a);
                    if !steps.0.same_as(&steps.1, V::same_text) {
                        changes.push(paired(g, a, steps));
                    }
                }
                changes.extend((old_index + n_paired..old_index + old_len).map(removed));
                changes.extend((new_index + n_paired..new_index + new_len).map(inserted));
            }
        }
    }
}

/// The position-free forms of a golden and an actual step.
type FreePair<'a, V> = (PositionFree<'a, V>, PositionFree<'a, V>);

/// Pairs the subagents of the two runs by agent name and explains each pair that differs, and
/// each subagent without a partner as a whole.
fn explain_subagents<V: View>(
    golden: &V,
    actual: &V,
    path: &[String],
    budget: &mut Budget,
    changes: &mut Vec<StepChange>,
) {
    let (golden_subs, actual_subs) = (subagents_of(golden), subagents_of(actual));
    let names: BTreeSet<Cow<'_, str>> =
        golden_subs.iter().chain(actual_subs).map(agent_name).collect();
    for name in names {
        let of_name = |subs: &'_ [V]| -> Vec<usize> {
            (0..subs.len()).filter(|&idx| agent_name(&subs[idx]) == name).collect()
        };
        let mut golden_left = of_name(golden_subs);
        let mut actual_left = of_name(actual_subs);
        // Identical subagents pair first and explain nothing.
        golden_left.retain(|&g| {
            match actual_left.iter().position(|&a| same_but_id(&golden_subs[g], &actual_subs[a])) {
                Some(pos) => {
                    actual_left.remove(pos);
                    false
                }
                None => true,
            }
        });
        let sub_path: Vec<String> = path.iter().cloned().chain([name.into_owned()]).collect();
        let paired = golden_left.len().min(actual_left.len());
        for (&g, &a) in golden_left.iter().zip(&actual_left) {
            let before = changes.len();
            explain_trajectory(&golden_subs[g], &actual_subs[a], &sub_path, budget, changes);
            if changes.len() == before {
                let keys = differing_keys(&golden_subs[g], &actual_subs[a], Some(ID));
                changes.push(whole(StepChangeKind::Changed, &sub_path, keys));
            }
        }
        for &g in &golden_left[paired..] {
            changes.push(whole(StepChangeKind::Removed, &sub_path, summary(&golden_subs[g])));
        }
        for &a in &actual_left[paired..] {
            changes.push(whole(StepChangeKind::Inserted, &sub_path, summary(&actual_subs[a])));
        }
    }
}

fn whole(kind: StepChangeKind, path: &[String], details: Vec<String>) -> StepChange {
    StepChange {
        kind,
        subagent: path.to_vec(),
        golden_step: None,
        actual_step: None,
        source: String::new(),
        details,
    }
}

/// `3 steps; calls search, fetch`: a subagent's size and the tools it used, each named once.
fn summary<V: View>(subagent: &V) -> Vec<String> {
    let steps = steps(subagent);
    let plural = if steps.len() == 1 { "" } else { "s" };
    let mut details = vec![format!("{} step{plural}", steps.len())];
    let mut functions: Vec<Cow<'_, str>> = Vec::new();
    for function in steps.iter().flat_map(step_functions) {
        if !functions.contains(&function) {
            functions.push(function);
        }
    }
    if !functions.is_empty() {
        details.push(format!("calls {}", functions.join(", ")));
    }
    details
}

/// `final_metrics changed`: the top-level members that differ between two objects, `skip`
/// aside.
fn differing_keys<V: View>(golden: &V, actual: &V, skip: Option<&str>) -> Vec<String> {
    let mut fields: Vec<&str> = Vec::new();
    if let (Some(g), Some(a)) = (golden.members(), actual.members()) {
        for (key, _) in g.iter().chain(&a).filter(|(key, _)| Some(*key) != skip) {
            let same = match (golden.get(key), actual.get(key)) {
                (Some(g), Some(a)) => g.json_eq(a),
                (None, None) => true,
                _ => false,
            };
            if !same && !fields.contains(key) {
                fields.push(key);
            }
        }
    }
    if fields.is_empty() { Vec::new() } else { vec![format!("{} changed", fields.join(", "))] }
}

fn agent_name<V: View>(subagent: &V) -> Cow<'_, str> {
    subagent.str_at(&["agent", "name"]).unwrap_or(Cow::Borrowed("(unnamed)"))
}

/// The member of a subagent that only its place in the sorted list decides.
const ID: &str = "trajectory_id";

/// Whether two subagents are the same, their [`ID`]s aside.
pub(crate) fn same_but_id<V: View>(golden: &V, actual: &V) -> bool {
    match (golden.members(), actual.members()) {
        (Some(g), Some(a)) => {
            let len = |members: &[(&str, &V)]| {
                members.len() - usize::from(members.iter().any(|(key, _)| *key == ID))
            };
            len(&g) == len(&a)
                && g.iter()
                    .filter(|(key, _)| *key != ID)
                    .all(|(key, value)| actual.get(key).is_some_and(|a| value.json_eq(a)))
        }
        _ => golden.json_eq(actual),
    }
}

/// The agent name of each subagent, by its `trajectory_id`.
fn subagent_names_by_id<V: View>(doc: &V) -> SubagentNames<'_> {
    subagents_of(doc)
        .iter()
        .filter_map(|sub| Some((sub.get("trajectory_id")?.as_str()?, agent_name(sub))))
        .collect()
}

/// What a step is aligned on: who spoke and which tools it called.
#[derive(Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct StepKey<'a> {
    source: Cow<'a, str>,
    functions: Vec<Cow<'a, str>>,
}

impl StepKey<'_> {
    fn of<V: View>(step: &V) -> StepKey<'_> {
        StepKey { source: source(step), functions: step_functions(step).collect() }
    }
}

pub(crate) fn steps<V: View>(doc: &V) -> &[V] {
    doc.get("steps").and_then(V::as_array).unwrap_or(&[])
}

fn source<V: View>(step: &V) -> Cow<'_, str> {
    step.get("source").and_then(V::as_str).unwrap_or(Cow::Borrowed("?"))
}

fn lone<V: View>(kind: StepChangeKind, idx: usize, step: &V, path: &[String]) -> StepChange {
    let functions: Vec<Cow<'_, str>> = step_functions(step).collect();
    let detail = if functions.is_empty() {
        match step.get("message").and_then(V::as_str) {
            Some(message) => format!("message {}", preview(&message)),
            None => "no tool calls".to_owned(),
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
        subagent: path.to_vec(),
        golden_step,
        actual_step,
        source: source(step).into_owned(),
        details: vec![detail],
    }
}

/// One step of a pair: as recorded, and seen without what only its position decides.
struct Step<'a, V> {
    value: &'a V,
    free: PositionFree<'a, V>,
}

fn changed<V: View>(
    g: usize,
    golden: &Step<'_, V>,
    a: usize,
    actual: &Step<'_, V>,
    path: &[String],
) -> StepChange {
    // What the position-free form rewrites (ids, refs) is read from it; the rest, the same in
    // both forms, from the step as recorded.
    let (golden_free, actual_free) = (&golden.free, &actual.free);
    let (golden, actual) = (golden.value, actual.value);
    let mut details = Vec::new();
    let (golden_source, actual_source) = (source(golden), source(actual));
    if golden_source != actual_source {
        details.push(format!("source {actual_source} instead of {golden_source}"));
    }
    call_details(golden, actual, &mut details);
    details.extend(llm_call_detail(step_llm_calls(golden), step_llm_calls(actual)));

    let golden_model = golden.get("model_name").and_then(V::as_str);
    let actual_model = actual.get("model_name").and_then(V::as_str);
    if golden_model != actual_model {
        details.push(format!(
            "model {} instead of {}",
            actual_model.as_deref().unwrap_or("(none)"),
            golden_model.as_deref().unwrap_or("(none)")
        ));
    }

    for (field, phrase) in [
        ("message", "message changed"),
        ("reasoning_content", "reasoning changed"),
        ("observation", "observation changed"),
        ("metrics", "metrics changed"),
    ] {
        if !same_member(golden_free, actual_free, field) {
            details.push(phrase.to_owned());
        }
    }
    if details.is_empty() {
        details.extend(other_fields_detail(golden_free, actual_free));
    }

    StepChange {
        kind: StepChangeKind::Changed,
        subagent: path.to_vec(),
        golden_step: Some(g + 1),
        actual_step: Some(a + 1),
        source: actual_source.into_owned(),
        details,
    }
}

/// What changed in the tools a step calls: the functions, or else each call's arguments.
fn call_details<V: View>(golden: &V, actual: &V, details: &mut Vec<String>) {
    let golden_functions: Vec<Cow<'_, str>> = step_functions(golden).collect();
    let actual_functions: Vec<Cow<'_, str>> = step_functions(actual).collect();
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
        return;
    }
    let golden_calls = golden.get("tool_calls").and_then(V::as_array);
    let actual_calls = actual.get("tool_calls").and_then(V::as_array);
    for (call_g, call_a) in
        golden_calls.into_iter().flatten().zip(actual_calls.into_iter().flatten())
    {
        let same = match (call_g.get("arguments"), call_a.get("arguments")) {
            (Some(g), Some(a)) => g.json_eq(a),
            (None, None) => true,
            _ => false,
        };
        if !same {
            let name = call_a.get("function_name").and_then(V::as_str);
            details.push(format!("arguments of {} changed", name.as_deref().unwrap_or("?")));
        }
    }
}

/// `2 more LLM calls`, `1 fewer LLM call`, or nothing when the counts agree.
fn llm_call_detail(golden: u64, actual: u64) -> Option<String> {
    let (n, word) = match actual.cmp(&golden) {
        std::cmp::Ordering::Equal => return None,
        std::cmp::Ordering::Greater => (actual - golden, "more"),
        std::cmp::Ordering::Less => (golden - actual, "fewer"),
    };
    let plural = if n == 1 { "" } else { "s" };
    Some(format!("{n} {word} LLM call{plural}"))
}

/// The other members that differ, `a, b changed`, for a step whose named parts all agree.
fn other_fields_detail<V: View>(
    golden: &PositionFree<'_, V>,
    actual: &PositionFree<'_, V>,
) -> Option<String> {
    if !golden.is_object() || !actual.is_object() {
        return None;
    }
    let mut fields: Vec<&str> = Vec::new();
    for key in golden.keys().into_iter().chain(actual.keys()) {
        if !same_member(golden, actual, key) && !fields.contains(&key) {
            fields.push(key);
        }
    }
    (!fields.is_empty()).then(|| format!("{} changed", fields.join(", ")))
}

/// Whether the member `key` is the same in both (as `serde_json::Value`s compare), or absent
/// from both.
fn same_member<V: View>(
    golden: &PositionFree<'_, V>,
    actual: &PositionFree<'_, V>,
    key: &str,
) -> bool {
    match (golden.get(key), actual.get(key)) {
        (None, None) => true,
        (Some(golden), Some(actual)) => golden.same_as(&actual, V::json_eq),
        _ => false,
    }
}

/// The first 40 characters of `text` on one line, quoted. The cut never falls inside a word, so
/// a path or an id is shown whole (up to 400 characters) or not at all.
fn preview(text: &str) -> String {
    const SHOWN: usize = 40;
    const LONGEST_WORD: usize = 400;
    let one_line: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let Some((cut, _)) = one_line.char_indices().nth(SHOWN) else {
        return format!("{one_line:?}");
    };
    // Extend the cut to the end of the word it falls in; a word longer than any path is cut
    // before it instead.
    let word_end = one_line[cut..].find(' ').map_or(one_line.len(), |end| cut + end);
    let end = if one_line[..word_end].chars().count() <= LONGEST_WORD {
        word_end
    } else {
        one_line[..cut].rfind(' ').unwrap_or(0)
    };
    if end >= one_line.len() {
        return format!("{one_line:?}");
    }
    format!("{:?}", format!("{}…", one_line[..end].trim_end()))
}

#[cfg(test)]
mod tests {
    use super::preview;

    #[test]
    fn a_preview_never_cuts_a_path_or_an_id() {
        let text =
            "Reading /home/runner/work/project/src/deeply/nested/module/file.rs now, then more";
        assert_eq!(
            preview(text),
            "\"Reading /home/runner/work/project/src/deeply/nested/module/file.rs…\""
        );
        assert_eq!(preview("short text"), "\"short text\"");
        let blob = format!("data {}", "A".repeat(1000));
        assert_eq!(preview(&blob), "\"data…\"");
    }
}
