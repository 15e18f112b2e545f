//! `codex exec --json` events.
//!
//! The stream names neither the model nor the provider's call ids, and reports usage per turn
//! only, so steps carry no metrics and `final_metrics` sums the `turn.completed` usage. A tool
//! item holds both the call and its result; the output item after it starts a new model call.

use serde_json::{Map, Value};

use crate::Result;
use crate::context::Context;
use crate::draft::{FinalMetrics, ObsResult, Part, Step, ToolCall, Trajectory};
use crate::formats::common::{Kind, Member, optional, required};
use crate::lines::Records;

/// The members each record type has; a record without them is malformed.
fn shape(record_type: &str) -> &'static [Member] {
    const THREAD: &[Member] = &[required("thread_id", Kind::Str)];
    const TURN_COMPLETED: &[Member] = &[optional("usage", Kind::Object)];
    const TURN_FAILED: &[Member] = &[optional("error", Kind::Object)];
    const ERROR: &[Member] = &[optional("message", Kind::Str)];
    const ITEM: &[Member] = &[
        required("item", Kind::Object),
        required("item.type", Kind::Str),
        optional("item.id", Kind::Str),
        optional("item.status", Kind::Str),
    ];
    match record_type {
        "thread.started" => THREAD,
        "turn.completed" => TURN_COMPLETED,
        "turn.failed" => TURN_FAILED,
        "error" => ERROR,
        _ if record_type.starts_with("item.") => ITEM,
        _ => &[],
    }
}

/// The members each item type has.
fn item_shape(item_type: &str) -> &'static [Member] {
    const TEXT: &[Member] = &[required("text", Kind::Str)];
    const COMMAND: &[Member] =
        &[optional("aggregated_output", Kind::Str), optional("exit_code", Kind::Number)];
    const MCP: &[Member] = &[optional("server", Kind::Str), optional("tool", Kind::Str)];
    const COLLAB: &[Member] =
        &[optional("tool", Kind::Str), optional("agents_states", Kind::Object)];
    match item_type {
        "agent_message" | "reasoning" => TEXT,
        "command_execution" => COMMAND,
        "mcp_tool_call" => MCP,
        "collab_tool_call" => COLLAB,
        "error" => const { &[optional("message", Kind::Str)] },
        _ => &[],
    }
}

/// The agent name written to `agent.name`.
const AGENT_NAME: &str = "codex";

pub(crate) fn import(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    let mut trajectory = Trajectory::new(AGENT_NAME);
    let mut open_call: Option<usize> = None;
    let mut turn_open = false;
    let mut totals = FinalMetrics::default();
    let mut n_turns = 0u64;
    for record in records {
        let record = record?;
        let value = &record.value;
        let record_type = value.get("type").and_then(Value::as_str).unwrap_or("");
        // Written in the call: a `format_args!` kept in a variable needs Rust 1.89.
        if !ctx.has_shape(
            record.line,
            format_args!("{record_type} record"),
            value,
            shape(record_type),
        )? {
            continue;
        }
        match record_type {
            "thread.started" => {
                trajectory.session_id =
                    value.get("thread_id").and_then(Value::as_str).map(str::to_owned);
            }
            "turn.started" => {
                turn_open = true;
                open_call = None;
            }
            "turn.completed" => {
                turn_open = false;
                open_call = None;
                n_turns += 1;
                add_turn_usage(&mut totals, value.get("usage").unwrap_or(&Value::Null));
            }
            "turn.failed" => {
                turn_open = false;
                open_call = None;
                let message = value
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("turn failed");
                trajectory.push_error("turn_failed", message, None::<&str>);
            }
            "error" => {
                open_call = None;
                let message = value.get("message").and_then(Value::as_str).unwrap_or("error");
                trajectory.push_error("error", message, None::<&str>);
            }
            "item.started" => {
                // A tool item that starts shows its call now; if the run dies before the item
                // completes, the call stays without a result.
                let item = value.get("item").unwrap_or(&Value::Null);
                let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
                if TOOL_ITEMS.contains(&item_type) {
                    item_call(&mut trajectory, &mut open_call, record.line, item);
                } else {
                    ctx.ignore(record_type);
                }
            }
            "item.updated" => ctx.ignore(record_type),
            "item.completed" => {
                let item = value.get("item").unwrap_or(&Value::Null);
                item_completed(&mut trajectory, &mut open_call, record.line, item, ctx)?;
            }
            other => {
                ctx.unknown(record.line, if other.is_empty() { "(no type)" } else { other })?
            }
        }
    }
    totals.extra.insert("turns".into(), n_turns.into());
    trajectory.final_metrics = Some(totals);
    Ok(finish(trajectory, turn_open))
}

