//! The one failure report, shared by the golden check, `atif diff`, `atif check` and review:
//! the Shape deltas, the step-level explanation, then a unified diff cut to the first changed
//! places, each a step (or the fields outside the steps, or a subagent) rather than a stretch of
//! text, so steps renumbered after an insertion never show as changes of their own.

use std::fmt::Write as _;

use serde_json::Value;

use crate::align::LineDiff;
use crate::canonical::{Sink, WriteCanonical, canonical_string, write_members};
use crate::diff::render_views;
use crate::explain::{same_but_id, steps};
use crate::shape::subagents_of;
use crate::view::View;
use crate::{Delta, StepChange, explain};

/// How much a [`report`] shows.
///
/// Defaults: the first 3 changed places of the unified diff, at most 40 lines each, lines cut
/// after 160 characters, the first 10 lines of the step-level explanation, and no command for
/// the full diff. [`ReportOptions::set_full`] shows everything instead (what `atif diff --full`
/// prints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    max_places: usize,
    max_changes: usize,
    full: bool,
    full_command: Option<String>,
    names: Option<(String, String)>,
}

impl Default for ReportOptions {
    fn default() -> ReportOptions {
        ReportOptions {
            max_places: 3,
            max_changes: 10,
            full: false,
            full_command: None,
            names: None,
        }
    }
}

impl ReportOptions {
    /// The default options; the same as [`ReportOptions::default`].
    pub fn new() -> ReportOptions {
        ReportOptions::default()
    }

    /// How many changed places (a step, the fields outside the steps, a subagent) the unified
    /// diff shows before it names how many it left out.
    pub fn set_max_places(&mut self, places: usize) -> &mut ReportOptions {
        self.max_places = places;
        self
    }

    /// How many changed places the unified diff shows.
    pub fn max_places(&self) -> usize {
        self.max_places
    }

    /// How many lines of the step-level explanation are shown.
    pub fn set_max_changes(&mut self, changes: usize) -> &mut ReportOptions {
        self.max_changes = changes;
        self
    }

    /// How many lines of the step-level explanation are shown.
    pub fn max_changes(&self) -> usize {
        self.max_changes
    }

    /// Shows every explanation line and the whole unified diff of the canonical texts.
    pub fn set_full(&mut self, full: bool) -> &mut ReportOptions {
        self.full = full;
        self
    }

    /// Whether everything is shown.
    pub fn full(&self) -> bool {
        self.full
    }

    /// The command a cut report names as the way to see everything
    /// (`atif diff --full golden.json run.json`); `None` names none.
    pub fn set_full_command(&mut self, command: Option<String>) -> &mut ReportOptions {
        self.full_command = command;
        self
    }

    /// The command a cut report names as the way to see everything, if set.
    pub fn full_command(&self) -> Option<&str> {
        self.full_command.as_deref()
    }

    /// Names the two runs (`a.json`, `b.json`) when they are two runs rather than a golden and
    /// the run checked against it: the report then heads with `a.json -> b.json: 2 differences
    /// in the Shape:` instead of `agent behaviour changed`, and its diff with `--- a.json` and
    /// `+++ b.json` instead of `--- golden` and `+++ actual`. `None` (the default) is the
    /// golden check's wording.
    pub fn set_names(&mut self, names: Option<(String, String)>) -> &mut ReportOptions {
        self.names = names;
        self
    }

    /// The names of the two runs, if set.
    pub fn names(&self) -> Option<(&str, &str)> {
        self.names.as_ref().map(|(old, new)| (old.as_str(), new.as_str()))
    }

    /// The labels of the two sides: the names, or `golden` and `actual`.
    fn labels(&self) -> (&str, &str) {
        self.names().unwrap_or(("golden", "actual"))
    }
}

