//! `claude -p --output-format stream-json --verbose` output.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::Result;
use crate::context::Context;
use crate::draft::{FinalMetrics, Trajectory};
use crate::formats::anthropic::{Claude, UserFlags, usage_metrics};
use crate::formats::claude_code::AGENT_NAME;
use crate::lines::Records;

/// Imports a stream; lines with a `parent_tool_use_id` belong to the subagent spawned by that
/// call and become an embedded trajectory whose id is the call id.
///
/// A file may hold several runs (`system/init` … `result`, one after the other); each is its
/// own trajectory, in file order.
pub(crate) fn import_runs(records: &mut Records<'_>, ctx: &mut Context) -> Result<Vec<Trajectory>> {
    let mut runs = Vec::new();
    let mut run = Run::new();
    for record in records {
        let record = record?;
        let value = &record.value;
        let field = |key: &str| value.get(key).and_then(Value::as_str);
        let record_type = field("type").unwrap_or("");
        if record_type == "system" && field("subtype") == Some("init") && run.started {
            runs.push(std::mem::replace(&mut run, Run::new()).finish(ctx));
        }
        run.started = true;
        let parent = field("parent_tool_use_id");
        let n_subagents = run.subagents.len();
        let claude = match parent {
            Some(parent) => {
                &mut run
                    .subagents
                    .entry(parent.to_owned())
                    .or_insert_with(|| (n_subagents, Claude::new(AGENT_NAME)))
                    .1
            }
            None => &mut run.main,
        };
        if claude.trajectory.session_id.is_none() {
            claude.trajectory.session_id = field("session_id").map(str::to_owned);
        }
        match record_type {
            "system" if field("subtype") == Some("init") => init(&mut run.main.trajectory, value),
            "system" => ctx.ignore(&format!("system/{}", field("subtype").unwrap_or(""))),
            "assistant" => claude.assistant(record.line, value, None, None, false, ctx)?,
            "user" => {
                let structured = value.get("tool_use_result");
                claude.user(record.line, value, None, structured, UserFlags::default(), ctx)?;
            }
            "result" => run.result_line = Some(record.value),
            "stream_event" => ctx.ignore("stream_event"),
            other => {
                ctx.unknown(record.line, if other.is_empty() { "(no type)" } else { other })?
            }
        }
    }
    runs.push(run.finish(ctx));
    Ok(runs)
}

/// One run of a stream under construction.
struct Run {
    main: Claude,
    subagents: BTreeMap<String, (usize, Claude)>,
    result_line: Option<Value>,
    started: bool,
}

impl Run {
    fn new() -> Run {
        Run {
            main: Claude::new(AGENT_NAME),
            subagents: BTreeMap::new(),
            result_line: None,
            started: false,
        }
    }

    fn finish(self, ctx: &mut Context) -> Trajectory {
        let mut trajectory = self.main.trajectory;
        let mut subagents: Vec<(String, (usize, Claude))> = self.subagents.into_iter().collect();
        subagents.sort_by_key(|(_, (order, _))| *order);
        for (parent, (_, claude)) in subagents {
            let mut sub = claude.trajectory;
            sub.trajectory_id = Some(parent.clone());
            sub.agent_version.clone_from(&trajectory.agent_version);
            sub.final_metrics = Some(sub.summed_metrics());
            sub.crashed |= sub.ends_in_error();
            if !trajectory.add_subagent_ref(&parent, &parent) {
                ctx.stats.warn_file(format!(
                    "subagent lines name parent call `{parent}`, which no assistant message made"
                ));
            }
            trajectory.subagents.push(sub.into_atif());
        }
        match self.result_line {
            Some(result) => apply_result(&mut trajectory, &result),
            None => {
                trajectory.notes.push(
                    "The stream has no closing result line: the run did not finish.".to_owned(),
                );
                trajectory.final_metrics = Some(trajectory.summed_metrics());
                trajectory.crashed = true;
            }
        }
        trajectory.crashed |= trajectory.ends_in_error();
        trajectory
    }
}

/// The `system/init` line: session, model, CLI version, working folder, tools.
fn init(trajectory: &mut Trajectory, value: &Value) {
    let field = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    trajectory.session_id = field("session_id").or(trajectory.session_id.take());
    trajectory.agent_version = field("claude_code_version");
    if let Some(model) = field("model") {
        trajectory.model_name = Some(model);
    }
    if let Some(cwd) = field("cwd") {
        trajectory.extra.insert("cwd".into(), cwd.into());
    }
    for key in ["tools", "permissionMode"] {
        if let Some(v) = value.get(key) {
            trajectory.agent_extra.insert(key.into(), v.clone());
        }
    }
}

/// The closing `result` line: the run's own totals, its outcome and its final text.
fn apply_result(trajectory: &mut Trajectory, result: &Value) {
    let sums = trajectory.summed_metrics();
    let mut totals = match result.get("usage").filter(|u| u.is_object()) {
        Some(usage) => {
            let metrics = usage_metrics(usage);
            FinalMetrics {
                prompt: metrics.prompt,
                completion: metrics.completion,
                cached: metrics.cached,
                cost_usd: None,
                extra: Map::from_iter([("usage".to_owned(), usage.clone())]),
            }
        }
        None => sums.clone(),
    };
    totals.cost_usd = result.get("total_cost_usd").and_then(Value::as_f64);
    for key in ["num_turns", "duration_ms", "duration_api_ms", "modelUsage"] {
        if let Some(v) = result.get(key) {
            totals.extra.insert(key.into(), v.clone());
        }
    }
    if (totals.prompt, totals.completion, totals.cached)
        != (sums.prompt, sums.completion, sums.cached)
    {
        trajectory.notes.push(
            "final_metrics are the totals of the log's result line; per-step completion tokens are streaming snapshots and sum lower."
                .to_owned(),
        );
    }
    trajectory.final_metrics = Some(totals);
    let subtype = result.get("subtype").and_then(Value::as_str).unwrap_or("");
    let is_error = result.get("is_error").and_then(Value::as_bool) == Some(true);
    trajectory.extra.insert("outcome".into(), subtype.into());
    if is_error || (subtype != "success" && !subtype.is_empty()) {
        let text = result.get("result").and_then(Value::as_str).unwrap_or(subtype);
        let text = if text.is_empty() { subtype } else { text };
        trajectory.push_error(subtype, text, None::<&str>);
        trajectory.crashed = true;
    }
}