/// Adds a completed turn's `usage` to the run's totals.
fn add_turn_usage(totals: &mut FinalMetrics, usage: &Value) {
    let field = |key: &str| usage.get(key).and_then(Value::as_u64);
    add(&mut totals.prompt, field("input_tokens"));
    add(&mut totals.cached, field("cached_input_tokens"));
    add(&mut totals.completion, field("output_tokens"));

    fn add(total: &mut Option<u64>, value: Option<u64>) {
        if let Some(value) = value {
            *total = Some(total.unwrap_or(0).saturating_add(value));
        }
    }
}

/// Marks the run crashed when the stream ended inside a turn, a tool item never completed or
/// the last step is an error, saying why in its notes.
fn finish(mut trajectory: Trajectory, turn_open: bool) -> Trajectory {
    if turn_open {
        trajectory.notes.push("The stream ends inside a turn: the run did not finish.".to_owned());
        trajectory.crashed = true;
    }
    let started_never_completed = trajectory.steps.iter().any(|step| {
        step.tool_calls.iter().any(|call| {
            !step.results.iter().any(|r| r.source_call_id.as_deref() == Some(call.id.as_str()))
                && call.extra.get("started_only").is_some()
        })
    });
    if started_never_completed {
        trajectory
            .notes
            .push("A tool item started and never completed: its call has no result.".to_owned());
        trajectory.crashed = true;
    }
    trajectory.crashed |= trajectory.ends_in_error();
    trajectory
}

fn item_completed(
    trajectory: &mut Trajectory,
    open_call: &mut Option<usize>,
    line: usize,
    item: &Value,
    ctx: &mut Context,
) -> Result<()> {
    let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
    if !ctx.has_shape(line, format_args!("{item_type} item"), item, item_shape(item_type))? {
        return Ok(());
    }
    let field = |key: &str| item.get(key).and_then(Value::as_str);
    let mut step_idx = |trajectory: &mut Trajectory| match *open_call {
        Some(idx) => idx,
        None => {
            let idx = trajectory.push(Step::model_call());
            *open_call = Some(idx);
            idx
        }
    };
    match item_type {
        "reasoning" => {
            let idx = step_idx(trajectory);
            trajectory.steps[idx].reasoning.push(field("text").unwrap_or("").to_owned());
        }
        "agent_message" => {
            let idx = step_idx(trajectory);
            trajectory.steps[idx].parts.push(Part::Text(field("text").unwrap_or("").to_owned()));
        }
        tool if TOOL_ITEMS.contains(&tool) => {
            let _ = step_idx;
            let id = item_call(trajectory, open_call, line, item);
            let (_, _, result) = tool_item(item_type, item);
            if let Some(mut result) = result {
                result.source_call_id = Some(id);
                trajectory.add_result(result);
            }
            // The result goes back to the model: what follows is another model call.
            *open_call = None;
        }
        "error" => {
            *open_call = None;
            trajectory.push_error("error", field("message").unwrap_or("error"), None::<&str>);
        }
        other => ctx.unknown(line, &format!("item.completed/{other}"))?,
    }
    Ok(())
}

/// The item types that are tool calls.
const TOOL_ITEMS: &[&str] = &[
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "todo_list",
    "collab_tool_call",
];

/// Adds the call of a tool item, or completes the call its `item.started` added (the completed
/// item's arguments win); returns the call id.
fn item_call(
    trajectory: &mut Trajectory,
    open_call: &mut Option<usize>,
    line: usize,
    item: &Value,
) -> String {
    let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
    let id = item
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| format!("item_line_{line}"), str::to_owned);
    let (name, arguments, _) = tool_item(item_type, item);
    let status = item.get("status").and_then(Value::as_str).unwrap_or("");
    if let Some(step_idx) = trajectory.step_of_call(&id) {
        if let Some(call) = trajectory.steps[step_idx].tool_calls.iter_mut().find(|c| c.id == id) {
            call.arguments = arguments;
            call.extra.remove("started_only");
        }
        return id;
    }
    let idx = match *open_call {
        Some(idx) => idx,
        None => {
            let idx = trajectory.push(Step::model_call());
            *open_call = Some(idx);
            idx
        }
    };
    let mut extra = Map::from_iter([("item_type".to_owned(), Value::from(item_type))]);
    if status == "in_progress" {
        extra.insert("started_only".into(), Value::Bool(true));
    }
    trajectory.add_call(idx, ToolCall { id: id.clone(), name, arguments, extra });
    id
}

