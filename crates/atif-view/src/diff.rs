//! The page of two runs side by side: the Shape deltas and the step changes at the top, then
//! the two lanes, row by row, aligned as the text report aligns them.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use atif_normalize::{Delta, MatchOutcome, StepChange, StepChangeKind};
use serde_json::Value;

use crate::error::Result;
use crate::html::{close_page, escape_into, open_page};
use crate::lane::{Lane, StepMark, SubagentMarks, str_at};
use crate::options::ViewOptions;
use crate::run::{check_trajectory, jump_bar, max_step_tokens, shape_table};

/// Rows of unchanged steps longer than this are folded, but for [`CONTEXT`] rows on each side.
const FOLD_ROWS: usize = 12;
/// Unchanged rows kept open beside a change.
const CONTEXT: usize = 3;

/// Renders two normalised runs side by side as one self-contained HTML page: `golden` on the
/// left, `actual` on the right, aligned by `changes` (from `atif_normalize::compare`, as the
/// text report is), with `deltas` at the top.
///
/// Inserted, removed and changed steps are marked, the first divergence is marked and the page
/// opens on it, and inside a changed step the fields that differ are highlighted. Long runs of
/// unchanged steps are folded. `options.title()` defaults to "atif diff"; the names of the two
/// runs come from `names`.
///
/// # Errors
///
/// [`Error::NotATrajectory`](crate::Error::NotATrajectory) when either run is not an object
/// with a `steps` array.
pub fn render_diff(
    golden: &Value,
    actual: &Value,
    deltas: &[Delta],
    changes: &[StepChange],
    names: (&str, &str),
    options: &ViewOptions,
) -> Result<String> {
    check_trajectory(golden)?;
    check_trajectory(actual)?;
    let title = options.title().map_or_else(|| "atif diff".to_owned(), str::to_owned);
    let mut rows = align(golden, actual, changes);
    mark_subagent_rows(&mut rows, (golden, actual), changes);
    let first = rows.iter().position(Row::is_marked);
    let subagent_marks = subagent_marks(golden, actual, changes);
    let mut out = String::with_capacity(4096);
    open_page(&mut out, &title, "diff");
    out.push_str("<header>\n<h1>");
    escape_into(&mut out, &title);
    out.push_str("</h1>\n");
    summary(&mut out, (deltas, changes), names, first.map(|idx| &rows[idx]), options);
    let max_tokens = max_step_tokens(golden).max(max_step_tokens(actual));
    if let Some(idx) = first {
        // The first divergence, in the header too: seen without scrolling, in any viewer.
        let preview = [
            (
                Lane { prefix: "pg", options, max_tokens, subagent_marks: &subagent_marks[0] },
                golden,
            ),
            (
                Lane { prefix: "pa", options, max_tokens, subagent_marks: &subagent_marks[1] },
                actual,
            ),
        ];
        out.push_str("<div class=\"preview\">");
        write_row(&mut out, &rows[idx], &format!("preview-{}", idx + 1), &preview, true);
        out.push_str("</div>\n");
    }
    for (name, run) in [(names.0, golden), (names.1, actual)] {
        out.push_str("<div class=\"side\"><b>");
        escape_into(&mut out, name);
        out.push_str("</b>");
        shape_table(&mut out, &atif_normalize::shape(run), false);
        out.push_str("</div>\n");
    }
    out.push_str("</header>\n");
    jump_bar(&mut out, &[golden, actual], true);
    let lanes = [
        (Lane { prefix: "g", options, max_tokens, subagent_marks: &subagent_marks[0] }, golden),
        (Lane { prefix: "a", options, max_tokens, subagent_marks: &subagent_marks[1] }, actual),
    ];
    out.push_str("<main>\n<div class=\"row heads\">");
    for name in [names.0, names.1] {
        out.push_str("<div class=\"lanehead\">");
        escape_into(&mut out, name);
        out.push_str("</div>");
    }
    out.push_str("</div>\n");
    write_rows(&mut out, &rows, &lanes, first);
    out.push_str("</main>\n");
    close_page(&mut out);
    Ok(out)
}

/// One row of the page: a golden step, an actual step, or both, and what happened to it.
#[derive(Debug)]
struct Row<'c> {
    golden: Option<usize>,
    actual: Option<usize>,
    kind: Option<&'c StepChangeKind>,
    change: Option<&'c StepChange>,
    /// The changes inside the subagents this row's steps delegated to.
    inner: Vec<&'c StepChange>,
}

