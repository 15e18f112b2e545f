//! pi (badlogic/pi-mono's coding agent): its session files
//! (`~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`) and `pi -p --mode json` output.
//!
//! Both start with the same `session` header and carry the same messages: the session file as
//! `message` entries (a tree from version 2 on: the conversation is the path from the last
//! entry back to the root), JSON mode as `message_end` events (the streaming deltas and the
//! repeats in `turn_end` / `agent_end` are left aside).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::Result;
use crate::context::Context;
use crate::draft::{Metrics, ObsResult, Part, Step, StepSource, ToolCall, Trajectory};
use crate::formats::common::{
    Kind, Member, millis_to_iso, object_arguments, optional, required, text_parts, type_name,
    u64_field,
};
use crate::lines::{Record, Records};

/// The agent name pi imports carry.
pub(crate) const AGENT_NAME: &str = "pi";

/// The session versions this importer knows.
const KNOWN_VERSIONS: u64 = 3;

/// What the `session` header holds.
const HEADER: &[Member] = &[
    optional("id", Kind::Str),
    optional("version", Kind::Number),
    optional("cwd", Kind::Str),
    optional("parentSession", Kind::Str),
];

/// The members a record holding a message (a session's `message` entry, a `message_end`
/// event) has, by the message's role.
fn message_shape(role: &str) -> &'static [Member] {
    const MESSAGE: [Member; 2] =
        [required("message", Kind::Object), required("message.role", Kind::Str)];
    const USER: &[Member] = &[MESSAGE[0], MESSAGE[1], required("message.content", Kind::Content)];
    const ASSISTANT: &[Member] = &[
        MESSAGE[0],
        MESSAGE[1],
        required("message.content", Kind::List),
        optional("message.usage", Kind::Object),
        optional("message.stopReason", Kind::Str),
    ];
    const TOOL_RESULT: &[Member] = &[
        MESSAGE[0],
        MESSAGE[1],
        required("message.toolCallId", Kind::Str),
        optional("message.content", Kind::Content),
    ];
    match role {
        "user" => USER,
        "assistant" => ASSISTANT,
        "toolResult" => TOOL_RESULT,
        _ => &MESSAGE,
    }
}

/// The members each other entry type has.
fn entry_shape(entry_type: &str) -> &'static [Member] {
    match entry_type {
        "model_change" => const { &[optional("modelId", Kind::Str)] },
        "compaction" | "branch_summary" => const { &[optional("summary", Kind::Str)] },
        "custom_message" => const { &[optional("content", Kind::Content)] },
        _ => &[],
    }
}

/// Imports a session file.
pub(crate) fn import_session(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    let mut reader = Reader::new();
    let mut entries: Vec<Record> = Vec::new();
    for record in records {
        let record = record?;
        if record.value.get("type").and_then(Value::as_str) == Some("session") {
            reader.header(&record, ctx)?;
        } else {
            entries.push(record);
        }
    }
    for record in active_branch(entries, ctx) {
        let value = &record.value;
        match value.get("type").and_then(Value::as_str).unwrap_or("") {
            "message" => reader.message(record.line, "message", value, ctx)?,
            other => reader.entry(record.line, other, value, ctx)?,
        }
    }
    Ok(reader.finish())
}

/// Imports `pi -p --mode json` output.
pub(crate) fn import_json(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    let mut reader = Reader::new();
    let mut ended = false;
    for record in records {
        let record = record?;
        let value = &record.value;
        match value.get("type").and_then(Value::as_str).unwrap_or("") {
            "session" => reader.header(&record, ctx)?,
            "message_end" => reader.message(record.line, "message_end", value, ctx)?,
            "agent_end" => {
                ended = true;
                ctx.ignore("agent_end");
            }
            other @ ("agent_start"
            | "turn_start"
            | "turn_end"
            | "message_start"
            | "message_update"
            | "tool_execution_start"
            | "tool_execution_update"
            | "tool_execution_end"
            | "auto_compaction_start"
            | "auto_compaction_end"
            | "auto_retry_start"
            | "auto_retry_end") => ctx.ignore(other),
            other => reader.entry(record.line, other, value, ctx)?,
        }
    }
    if !ended {
        reader
            .trajectory
            .notes
            .push("The output has no agent_end event: the run did not finish.".into());
        reader.trajectory.crashed = true;
    }
    Ok(reader.finish())
}