/// The call name, arguments and result of a tool item.
///
/// The stream names the item type, not the tool the model called, so calls are named after the
/// tool that makes such an item in the rollout of the same run: `shell` for a command (the name
/// in the rollouts of the CLIs we have seen; newer ones may call it `exec_command`),
/// `apply_patch` for a file change, `update_plan` for a to-do list, `web_search`, and
/// `<server>__<tool>` for an MCP call. The item type stays in the call's `extra.item_type`.
fn tool_item(item_type: &str, item: &Value) -> (String, Map<String, Value>, Option<ObsResult>) {
    let pick = |keys: &[&str]| -> Map<String, Value> {
        keys.iter().filter_map(|k| item.get(*k).map(|v| ((*k).to_owned(), v.clone()))).collect()
    };
    let status = item.get("status").and_then(Value::as_str).unwrap_or("");
    let mut extra = Map::new();
    if !status.is_empty() {
        extra.insert("status".into(), status.into());
    }
    if matches!(status, "failed" | "declined") {
        extra.insert("is_error".into(), Value::Bool(true));
    }
    match item_type {
        "command_execution" => {
            if let Some(code) = item.get("exit_code").filter(|c| !c.is_null()) {
                extra.insert("exit_code".into(), code.clone());
            }
            let output = item.get("aggregated_output").and_then(Value::as_str).unwrap_or("");
            let result = ObsResult {
                content: Some(vec![Part::Text(output.to_owned())]),
                extra,
                ..ObsResult::default()
            };
            ("shell".to_owned(), pick(&["command"]), Some(result))
        }
        "file_change" => (
            "apply_patch".to_owned(),
            pick(&["changes"]),
            Some(ObsResult { extra, ..ObsResult::default() }),
        ),
        "mcp_tool_call" => mcp_tool_item(item, extra),
        "web_search" => ("web_search".to_owned(), pick(&["query", "action"]), None),
        "collab_tool_call" => {
            collab_tool_item(item, extra, pick(&["prompt", "receiver_thread_ids"]))
        }
        _ => ("update_plan".to_owned(), pick(&["items"]), None),
    }
}

/// An MCP tool call item: `SERVER__TOOL`, its arguments, and its result's text parts, error and
/// structured content.
fn mcp_tool_item(
    item: &Value,
    mut extra: Map<String, Value>,
) -> (String, Map<String, Value>, Option<ObsResult>) {
    let tool = item.get("tool").and_then(Value::as_str).unwrap_or("mcp_tool_call");
    let name = match item.get("server").and_then(Value::as_str) {
        Some(server) => format!("{server}__{tool}"),
        None => tool.to_owned(),
    };
    let arguments = match item.get("arguments") {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    if let Some(server) = item.get("server") {
        extra.insert("server".into(), server.clone());
    }
    let mut parts = Vec::new();
    if let Some(items) = item.pointer("/result/content").and_then(Value::as_array) {
        for part in items {
            match part.get("text").and_then(Value::as_str) {
                Some(text) => parts.push(Part::Text(text.to_owned())),
                None => parts.push(Part::Text(part.to_string())),
            }
        }
    }
    if let Some(error) = item.get("error").filter(|e| !e.is_null()) {
        extra.insert("is_error".into(), Value::Bool(true));
        let text = error
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_owned);
        parts.push(Part::Text(text));
    }
    if let Some(structured) = item.pointer("/result/structured_content").filter(|s| !s.is_null()) {
        extra.insert("structured_content".into(), structured.clone());
    }
    (name, arguments, Some(ObsResult { content: Some(parts), extra, ..ObsResult::default() }))
}

/// A collab tool call item, spawning or messaging subagents (threads): the call names the collab
/// tool, the result the threads it reached and what each said.
fn collab_tool_item(
    item: &Value,
    mut extra: Map<String, Value>,
    arguments: Map<String, Value>,
) -> (String, Map<String, Value>, Option<ObsResult>) {
    let tool = item.get("tool").and_then(Value::as_str).unwrap_or("collab_tool_call");
    let mut parts = Vec::new();
    if let Some(Value::Object(states)) = item.get("agents_states") {
        for (thread, state) in states {
            let status = state.get("status").and_then(Value::as_str).unwrap_or("");
            let message = state.get("message").and_then(Value::as_str).unwrap_or("");
            parts.push(Part::Text(format!("{thread} ({status}): {message}")));
        }
        extra.insert("agents_states".into(), Value::Object(states.clone()));
    }
    if let Some(threads) = item.get("receiver_thread_ids").filter(|t| t.is_array()) {
        extra.insert("subagent_thread_ids".into(), threads.clone());
    }
    if let Some(sender) = item.get("sender_thread_id") {
        extra.insert("sender_thread_id".into(), sender.clone());
    }
    (
        tool.to_owned(),
        arguments,
        Some(ObsResult { content: Some(parts), extra, ..ObsResult::default() }),
    )
}