impl Row<'_> {
    /// Whether the row is marked: its steps changed, or a subagent they delegated to did.
    fn is_marked(&self) -> bool {
        self.kind.is_some() || !self.inner.is_empty()
    }
}

/// Pairs the steps of the two runs: the root's step changes, in order, place the inserted,
/// removed and changed steps, and the steps between them pair up one for one.
fn align<'c>(golden: &Value, actual: &Value, changes: &'c [StepChange]) -> Vec<Row<'c>> {
    let count = |run: &Value| run.get("steps").and_then(Value::as_array).map_or(0, Vec::len);
    let (n_golden, n_actual) = (count(golden), count(actual));
    let mut rows = Vec::with_capacity(n_golden.max(n_actual));
    let (mut g, mut a) = (0, 0);
    let root = changes.iter().filter(|c| c.subagent.is_empty() && !c.is_whole_trajectory());
    for change in root {
        // The 0-based positions the change names; both runs' steps before them pair up.
        let until_g = change.golden_step.map_or(n_golden, |step| step - 1).min(n_golden);
        let until_a = change.actual_step.map_or(n_actual, |step| step - 1).min(n_actual);
        let pairs = match change.kind {
            StepChangeKind::Inserted => until_a.saturating_sub(a),
            StepChangeKind::Removed => until_g.saturating_sub(g),
            _ => until_g.saturating_sub(g).min(until_a.saturating_sub(a)),
        };
        for _ in 0..pairs.min(n_golden - g.min(n_golden)).min(n_actual - a.min(n_actual)) {
            rows.push(Row {
                golden: Some(g),
                actual: Some(a),
                kind: None,
                change: None,
                inner: Vec::new(),
            });
            (g, a) = (g + 1, a + 1);
        }
        let (golden_idx, actual_idx) = match change.kind {
            StepChangeKind::Inserted => (None, Some(a)),
            StepChangeKind::Removed => (Some(g), None),
            _ => (Some(g), Some(a)),
        };
        g += usize::from(golden_idx.is_some());
        a += usize::from(actual_idx.is_some());
        let row = Row {
            golden: golden_idx,
            actual: actual_idx,
            kind: Some(&change.kind),
            change: Some(change),
            inner: Vec::new(),
        };
        rows.push(row);
    }
    while g < n_golden || a < n_actual {
        let row = Row {
            golden: (g < n_golden).then_some(g),
            actual: (a < n_actual).then_some(a),
            kind: None,
            change: None,
            inner: Vec::new(),
        };
        rows.push(row);
        (g, a) = (g + 1, a + 1);
    }
    rows
}

/// Gives each row the changes inside the subagents its steps delegated to (by the outermost
/// subagent's agent name), so a change deep in a subagent marks the root step that holds it.
fn mark_subagent_rows<'c>(rows: &mut [Row<'c>], runs: (&Value, &Value), changes: &'c [StepChange]) {
    let inner: Vec<&StepChange> = changes.iter().filter(|c| !c.subagent.is_empty()).collect();
    if inner.is_empty() {
        return;
    }
    for row in rows.iter_mut() {
        let mut names = BTreeSet::new();
        for (run, idx) in [(runs.0, row.golden), (runs.1, row.actual)] {
            if let Some(idx) = idx {
                names.extend(delegated_to(run, idx));
            }
        }
        row.inner = inner.iter().copied().filter(|c| names.contains(&c.subagent[0])).collect();
    }
}

/// The agent names of the embedded subagents step `idx` of `run` delegates to.
fn delegated_to(run: &Value, idx: usize) -> BTreeSet<String> {
    let results = run
        .get("steps")
        .and_then(|steps| steps.get(idx))
        .and_then(|step| step.pointer("/observation/results"))
        .and_then(Value::as_array);
    let ids: BTreeSet<&str> = results
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|result| result.get("subagent_trajectory_ref").and_then(Value::as_array))
        .flatten()
        .filter_map(|reference| str_at(reference, "/trajectory_id"))
        .collect();
    subagents(run)
        .filter(|sub| str_at(sub, "/trajectory_id").is_some_and(|id| ids.contains(id)))
        .filter_map(|sub| str_at(sub, "/agent/name").map(str::to_owned))
        .collect()
}

fn subagents(run: &Value) -> impl Iterator<Item = &Value> {
    run.get("subagent_trajectories").and_then(Value::as_array).into_iter().flatten()
}

