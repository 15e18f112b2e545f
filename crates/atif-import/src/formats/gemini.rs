//! Gemini CLI: its session files (`~/.gemini/tmp/<project>/chats/session-*.json` or `.jsonl`)
//! and `gemini -p … --output-format stream-json`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::Result;
use crate::context::{At, Context};
use crate::draft::{
    FinalMetrics, Metrics, ObsResult, Part, Step, StepSource, ToolCall, Trajectory,
};
use crate::formats::common::{
    Kind, Member, object_arguments, optional, required, text_parts, type_name, u64_field,
};
use crate::lines::Records;

/// What a session's metadata (a `$set` update, or the session document) holds.
const METADATA: &[Member] = &[
    optional("sessionId", Kind::Str),
    optional("projectHash", Kind::Str),
    optional("kind", Kind::Str),
    optional("messages", Kind::List),
];

/// What a message of a session holds.
const SESSION_MESSAGE: &[Member] = &[
    required("type", Kind::Str),
    optional("content", Kind::Content),
    optional("model", Kind::Str),
    optional("thoughts", Kind::List),
    optional("tokens", Kind::Object),
    optional("toolCalls", Kind::List),
];

/// What a call of a `gemini` message holds.
const SESSION_CALL: &[Member] = &[
    required("name", Kind::Str),
    optional("id", Kind::Str),
    optional("status", Kind::Str),
    optional("result", Kind::List),
];

/// The members each stream-json event has.
fn stream_shape(event_type: &str, role: Option<&str>) -> &'static [Member] {
    match (event_type, role) {
        ("init", _) => const { &[optional("session_id", Kind::Str), optional("model", Kind::Str)] },
        ("message", Some("assistant")) => const { &[required("content", Kind::Str)] },
        ("message", _) => {
            const { &[required("role", Kind::Str), required("content", Kind::Content)] }
        }
        ("tool_use", _) => {
            const { &[required("tool_name", Kind::Str), optional("tool_id", Kind::Str)] }
        }
        ("tool_result", _) => {
            const { &[required("tool_id", Kind::Str), optional("status", Kind::Str)] }
        }
        ("error", _) => {
            const { &[optional("severity", Kind::Str), optional("message", Kind::Str)] }
        }
        ("result", _) => {
            const { &[optional("stats", Kind::Object), optional("status", Kind::Str)] }
        }
        _ => &[],
    }
}

/// The agent name Gemini CLI imports carry.
pub(crate) const AGENT_NAME: &str = "gemini-cli";

/// Imports a session: one JSON document with `messages[]`, or JSON Lines of a metadata line,
/// message records (a record whose `id` was seen before replaces it), `{"$set": {…}}` updates
/// (a `messages` list replaces the messages so far) and `{"$rewindTo": id}`, which drops that
/// message and every later one.
pub(crate) fn import_session(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    let mut trajectory = Trajectory::new(AGENT_NAME);
    let mut messages: Vec<(At, Value)> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    let reindex = |messages: &Vec<(At, Value)>, by_id: &mut HashMap<String, usize>| {
        by_id.clear();
        for (idx, (_, m)) in messages.iter().enumerate() {
            if let Some(id) = m.get("id").and_then(Value::as_str) {
                by_id.insert(id.to_owned(), idx);
            }
        }
    };
    // The messages of a list in the record of `line`, each named by its JSON Pointer.
    let listed = |line: usize, prefix: &str, list: &mut Value| -> Vec<(At, Value)> {
        let list = match list.get_mut("messages").map(Value::take) {
            Some(Value::Array(list)) => list,
            _ => Vec::new(),
        };
        list.into_iter()
            .enumerate()
            .map(|(idx, m)| (At::inside(line, format!("{prefix}/messages/{idx}")), m))
            .collect()
    };
    for record in records {
        let record = record?;
        let line = record.line;
        let mut value = record.value;
        if let Some(set) = value.get_mut("$set") {
            if !ctx.has_shape(At::inside(line, "/$set".into()), "`$set` update", set, METADATA)? {
                continue;
            }
            metadata(&mut trajectory, set);
            if set.get("messages").is_some_and(Value::is_array) {
                messages = listed(line, "/$set", set);
                reindex(&messages, &mut by_id);
            }
            continue;
        }
        if let Some(target) = value.get("$rewindTo") {
            match target.as_str().and_then(|id| by_id.get(id)).copied() {
                Some(idx) => {
                    messages.truncate(idx);
                    reindex(&messages, &mut by_id);
                }
                None => ctx.warn(line, "`$rewindTo` names no message seen before"),
            }
            continue;
        }
        if value.get("sessionId").is_some() {
            if !ctx.has_shape(line, "session metadata", &value, METADATA)? {
                continue;
            }
            metadata(&mut trajectory, &value);
            messages.extend(listed(line, "", &mut value));
            reindex(&messages, &mut by_id);
            continue;
        }
        match value.get("id").and_then(Value::as_str) {
            Some(id) if by_id.contains_key(id) => {
                let idx = by_id[id];
                messages[idx] = (At::from(line), value);
            }
            Some(id) => {
                by_id.insert(id.to_owned(), messages.len());
                messages.push((At::from(line), value));
            }
            None => messages.push((At::from(line), value)),
        }
    }
    for (at, message) in messages {
        session_message(&mut trajectory, at, &message, ctx)?;
    }
    trajectory.final_metrics = Some(trajectory.summed_metrics());
    trajectory.crashed |= trajectory.ends_in_error();
    Ok(trajectory)
}