/// The entries on the path from the last entry back to the root, in file order; every entry
/// of a linear (version 1) session, whose entries have no ids.
fn active_branch(entries: Vec<Record>, ctx: &mut Context) -> Vec<Record> {
    let id_of = |r: &Record| r.value.get("id").and_then(Value::as_str).map(str::to_owned);
    if entries.iter().all(|r| id_of(r).is_none()) {
        return entries;
    }
    let index: HashMap<String, usize> =
        entries.iter().enumerate().filter_map(|(idx, r)| id_of(r).map(|id| (id, idx))).collect();
    let mut keep = vec![false; entries.len()];
    let mut at = entries.len().checked_sub(1);
    while let Some(idx) = at {
        if keep[idx] {
            break;
        }
        keep[idx] = true;
        at = entries[idx]
            .value
            .get("parentId")
            .and_then(Value::as_str)
            .and_then(|parent| index.get(parent).copied());
    }
    let n_off = keep.iter().filter(|k| !**k).count();
    if n_off > 0 {
        ctx.skip("entry off the active branch", n_off);
    }
    entries.into_iter().zip(keep).filter_map(|(r, k)| k.then_some(r)).collect()
}

struct Reader {
    trajectory: Trajectory,
    model: Option<String>,
}

impl Reader {
    fn new() -> Reader {
        Reader { trajectory: Trajectory::new(AGENT_NAME), model: None }
    }

    fn header(&mut self, record: &Record, ctx: &mut Context) -> Result<()> {
        let value = &record.value;
        if !ctx.has_shape(record.line, "session header", value, HEADER)? {
            return Ok(());
        }
        let field = |key: &str| value.get(key).and_then(Value::as_str);
        let version = value.get("version").and_then(Value::as_u64).unwrap_or(1);
        if version > KNOWN_VERSIONS {
            return Err(crate::Error::TooNew {
                line: record.line,
                format: ctx.format_name(),
                version: version.to_string(),
                known: KNOWN_VERSIONS.to_string(),
            });
        }
        self.trajectory.session_id = field("id").map(str::to_owned);
        if let Some(cwd) = field("cwd") {
            self.trajectory.extra.insert("cwd".into(), cwd.into());
        }
        if let Some(parent) = field("parentSession") {
            self.trajectory.extra.insert("parent_session".into(), parent.into());
        }
        // Version 1 keeps the model in the header.
        if let Some(model) = field("modelId").or(field("model")) {
            self.model = Some(model.to_owned());
        }
        Ok(())
    }

    /// An entry that is not a message.
    fn entry(
        &mut self,
        line: usize,
        entry_type: &str,
        value: &Value,
        ctx: &mut Context,
    ) -> Result<()> {
        if !ctx.has_shape(
            line,
            format_args!("{entry_type} entry"),
            value,
            entry_shape(entry_type),
        )? {
            return Ok(());
        }
        let field = |key: &str| value.get(key).and_then(Value::as_str);
        match entry_type {
            "model_change" => self.model = field("modelId").map(str::to_owned),
            "thinking_level_change" | "label" | "session_info" | "custom" => ctx.ignore(entry_type),
            "compaction" | "branch_summary" => {
                let mut step = Step::new(StepSource::System);
                step.set_timestamp(value.get("timestamp"));
                step.parts.push(Part::Text(field("summary").unwrap_or("").to_owned()));
                step.extra.insert("type".into(), entry_type.into());
                self.trajectory.push(step);
            }
            "custom_message" => {
                let mut step = Step::new(StepSource::System);
                step.set_timestamp(value.get("timestamp"));
                step.parts = content(value.get("content"));
                step.extra.insert("type".into(), entry_type.into());
                self.trajectory.push(step);
            }
            other => ctx.unknown(line, type_name(other))?,
        }
        Ok(())
    }

