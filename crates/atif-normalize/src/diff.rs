//! Comparing two Shapes field by field, and the unified diff of two canonical texts.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::Shape;
use crate::align::{Budget, LineDiff, align};
use crate::canonical::{WriteCanonical, canonical_string};

/// How [`diff`] compares two Shapes.
///
/// Defaults: `token_tolerance` 0.0 (token counts must match exactly), `compare_content` true.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffOptions {
    token_tolerance: f64,
    compare_content: bool,
}

impl Default for DiffOptions {
    fn default() -> DiffOptions {
        DiffOptions { token_tolerance: 0.0, compare_content: true }
    }
}

impl DiffOptions {
    /// The default options; the same as [`DiffOptions::default`].
    pub fn new() -> DiffOptions {
        DiffOptions::default()
    }

    /// The relative band allowed on `prompt_tokens` and `completion_tokens`: `0.1` accepts an
    /// actual count within 10% of the golden one. A golden count of 0 always requires 0.
    /// Negative and NaN values count as 0.
    pub fn set_token_tolerance(&mut self, tolerance: f64) -> &mut DiffOptions {
        self.token_tolerance = if tolerance.is_nan() { 0.0 } else { tolerance.max(0.0) };
        self
    }

    /// Whether `content_hash` is compared (default `true`); turn it off against a live model,
    /// where the words change but the structure should not.
    pub fn set_compare_content(&mut self, compare: bool) -> &mut DiffOptions {
        self.compare_content = compare;
        self
    }

    /// The relative band allowed on the two token fields.
    pub fn token_tolerance(&self) -> f64 {
        self.token_tolerance
    }

    /// Whether `content_hash` is compared.
    pub fn compare_content(&self) -> bool {
        self.compare_content
    }
}

/// One field of the Shape that differs between the golden run and the actual one.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    /// The Shape field's name, as serialised (`step_count`).
    pub field: String,
    /// The golden value.
    pub golden: Value,
    /// The actual value.
    pub actual: Value,
    /// For a field that lists what the steps did (`sources`, `functions`, `tool_errors`), each
    /// change named with its step: `step 22 removed Edit; step 25 removed Bash`, at most five, then `and N
    /// more changes; see what moved`. [`diff`] finds them by aligning the two runs' steps (each
    /// step by its source and the functions it calls), so a step that lost its call is named
    /// even among many alike. `None` for other fields, and for Shapes that know no steps (read
    /// back from JSON).
    pub step_edits: Option<String>,
}

impl fmt::Display for Delta {
    /// `step_count: 1 -> 2`; a list of what the steps did names each change with its step, then
    /// both lengths: `functions: step 22 removed Edit; step 25 removed Bash (27 -> 25 calls)`.
    /// Another list prints whole (`models: ["m-1"] -> ["m-2"]`), or as the items it lost and
    /// gained when that is too long (`models: -m-1, +m-2 (9 -> 9 models)`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (Value::Array(golden), Value::Array(actual)) = (&self.golden, &self.actual) else {
            return write!(f, "{}: {} -> {}", self.field, self.golden, self.actual);
        };
        let noun = match self.field.as_str() {
            "sources" => "steps",
            "functions" => "calls",
            "tool_errors" => "errors",
            "models" => "models",
            "subagents" => "subagents",
            _ => "items",
        };
        match &self.step_edits {
            Some(edits) => write!(f, "{}: {edits}", self.field)?,
            None if self.is_list_edit() => {
                let golden: Vec<String> = golden.iter().map(item_name).collect();
                let actual: Vec<String> = actual.iter().map(item_name).collect();
                write!(f, "{}: ", self.field)?;
                write_list_edit(f, &golden, &actual)?;
            }
            None => return write!(f, "{}: {} -> {}", self.field, self.golden, self.actual),
        }
        let (n_golden, n_actual) = (thousands(golden.len() as u64), thousands(actual.len() as u64));
        write!(f, " ({n_golden} -> {n_actual} {noun})")
    }
}

impl Delta {
    /// Whether the values are lists too long to print whole, so the delta prints as the edit
    /// that turns the golden list into the actual one.
    pub fn is_list_edit(&self) -> bool {
        match (&self.golden, &self.actual) {
            (Value::Array(_), Value::Array(_)) => {
                let whole = format!("{}: {} -> {}", self.field, self.golden, self.actual);
                whole.len() > MAX_WHOLE_DELTA
            }
            _ => false,
        }
    }
}