fn metadata(trajectory: &mut Trajectory, value: &Value) {
    if let Some(id) = value.get("sessionId").and_then(Value::as_str) {
        trajectory.session_id = Some(id.to_owned());
    }
    if let Some(hash) = value.get("projectHash").and_then(Value::as_str) {
        trajectory.extra.insert("project_hash".into(), hash.into());
    }
    if let Some(kind) = value.get("kind").and_then(Value::as_str) {
        trajectory.extra.insert("kind".into(), kind.into());
    }
}

fn session_message(
    trajectory: &mut Trajectory,
    at: At,
    message: &Value,
    ctx: &mut Context,
) -> Result<()> {
    let line = at.line();
    if !ctx.has_shape(at.clone(), "message", message, SESSION_MESSAGE)? {
        return Ok(());
    }
    let record_type = message.get("type").and_then(Value::as_str).unwrap_or("");
    let content = message.get("content").unwrap_or(&Value::Null);
    match record_type {
        "user" => {
            // The tool results the CLI sends back are written as a user record too; they are
            // already on the call records.
            if is_function_responses(content) {
                ctx.ignore("user/functionResponse");
                return Ok(());
            }
            let mut step = Step::new(StepSource::User);
            step.set_timestamp(message.get("timestamp"));
            step.parts = content_parts(content);
            trajectory.push(step);
        }
        "gemini" => {
            let mut step = Step::model_call();
            step.set_timestamp(message.get("timestamp"));
            step.parts = content_parts(content);
            step.parts.retain(|p| !matches!(p, Part::Text(t) if t.is_empty()));
            step.model_name = message.get("model").and_then(Value::as_str).map(str::to_owned);
            if trajectory.model_name.is_none() {
                trajectory.model_name.clone_from(&step.model_name);
            }
            for thought in message.get("thoughts").and_then(Value::as_array).into_iter().flatten() {
                let subject = thought.get("subject").and_then(Value::as_str).unwrap_or("");
                let description = thought.get("description").and_then(Value::as_str).unwrap_or("");
                step.reasoning.push(match (subject.is_empty(), description.is_empty()) {
                    (false, false) => format!("{subject}: {description}"),
                    (false, true) => subject.to_owned(),
                    _ => description.to_owned(),
                });
            }
            step.metrics = message.get("tokens").map(tokens_metrics);
            let step_idx = trajectory.push(step);
            let calls = message.get("toolCalls").and_then(Value::as_array);
            for (n, call) in calls.into_iter().flatten().enumerate() {
                let call_at = at.child(&format!("/toolCalls/{n}"));
                if ctx.has_shape(call_at, "tool call", call, SESSION_CALL)? {
                    session_call(trajectory, step_idx, line, n, call);
                }
            }
        }
        "error" => {
            let text = text_of(content);
            trajectory.push_error("error", &text, message.get("timestamp"));
        }
        "info" | "warning" => {
            let mut step = Step::new(StepSource::System);
            step.set_timestamp(message.get("timestamp"));
            step.parts = content_parts(content);
            step.extra.insert("type".into(), record_type.into());
            trajectory.push(step);
        }
        other => ctx.unknown(line, type_name(other))?,
    }
    Ok(())
}