/// The embedded subagent at `path` (agent names, outermost first) inside `run`.
fn subagent_at<'v>(run: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(run, |inside, name| {
        subagents(inside).find(|sub| str_at(sub, "/agent/name") == Some(name.as_str()))
    })
}

/// The marks of the changed steps inside subagents, for the golden lane and the actual lane.
fn subagent_marks(golden: &Value, actual: &Value, changes: &[StepChange]) -> [SubagentMarks; 2] {
    let mut marks = [SubagentMarks::new(), SubagentMarks::new()];
    for change in changes.iter().filter(|c| !c.subagent.is_empty() && !c.is_whole_trajectory()) {
        let class = match change.kind {
            StepChangeKind::Inserted => "inserted",
            StepChangeKind::Removed => "removed",
            _ => "changed",
        };
        let (g, a) = (change.golden_step.map(|n| n - 1), change.actual_step.map(|n| n - 1));
        let fields = match (
            subagent_at(golden, &change.subagent),
            subagent_at(actual, &change.subagent),
            g,
            a,
        ) {
            (Some(sub_g), Some(sub_a), Some(g), Some(a)) => differing_fields(sub_g, g, sub_a, a),
            _ => BTreeSet::new(),
        };
        let mark = StepMark { class, fields, first: false, note: change.details.join("; ") };
        for (side, idx) in [(0, g), (1, a)] {
            if let Some(idx) = idx {
                marks[side].insert((change.subagent.clone(), idx), mark.clone());
            }
        }
    }
    marks
}

/// The verdict, the deltas, the step changes and a link to the first divergence.
fn summary(
    out: &mut String,
    (deltas, changes): (&[Delta], &[StepChange]),
    names: (&str, &str),
    first: Option<&Row<'_>>,
    options: &ViewOptions,
) {
    out.push_str("<p>");
    escape_into(out, names.0);
    out.push_str(" ⟷ ");
    escape_into(out, names.1);
    match (options.match_outcome().map(MatchOutcome::passed), deltas.is_empty()) {
        (Some(true), _) => out.push_str(
            ": <span class=\"verdict same\">the run matches under the match modes</span></p>\n",
        ),
        (Some(false), _) => out.push_str(
            ": <span class=\"verdict changed\">the run does not match under the match modes</span></p>\n",
        ),
        (None, true) => out.push_str(": <span class=\"verdict same\">the same Shape</span></p>\n"),
        (None, false) => {
            out.push_str(": <span class=\"verdict changed\">the behaviour changed</span></p>\n")
        }
    }
    if let Some(outcome) = options.match_outcome() {
        match_modes(out, options.match_modes(), outcome);
    }
    let first_change = first.and_then(|row| row.change.or(row.inner.first().copied()));
    if let (Some(row), Some(change)) = (first, first_change) {
        // The root step the row holds: for a change inside a subagent, the step delegating to it.
        let step = row.actual.or(row.golden).map_or(0, |idx| idx + 1);
        let _ = write!(
            out,
            "<p class=\"firstlink\"><a href=\"#first\">first divergence, step {step}</a>: "
        );
        escape_into(out, &change.to_string());
        out.push_str("</p>\n");
    }
    if !deltas.is_empty() {
        out.push_str("<table class=\"deltas\"><tr><th>Shape field</th><th>what moved</th></tr>\n");
        for delta in deltas {
            out.push_str("<tr><th>");
            escape_into(out, &delta.field);
            out.push_str("</th><td>");
            escape_into(out, &delta.to_string());
            out.push_str("</td></tr>\n");
        }
        out.push_str("</table>\n");
    }
    if !changes.is_empty() {
        let plural = if changes.len() == 1 { "" } else { "s" };
        let _ = write!(
            out,
            "<details class=\"changes\"><summary>{} step change{plural}</summary><ul>",
            changes.len()
        );
        for change in changes {
            out.push_str("<li>");
            escape_into(out, &change.to_string());
            out.push_str("</li>");
        }
        out.push_str("</ul></details>\n");
    }
}