/// A delta whose `field: golden -> actual` form is longer than this many bytes prints as an
/// edit when its values are lists.
const MAX_WHOLE_DELTA: usize = 120;

/// How many edits of a list are named before the rest are counted.
const MAX_LIST_EDITS: usize = 3;

/// How many changes of a list of what the steps did are named before the rest are counted.
const MAX_STEP_EDITS: usize = 5;

fn item_name(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A root step as the deltas see it: its source and the functions it calls.
type StepKey<'a> = (&'a str, Vec<&'a str>);

/// Each root step of `shape` as its source and calls, or `None` when the Shape does not say
/// which step made each call (a Shape read from JSON).
fn step_keys(shape: &Shape) -> Option<Vec<StepKey<'_>>> {
    if shape.function_steps.len() != shape.functions.len() {
        return None;
    }
    let mut steps: Vec<StepKey<'_>> =
        shape.sources.iter().map(|source| (source.as_str(), Vec::new())).collect();
    for (function, &step) in shape.functions.iter().zip(&shape.function_steps) {
        let idx = usize::try_from(step).ok()?.checked_sub(1)?;
        steps.get_mut(idx)?.1.push(function.as_str());
    }
    Some(steps)
}

/// One item changed: what happened to it, the step it happened in, and the item.
type Atom = (&'static str, u64, String);

/// A step of one run, or of both: its index in the golden run's steps, in the actual run's.
type StepPair = (Option<usize>, Option<usize>);

/// The root steps of two Shapes as their sources and calls, and their pairing (see
/// [`paired_steps`]): made once for every field whose changes are named by step.
struct PairedSteps<'a> {
    golden: Vec<StepKey<'a>>,
    actual: Vec<StepKey<'a>>,
    pairs: Vec<StepPair>,
}

impl<'a> PairedSteps<'a> {
    /// The steps of both Shapes, paired, or `None` when a Shape does not say which step made
    /// each call (a Shape read from JSON).
    fn of(golden: &'a Shape, actual: &'a Shape) -> Option<PairedSteps<'a>> {
        let (golden, actual) = (step_keys(golden)?, step_keys(actual)?);
        let pairs = paired_steps(&golden, &actual);
        Some(PairedSteps { golden, actual, pairs })
    }
}

/// The step-named changes of `sources` and of `functions` between two Shapes (see
/// [`Delta::step_edits`]): each step removed, added or paired with another is told apart.
fn step_edits(steps: &PairedSteps<'_>) -> (String, String) {
    let (golden_steps, actual_steps) = (&steps.golden, &steps.actual);
    let mut sources: Vec<Atom> = Vec::new();
    let mut functions: Vec<Atom> = Vec::new();
    let removed = |idx: usize, sources: &mut Vec<Atom>, functions: &mut Vec<Atom>| {
        let (source, calls) = &golden_steps[idx];
        let step = idx as u64 + 1;
        sources.push(("removed", step, (*source).to_owned()));
        functions.extend(calls.iter().map(|call| ("removed", step, (*call).to_owned())));
    };
    let added = |idx: usize, sources: &mut Vec<Atom>, functions: &mut Vec<Atom>| {
        let (source, calls) = &actual_steps[idx];
        let step = idx as u64 + 1;
        sources.push(("added", step, (*source).to_owned()));
        functions.extend(calls.iter().map(|call| ("added", step, (*call).to_owned())));
    };
    for &pair in &steps.pairs {
        match pair {
            (Some(g), None) => removed(g, &mut sources, &mut functions),
            (None, Some(a)) => added(a, &mut sources, &mut functions),
            (Some(g), Some(a)) => {
                let ((g_source, g_calls), (a_source, a_calls)) =
                    (&golden_steps[g], &actual_steps[a]);
                if g_source != a_source {
                    sources.push(("replaced", a as u64 + 1, format!("{g_source} with {a_source}")));
                }
                // Steps paired as equal (the common ends, most of a long run) have no edits.
                if g_calls != a_calls {
                    call_edits(g_calls, a_calls, (g as u64 + 1, a as u64 + 1), &mut functions);
                }
            }
            (None, None) => {}
        }
    }
    (told(sources, "steps"), told(functions, "calls"))
}