/// A call of a `gemini` record, with its result, which the session keeps on the call.
fn session_call(trajectory: &mut Trajectory, step_idx: usize, line: usize, n: usize, call: &Value) {
    let field = |key: &str| call.get(key).and_then(Value::as_str);
    let id = field("id").map_or_else(|| format!("call_line_{line}_{n}"), str::to_owned);
    let (arguments, mut extra) = object_arguments(call.get("args"));
    if let Some(name) = field("displayName") {
        extra.insert("display_name".into(), name.into());
    }
    trajectory.add_call(
        step_idx,
        ToolCall { id: id.clone(), name: field("name").unwrap_or("").to_owned(), arguments, extra },
    );
    let status = field("status");
    let Some(parts) = call.get("result").and_then(Value::as_array) else {
        if status.is_some_and(|s| s != "success") {
            let mut result = ObsResult { source_call_id: Some(id), ..ObsResult::default() };
            result.extra.insert("status".into(), status.unwrap_or("").into());
            trajectory.add_result(result);
        }
        return;
    };
    let mut result = function_responses(parts);
    result.source_call_id = Some(id);
    if let Some(status) = status {
        if status != "success" {
            result.extra.insert("is_error".into(), Value::Bool(true));
        }
        result.extra.insert("status".into(), status.into());
    }
    trajectory.add_result(result);
}

/// A result made of Gemini parts: the `output` (or `error`) of each `functionResponse`, text
/// parts and inline images.
fn function_responses(parts: &[Value]) -> ObsResult {
    let mut result = ObsResult { content: Some(Vec::new()), ..ObsResult::default() };
    let content = result.content.get_or_insert_with(Vec::new);
    for part in parts {
        if let Some(response) = part.pointer("/functionResponse/response") {
            match (response.get("output"), response.get("error")) {
                (Some(output), _) => content.push(Part::Text(string_or_json(output))),
                (None, Some(error)) => {
                    content.push(Part::Text(string_or_json(error)));
                    result.extra.insert("is_error".into(), Value::Bool(true));
                }
                (None, None) => content.push(Part::Text(response.to_string())),
            }
        } else {
            content.extend(content_parts(&Value::Array(vec![part.clone()])));
        }
    }
    result
}

/// Imports `gemini -p … --output-format stream-json`: assistant text arrives in `delta` chunks
/// and there is no per-call usage, so each model call is inferred (a new one starts at the first
/// assistant message or tool call after a tool result or a user message) and the totals come
/// from the closing `result` line.
pub(crate) fn import_stream(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    let mut trajectory = Trajectory::new(AGENT_NAME);
    let mut current: Option<usize> = None;
    let mut finished = false;
    for record in records {
        let record = record?;
        let value = &record.value;
        let field = |key: &str| value.get(key).and_then(Value::as_str);
        let event_type = field("type").unwrap_or("");
        let members = stream_shape(event_type, field("role"));
        if !ctx.has_shape(record.line, format_args!("{event_type} event"), value, members)? {
            continue;
        }
        match event_type {
            "init" => {
                trajectory.session_id = field("session_id").map(str::to_owned);
                trajectory.model_name = field("model").map(str::to_owned);
            }
            "message" if field("role") == Some("assistant") => {
                let idx = *current.get_or_insert_with(|| agent_step(&mut trajectory, value));
                let text = field("content").unwrap_or("");
                match trajectory.steps[idx].parts.last_mut() {
                    Some(Part::Text(last)) => last.push_str(text),
                    _ => trajectory.steps[idx].parts.push(Part::Text(text.to_owned())),
                }
            }
            "message" => {
                current = None;
                let mut step = Step::new(StepSource::User);
                step.set_timestamp(value.get("timestamp"));
                step.parts = content_parts(value.get("content").unwrap_or(&Value::Null));
                trajectory.push(step);
            }
            "tool_use" => {
                let idx = *current.get_or_insert_with(|| agent_step(&mut trajectory, value));
                let id = field("tool_id")
                    .map_or_else(|| format!("call_line_{}", record.line), str::to_owned);
                let (arguments, extra) = object_arguments(value.get("parameters"));
                let name = field("tool_name").unwrap_or("").to_owned();
                trajectory.add_call(idx, ToolCall { id, name, arguments, extra });
            }
            "tool_result" => {
                current = None;
                if let Some(orphan) = trajectory.add_result(stream_tool_result(value)) {
                    let id =
                        trajectory.push_orphan_result(orphan, "tool_id", value.get("timestamp"));
                    ctx.warn(record.line, &format!("tool result for unknown tool_id `{id}`"));
                }
            }
            "error" => {
                let kind = field("severity").unwrap_or("error");
                trajectory.push_error(kind, field("message").unwrap_or(""), value.get("timestamp"));
                if kind == "error" {
                    current = None;
                }
            }
            "result" => {
                finished = true;
                stream_result(&mut trajectory, value);
            }
            other => ctx.unknown(record.line, type_name(other))?,
        }
    }
    if !finished {
        trajectory
            .notes
            .push("The stream has no closing result line: the run did not finish.".into());
        trajectory.final_metrics = Some(trajectory.summed_metrics());
        trajectory.crashed = true;
    }
    trajectory.crashed |= trajectory.ends_in_error();
    Ok(trajectory)
}

