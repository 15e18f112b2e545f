//! OpenCode: `opencode run --format json` events and `opencode export SESSION` documents.
//!
//! Both carry the same parts (`step-start`, `text`, `reasoning`, `tool`, `step-finish`); the
//! run stream prints each finished part of the session's assistant messages as an event, the
//! export holds every message with its parts. One model call is one `step-start` …
//! `step-finish` span, whose usage and cost come on the `step-finish`; a tool part holds the
//! call and its result together.

use serde_json::{Map, Value};

use crate::Result;
use crate::context::{At, Context};
use crate::draft::{Metrics, ObsResult, Part, Step, StepSource, ToolCall, Trajectory};
use crate::formats::common::{
    Kind, Member, millis_to_iso, object_arguments, optional, required, type_name, u64_field,
};
use crate::lines::Records;

/// The members each event of `opencode run --format json` has.
fn event_shape(event_type: &str, has_part: bool) -> &'static [Member] {
    match event_type {
        "user" => const { &[optional("parts", Kind::List)] },
        "error" => const { &[optional("error", Kind::Object)] },
        "done" => &[],
        _ if has_part => const { &[required("part", Kind::Object)] },
        _ => &[],
    }
}

/// What the document `opencode export` prints holds.
const EXPORT: &[Member] = &[
    required("info", Kind::Object),
    optional("info.id", Kind::Str),
    optional("info.version", Kind::Str),
    optional("info.directory", Kind::Str),
    required("messages", Kind::List),
];

/// What a message of an export holds.
const EXPORT_MESSAGE: &[Member] = &[
    required("info", Kind::Object),
    required("info.role", Kind::Str),
    optional("parts", Kind::List),
];

/// The members each part type has.
fn part_shape(part_type: &str) -> &'static [Member] {
    const TEXT: &[Member] = &[required("type", Kind::Str), required("text", Kind::Str)];
    const TOOL: &[Member] = &[
        required("type", Kind::Str),
        required("tool", Kind::Str),
        optional("callID", Kind::Str),
        required("state", Kind::Object),
        optional("state.status", Kind::Str),
    ];
    const STEP_FINISH: &[Member] = &[required("type", Kind::Str), optional("tokens", Kind::Object)];
    match part_type {
        "text" | "reasoning" => TEXT,
        "tool" => TOOL,
        "step-finish" => STEP_FINISH,
        _ => const { &[required("type", Kind::Str)] },
    }
}

/// The agent name OpenCode imports carry.
pub(crate) const AGENT_NAME: &str = "opencode";

/// Imports `opencode run --format json` output: one trajectory per session, in file order
/// (output of several runs appended to one file holds several).
pub(crate) fn import_runs(records: &mut Records<'_>, ctx: &mut Context) -> Result<Vec<Trajectory>> {
    let mut runs = Vec::new();
    let mut reader = Reader::new();
    for record in records {
        let record = record?;
        let value = &record.value;
        let field = |key: &str| value.get(key).and_then(Value::as_str);
        if let Some(session) = field("sessionID") {
            match &reader.trajectory.session_id {
                Some(current) if current != session => {
                    runs.push(std::mem::replace(&mut reader, Reader::new()).finish());
                    reader.trajectory.session_id = Some(session.to_owned());
                }
                Some(_) => {}
                None => reader.trajectory.session_id = Some(session.to_owned()),
            }
        }
        let event_type = field("type").unwrap_or("");
        let shape = event_shape(event_type, value.get("part").is_some());
        if !ctx.has_shape(record.line, format_args!("{event_type} event"), value, shape)? {
            continue;
        }
        match event_type {
            "error" => reader.error(value.get("error"), value.get("timestamp")),
            "done" => {
                reader.finished = true;
                ctx.ignore("done");
            }
            "user" => {
                let parts = value.get("parts").and_then(Value::as_array);
                let parts = parts.map(Vec::as_slice).unwrap_or(&[]);
                reader.user(
                    &At::inside(record.line, "/parts".into()),
                    parts,
                    value.get("timestamp"),
                    ctx,
                )?;
            }
            other => match value.get("part") {
                Some(part) if part.is_object() => {
                    let at = At::inside(record.line, "/part".into());
                    reader.part(at, part, value.get("timestamp"), ctx)?;
                }
                _ => ctx.unknown(record.line, type_name(other))?,
            },
        }
    }
    runs.push(reader.finish());
    Ok(runs)
}