/// The step-named changes of `tool_errors` (see [`Delta::step_edits`]): `step 3 bash failed`
/// for an error the golden run's partner step did not have, `step 3 bash no longer failed` for
/// one it lost, with the steps paired as for `functions`. A step of one run alone has its
/// errors named too, by its number in that run (an added step's as failed, a removed step's as
/// no longer failed), so that the named changes always add up to the counts.
fn tool_error_edits(golden: &Shape, actual: &Shape, steps: &PairedSteps<'_>) -> Option<String> {
    let (golden_errors, actual_errors) = (errors_by_step(golden)?, errors_by_step(actual)?);
    let at = |errors: &HashMap<u64, Vec<&str>>, step: usize| -> Vec<String> {
        let names = errors.get(&(step as u64 + 1)).map_or(&[][..], Vec::as_slice);
        names.iter().map(|name| (*name).to_owned()).collect()
    };
    let mut edits = Vec::new();
    for &pair in &steps.pairs {
        let (lost, gained, step) = match pair {
            (Some(g), Some(a)) => (at(&golden_errors, g), at(&actual_errors, a), a),
            (None, Some(a)) => (Vec::new(), at(&actual_errors, a), a),
            // A golden step the run no longer has: its errors are gone with it, and counted.
            (Some(g), None) => (at(&golden_errors, g), Vec::new(), g),
            (None, None) => continue,
        };
        if lost.is_empty() && gained.is_empty() {
            continue;
        }
        let step = thousands(step as u64 + 1);
        let mut lost = lost;
        for name in gained {
            match lost.iter().position(|l| *l == name) {
                Some(idx) => drop(lost.remove(idx)),
                None => edits.push(format!("step {step} {name} failed")),
            }
        }
        edits.extend(lost.into_iter().map(|name| format!("step {step} {name} no longer failed")));
    }
    let n_edits = edits.len();
    let mut shown: Vec<String> = edits.into_iter().take(MAX_STEP_EDITS).collect();
    if n_edits > MAX_STEP_EDITS {
        let more = n_edits - MAX_STEP_EDITS;
        let plural = if more == 1 { "" } else { "s" };
        shown.push(format!("and {more} more change{plural}; see what moved"));
    }
    (!shown.is_empty()).then(|| shown.join("; "))
}

/// The names in a Shape's `tool_errors` by their step, in their order, or `None` when the
/// Shape does not say which step each came from (a Shape read from JSON).
fn errors_by_step(shape: &Shape) -> Option<HashMap<u64, Vec<&str>>> {
    if shape.tool_error_steps.len() != shape.tool_errors.len() {
        return None;
    }
    let mut by_step: HashMap<u64, Vec<&str>> = HashMap::new();
    for (&step, name) in shape.tool_error_steps.iter().zip(&shape.tool_errors) {
        by_step.entry(step).or_default().push(name);
    }
    Some(by_step)
}

/// The most cells of the table that pairs the differing middle of two step lists; past it the
/// steps are aligned by [`aligned`] alone (equal steps only), which is linear in practice.
const MAX_PAIRING_CELLS: usize = 1 << 21;