/// The match modes the check judged by, the differences they forbid (each one a failure) and
/// those they allow, each naming the mode that allows it: what failed, not merely what moved.
fn match_modes(out: &mut String, modes: &[String], outcome: &MatchOutcome) {
    out.push_str("<div class=\"modes\"><p>match modes: ");
    match modes.is_empty() {
        true => out.push_str("exact"),
        false => escape_into(out, &modes.join(", ")),
    }
    out.push_str("</p>\n<ul>");
    for (class, lines) in [("failure", &outcome.failures), ("allowed", &outcome.allowed)] {
        for line in lines {
            let _ = write!(out, "<li class=\"{class}\"><b>{class}</b> ");
            escape_into(out, line);
            out.push_str("</li>");
        }
    }
    out.push_str("</ul>\n");
    if !outcome.allowed.is_empty() {
        out.push_str(
            "<p class=\"note\">The steps below are marked where the runs differ; a difference \
             the modes allow is not a failure.</p>\n",
        );
    }
    out.push_str("</div>\n");
}

/// The rows, with long stretches of unchanged ones folded.
fn write_rows(
    out: &mut String,
    rows: &[Row<'_>],
    lanes: &[(Lane<'_>, &Value); 2],
    first: Option<usize>,
) {
    let changed: Vec<usize> =
        rows.iter().enumerate().filter(|(_, r)| r.is_marked()).map(|(i, _)| i).collect();
    // A row is shown open when it is a change or within CONTEXT rows of one.
    let near = |idx: usize| {
        let at = changed.partition_point(|&c| c + CONTEXT < idx);
        changed.get(at).is_some_and(|&c| c <= idx + CONTEXT)
    };
    let mut idx = 0;
    while idx < rows.len() {
        let stretch = rows[idx..].iter().enumerate().take_while(|(k, _)| !near(idx + k)).count();
        if stretch > FOLD_ROWS {
            let _ = writeln!(
                out,
                "<details class=\"same\"><summary>{stretch} unchanged steps</summary>"
            );
            for (row_idx, row) in rows.iter().enumerate().skip(idx).take(stretch) {
                write_row(out, row, &row_id(row_idx, first), lanes, first == Some(row_idx));
            }
            out.push_str("</details>\n");
            idx += stretch;
            continue;
        }
        write_row(out, &rows[idx], &row_id(idx, first), lanes, first == Some(idx));
        idx += 1;
    }
}

fn write_row(
    out: &mut String,
    row: &Row<'_>,
    id: &str,
    lanes: &[(Lane<'_>, &Value); 2],
    first: bool,
) {
    let kind = match row.kind {
        Some(StepChangeKind::Inserted) => "inserted",
        Some(StepChangeKind::Removed) => "removed",
        Some(_) => "changed",
        None if !row.inner.is_empty() => "inside",
        None => "",
    };
    let step = row.actual.or(row.golden).map_or(0, |i| i + 1);
    let _ = write!(
        out,
        "<div class=\"row {kind}{}\" id=\"{id}\" data-step=\"{step}\">",
        if first { " first" } else { "" }
    );
    let fields = match (row.golden, row.actual, row.kind) {
        (Some(g), Some(a), Some(_)) => differing_fields(lanes[0].1, g, lanes[1].1, a),
        _ => BTreeSet::new(),
    };
    let note = match row.change {
        Some(change) => change.details.join("; "),
        None => row.inner.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
    };
    for ((lane, run), step_idx) in lanes.iter().zip([row.golden, row.actual]) {
        out.push_str("<div class=\"cell\">");
        match step_idx {
            Some(step_idx) => {
                let mark =
                    StepMark { class: kind, fields: fields.clone(), first, note: note.clone() };
                lane.one_step(out, run, step_idx, &mark);
            }
            None => out.push_str("<div class=\"gap\"></div>"),
        }
        out.push_str("</div>");
    }
    out.push_str("</div>\n");
}

/// A row's element id: `first` for the first divergence, `r-N` for the others.
fn row_id(idx: usize, first: Option<usize>) -> String {
    if first == Some(idx) { "first".to_owned() } else { format!("r-{}", idx + 1) }
}

/// The top-level fields of two steps whose values differ (the step's number aside).
fn differing_fields(golden: &Value, g: usize, actual: &Value, a: usize) -> BTreeSet<String> {
    let (Some(golden), Some(actual)) = (step_object(golden, g), step_object(actual, a)) else {
        return BTreeSet::new();
    };
    golden
        .keys()
        .chain(actual.keys())
        .filter(|key| *key != "step_id" && golden.get(*key) != actual.get(*key))
        .map(String::clone)
        .collect()
}

fn step_object(run: &Value, idx: usize) -> Option<&serde_json::Map<String, Value>> {
    run.get("steps").and_then(|steps| steps.get(idx)).and_then(Value::as_object)
}