/// Imports the document `opencode export SESSION` prints.
pub(crate) fn import_export(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    let mut reader = Reader::new();
    for record in records {
        let record = record?;
        let value = &record.value;
        if !ctx.has_shape(record.line, "export", value, EXPORT)? {
            continue;
        }
        let info = value.get("info").unwrap_or(&Value::Null);
        let field = |key: &str| info.get(key).and_then(Value::as_str);
        reader.trajectory.session_id = field("id").map(str::to_owned);
        reader.trajectory.agent_version = field("version").map(str::to_owned);
        if let Some(dir) = field("directory") {
            reader.trajectory.extra.insert("cwd".into(), dir.into());
        }
        if let Some(title) = field("title") {
            reader.trajectory.extra.insert("title".into(), title.into());
        }
        let messages = value.get("messages").and_then(Value::as_array);
        for (idx, message) in messages.into_iter().flatten().enumerate() {
            let at = At::inside(record.line, format!("/messages/{idx}"));
            if !ctx.has_shape(at.clone(), "message", message, EXPORT_MESSAGE)? {
                continue;
            }
            let info = message.get("info").unwrap_or(&Value::Null);
            let parts = message.get("parts").and_then(Value::as_array);
            let parts = parts.map(Vec::as_slice).unwrap_or(&[]);
            let created = info.pointer("/time/created");
            match info.get("role").and_then(Value::as_str).unwrap_or("") {
                "user" => reader.user(&at.child("/parts"), parts, created, ctx)?,
                "assistant" => {
                    reader.model = info.get("modelID").and_then(Value::as_str).map(str::to_owned);
                    if reader.trajectory.model_name.is_none() {
                        reader.trajectory.model_name.clone_from(&reader.model);
                    }
                    for (n, part) in parts.iter().enumerate() {
                        reader.part(at.child(&format!("/parts/{n}")), part, created, ctx)?;
                    }
                    reader.current = None;
                    if let Some(error) = info.get("error") {
                        reader.error(Some(error), info.pointer("/time/completed"));
                    }
                }
                other => ctx.unknown(record.line, &format!("message/{}", type_name(other)))?,
            }
        }
        reader.finished = true;
    }
    Ok(reader.finish())
}

struct Reader {
    trajectory: Trajectory,
    /// The step of the model call in progress.
    current: Option<usize>,
    /// The model of the assistant message being read (the export names it, the run does not).
    model: Option<String>,
    finished: bool,
}

impl Reader {
    fn new() -> Reader {
        Reader {
            trajectory: Trajectory::new(AGENT_NAME),
            current: None,
            model: None,
            finished: false,
        }
    }

    fn step(&mut self, timestamp: Option<&Value>) -> usize {
        if let Some(idx) = self.current {
            return idx;
        }
        let mut step = Step::model_call();
        step.timestamp = millis_to_iso(timestamp);
        step.model_name.clone_from(&self.model);
        let idx = self.trajectory.push(step);
        self.current = Some(idx);
        idx
    }