/// The two step lists in order, as pairs of indices: a step of both runs, or of one alone.
///
/// Steps equal in source and calls pair first; the differing middle is then paired so that as
/// many steps as possible keep a partner with the same calls, then with the same source (a
/// weighted longest common subsequence). So a step that lost its call pairs with itself, and a
/// step inserted among many alike is found where it is, not wherever a plain alignment of equal
/// items would put it.
fn paired_steps(golden: &[StepKey<'_>], actual: &[StepKey<'_>]) -> Vec<StepPair> {
    // Each step as two numbers, equal where the steps (their sources) are: the pairing then
    // compares numbers, not strings and lists of strings.
    let (golden_ids, actual_ids) = step_ids(golden, actual);
    let (golden, actual) = (&golden_ids[..], &actual_ids[..]);
    let prefix = golden.iter().zip(actual).take_while(|(g, a)| g == a).count();
    let suffix = golden[prefix..]
        .iter()
        .rev()
        .zip(actual[prefix..].iter().rev())
        .take_while(|(g, a)| g == a)
        .count();
    let (golden_mid, actual_mid) =
        (&golden[prefix..golden.len() - suffix], &actual[prefix..actual.len() - suffix]);
    let mut pairs: Vec<StepPair> = (0..prefix).map(|idx| (Some(idx), Some(idx))).collect();
    let cells = (golden_mid.len() + 1).saturating_mul(actual_mid.len() + 1);
    if cells <= MAX_PAIRING_CELLS {
        pairs.extend(
            weighted_pairs(golden_mid, actual_mid)
                .into_iter()
                .map(|(g, a)| (g.map(|g| g + prefix), a.map(|a| a + prefix))),
        );
    } else {
        for op in aligned(golden_mid, actual_mid) {
            let (_, old, new) = op.as_tag_tuple();
            match op {
                similar::DiffOp::Equal { .. } => {
                    pairs.extend(old.zip(new).map(|(g, a)| (Some(g + prefix), Some(a + prefix))));
                }
                _ => {
                    pairs.extend(old.map(|g| (Some(g + prefix), None)));
                    pairs.extend(new.map(|a| (None, Some(a + prefix))));
                }
            }
        }
    }
    let (golden_end, actual_end) = (golden.len() - suffix, actual.len() - suffix);
    pairs.extend((0..suffix).map(|k| (Some(golden_end + k), Some(actual_end + k))));
    pairs
}

/// A step as numbers: its source and calls together, and its source alone; two steps get the
/// same number where they are equal.
type StepId = (usize, usize);

/// The [`StepId`] of each step of `golden` and `actual`.
fn step_ids<'k>(
    golden: &'k [StepKey<'k>],
    actual: &'k [StepKey<'k>],
) -> (Vec<StepId>, Vec<StepId>) {
    let mut keys: HashMap<&'k StepKey<'k>, usize> = HashMap::new();
    let mut sources: HashMap<&'k str, usize> = HashMap::new();
    let mut id_of = |step: &'k StepKey<'k>| -> StepId {
        let (n_keys, n_sources) = (keys.len(), sources.len());
        (*keys.entry(step).or_insert(n_keys), *sources.entry(step.0).or_insert(n_sources))
    };
    let golden = golden.iter().map(&mut id_of).collect();
    let actual = actual.iter().map(&mut id_of).collect();
    (golden, actual)
}

