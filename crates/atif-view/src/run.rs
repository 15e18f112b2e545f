//! The page of one run: a header with the agent, the Shape and the token totals, the jump bar,
//! then the timeline of steps.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::html::{close_page, escape_into, open_page};
use crate::lane::{Lane, NO_SUBAGENT_MARKS, step_has_error, step_tools, str_at};
use crate::options::ViewOptions;

/// Renders the normalised trajectory `run` as one self-contained HTML page.
///
/// `run` should be normalised (`atif_normalize::normalize`): the page shows what it is given,
/// and normalising is what redacts secrets. Every string from it is escaped; images are
/// embedded from `options` as `data:` URIs; the page fetches nothing.
///
/// # Errors
///
/// [`Error::NotATrajectory`] when `run` is not an object with a `steps` array.
pub fn render_run(run: &Value, options: &ViewOptions) -> Result<String> {
    check_trajectory(run)?;
    let agent = str_at(run, "/agent/name").unwrap_or("agent");
    let title = options.title().map_or_else(|| format!("atif view: {agent}"), str::to_owned);
    let mut out = String::with_capacity(4096);
    open_page(&mut out, &title, "run");
    out.push_str("<header>\n<h1>");
    escape_into(&mut out, &title);
    out.push_str("</h1>\n");
    agent_line(&mut out, run);
    shape_table(&mut out, &atif_normalize::shape(run), true);
    totals(&mut out, run);
    out.push_str("</header>\n");
    jump_bar(&mut out, &[run], false);
    out.push_str("<main>\n");
    let max_tokens = max_step_tokens(run);
    let lane = Lane { prefix: "s", options, max_tokens, subagent_marks: &NO_SUBAGENT_MARKS };
    lane.steps(&mut out, run, &BTreeMap::new());
    out.push_str("</main>\n");
    close_page(&mut out);
    Ok(out)
}

/// The paths of the images `run` references (its subagents' too), for the caller to read and
/// give to [`ViewOptions::add_image`].
pub fn image_paths(run: &Value) -> Vec<String> {
    let mut paths = BTreeSet::new();
    collect_images(run, &mut paths);
    paths.into_iter().collect()
}

fn collect_images(value: &Value, paths: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("image") {
                if let Some(path) = value.pointer("/source/path").and_then(Value::as_str) {
                    paths.insert(path.to_owned());
                }
            }
            map.values().for_each(|child| collect_images(child, paths));
        }
        Value::Array(items) => items.iter().for_each(|child| collect_images(child, paths)),
        _ => {}
    }
}

pub(crate) fn check_trajectory(run: &Value) -> Result<()> {
    match run.get("steps") {
        Some(Value::Array(_)) => Ok(()),
        _ if !run.is_object() => {
            Err(Error::NotATrajectory { pointer: String::new(), expected: "an object" })
        }
        _ => Err(Error::NotATrajectory { pointer: "/steps".to_owned(), expected: "an array" }),
    }
}

fn agent_line(out: &mut String, run: &Value) {
    out.push_str("<p class=\"agent\">");
    for (label, pointer) in
        [("agent", "/agent/name"), ("version", "/agent/version"), ("model", "/agent/model_name")]
    {
        if let Some(text) = str_at(run, pointer) {
            let _ = write!(out, "<span>{label} <b>");
            escape_into(out, text);
            out.push_str("</b></span> ");
        }
    }
    out.push_str("</p>\n");
}

/// The Shape, one row per field.
pub(crate) fn shape_table(out: &mut String, shape: &atif_normalize::Shape, open: bool) {
    let open = if open { " open" } else { "" };
    let _ = writeln!(out, "<details class=\"shape\"{open}><summary>Shape</summary><table>");
    for (field, value) in shape.fields() {
        out.push_str("<tr><th>");
        escape_into(out, &field);
        out.push_str("</th><td>");
        escape_into(out, &value.to_string());
        out.push_str("</td></tr>\n");
    }
    out.push_str("</table></details>\n");
}

