//! One trajectory's steps as a timeline: each step's source, model, message, reasoning, tool
//! calls with their results, token bar and markers, with its subagents nested inside the step
//! that delegated to them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::html::{base64, escape_into};
use crate::options::ViewOptions;

/// Text longer than this many bytes (or than [`FOLD_LINES`] lines) is folded, its summary
/// giving its size.
const FOLD_BYTES: usize = 1200;
/// Text with more lines than this is folded.
const FOLD_LINES: usize = 16;
/// Subagents nested deeper than this are named, not drawn: a page stays finite whatever the
/// document says.
const MAX_DEPTH: usize = 16;

/// How one step is marked on a diff page: its class (`inserted`, `removed`, `changed`), the
/// top-level fields that differ (highlighted), and whether it is the first divergence.
#[derive(Debug, Default, Clone)]
pub(crate) struct StepMark {
    /// `inserted`, `removed` or `changed`; empty for a step both runs share.
    pub(crate) class: &'static str,
    /// The fields of the step that differ from its counterpart, highlighted.
    pub(crate) fields: BTreeSet<String>,
    /// Whether this is the first step where the runs diverge.
    pub(crate) first: bool,
    /// What the change is, in the text report's words.
    pub(crate) note: String,
}

/// The marks of steps inside subagents, by the subagent's path (the agent names of the
/// subagents it is in, outermost first, itself last) and the step's 0-based index.
pub(crate) type SubagentMarks = BTreeMap<(Vec<String>, usize), StepMark>;

/// No marks inside subagents: a run page's.
pub(crate) static NO_SUBAGENT_MARKS: SubagentMarks = BTreeMap::new();

/// What every step of one lane shares: the id prefix, the images and the scale of the bars.
pub(crate) struct Lane<'a> {
    /// Prefixes every element id of this lane (`s` on a run page, `g` and `a` on a diff page).
    pub(crate) prefix: &'a str,
    /// The images to embed, by the path the trajectory names.
    pub(crate) options: &'a ViewOptions,
    /// The largest prompt + completion count of one step in the page, the width of a full bar.
    pub(crate) max_tokens: u64,
    /// The marks of the steps of this lane's subagents.
    pub(crate) subagent_marks: &'a SubagentMarks,
}

/// One trajectory being drawn: its embedded subagents by `trajectory_id` and which of them a
/// step has already drawn.
struct Drawing<'v> {
    /// The element id prefix of this trajectory's steps.
    id: String,
    /// The agent names of the subagents this trajectory is in, itself last; empty for the root.
    path: Vec<String>,
    depth: usize,
    crashed: bool,
    n_steps: usize,
    /// Embedded subagents: id → (position in `subagent_trajectories`, trajectory).
    subagents: BTreeMap<String, (usize, &'v Value)>,
    drawn: BTreeSet<String>,
}