/// The report of how `actual` differs from `golden` (both normalised), whose Shapes differ by
/// `deltas` (from [`diff`](crate::diff)); empty when there are no deltas.
///
/// It reads in one screen, whatever the size of the runs:
///
/// ```text
/// agent behaviour changed (5 difference(s)):
///   step_count: 1500 -> 1501
///   functions: step 701 added inserted_probe_tool (1,500 -> 1,501 calls)
///   ...
/// what moved, step by step:
///   step 701 (agent) inserted: calls inserted_probe_tool
/// unified diff (golden -> actual), 1 changed place:
/// --- golden
/// +++ actual
/// @@ step 701 inserted @@
/// +{
/// ...
/// ```
///
/// The unified diff is cut into changed places: each step the explanation names, the fields
/// outside the steps, each subagent that differs. Only the first few are shown (see
/// [`ReportOptions`]), with a count of those left out and the command that prints everything.
/// Steps that moved without changing (renumbered after an insertion) are no place of their own.
pub fn report(golden: &Value, actual: &Value, deltas: &[Delta], options: &ReportOptions) -> String {
    if deltas.is_empty() {
        return String::new();
    }
    report_views(golden, actual, deltas, &explain(golden, actual), options)
}

/// The report of `golden` against `actual` with the explanation given, for either tree.
pub(crate) fn report_views<V: View, D: std::fmt::Display>(
    golden: &V,
    actual: &V,
    deltas: &[D],
    changes: &[StepChange],
    options: &ReportOptions,
) -> String {
    let mut out = String::new();
    if deltas.is_empty() {
        return out;
    }
    // Writing into a String cannot fail, so the fmt::Results below are ignored.
    match options.names() {
        Some((old, new)) => {
            let plural = if deltas.len() == 1 { "" } else { "s" };
            let _ =
                writeln!(out, "{old} -> {new}: {} difference{plural} in the Shape:", deltas.len());
        }
        None => {
            let _ = writeln!(out, "agent behaviour changed ({} difference(s)):", deltas.len());
        }
    }
    if let Some(note) = capture_note(golden, actual, options) {
        let _ = writeln!(out, "  {note}");
    }
    for delta in deltas {
        let _ = writeln!(out, "  {delta}");
    }
    out.push_str("what moved, step by step:\n");
    if changes.is_empty() {
        // explain names something whenever the two documents differ; say so if it ever does not.
        out.push_str("  (no step-level difference found; see the unified diff)\n");
    }
    let n_shown = shown_changes(changes.len(), options);
    for change in &changes[..n_shown] {
        let _ = writeln!(out, "  {change}");
    }
    if n_shown < changes.len() {
        let _ = writeln!(out, "  ... {} more step changes", changes.len() - n_shown);
    }
    let diff = report_diff_views(golden, actual, changes, options);
    if !diff.text.is_empty() {
        let (old, new) = options.labels();
        let _ = writeln!(out, "unified diff ({old} -> {new}){}:", diff.title);
        out.push_str(&diff.text);
    }
    out
}

/// A line saying that the two runs were captured with different amounts of content (an
/// imported trace's `extra.capture.content`: `full`, `partial` or `none`), when they were: a
/// trace recorded without content cannot match one recorded with it, whatever the agent did,
/// and the deltas alone would not say why.
fn capture_note<V: View>(golden: &V, actual: &V, options: &ReportOptions) -> Option<String> {
    let level = |doc: &V| doc.str_at(&["extra", "capture", "content"]).map(|c| c.into_owned());
    let (golden_level, actual_level) = (level(golden)?, level(actual)?);
    if golden_level == actual_level {
        return None;
    }
    let (old, new) = options.labels();
    let hint = match (golden_level.as_str(), actual_level.as_str()) {
        ("full" | "partial", "none") => format!(
            "{new} was captured without content (content capture off where the trace was recorded); turn it on, as docs/otel.md says under \"Capture levels\", and record again, or compare structure only (`--no-content`)"
        ),
        ("none", _) => format!(
            "{old} was captured without content; accept {new} as the golden if it is the run to keep"
        ),
        _ => "some content is missing from one of them (see `extra.capture.missing`)".to_owned(),
    };
    Some(format!(
        "captured with different content: {old} \"{golden_level}\", {new} \"{actual_level}\" (extra.capture.content): {hint}"
    ))
}