/// The weighted longest common subsequence of two short step lists (see [`paired_steps`]).
fn weighted_pairs(golden: &[StepId], actual: &[StepId]) -> Vec<StepPair> {
    // 4 for the same calls (and so the same source), 2 for the same source, 1 for neither.
    let weight = |g: &StepId, a: &StepId| 1 + u32::from(g.1 == a.1) + 2 * u32::from(g.0 == a.0);
    let width = actual.len() + 1;
    // best[i * width + j]: the best score pairing golden[i..] with actual[j..]; the last row
    // and the last column are 0.
    let mut best = vec![0u32; (golden.len() + 1) * width];
    for (i, g) in golden.iter().enumerate().rev() {
        let (row, below) = best[i * width..(i + 2) * width].split_at_mut(width);
        // The cell to the right of the one being filled, `row[j + 1]`.
        let mut right = 0;
        let cells = row.iter_mut().zip(actual).zip(below.windows(2));
        for ((cell, a), down) in cells.rev() {
            // down[0] pairs neither step, down[1] pairs golden[i] with actual[j].
            right = (down[1] + weight(g, a)).max(down[0]).max(right);
            *cell = right;
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut pairs = Vec::new();
    while i < golden.len() && j < actual.len() {
        let here = best[i * width + j];
        if here == best[(i + 1) * width + j + 1] + weight(&golden[i], &actual[j]) {
            pairs.push((Some(i), Some(j)));
            (i, j) = (i + 1, j + 1);
        } else if here == best[(i + 1) * width + j] {
            pairs.push((Some(i), None));
            i += 1;
        } else {
            pairs.push((None, Some(j)));
            j += 1;
        }
    }
    pairs.extend((i..golden.len()).map(|g| (Some(g), None)));
    pairs.extend((j..actual.len()).map(|a| (None, Some(a))));
    pairs
}

/// The changes from one step's calls to its partner's: removals named with the golden step,
/// additions and replacements with the actual one.
fn call_edits(golden: &[&str], actual: &[&str], steps: (u64, u64), out: &mut Vec<Atom>) {
    let (g_step, a_step) = steps;
    // Most steps make one call or none; their edit is the one the alignment would find.
    match (golden, actual) {
        ([], _) => out.extend(actual.iter().map(|a| ("added", a_step, (*a).to_owned()))),
        (_, []) => out.extend(golden.iter().map(|g| ("removed", g_step, (*g).to_owned()))),
        ([g], [a]) if g != a => out.push(("replaced", a_step, format!("{g} with {a}"))),
        _ => aligned_call_edits(golden, actual, steps, out),
    }
}

/// [`call_edits`] by aligning the two lists of calls.
fn aligned_call_edits(
    golden: &[&str],
    actual: &[&str],
    (g_step, a_step): (u64, u64),
    out: &mut Vec<Atom>,
) {
    for op in aligned(golden, actual) {
        let (_, old, new) = op.as_tag_tuple();
        if matches!(op, similar::DiffOp::Equal { .. }) {
            continue;
        }
        let paired = old.len().min(new.len());
        for k in 0..paired {
            let text = format!("{} with {}", golden[old.start + k], actual[new.start + k]);
            out.push(("replaced", a_step, text));
        }
        out.extend(old.skip(paired).map(|g| ("removed", g_step, golden[g].to_owned())));
        out.extend(new.skip(paired).map(|a| ("added", a_step, actual[a].to_owned())));
    }
}

/// `step 22 removed Edit, Bash; step 25 added Grep`: runs of the same change in the same step
/// told as one, at most [`MAX_STEP_EDITS`], then how many more.
fn told(atoms: Vec<Atom>, noun: &str) -> String {
    let mut edits: Vec<(&str, u64, Vec<String>)> = Vec::new();
    for (what, step, item) in atoms {
        match edits.last_mut() {
            Some((last_what, last_step, items)) if *last_what == what && *last_step == step => {
                items.push(item);
            }
            _ => edits.push((what, step, vec![item])),
        }
    }
    let mut shown: Vec<String> = edits
        .iter()
        .take(MAX_STEP_EDITS)
        .map(|(what, step, items)| {
            clip_edit(&format!("step {} {what} {}", thousands(*step), run_of(items, noun)))
        })
        .collect();
    if edits.len() > MAX_STEP_EDITS {
        let more = edits.len() - MAX_STEP_EDITS;
        let plural = if more == 1 { "" } else { "s" };
        shown.push(format!("and {more} more change{plural}; see what moved"));
    }
    shown.join("; ")
}

/// The edits that turn `golden` into `actual`, within a work budget of their own (see
/// [`align`]), so that two long unrelated lists still end, and end the same way every time.
fn aligned<T: Hash + Eq>(golden: &[T], actual: &[T]) -> Vec<similar::DiffOp> {
    align(golden, actual, &mut Budget::new())
}

/// `-a, +b, -c and 4 more`: the items a list of names (sorted: `models`, `subagents`) lost and
/// gained; positions in a sorted list would say nothing.
fn write_list_edit(
    f: &mut fmt::Formatter<'_>,
    golden: &[String],
    actual: &[String],
) -> fmt::Result {
    let mut edits = Vec::new();
    for op in aligned(golden, actual) {
        let (removed, added) = match op {
            similar::DiffOp::Equal { .. } => continue,
            similar::DiffOp::Insert { new_index, new_len, .. } => {
                (&golden[..0], &actual[new_index..new_index + new_len])
            }
            similar::DiffOp::Delete { old_index, old_len, .. } => {
                (&golden[old_index..old_index + old_len], &actual[..0])
            }
            similar::DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                (&golden[old_index..old_index + old_len], &actual[new_index..new_index + new_len])
            }
        };
        edits.extend(removed.iter().map(|item| format!("-{item}")));
        edits.extend(added.iter().map(|item| format!("+{item}")));
    }
    let shown: Vec<String> =
        edits.iter().take(MAX_LIST_EDITS).map(|edit| clip_edit(edit)).collect();
    f.write_str(&shown.join(", "))?;
    if edits.len() > MAX_LIST_EDITS {
        write!(f, " and {} more", edits.len() - MAX_LIST_EDITS)?;
    }
    Ok(())
}

/// `a, b, c`, or `a, b and 17 more calls` for a run of more than three items.
fn run_of(items: &[String], noun: &str) -> String {
    match items {
        [first, second, _, _, ..] => {
            format!("{first}, {second} and {} more {noun}", items.len() - 2)
        }
        _ => items.join(", "),
    }
}

/// An edit naming a long run of items is cut after about 100 bytes (on a character boundary).
fn clip_edit(edit: &str) -> String {
    match edit.char_indices().map(|(idx, _)| idx).find(|&idx| idx >= 100) {
        Some(cut) => format!("{}...", &edit[..cut]),
        None => edit.to_owned(),
    }
}

/// `1500` as `1,500`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (idx, digit) in digits.chars().enumerate() {
        if idx > 0 && (digits.len() - idx) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The fields of `actual` that differ from `golden`: structural fields first, in the Shape's
/// field order, `content_hash` last.
///
/// The fields are iterated generically from the Shape's serialised form, so a field added to
/// [`Shape`] is compared without touching this function.
pub fn diff(golden_shape: &Shape, actual_shape: &Shape, options: &DiffOptions) -> Vec<Delta> {
    let golden_fields = golden_shape.fields();
    let actual_fields = actual_shape.fields();
    let mut deltas = Vec::new();
    // The steps are paired once, for every field whose changes are named by step.
    let mut steps = None;
    let mut edits = None;
    let mut content = Vec::new();
    for ((field, golden), (_, actual)) in golden_fields.into_iter().zip(actual_fields) {
        let same = match field.as_str() {
            "prompt_tokens" | "completion_tokens" => {
                within_tolerance(&golden, &actual, options.token_tolerance)
            }
            _ => golden == actual,
        };
        if same {
            continue;
        }
        let step_edits = match field.as_str() {
            "sources" | "functions" => {
                let steps =
                    steps.get_or_insert_with(|| PairedSteps::of(golden_shape, actual_shape));
                let edits = edits.get_or_insert_with(|| steps.as_ref().map(step_edits));
                edits.as_ref().map(|(sources, functions)| match field.as_str() {
                    "sources" => sources.clone(),
                    _ => functions.clone(),
                })
            }
            "tool_errors" => {
                let steps =
                    steps.get_or_insert_with(|| PairedSteps::of(golden_shape, actual_shape));
                steps.as_ref().and_then(|steps| tool_error_edits(golden_shape, actual_shape, steps))
            }
            _ => None,
        };
        let delta = Delta { field, golden, actual, step_edits };
        if delta.field == "content_hash" {
            if options.compare_content {
                content.push(delta);
            }
        } else {
            deltas.push(delta);
        }
    }
    deltas.extend(content);
    deltas
}

/// The unified diff of the canonical texts of two (normalised) trajectories, headed
/// `--- golden` / `+++ actual`; empty when the texts are equal.
pub fn render(golden: &Value, actual: &Value) -> String {
    render_views(golden, actual, ("golden", "actual"))
}

/// [`render`] for either tree, headed with the given names of the two sides.
pub(crate) fn render_views<T: WriteCanonical>(
    golden: &T,
    actual: &T,
    (old, new): (&str, &str),
) -> String {
    let golden_text = canonical_string(golden);
    let actual_text = canonical_string(actual);
    if golden_text == actual_text {
        return String::new();
    }
    // Myers finds the shortest diff, instantly on texts of ordinary size. On large texts full
    // of repeated structural lines (`},`) its search runs long: on two unrelated 15 MB runs it
    // ran past 10 s. Past a fixed budget of work the alignment anchors on lines found once in
    // each text (messages, contents), as patience does, which is fast and reads well; the
    // budget counts work, not time, so the same runs give the same diff on any machine.
    LineDiff::of(&golden_text, &actual_text).unified((old, new), 3)
}

fn within_tolerance(golden: &Value, actual: &Value, tolerance: f64) -> bool {
    match (golden.as_u64(), actual.as_u64()) {
        (Some(golden), Some(actual)) => {
            let band = golden as f64 * tolerance;
            (golden as f64 - actual as f64).abs() <= band
        }
        _ => golden == actual,
    }
}

/// The Shape's fields as (name, value) pairs in declaration order.
pub(crate) fn fields(shape: &Shape) -> Vec<(String, Value)> {
    // serde_json's own map sorts keys, so read the serialised text back through a visitor that
    // keeps the order the fields were written in.
    serde_json::to_string(shape)
        .ok()
        .and_then(|text| serde_json::from_str::<OrderedFields>(&text).ok())
        .map(|fields| fields.0)
        .unwrap_or_default()
}

struct OrderedFields(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for OrderedFields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<OrderedFields, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = OrderedFields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedFields, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    fields.push(entry);
                }
                Ok(OrderedFields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    use super::*;

    /// A root step for the tests: its source, the functions it calls, the ones that failed.
    type TestStep = (usize, Vec<usize>, Vec<usize>);

    const SOURCES: [&str; 3] = ["user", "agent", "system"];
    const FUNCTIONS: [&str; 4] = ["read_file", "grep", "bash", "edit"];

    /// A Shape whose root steps are `steps`; only the fields the step edits read are set.
    fn shape_of(steps: &[TestStep]) -> Shape {
        let mut shape = Shape {
            step_count: steps.len() as u64,
            sources: Vec::new(),
            llm_calls: 0,
            functions: Vec::new(),
            tool_errors: Vec::new(),
            subagents: Vec::new(),
            models: Vec::new(),
            crashed: false,
            prompt_tokens: None,
            completion_tokens: None,
            content_hash: String::new(),
            function_steps: Vec::new(),
            tool_error_steps: Vec::new(),
        };
        for (idx, (source, calls, errors)) in steps.iter().enumerate() {
            let step = idx as u64 + 1;
            shape.sources.push(SOURCES[*source].to_owned());
            for &call in calls {
                shape.functions.push(FUNCTIONS[call].to_owned());
                shape.function_steps.push(step);
            }
            for &error in errors {
                shape.tool_errors.push(FUNCTIONS[error].to_owned());
                shape.tool_error_steps.push(step);
            }
        }
        shape
    }

    /// Short runs of few kinds of steps, so that the two runs share many and differ in many.
    fn runs() -> impl Strategy<Value = (Vec<TestStep>, Vec<TestStep>)> {
        let step = (0..SOURCES.len(), vec(0..FUNCTIONS.len(), 0..3), vec(0..FUNCTIONS.len(), 0..2));
        let run = vec(step, 0..24);
        (run.clone(), run)
    }

    /// The pairing as first written: every cell compares the two steps' strings.
    fn pairing_by_strings(golden: &[StepKey<'_>], actual: &[StepKey<'_>]) -> Vec<StepPair> {
        let prefix = golden.iter().zip(actual).take_while(|(g, a)| g == a).count();
        let suffix = golden[prefix..]
            .iter()
            .rev()
            .zip(actual[prefix..].iter().rev())
            .take_while(|(g, a)| g == a)
            .count();
        let (golden_mid, actual_mid) =
            (&golden[prefix..golden.len() - suffix], &actual[prefix..actual.len() - suffix]);
        let weight = |g: &StepKey<'_>, a: &StepKey<'_>| match (g == a, g.0 == a.0) {
            (true, _) => 4,
            (false, true) => 2,
            (false, false) => 1,
        };
        let (n, m) = (golden_mid.len(), actual_mid.len());
        let mut best = vec![vec![0u32; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                let pair = best[i + 1][j + 1] + weight(&golden_mid[i], &actual_mid[j]);
                best[i][j] = pair.max(best[i + 1][j]).max(best[i][j + 1]);
            }
        }
        let mut pairs: Vec<StepPair> = (0..prefix).map(|idx| (Some(idx), Some(idx))).collect();
        let (mut i, mut j) = (0, 0);
        while i < n && j < m {
            if best[i][j] == best[i + 1][j + 1] + weight(&golden_mid[i], &actual_mid[j]) {
                pairs.push((Some(prefix + i), Some(prefix + j)));
                (i, j) = (i + 1, j + 1);
            } else if best[i][j] == best[i + 1][j] {
                pairs.push((Some(prefix + i), None));
                i += 1;
            } else {
                pairs.push((None, Some(prefix + j)));
                j += 1;
            }
        }
        pairs.extend((i..n).map(|g| (Some(prefix + g), None)));
        pairs.extend((j..m).map(|a| (None, Some(prefix + a))));
        let (golden_end, actual_end) = (golden.len() - suffix, actual.len() - suffix);
        pairs.extend((0..suffix).map(|k| (Some(golden_end + k), Some(actual_end + k))));
        pairs
    }

    /// The tool errors' edits as first written: the errors of a step found by scanning them all.
    fn tool_error_edits_by_scanning(golden: &Shape, actual: &Shape) -> Vec<String> {
        let steps = PairedSteps::of(golden, actual).expect("the test's Shapes know their steps");
        let at = |shape: &Shape, step: usize| -> Vec<String> {
            let step = step as u64 + 1;
            let errors = shape.tool_error_steps.iter().zip(&shape.tool_errors);
            errors.filter(|(s, _)| **s == step).map(|(_, name)| name.clone()).collect()
        };
        let mut edits = Vec::new();
        for &pair in &steps.pairs {
            let (mut lost, gained, step) = match pair {
                (Some(g), Some(a)) => (at(golden, g), at(actual, a), a),
                (None, Some(a)) => (Vec::new(), at(actual, a), a),
                (Some(g), None) => (at(golden, g), Vec::new(), g),
                (None, None) => continue,
            };
            let step = thousands(step as u64 + 1);
            for name in gained {
                match lost.iter().position(|l| *l == name) {
                    Some(idx) => drop(lost.remove(idx)),
                    None => edits.push(format!("step {step} {name} failed")),
                }
            }
            edits.extend(
                lost.into_iter().map(|name| format!("step {step} {name} no longer failed")),
            );
        }
        edits
    }

    #[test]
    fn a_step_of_one_call_or_none_gets_the_edits_its_alignment_would_give() {
        let mut runner = TestRunner::new_with_rng(
            Config { cases: 500, failure_persistence: None, ..Config::default() },
            TestRng::from_seed(RngAlgorithm::ChaCha, &[5; 32]),
        );
        let calls = vec(0..3usize, 0..4);
        runner
            .run(&(calls.clone(), calls), |(golden, actual)| {
                let golden: Vec<&str> = golden.into_iter().map(|idx| FUNCTIONS[idx]).collect();
                let actual: Vec<&str> = actual.into_iter().map(|idx| FUNCTIONS[idx]).collect();
                let (mut fast, mut general) = (Vec::new(), Vec::new());
                call_edits(&golden, &actual, (3, 4), &mut fast);
                aligned_call_edits(&golden, &actual, (3, 4), &mut general);
                prop_assert_eq!(fast, general);
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn steps_are_paired_by_their_numbers_exactly_as_by_their_strings() {
        let mut runner = TestRunner::new_with_rng(
            Config { cases: 1000, failure_persistence: None, ..Config::default() },
            TestRng::from_seed(RngAlgorithm::ChaCha, &[22; 32]),
        );
        runner
            .run(&runs(), |(golden, actual)| {
                let (golden, actual) = (shape_of(&golden), shape_of(&actual));
                let steps = PairedSteps::of(&golden, &actual).expect("steps are known");
                prop_assert_eq!(&steps.pairs, &pairing_by_strings(&steps.golden, &steps.actual));
                // Past the table's size the steps are aligned alone; as numbers, the same way.
                let (golden_ids, actual_ids) = step_ids(&steps.golden, &steps.actual);
                prop_assert_eq!(
                    aligned(&golden_ids, &actual_ids),
                    aligned(&steps.golden, &steps.actual)
                );
                let edits = tool_error_edits_by_scanning(&golden, &actual);
                let mut told: Vec<String> = edits.iter().take(MAX_STEP_EDITS).cloned().collect();
                if edits.len() > MAX_STEP_EDITS {
                    let more = edits.len() - MAX_STEP_EDITS;
                    let plural = if more == 1 { "" } else { "s" };
                    told.push(format!("and {more} more change{plural}; see what moved"));
                }
                let expected = (!told.is_empty()).then(|| told.join("; "));
                prop_assert_eq!(tool_error_edits(&golden, &actual, &steps), expected);
                Ok(())
            })
            .unwrap();
    }
}