/// The token totals: the run's own `final_metrics` when it states them, else the steps' sums.
fn totals(out: &mut String, run: &Value) {
    let sums =
        ["prompt_tokens", "completion_tokens", "cached_tokens"].map(|key| sum_metric(run, key));
    let stated = ["total_prompt_tokens", "total_completion_tokens", "total_cached_tokens"]
        .map(|key| run.pointer(&format!("/final_metrics/{key}")).and_then(Value::as_u64));
    out.push_str("<table class=\"totals\"><tr><th></th><th>prompt</th><th>completion</th><th>cached</th></tr>\n");
    out.push_str("<tr><th>sum of steps</th>");
    for sum in sums {
        let _ = write!(out, "<td>{sum}</td>");
    }
    out.push_str("</tr>\n");
    if stated.iter().any(Option::is_some) {
        out.push_str("<tr><th>final_metrics</th>");
        for total in stated {
            let _ =
                write!(out, "<td>{}</td>", total.map_or_else(|| "–".to_owned(), |n| n.to_string()));
        }
        out.push_str("</tr>\n");
    }
    let cost = run.pointer("/final_metrics/total_cost_usd").and_then(Value::as_f64);
    if let Some(cost) = cost {
        let _ = writeln!(out, "<tr><th>cost</th><td colspan=\"3\">${cost:.4}</td></tr>");
    }
    out.push_str("</table>\n");
}

fn sum_metric(run: &Value, key: &str) -> u64 {
    let steps = run.get("steps").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    steps
        .iter()
        .filter_map(|step| step.get("metrics").and_then(|m| m.get(key)).and_then(Value::as_u64))
        .fold(0, u64::saturating_add)
}

/// The largest prompt + cached + completion count of one step, over the runs' root steps and
/// subagents: the scale of every token bar.
pub(crate) fn max_step_tokens(run: &Value) -> u64 {
    let mut max = 0;
    each_step(run, &mut |step| {
        if let Some(metrics) = step.get("metrics") {
            for key in ["prompt_tokens", "completion_tokens", "cached_tokens"] {
                max = max.max(metrics.get(key).and_then(Value::as_u64).unwrap_or(0));
            }
        }
    });
    max
}

/// Calls `visit` on every step of `run` and of its embedded subagents.
fn each_step(run: &Value, visit: &mut dyn FnMut(&Value)) {
    for step in run.get("steps").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
        visit(step);
    }
    let subs = run.get("subagent_trajectories").and_then(Value::as_array);
    for sub in subs.map_or(&[][..], Vec::as_slice) {
        each_step(sub, visit);
    }
}

/// The bar of jumps: to a step number, to the next call of a tool, to the next error (and on a
/// diff page, to the next change). The page's script does the jumping.
pub(crate) fn jump_bar(out: &mut String, runs: &[&Value], diff: bool) {
    let mut tools = BTreeSet::new();
    let mut errors = 0;
    for run in runs {
        each_step(run, &mut |step| {
            tools.extend(step_tools(step));
            errors += usize::from(step_has_error(step));
        });
    }
    out.push_str(
        "<nav id=\"jump\"><form id=\"to-step\"><label>step <input id=\"step\" \
                  type=\"number\" min=\"1\"></label> <button type=\"submit\">go</button></form>\n",
    );
    out.push_str("<label>tool <select id=\"tool\">");
    for tool in &tools {
        out.push_str("<option>");
        escape_into(out, tool);
        out.push_str("</option>");
    }
    out.push_str("</select></label> <button id=\"next-call\" type=\"button\">next call</button>\n");
    let _ =
        writeln!(out, "<button id=\"next-error\" type=\"button\">next error ({errors})</button>");
    if diff {
        out.push_str("<button id=\"next-change\" type=\"button\">next change</button>\n");
    }
    out.push_str("<output id=\"status\"></output></nav>\n");
}