impl Lane<'_> {
    /// Writes the trajectory `run`'s steps as an `<ol>`, with `marks` by 0-based step index
    /// (root steps only).
    pub(crate) fn steps(&self, out: &mut String, run: &Value, marks: &BTreeMap<usize, StepMark>) {
        self.trajectory(out, run, (format!("{}-", self.prefix), Vec::new()), marks, 0);
    }

    /// Writes step `idx` (0-based) of the trajectory `run` alone, as a one-item `<ol>`, marked
    /// as `mark` says: one cell of a diff page's row.
    pub(crate) fn one_step(&self, out: &mut String, run: &Value, idx: usize, mark: &StepMark) {
        let steps = run.get("steps").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        let Some(step) = steps.get(idx) else { return };
        let mut drawing = Drawing {
            id: format!("{}-", self.prefix),
            path: Vec::new(),
            depth: 0,
            crashed: run.pointer("/extra/crashed").and_then(Value::as_bool) == Some(true),
            n_steps: steps.len(),
            subagents: embedded_subagents(run),
            drawn: BTreeSet::new(),
        };
        out.push_str("<ol class=\"steps\">\n");
        self.step(out, step, idx, mark, &mut drawing);
        out.push_str("</ol>\n");
    }

    /// Writes the trajectory `run`, its element ids prefixed with `id` and its subagent path
    /// `path`, with `marks` by 0-based step index.
    fn trajectory(
        &self,
        out: &mut String,
        run: &Value,
        (id, path): (String, Vec<String>),
        marks: &BTreeMap<usize, StepMark>,
        depth: usize,
    ) {
        let steps = run.get("steps").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        let mut drawing = Drawing {
            id,
            path,
            depth,
            crashed: run.pointer("/extra/crashed").and_then(Value::as_bool) == Some(true),
            n_steps: steps.len(),
            subagents: embedded_subagents(run),
            drawn: BTreeSet::new(),
        };
        out.push_str("<ol class=\"steps\">\n");
        let none = StepMark::default();
        for (idx, step) in steps.iter().enumerate() {
            self.step(out, step, idx, marks.get(&idx).unwrap_or(&none), &mut drawing);
        }
        out.push_str("</ol>\n");
        let rest: Vec<(String, (usize, &Value))> = drawing
            .subagents
            .iter()
            .filter(|(key, _)| !drawing.drawn.contains(*key))
            .map(|(key, value)| (key.clone(), *value))
            .collect();
        for (key, (number, sub)) in rest {
            let sub_id = format!("{}a{number}-", drawing.id);
            self.subagent(out, sub, &key, (sub_id, &drawing.path), depth + 1);
        }
    }

    fn step(
        &self,
        out: &mut String,
        step: &Value,
        idx: usize,
        mark: &StepMark,
        drawing: &mut Drawing<'_>,
    ) {
        let source = str_at(step, "/source").unwrap_or("unknown");
        let cut = drawing.crashed && idx + 1 == drawing.n_steps;
        let error = step_has_error(step);
        let tools = step_tools(step);
        let id = format!("{}{}", drawing.id, idx + 1);
        let _ = write!(out, "<li class=\"step src-{}", css_word(source));
        for (on, class) in [(error, " error"), (cut, " cut"), (mark.first, " first")] {
            if on {
                out.push_str(class);
            }
        }
        if !mark.class.is_empty() {
            let _ = write!(out, " {}", mark.class);
        }
        let _ = write!(out, "\" id=\"{id}\" data-step=\"{}\" data-tools=\"", idx + 1);
        escape_into(out, &tools.join(" "));
        out.push_str("\">\n");
        self.head(out, step, &id, idx + 1, source, mark);
        if cut {
            out.push_str("<p class=\"flag cut\">crashed: the run ends here</p>\n");
        }
        if let Some(error) = step.pointer("/extra/error") {
            field(out, mark, "extra", |out| {
                out.push_str("<p class=\"flag error\">error: ");
                escape_into(out, &compact(error));
                out.push_str("</p>\n");
            });
        }
        if let Some(message) = step.get("message") {
            field(out, mark, "message", |out| self.content(out, "message", message));
        }
        if let Some(reasoning) = str_at(step, "/reasoning_content") {
            field(out, mark, "reasoning_content", |out| fold(out, "reasoning", reasoning, true));
        }
        self.calls(out, step, mark, drawing);
        out.push_str("</li>\n");
    }

    /// The step's first line: its number (a link to itself), source, model, markers and bar.
    fn head(
        &self,
        out: &mut String,
        step: &Value,
        id: &str,
        number: usize,
        source: &str,
        mark: &StepMark,
    ) {
        let _ = write!(out, "<div class=\"head\"><a class=\"num\" href=\"#{id}\">#{number}</a> ");
        out.push_str("<span class=\"src\">");
        escape_into(out, source);
        out.push_str("</span>");
        if let Some(model) = str_at(step, "/model_name") {
            let changed = if mark.fields.contains("model_name") { " differs" } else { "" };
            let _ = write!(out, " <span class=\"model{changed}\">");
            escape_into(out, model);
            out.push_str("</span>");
        }
        match mark.class {
            "" => {}
            "inside" => out.push_str(" <span class=\"mark\">changed inside a subagent</span>"),
            class => {
                let _ = write!(out, " <span class=\"mark\">{class}</span>");
            }
        }
        if mark.first {
            out.push_str(" <span class=\"mark first\">first divergence</span>");
        }
        if !mark.note.is_empty() {
            out.push_str(" <span class=\"note\">");
            escape_into(out, &mark.note);
            out.push_str("</span>");
        }
        if let Some(metrics) = step.get("metrics") {
            let changed = mark.fields.contains("metrics");
            self.token_bar(out, metrics, changed);
        }
        out.push_str("</div>\n");
    }

    /// Prompt, completion and cached tokens as three bars (SVG rectangles: their widths are
    /// attributes, which the page's policy allows, unlike inline styles) and as numbers.
    fn token_bar(&self, out: &mut String, metrics: &Value, changed: bool) {
        let [prompt, completion, cached] = ["prompt_tokens", "completion_tokens", "cached_tokens"]
            .map(|key| metrics.get(key).and_then(Value::as_u64).unwrap_or(0));
        let width = self.max_tokens.max(1);
        let class = if changed { "tokens differs" } else { "tokens" };
        let _ = write!(
            out,
            " <span class=\"{class}\"><svg class=\"bar\" viewBox=\"0 0 {width} 6\" \
             preserveAspectRatio=\"none\" aria-hidden=\"true\">\
             <rect class=\"tp\" width=\"{prompt}\" height=\"2\"/>\
             <rect class=\"tk\" y=\"2\" width=\"{cached}\" height=\"2\"/>\
             <rect class=\"tc\" y=\"4\" width=\"{completion}\" height=\"2\"/></svg> \
             <span class=\"n\">{prompt} in · {completion} out · {cached} cached</span></span>"
        );
    }

    /// The tool calls, each with its arguments and the results that answer it; then results
    /// that answer no call, and the subagents the step delegated to.
    fn calls(&self, out: &mut String, step: &Value, mark: &StepMark, drawing: &mut Drawing<'_>) {
        let calls = step.get("tool_calls").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        let results = step
            .pointer("/observation/results")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let call_ids: BTreeSet<&str> =
            calls.iter().filter_map(|call| str_at(call, "/tool_call_id")).collect();
        let calls_changed = mark.fields.contains("tool_calls");
        let results_changed = mark.fields.contains("observation");
        for call in calls {
            let name = str_at(call, "/function_name").unwrap_or("?");
            let class = if calls_changed { "call differs" } else { "call" };
            let _ = write!(out, "<div class=\"{class}\"><span class=\"fn\">");
            escape_into(out, name);
            out.push_str("</span>");
            if let Some(arguments) = call.get("arguments") {
                let text = serde_json::to_string_pretty(arguments).unwrap_or_default();
                fold(out, "arguments", &text, false);
            }
            let call_id = str_at(call, "/tool_call_id");
            for result in results
                .iter()
                .filter(|r| call_id.is_some() && str_at(r, "/source_call_id") == call_id)
            {
                self.result(out, result, results_changed, drawing);
            }
            out.push_str("</div>\n");
        }
        let answers_a_call =
            |r: &&Value| str_at(r, "/source_call_id").is_some_and(|id| call_ids.contains(id));
        for result in results.iter().filter(|r| !answers_a_call(r)) {
            self.result(out, result, results_changed, drawing);
        }
    }

    fn result(&self, out: &mut String, result: &Value, changed: bool, drawing: &mut Drawing<'_>) {
        let error = result_has_error(result);
        let class = match (error, changed) {
            (true, true) => "result error differs",
            (true, false) => "result error",
            (false, true) => "result differs",
            (false, false) => "result",
        };
        let _ = write!(out, "<div class=\"{class}\">");
        if let Some(content) = result.get("content") {
            self.content(out, "result", content);
        }
        let refs = result.get("subagent_trajectory_ref").and_then(Value::as_array);
        for reference in refs.map_or(&[][..], Vec::as_slice) {
            self.reference(out, reference, drawing);
        }
        out.push_str("</div>\n");
    }

    /// A subagent reference: the embedded subagent it names, drawn here once, or its name.
    fn reference(&self, out: &mut String, reference: &Value, drawing: &mut Drawing<'_>) {
        let key = str_at(reference, "/trajectory_id").unwrap_or_default().to_owned();
        match drawing.subagents.get(&key) {
            Some(&(number, sub)) if !key.is_empty() && drawing.drawn.insert(key.clone()) => {
                let id = format!("{}a{number}-", drawing.id);
                self.subagent(out, sub, &key, (id, &drawing.path), drawing.depth + 1);
            }
            _ => {
                out.push_str("<p class=\"subref\">subagent ");
                let name = str_at(reference, "/trajectory_path").unwrap_or(&key);
                escape_into(out, name);
                out.push_str(" (not embedded in this file)</p>\n");
            }
        }
    }

    /// A subagent in a fold of its own, inside the trajectory whose path is `parent`; on a diff
    /// page, its steps carry the marks of the changes inside it.
    fn subagent(
        &self,
        out: &mut String,
        sub: &Value,
        key: &str,
        (id, parent): (String, &[String]),
        depth: usize,
    ) {
        let name = str_at(sub, "/agent/name").unwrap_or(key);
        let n_steps = sub.get("steps").and_then(Value::as_array).map_or(0, Vec::len);
        let mut path = parent.to_vec();
        path.push(name.to_owned());
        let marks: BTreeMap<usize, StepMark> = self
            .subagent_marks
            .range((path.clone(), 0)..)
            .take_while(|((at, _), _)| *at == path)
            .map(|((_, idx), mark)| (*idx, mark.clone()))
            .collect();
        let class = if marks.is_empty() { "subagent" } else { "subagent changed" };
        let _ = write!(out, "<details class=\"{class}\" open><summary>subagent <b>");
        escape_into(out, name);
        let _ = write!(out, "</b> · {n_steps} steps");
        if !marks.is_empty() {
            let plural = if marks.len() == 1 { "" } else { "s" };
            let _ =
                write!(out, " · <span class=\"mark\">{} step{plural} marked</span>", marks.len());
        }
        if let Some(model) = str_at(sub, "/agent/model_name") {
            out.push_str(" · <span class=\"model\">");
            escape_into(out, model);
            out.push_str("</span>");
        }
        out.push_str("</summary>\n");
        if depth > MAX_DEPTH {
            out.push_str("<p class=\"flag\">nested too deep to draw</p>\n");
        } else {
            self.trajectory(out, sub, (id, path), &marks, depth);
        }
        out.push_str("</details>\n");
    }

    /// A message or a result: a string, or ATIF content parts (text, images, audio).
    fn content(&self, out: &mut String, label: &str, content: &Value) {
        match content {
            Value::String(text) => fold(out, label, text, false),
            Value::Array(parts) => {
                for part in parts {
                    self.part(out, label, part);
                }
            }
            Value::Null => {}
            other => fold(out, label, &compact(other), false),
        }
    }

    fn part(&self, out: &mut String, label: &str, part: &Value) {
        let path = str_at(part, "/source/path").unwrap_or_default();
        match str_at(part, "/type") {
            Some("text") => fold(out, label, str_at(part, "/text").unwrap_or_default(), false),
            Some("image") => match self.options.image(path) {
                Some(image) => {
                    let _ = write!(
                        out,
                        "<figure><img alt=\"\" src=\"data:{};base64,",
                        image.media_type()
                    );
                    out.push_str(&base64(image.bytes()));
                    out.push_str("\"><figcaption>");
                    escape_into(out, path);
                    out.push_str("</figcaption></figure>\n");
                }
                None => media_note(out, "image", path, "not beside the trajectory"),
            },
            Some(kind) => media_note(out, kind, path, "not shown"),
            None => fold(out, label, &compact(part), false),
        }
    }
}

