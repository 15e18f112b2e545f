//! Comparing two Shapes field by field, and the unified diff of two canonical texts.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::time::Duration;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use similar::{Algorithm, TextDiff};

use crate::Shape;
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
}

impl fmt::Display for Delta {
    /// `step_count: 1 -> 2`, `functions: ["read_file"] -> ["read_file","grep"]`; a long list
    /// prints as the edit that turns one into the other instead of both lists:
    /// `functions: +inserted_probe_tool at 701 (1,500 -> 1,501 calls)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.golden, &self.actual) {
            (Value::Array(golden), Value::Array(actual)) if self.is_list_edit() => {
                write!(f, "{}: ", self.field)?;
                write_list_edit(f, golden, actual)?;
                let noun = match self.field.as_str() {
                    "sources" => "steps",
                    "functions" => "calls",
                    "models" => "models",
                    "subagents" => "subagents",
                    _ => "items",
                };
                write!(
                    f,
                    " ({} -> {} {noun})",
                    thousands(golden.len() as u64),
                    thousands(actual.len() as u64)
                )
            }
            _ => write!(f, "{}: {} -> {}", self.field, self.golden, self.actual),
        }
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

/// `+a at 5, -b at 9, c -> d at 12`: the edits that turn `golden` into `actual`, with 1-based
/// positions (in `actual` for insertions and replacements, in `golden` for removals).
fn write_list_edit(f: &mut fmt::Formatter<'_>, golden: &[Value], actual: &[Value]) -> fmt::Result {
    let name = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let golden: Vec<String> = golden.iter().map(name).collect();
    let actual: Vec<String> = actual.iter().map(name).collect();
    let (golden_ids, actual_ids) = interned(&golden, &actual);
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &golden_ids,
        &actual_ids,
        Some(std::time::Instant::now() + Duration::from_secs(2)),
    );
    let mut edits = Vec::new();
    for op in ops {
        edits.push(match op {
            similar::DiffOp::Equal { .. } => continue,
            similar::DiffOp::Insert { new_index, new_len, .. } => {
                let added = run_of(&actual[new_index..new_index + new_len]);
                format!("+{added}{}", at(&actual, new_index, new_len))
            }
            similar::DiffOp::Delete { old_index, old_len, .. } => {
                let removed = run_of(&golden[old_index..old_index + old_len]);
                format!("-{removed}{}", at(&golden, old_index, old_len))
            }
            similar::DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                let removed = run_of(&golden[old_index..old_index + old_len]);
                let added = run_of(&actual[new_index..new_index + new_len]);
                format!("{removed} -> {added} at {}", thousands(new_index as u64 + 1))
            }
        });
    }
    let shown: Vec<String> =
        edits.iter().take(MAX_LIST_EDITS).map(|edit| clip_edit(edit)).collect();
    f.write_str(&shown.join(", "))?;
    if edits.len() > MAX_LIST_EDITS {
        write!(f, ", ... {} more edits", edits.len() - MAX_LIST_EDITS)?;
    }
    Ok(())
}

/// Each item of `golden` and `actual` as a number, the same number for equal items: the
/// alignment of two long lists then compares numbers, not strings, and finds the same edits.
pub(crate) fn interned<T: Hash + Eq>(golden: &[T], actual: &[T]) -> (Vec<usize>, Vec<usize>) {
    let mut ids: HashMap<&T, usize> = HashMap::new();
    let mut id_of = |item| {
        let next = ids.len();
        *ids.entry(item).or_insert(next)
    };
    let golden = golden.iter().map(&mut id_of).collect();
    let actual = actual.iter().map(&mut id_of).collect();
    (golden, actual)
}

/// ` at 701`: where the run of `len` items at `idx` of `items` was inserted or removed; nothing
/// when the items before or after it are the same run (`agent` among `agent`s), where any position
/// would be as right as any other.
fn at(items: &[String], idx: usize, len: usize) -> String {
    let run = &items[idx..idx + len];
    let ambiguous = (idx >= len && &items[idx - len..idx] == run)
        || items.get(idx + len..idx + 2 * len).is_some_and(|after| after == run);
    if ambiguous { String::new() } else { format!(" at {}", thousands(idx as u64 + 1)) }
}

/// `a, b, c`, or `a, b and 17 more` for a run of more than three items.
fn run_of(items: &[String]) -> String {
    match items {
        [first, second, _, _, ..] => format!("{first}, {second} and {} more", items.len() - 2),
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
pub fn diff(golden: &Shape, actual: &Shape, options: &DiffOptions) -> Vec<Delta> {
    let golden_fields = golden.fields();
    let actual_fields = actual.fields();
    let mut deltas = Vec::new();
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
        let delta = Delta { field, golden, actual };
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

/// Canonical texts longer than this many lines are diffed with the patience algorithm.
const PATIENCE_FROM_LINES: usize = 20_000;

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
    // ran into a 10 s timeout. Those go to patience, which anchors on lines found once in each
    // text (messages, contents) and finished in 2.8 s with a shorter diff. The timeout bounds
    // pathological inputs, where the diff comes out coarser but still correct.
    let n_lines = |text: &str| text.bytes().filter(|&byte| byte == b'\n').count();
    let n_lines = n_lines(&golden_text).max(n_lines(&actual_text));
    let algorithm =
        if n_lines > PATIENCE_FROM_LINES { Algorithm::Patience } else { Algorithm::Myers };
    TextDiff::configure()
        .algorithm(algorithm)
        .timeout(Duration::from_secs(5))
        .diff_lines(&golden_text, &actual_text)
        .unified_diff()
        .context_radius(3)
        .header(old, new)
        .to_string()
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
    use super::*;

    #[test]
    fn equal_items_get_equal_numbers_and_different_items_different_ones() {
        let (golden, actual) = interned(&["grep", "cat", "grep"], &["cat", "rg", "grep"]);
        assert_eq!(golden, [0, 1, 0]);
        assert_eq!(actual, [1, 2, 0]);
    }
}