/// How many of `n_changes` step changes (from [`explain`]) a report with `options` lists.
pub fn shown_changes(n_changes: usize, options: &ReportOptions) -> usize {
    if options.full { n_changes } else { n_changes.min(options.max_changes) }
}

/// The unified diff a [`report`] shows, from
/// [`Comparison::report_diff`](crate::Comparison::report_diff): the first changed places, or
/// all of the diff with [`ReportOptions::set_full`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportDiff {
    /// What the diff covers, to follow `unified diff (golden -> actual)` in a title:
    /// `, first 3 of 12 changed places` or `, 1 changed place`; empty for the full diff.
    pub title: String,
    /// The diff, from its `--- golden` line; empty when the documents are the same.
    pub text: String,
}

/// The unified diff of a report, for either tree; see [`ReportDiff`].
pub(crate) fn report_diff_views<V: View>(
    golden: &V,
    actual: &V,
    changes: &[StepChange],
    options: &ReportOptions,
) -> ReportDiff {
    let (old, new) = options.labels();
    if options.full {
        return ReportDiff { title: String::new(), text: render_views(golden, actual, (old, new)) };
    }
    let places = changed_places(golden, actual, changes);
    if places.is_empty() {
        return ReportDiff { title: String::new(), text: String::new() };
    }
    let n_places = places.len();
    let n_shown = n_places.min(options.max_places);
    let plural = if n_places == 1 { "" } else { "s" };
    let title = if n_shown < n_places {
        format!(", first {n_shown} of {n_places} changed places")
    } else {
        format!(", {n_places} changed place{plural}")
    };
    let mut text = format!("--- {old}\n+++ {new}\n");
    for place in &places[..n_shown] {
        place.write(golden, actual, &mut text);
    }
    if n_shown < n_places {
        let left_out = n_places - n_shown;
        let plural = if left_out == 1 { "" } else { "s" };
        let _ = write!(text, "... {left_out} more changed place{plural} left out");
        match &options.full_command {
            Some(command) => {
                let _ = writeln!(text, "; the full diff: {command}");
            }
            None => text.push('\n'),
        }
    }
    ReportDiff { title, text }
}

/// Lines of one changed place shown before the rest is counted.
const MAX_PLACE_LINES: usize = 40;

/// Characters of one diff line shown before the rest is counted.
const MAX_LINE_CHARS: usize = 160;

/// A part of the two documents that differs, in the order a reader meets them.
#[derive(Debug)]
enum Place {
    /// A root step: its 1-based positions in the golden and actual runs.
    Step { golden: Option<usize>, actual: Option<usize> },
    /// The root's members other than its steps and subagents.
    Outside,
    /// The subagents of this name (paired as the explanation pairs them).
    Subagent(String),
    /// The whole document, when no part of it above differs (subagents in another order).
    Document,
}