/// A stream's `tool_result` event as the result of its call: the output, or the error's message
/// marked as an error.
fn stream_tool_result(value: &Value) -> ObsResult {
    let field = |key: &str| value.get(key).and_then(Value::as_str);
    let id = field("tool_id").unwrap_or("").to_owned();
    let mut result = ObsResult { source_call_id: Some(id), ..ObsResult::default() };
    let status = field("status").unwrap_or("");
    let text = match (value.get("output"), value.get("error")) {
        (Some(output), _) => string_or_json(output),
        (None, Some(error)) => {
            let message = error.get("message").and_then(Value::as_str);
            message.map_or_else(|| error.to_string(), str::to_owned)
        }
        (None, None) => String::new(),
    };
    result.content = Some(vec![Part::Text(text)]);
    if status != "success" {
        result.extra.insert("is_error".into(), Value::Bool(true));
    }
    if let Some(error) = value.get("error") {
        result.extra.insert("error".into(), error.clone());
    }
    result.extra.insert("status".into(), status.into());
    result
}

/// The stream's closing `result` event: the run's totals and outcome, and its error when it
/// did not succeed.
fn stream_result(trajectory: &mut Trajectory, value: &Value) {
    let field = |key: &str| value.get(key).and_then(Value::as_str);
    let stats = value.get("stats").unwrap_or(&Value::Null);
    let mut totals = FinalMetrics {
        prompt: u64_field(stats, "input_tokens"),
        completion: u64_field(stats, "output_tokens"),
        cached: u64_field(stats, "cached"),
        ..FinalMetrics::default()
    };
    totals.extra.insert("stats".into(), stats.clone());
    trajectory.final_metrics = Some(totals);
    let status = field("status").unwrap_or("");
    trajectory.extra.insert("outcome".into(), status.into());
    if status != "success" {
        let error = value.get("error");
        let message =
            error.and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or(status);
        let kind = error.and_then(|e| e.get("type")).and_then(Value::as_str);
        trajectory.push_error(kind.unwrap_or(status), message, value.get("timestamp"));
        trajectory.crashed = true;
    }
}

fn agent_step(trajectory: &mut Trajectory, value: &Value) -> usize {
    let mut step = Step::model_call();
    step.set_timestamp(value.get("timestamp"));
    step.model_name.clone_from(&trajectory.model_name);
    trajectory.push(step)
}

/// Usage of one `gemini` record: `input` already counts the cached tokens, `tool` is prompt
/// tokens of tool use, and `output` leaves out `thoughts`.
fn tokens_metrics(tokens: &Value) -> Metrics {
    let input = u64_field(tokens, "input");
    let tool = u64_field(tokens, "tool").unwrap_or(0);
    let output = u64_field(tokens, "output");
    let thoughts = u64_field(tokens, "thoughts").unwrap_or(0);
    Metrics {
        prompt: input.map(|i| i.saturating_add(tool)),
        completion: output.map(|o| o.saturating_add(thoughts)),
        cached: u64_field(tokens, "cached"),
        extra: Map::from_iter([("tokens".to_owned(), tokens.clone())]),
    }
}

fn is_function_responses(content: &Value) -> bool {
    content.as_array().is_some_and(|parts| {
        !parts.is_empty() && parts.iter().all(|p| p.get("functionResponse").is_some())
    })
}

/// Content as a string or a Gemini part list.
fn content_parts(content: &Value) -> Vec<Part> {
    text_parts(content, |part| {
        let data = part.get("inlineData")?;
        Some((
            data.get("mimeType").and_then(Value::as_str).unwrap_or("").to_owned(),
            data.get("data").and_then(Value::as_str).unwrap_or("").to_owned(),
        ))
    })
}

fn text_of(content: &Value) -> String {
    content_parts(content)
        .into_iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t),
            Part::Image { .. } | Part::Content(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn string_or_json(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