/// Wraps what `write` draws in a highlight when the mark names `name` as differing.
fn field(out: &mut String, mark: &StepMark, name: &str, write: impl FnOnce(&mut String)) {
    if !mark.fields.contains(name) {
        return write(out);
    }
    out.push_str("<div class=\"differs\">");
    write(out);
    out.push_str("</div>\n");
}

/// Text as a block; folded (closed, with its size) when long, or always when `folded`.
fn fold(out: &mut String, label: &str, text: &str, folded: bool) {
    let long = text.len() > FOLD_BYTES || text.lines().count() > FOLD_LINES;
    if !folded && !long {
        let _ = write!(out, "<pre class=\"text {label}\">");
        escape_into(out, text);
        out.push_str("</pre>\n");
        return;
    }
    let _ = write!(
        out,
        "<details class=\"fold {label}\"><summary>{label} · {} bytes</summary><pre class=\"text\">",
        text.len()
    );
    escape_into(out, text);
    out.push_str("</pre></details>\n");
}

fn media_note(out: &mut String, kind: &str, path: &str, why: &str) {
    out.push_str("<p class=\"media\">");
    escape_into(out, kind);
    out.push(' ');
    escape_into(out, path);
    let _ = writeln!(out, " ({why})</p>");
}

/// The embedded subagents of `run`, by `trajectory_id`, with their positions.
fn embedded_subagents(run: &Value) -> BTreeMap<String, (usize, &Value)> {
    let subs = run.get("subagent_trajectories").and_then(Value::as_array);
    subs.map_or(&[][..], Vec::as_slice)
        .iter()
        .enumerate()
        .map(|(idx, sub)| {
            let key =
                str_at(sub, "/trajectory_id").map_or_else(|| format!("#{idx}"), str::to_owned);
            (key, (idx + 1, sub))
        })
        .collect()
}

/// The names of the functions a step calls, sorted, once each.
pub(crate) fn step_tools(step: &Value) -> Vec<String> {
    let calls = step.get("tool_calls").and_then(Value::as_array);
    let names: BTreeSet<&str> = calls
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|call| str_at(call, "/function_name"))
        .collect();
    names.into_iter().map(str::to_owned).collect()
}

/// Whether a step records an error: `extra.error`, or a result marked as one.
pub(crate) fn step_has_error(step: &Value) -> bool {
    let results = step.pointer("/observation/results").and_then(Value::as_array);
    step.pointer("/extra/error").is_some()
        || results.map_or(&[][..], Vec::as_slice).iter().any(result_has_error)
}

fn result_has_error(result: &Value) -> bool {
    result.pointer("/extra/is_error").and_then(Value::as_bool) == Some(true)
        || result.pointer("/extra/error").is_some()
}

pub(crate) fn str_at<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// A value as one line of JSON.
fn compact(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `word` kept to the letters, digits and dashes a class name may hold.
fn css_word(word: &str) -> String {
    word.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect()
}