fn changed_places<V: View>(golden: &V, actual: &V, changes: &[StepChange]) -> Vec<Place> {
    let mut places = Vec::new();
    for change in changes {
        if change.subagent.is_empty() && !change.is_whole_trajectory() {
            places.push(Place::Step { golden: change.golden_step, actual: change.actual_step });
        }
    }
    if canonical_string(&Outside(golden)) != canonical_string(&Outside(actual)) {
        places.push(Place::Outside);
    }
    let mut names: Vec<&str> = Vec::new();
    for change in changes {
        if let Some(name) = change.subagent.first() {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    places.extend(names.into_iter().map(|name| Place::Subagent(name.to_owned())));
    if places.is_empty() && !golden.json_eq(actual) {
        places.push(Place::Document);
    }
    places
}

impl Place {
    fn write<V: View>(&self, golden: &V, actual: &V, out: &mut String) {
        let mut lines = Vec::new();
        let title = match self {
            Place::Step { golden: g, actual: a } => {
                let golden_step = g.and_then(|idx| steps(golden).get(idx - 1));
                let actual_step = a.and_then(|idx| steps(actual).get(idx - 1));
                side_by_side(golden_step, actual_step, &mut lines);
                match (g, a) {
                    (None, Some(a)) => format!("step {a} inserted"),
                    (Some(g), None) => format!("step {g} removed"),
                    (Some(g), Some(a)) if g != a => format!("step {a} (step {g} in golden)"),
                    (_, a) => format!("step {}", a.unwrap_or(0)),
                }
            }
            Place::Outside => {
                side_by_side(Some(&Outside(golden)), Some(&Outside(actual)), &mut lines);
                "outside the steps".to_owned()
            }
            Place::Subagent(name) => {
                let (g, a) = paired_subagents(golden, actual, name);
                side_by_side(g, a, &mut lines);
                format!("subagent {name:?}")
            }
            Place::Document => {
                side_by_side(Some(golden), Some(actual), &mut lines);
                "the whole trajectory".to_owned()
            }
        };
        let _ = writeln!(out, "@@ {title} @@");
        for line in lines.iter().take(MAX_PLACE_LINES) {
            out.push_str(&clip(line));
            out.push('\n');
        }
        if lines.len() > MAX_PLACE_LINES {
            let _ = writeln!(out, "... {} more lines of this place", lines.len() - MAX_PLACE_LINES);
        }
    }
}

/// The diff lines (with their ` `, `-`, `+` marks) from `golden` to `actual`: every line of a
/// value present on one side only, the hunks with 3 lines of context otherwise.
fn side_by_side<T: WriteCanonical>(
    golden: Option<&T>,
    actual: Option<&T>,
    lines: &mut Vec<String>,
) {
    let text = |value: Option<&T>| value.map(canonical_string).unwrap_or_default();
    let (golden_text, actual_text) = (text(golden), text(actual));
    // Big values (a subagent of thousands of steps) are aligned within a budget of work, for
    // the reasons given in `render`.
    for (idx, hunk) in LineDiff::of(&golden_text, &actual_text).hunks(3).iter().enumerate() {
        if idx > 0 {
            lines.push("  ...".to_owned());
        }
        lines.extend(hunk.iter().map(|(mark, line)| format!("{mark}{line}")));
    }
}

/// `line` cut after [`MAX_LINE_CHARS`] characters, with a count of what was cut.
fn clip(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.to_owned(),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            format!("{}... ({rest} more characters)", &line[..cut])
        }
    }
}

/// The root's members other than `steps` and `subagent_trajectories`, written as an object.
struct Outside<'a, V>(&'a V);

impl<V: View> WriteCanonical for Outside<'_, V> {
    fn write_canonical<S: Sink>(&self, sink: &mut S, depth: usize) -> bool {
        let Some(members) = self.0.members() else {
            return self.0.write_canonical(sink, depth);
        };
        let kept = members
            .into_iter()
            .filter(|(key, _)| !matches!(*key, "steps" | "subagent_trajectories"));
        write_members(sink, kept, depth)
    }
}

/// The first golden and the first actual subagent named `name` that have no identical partner
/// on the other side (ids aside, as the explanation pairs them).
fn paired_subagents<'a, V: View>(
    golden: &'a V,
    actual: &'a V,
    name: &str,
) -> (Option<&'a V>, Option<&'a V>) {
    let of_name = |doc: &'a V| -> Vec<&'a V> {
        subagents_of(doc)
            .iter()
            .filter(|sub| sub.str_at(&["agent", "name"]).is_some_and(|agent| agent == name))
            .collect()
    };
    let mut golden_left = of_name(golden);
    let mut actual_left = of_name(actual);
    golden_left.retain(|g| match actual_left.iter().position(|a| same_but_id(*g, *a)) {
        Some(pos) => {
            actual_left.remove(pos);
            false
        }
        None => true,
    });
    (golden_left.first().copied(), actual_left.first().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_clipped_with_a_count() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(MAX_LINE_CHARS + 5);
        assert_eq!(clip(&long), format!("{}... (5 more characters)", "é".repeat(MAX_LINE_CHARS)));
    }
}