    /// A record of `record_type` (`message`, `message_end`) holding a message.
    fn message(
        &mut self,
        line: usize,
        record_type: &str,
        record: &Value,
        ctx: &mut Context,
    ) -> Result<()> {
        let role = record.pointer("/message/role").and_then(Value::as_str).unwrap_or("");
        if !ctx.has_shape(
            line,
            format_args!("{record_type} record"),
            record,
            message_shape(role),
        )? {
            return Ok(());
        }
        let message = &record["message"];
        let field = |key: &str| message.get(key).and_then(Value::as_str);
        let timestamp = millis_to_iso(message.get("timestamp"));
        match field("role").unwrap_or("") {
            "user" => {
                let mut step = Step::new(StepSource::User);
                step.timestamp = timestamp;
                step.parts = content(message.get("content"));
                self.trajectory.push(step);
            }
            "assistant" => self.assistant(line, message, timestamp),
            "toolResult" => {
                let id = field("toolCallId").unwrap_or("").to_owned();
                let mut result = ObsResult {
                    source_call_id: Some(id),
                    content: Some(content(message.get("content"))),
                    ..ObsResult::default()
                };
                if message.get("isError").and_then(Value::as_bool) == Some(true) {
                    result.extra.insert("is_error".into(), Value::Bool(true));
                }
                if let Some(details) = message.get("details").filter(|d| !is_empty(d)) {
                    result.extra.insert("details".into(), details.clone());
                }
                if let Some(orphan) = self.trajectory.add_result(result) {
                    let id =
                        self.trajectory.push_orphan_result(orphan, "tool_call_id", None::<&str>);
                    ctx.warn(line, &format!("tool result for unknown toolCallId `{id}`"));
                }
            }
            "bashExecution" => {
                let mut step = Step::new(StepSource::User);
                step.timestamp = timestamp;
                step.parts.push(Part::Text(format!("!{}", field("command").unwrap_or(""))));
                step.extra.insert("bash_execution".into(), message.clone());
                self.trajectory.push(step);
            }
            role @ ("custom" | "branchSummary" | "compactionSummary") => {
                let mut step = Step::new(StepSource::System);
                step.timestamp = timestamp;
                step.parts = match message.get("summary").and_then(Value::as_str) {
                    Some(summary) => vec![Part::Text(summary.to_owned())],
                    None => content(message.get("content")),
                };
                step.extra.insert("type".into(), role.into());
                self.trajectory.push(step);
            }
            other => ctx.unknown(line, &format!("message/{}", type_name(other)))?,
        }
        Ok(())
    }

    fn assistant(&mut self, line: usize, message: &Value, timestamp: Option<String>) {
        let field = |key: &str| message.get(key).and_then(Value::as_str);
        let mut step = Step::model_call();
        step.timestamp = timestamp;
        step.model_name = field("model").map(str::to_owned).or(self.model.clone());
        if self.trajectory.model_name.is_none() {
            self.trajectory.model_name.clone_from(&step.model_name);
        }
        let mut calls = Vec::new();
        for (n, block) in
            message.get("content").and_then(Value::as_array).into_iter().flatten().enumerate()
        {
            let block_field = |key: &str| block.get(key).and_then(Value::as_str);
            match block_field("type").unwrap_or("") {
                "text" => step.parts.push(Part::Text(block_field("text").unwrap_or("").to_owned())),
                "thinking" => step.reasoning.push(block_field("thinking").unwrap_or("").to_owned()),
                "toolCall" => {
                    let (arguments, extra) = object_arguments(block.get("arguments"));
                    let id = block_field("id")
                        .map_or_else(|| format!("call_line_{line}_{n}"), str::to_owned);
                    let name = block_field("name").unwrap_or("").to_owned();
                    calls.push(ToolCall { id, name, arguments, extra });
                }
                _ => step.parts.push(Part::Text(block.to_string())),
            }
        }
        step.metrics = message.get("usage").map(usage_metrics);
        let stop = field("stopReason").unwrap_or("");
        if let Some(stop) = field("stopReason") {
            step.extra.insert("stop_reason".into(), stop.into());
        }
        if matches!(stop, "error" | "aborted") {
            let text = field("errorMessage").unwrap_or(stop);
            step.set_error(stop, text);
        }
        let idx = self.trajectory.push(step);
        for call in calls {
            self.trajectory.add_call(idx, call);
        }
    }

    fn finish(mut self) -> Trajectory {
        let open_calls = self.trajectory.steps.iter().any(|step| {
            step.tool_calls.iter().any(|call| {
                !self
                    .trajectory
                    .steps
                    .iter()
                    .flat_map(|s| &s.results)
                    .any(|r| r.source_call_id.as_deref() == Some(call.id.as_str()))
            })
        });
        self.trajectory.crashed |= open_calls;
        self.trajectory.final_metrics = Some(self.trajectory.summed_metrics());
        self.trajectory.crashed |= self.trajectory.ends_in_error();
        self.trajectory
    }
}

/// Usage of one message: `input` leaves out cache reads and writes.
fn usage_metrics(usage: &Value) -> Metrics {
    let input = u64_field(usage, "input");
    let read = u64_field(usage, "cacheRead").unwrap_or(0);
    let write = u64_field(usage, "cacheWrite").unwrap_or(0);
    Metrics {
        prompt: input.map(|i| i.saturating_add(read).saturating_add(write)),
        completion: u64_field(usage, "output"),
        cached: Some(read),
        extra: Map::from_iter([("usage".to_owned(), usage.clone())]),
    }
}

fn content(value: Option<&Value>) -> Vec<Part> {
    text_parts(value.unwrap_or(&Value::Null), |part| {
        (part.get("type").and_then(Value::as_str) == Some("image")).then(|| {
            let field = |key: &str| part.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
            (field("mimeType"), field("data"))
        })
    })
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}