    /// A user message of `parts` (at `at`, their list).
    fn user(
        &mut self,
        at: &At,
        parts: &[Value],
        timestamp: Option<&Value>,
        ctx: &mut Context,
    ) -> Result<()> {
        self.current = None;
        let mut step = Step::new(StepSource::User);
        step.timestamp = millis_to_iso(timestamp);
        for (n, part) in parts.iter().enumerate() {
            let part_type = part.get("type").and_then(Value::as_str).unwrap_or("");
            let shape = part_shape(part_type);
            if !ctx.has_shape(
                at.child(&format!("/{n}")),
                format_args!("user {part_type} part"),
                part,
                shape,
            )? {
                continue;
            }
            match part.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                    step.parts.push(Part::Text(text.to_owned()));
                }
                Some("file") => {
                    let name = part.get("filename").or(part.get("url")).and_then(Value::as_str);
                    step.parts.push(Part::Text(format!("[file {}]", name.unwrap_or(""))));
                }
                _ => {}
            }
        }
        self.trajectory.push(step);
        Ok(())
    }

    fn part(
        &mut self,
        at: At,
        part: &Value,
        timestamp: Option<&Value>,
        ctx: &mut Context,
    ) -> Result<()> {
        let line = at.line();
        let field = |key: &str| part.get(key).and_then(Value::as_str);
        let part_type = field("type").unwrap_or("");
        if !ctx.has_shape(at, format_args!("{part_type} part"), part, part_shape(part_type))? {
            return Ok(());
        }
        match part_type {
            "step-start" => {
                self.current = None;
                self.step(timestamp);
            }
            "text" => {
                let idx = self.step(timestamp);
                let text = field("text").unwrap_or("").to_owned();
                self.trajectory.steps[idx].parts.push(Part::Text(text));
            }
            "reasoning" => {
                let idx = self.step(timestamp);
                let text = field("text").unwrap_or("").to_owned();
                self.trajectory.steps[idx].reasoning.push(text);
            }
            "tool" => {
                let idx = self.step(timestamp);
                self.tool(line, idx, part);
            }
            "step-finish" => {
                let idx = self.step(timestamp);
                let step = &mut self.trajectory.steps[idx];
                step.metrics = part.get("tokens").map(|tokens| {
                    let mut metrics = tokens_metrics(tokens);
                    if let Some(cost) = part.get("cost") {
                        metrics.extra.insert("cost".into(), cost.clone());
                    }
                    metrics
                });
                if let Some(reason) = field("reason") {
                    step.extra.insert("finish_reason".into(), reason.into());
                }
                self.current = None;
            }
            other @ ("patch" | "snapshot" | "file" | "agent" | "subtask" | "retry"
            | "compaction") => ctx.ignore(&format!("part/{other}")),
            other => ctx.unknown(line, &format!("part/{}", type_name(other)))?,
        }
        Ok(())
    }

    /// A tool part: the call, and its result once the tool finished. A call still `pending` or
    /// `running` (the run died while it ran) keeps no result.
    fn tool(&mut self, line: usize, step_idx: usize, part: &Value) {
        let state = part.get("state").unwrap_or(&Value::Null);
        let field = |key: &str| state.get(key).and_then(Value::as_str);
        let id = part
            .get("callID")
            .and_then(Value::as_str)
            .map_or_else(|| format!("call_line_{line}"), str::to_owned);
        let name = part.get("tool").and_then(Value::as_str).unwrap_or("").to_owned();
        let (arguments, mut extra) = object_arguments(state.get("input"));
        if let Some(title) = field("title") {
            extra.insert("title".into(), title.into());
        }
        self.trajectory.add_call(step_idx, ToolCall { id: id.clone(), name, arguments, extra });
        let status = field("status").unwrap_or("");
        let mut result = ObsResult { source_call_id: Some(id), ..ObsResult::default() };
        match status {
            "completed" => {
                result.content = Some(vec![Part::Text(field("output").unwrap_or("").to_owned())]);
            }
            "error" => {
                result.content = Some(vec![Part::Text(field("error").unwrap_or("").to_owned())]);
                result.extra.insert("is_error".into(), Value::Bool(true));
            }
            // Started, never completed.
            _ => return,
        }
        result.extra.insert("status".into(), status.into());
        if let Some(Value::Object(metadata)) = state.get("metadata") {
            // The output is already the content; the rest (exit code, truncation) is data.
            let metadata: Map<String, Value> = metadata
                .iter()
                .filter(|(k, _)| *k != "output")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !metadata.is_empty() {
                result.extra.insert("metadata".into(), metadata.into());
            }
        }
        // A `task` call's output names the child session it ran.
        if let Some(session) = field("output").and_then(task_session) {
            result.extra.insert("subagent_session_id".into(), session.into());
        }
        self.trajectory.add_result(result);
    }

    fn error(&mut self, error: Option<&Value>, timestamp: Option<&Value>) {
        let error = error.unwrap_or(&Value::Null);
        let kind = error.get("name").and_then(Value::as_str).unwrap_or("error");
        let message = error
            .pointer("/data/message")
            .or(error.get("message"))
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_owned);
        let timestamp = millis_to_iso(timestamp).map(Value::String);
        self.trajectory.push_error(kind, &message, timestamp.as_ref());
        self.current = None;
    }

    fn finish(mut self) -> Trajectory {
        let open_calls = self.trajectory.steps.iter().any(|step| {
            step.tool_calls.iter().any(|call| {
                !step.results.iter().any(|r| r.source_call_id.as_deref() == Some(call.id.as_str()))
            })
        });
        if open_calls {
            self.trajectory.crashed = true;
        }
        self.trajectory.final_metrics = Some(self.trajectory.summed_metrics());
        self.trajectory.crashed |= self.trajectory.ends_in_error();
        let _ = self.finished;
        self.trajectory
    }
}

/// Usage of one step: `input` leaves out cache reads and writes, `reasoning` is counted apart
/// from `output`.
fn tokens_metrics(tokens: &Value) -> Metrics {
    let input = u64_field(tokens, "input");
    let cache = tokens.get("cache").unwrap_or(&Value::Null);
    let read = u64_field(cache, "read").unwrap_or(0);
    let write = u64_field(cache, "write").unwrap_or(0);
    let output = u64_field(tokens, "output");
    let reasoning = u64_field(tokens, "reasoning").unwrap_or(0);
    Metrics {
        prompt: input.map(|i| i.saturating_add(read).saturating_add(write)),
        completion: output.map(|o| o.saturating_add(reasoning)),
        cached: Some(read),
        extra: Map::from_iter([("tokens".to_owned(), tokens.clone())]),
    }
}

/// The session id in a `task` result's `<task_metadata>session_id: ses_…</task_metadata>`.
fn task_session(output: &str) -> Option<&str> {
    let start = output.find("<task_metadata>")? + "<task_metadata>".len();
    let body = &output[start..];
    let body = &body[..body.find("</task_metadata>")?];
    let rest = &body[body.find("session_id:")? + "session_id:".len()..];
    rest.split_whitespace().next()
}
