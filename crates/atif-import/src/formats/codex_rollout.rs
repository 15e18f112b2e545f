//! Codex rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! A model call is a run of output items (reasoning, assistant messages, tool calls) not
//! interrupted by an input item (a tool output, a user message). Each non-duplicate
//! `token_count` is bound to its call by ordinal; Codex wrote it before the call's items in
//! 0.40 and after them later, so the order is detected from the first call of the file.

use serde_json::{Map, Value, json};

use crate::Result;
use crate::context::Context;
use crate::draft::{
    FinalMetrics, Metrics, ObsResult, Part, Step, StepSource, ToolCall, Trajectory, image_url_part,
};
use crate::formats::common::{Kind, Member, optional, required};
use crate::lines::{Fast, Record, Records};

mod fast;

/// The members each record type has; a record without them is malformed.
fn shape(record_type: &str) -> &'static [Member] {
    const PAYLOAD: &[Member] = &[required("payload", Kind::Object)];
    const TYPED_PAYLOAD: &[Member] =
        &[required("payload", Kind::Object), required("payload.type", Kind::Str)];
    const COMPACTED: &[Member] =
        &[required("payload", Kind::Object), optional("payload.message", Kind::Str)];
    match record_type {
        "session_meta" | "turn_context" | "token_usage_record" => PAYLOAD,
        "response_item" | "event_msg" => TYPED_PAYLOAD,
        "compacted" => COMPACTED,
        _ => &[],
    }
}

/// The members each response item or event has (by its payload's `type`).
fn payload_shape(record_type: &str, payload_type: &str) -> &'static [Member] {
    const MESSAGE: &[Member] = &[optional("role", Kind::Str), required("content", Kind::Content)];
    const NAMED_CALL: &[Member] = &[required("name", Kind::Str), optional("call_id", Kind::Str)];
    const OUTPUT: &[Member] = &[required("call_id", Kind::Str)];
    match (record_type, payload_type) {
        ("response_item", "message") => MESSAGE,
        ("response_item", "reasoning") => const { &[optional("summary", Kind::List)] },
        ("response_item", "function_call" | "custom_tool_call") => NAMED_CALL,
        (
            "response_item",
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output",
        ) => OUTPUT,
        ("response_item", "agent_message") => const { &[optional("content", Kind::Content)] },
        ("event_msg", "token_count") => const { &[optional("info", Kind::Object)] },
        ("event_msg", "error" | "stream_error") => const { &[optional("message", Kind::Str)] },
        _ => &[],
    }
}

/// The agent name written to `agent.name`.
const AGENT_NAME: &str = "codex";

/// Where a model call's `token_count` sits relative to the call's items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UsageOrder {
    /// Usage first, then the items (Codex 0.40).
    Precedes,
    /// The items, then the usage (later versions).
    Follows,
}

#[derive(Debug)]
struct State {
    trajectory: Trajectory,
    order: UsageOrder,
    /// The step of the model call whose items are still arriving.
    open_call: Option<usize>,
    /// Usage written before its call (Precedes order).
    pending_usage: Option<(usize, Metrics)>,
    /// The last model call that has not been given its usage (Follows order).
    unbound_call: Option<usize>,
    last_total: Option<Value>,
    /// The totals of earlier segments of a resumed session: the running total restarts from
    /// zero when a session is resumed, so the session's total is the sum of each segment's last.
    banked: Option<Value>,
    /// Usage from `token_usage_record` lines (Codex 0.169 on), used for the totals only when the
    /// log has no `token_count` with usage (they state the same usage).
    usage_records: Option<Value>,
    model: Option<String>,
    effort: Option<Value>,
    seen_session: bool,
}

pub(crate) fn import(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    import_with(records, ctx, Reader::Fast)
}

/// How the records after the read-ahead are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    /// The frequent records through [`fast::read`], the others as `Value`s.
    Fast,
    /// Every record as a `Value` (what the fast reader must agree with; the tests compare).
    #[cfg_attr(not(test), allow(dead_code, reason = "the tests compare both readers"))]
    Values,
}

fn import_with(records: &mut Records<'_>, ctx: &mut Context, reader: Reader) -> Result<Trajectory> {
    // Read ahead until the first usage or output item says in which order this file writes.
    let mut ahead = Vec::new();
    let mut order = None;
    for record in records.by_ref() {
        let record = record?;
        order = usage_order(&record);
        ahead.push(record);
        if order.is_some() {
            break;
        }
    }
    let mut state = State::new(order.unwrap_or(UsageOrder::Follows));
    // The records read ahead, then each line through the fast reader of the frequent records,
    // the others parsed into a `Value`.
    let mut ahead = ahead.into_iter();
    loop {
        let next = match ahead.next() {
            Some(record) => Fast::Record(record),
            None => {
                let next = match reader {
                    Reader::Fast => records.next_fast(&mut fast::read),
                    Reader::Values => records.next().map(|record| record.map(Fast::Record)),
                };
                match next {
                    Some(next) => next?,
                    None => break,
                }
            }
        };
        match next {
            Fast::Read { line, item } => state.hot(line, item, ctx)?,
            Fast::Record(record) => state.record(record, ctx)?,
        }
    }
    Ok(state.finish(ctx))
}

impl State {
    fn new(order: UsageOrder) -> State {
        let mut trajectory = Trajectory::new(AGENT_NAME);
        let order_name = match order {
            UsageOrder::Precedes => "precedes",
            UsageOrder::Follows => "follows",
        };
        trajectory.extra.insert("usage_order".into(), order_name.into());
        State {
            trajectory,
            order,
            open_call: None,
            pending_usage: None,
            unbound_call: None,
            last_total: None,
            banked: None,
            usage_records: None,
            model: None,
            effort: None,
            seen_session: false,
        }
    }

    /// One record that the fast reader left as a `Value`: checked against its shape, then read
    /// by its type.
    fn record(&mut self, record: Record, ctx: &mut Context) -> Result<()> {
        let line = record.line;
        let Record { mut value, .. } = record;
        let record_type = value.get("type").and_then(Value::as_str).unwrap_or("");
        let payload_type = value.pointer("/payload/type").and_then(Value::as_str).unwrap_or("");
        let members = shape(record_type);
        if !members.is_empty() {
            if !ctx.has_shape(line, format_args!("{record_type} record"), &value, members)? {
                return Ok(());
            }
            let members = payload_shape(record_type, payload_type);
            let payload = &value["payload"];
            if !members.is_empty()
                && !ctx.has_shape(
                    line,
                    format_args!("{record_type}/{payload_type}"),
                    payload,
                    members,
                )?
            {
                return Ok(());
            }
        }
        let mut payload = value.get_mut("payload").map(Value::take).unwrap_or(Value::Null);
        let payload = &mut payload;
        let record_type = value.get("type").and_then(Value::as_str).unwrap_or("");
        let timestamp = value.get("timestamp").and_then(Value::as_str);
        match record_type {
            "session_meta" => self.session_meta(line, payload, ctx),
            "turn_context" => {
                if let Some(model) = payload.get("model").and_then(Value::as_str) {
                    self.model = Some(model.to_owned());
                    self.trajectory.model_name.get_or_insert_with(|| model.to_owned());
                }
                self.effort =
                    payload.get("effort").filter(|e| e.is_string() || e.is_number()).cloned();
            }
            "response_item" => self.response_item(line, payload, timestamp, ctx)?,
            // Only `token_count` takes from its payload; every other event reads it.
            "event_msg" => match payload.get("type").and_then(Value::as_str) {
                Some("token_count") => {
                    // Taken, not cloned: the payload is dropped after this.
                    let last = payload.pointer_mut("/info/last_token_usage").map(Value::take);
                    let total = payload.pointer_mut("/info/total_token_usage").map(Value::take);
                    self.token_count(line, last, total, ctx);
                }
                _ => self.event(payload, timestamp, ctx),
            },
            "compacted" => self.compacted(payload, timestamp),
            "world_state" | "inter_agent_communication_metadata" => ctx.ignore(record_type),
            "token_usage_record" => {
                // One model response's usage, which the `token_count` event after it repeats.
                if let Some(usage) = payload.get("usage").filter(|u| u.is_object()) {
                    self.usage_records = Some(add_usage(self.usage_records.take(), usage));
                }
                ctx.ignore("token_usage_record (the usage token_count states)");
            }
            other => ctx.unknown(line, if other.is_empty() { "(no type)" } else { other })?,
        }
        Ok(())
    }

    /// A `compacted` record: the context was replaced by a summary, a system step.
    fn compacted(&mut self, payload: &Value, timestamp: Option<&str>) {
        self.open_call = None;
        let mut step = Step::new(StepSource::System);
        let text = payload.get("message").and_then(Value::as_str).unwrap_or("");
        step.parts.push(Part::Text(text.to_owned()));
        step.set_timestamp(timestamp);
        step.extra.insert(
            "context_management".into(),
            json!({"type": "compaction", "boundary": "replace"}),
        );
        self.trajectory.push(step);
    }

    /// The trajectory, with its final metrics: the log's last running total (summed over
    /// resumed segments) where it has one, else the steps' sums.
    fn finish(self, ctx: &mut Context) -> Trajectory {
        if let Some((line, _)) = self.pending_usage {
            ctx.warn(
                line,
                "token_count of a model call that wrote no items; its usage is only in the totals",
            );
        }
        let mut trajectory = self.trajectory;
        let sums = trajectory.summed_metrics();
        let last_total = match (self.banked, self.last_total) {
            (Some(banked), Some(last)) => Some(add_usage(Some(banked), &last)),
            (banked, last) => last.or(banked),
        };
        trajectory.final_metrics = Some(match last_total.or(self.usage_records) {
            Some(total) => {
                let metrics = usage_metrics(match &total {
                    Value::Object(map) => map.clone(),
                    _ => Map::new(),
                });
                if (metrics.prompt, metrics.completion, metrics.cached)
                    != (sums.prompt, sums.completion, sums.cached)
                {
                    trajectory.notes.push(
                        "final_metrics are the log's total_token_usage; some usage is not bound to a step.".to_owned(),
                    );
                }
                FinalMetrics {
                    prompt: metrics.prompt,
                    completion: metrics.completion,
                    cached: metrics.cached,
                    cost_usd: None,
                    extra: Map::from_iter([("total_token_usage".to_owned(), total)]),
                }
            }
            None => sums,
        });
        trajectory.crashed |= trajectory.ends_in_error();
        trajectory
    }
}

/// Whether `total` is below `last` in some counter: the running total started again.
fn restarted(last: &Value, total: &Value) -> bool {
    let counters = |usage: &Value| -> Vec<(String, u64)> {
        usage
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| v.as_u64().map(|v| (k.clone(), v)))
            .collect()
    };
    counters(last).into_iter().any(|(key, before)| {
        total.get(&key).and_then(Value::as_u64).is_some_and(|now| now < before)
    })
}

/// `sum` plus every integer counter of `usage`.
fn add_usage(sum: Option<Value>, usage: &Value) -> Value {
    let mut sum = match sum {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    for (key, value) in usage.as_object().into_iter().flatten() {
        if let Some(value) = value.as_u64() {
            let before = sum.get(key).and_then(Value::as_u64).unwrap_or(0);
            sum.insert(key.clone(), before.saturating_add(value).into());
        }
    }
    Value::Object(sum)
}

/// The usage order this record reveals, if it is the first `token_count` with usage (usage
/// precedes its call) or the first output item (usage follows it) of the file.
fn usage_order(record: &Record) -> Option<UsageOrder> {
    let payload = record.value.get("payload").unwrap_or(&Value::Null);
    let payload_type = payload.get("type").and_then(Value::as_str).unwrap_or("");
    match record.value.get("type").and_then(Value::as_str) {
        Some("event_msg") if payload_type == "token_count" && last_usage(payload).is_some() => {
            Some(UsageOrder::Precedes)
        }
        Some("response_item") if is_output_item(payload) => Some(UsageOrder::Follows),
        _ => None,
    }
}

fn last_usage(payload: &Value) -> Option<&Value> {
    payload.get("info")?.get("last_token_usage").filter(|u| u.is_object())
}

fn is_output_item(payload: &Value) -> bool {
    match payload.get("type").and_then(Value::as_str).unwrap_or("") {
        "reasoning"
        | "function_call"
        | "custom_tool_call"
        | "local_shell_call"
        | "web_search_call"
        | "tool_search_call"
        | "image_generation_call" => true,
        "message" => payload.get("role").and_then(Value::as_str) == Some("assistant"),
        _ => false,
    }
}

/// OpenAI usage as ATIF metrics: `input_tokens` already holds cached tokens, `output_tokens`
/// already holds reasoning tokens.
fn usage_metrics(usage: Map<String, Value>) -> Metrics {
    let field = |key: &str| usage.get(key).and_then(Value::as_u64);
    Metrics {
        prompt: field("input_tokens"),
        completion: field("output_tokens"),
        cached: field("cached_input_tokens"),
        extra: usage,
    }
}

impl State {
    fn session_meta(&mut self, line: usize, payload: &Value, ctx: &mut Context) {
        if self.seen_session {
            ctx.warn(
                line,
                "another session_meta: the file holds several sessions, imported as one",
            );
            ctx.ignore("session_meta (repeated)");
            return;
        }
        self.seen_session = true;
        let field = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_owned);
        self.trajectory.session_id = field("id");
        self.trajectory.agent_version = field("cli_version");
        for key in ["cwd", "originator"] {
            if let Some(v) = field(key) {
                self.trajectory.extra.insert(key.into(), v.into());
            }
        }
        if let Some(source) = payload.get("source") {
            self.trajectory.extra.insert("source".into(), source.clone());
        }
    }

    /// The step of the model call that `timestamp`'s output item belongs to, opening one.
    fn call_step(&mut self, timestamp: Option<&str>) -> usize {
        if let Some(idx) = self.open_call {
            return idx;
        }
        let mut step = Step::model_call();
        step.set_timestamp(timestamp);
        step.model_name = self.model.clone();
        step.reasoning_effort = self.effort.clone();
        if self.order == UsageOrder::Precedes {
            step.metrics = self.pending_usage.take().map(|(_, m)| m);
        }
        let idx = self.trajectory.push(step);
        self.open_call = Some(idx);
        if self.order == UsageOrder::Follows {
            self.unbound_call = Some(idx);
        }
        idx
    }

    fn response_item(
        &mut self,
        line: usize,
        payload: &mut Value,
        timestamp: Option<&str>,
        ctx: &mut Context,
    ) -> Result<()> {
        let item_type = payload.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
        let item_type = item_type.as_str();
        let field = |key: &str| payload.get(key).and_then(Value::as_str);
        match item_type {
            "message" => self.message(payload, timestamp),
            "reasoning" => {
                let summary: Vec<&str> = payload
                    .get("summary")
                    .and_then(Value::as_array)
                    .map(|items| {
                        items.iter().filter_map(|s| s.get("text").and_then(Value::as_str)).collect()
                    })
                    .unwrap_or_default();
                self.reasoning(timestamp, &summary);
            }
            "function_call"
            | "custom_tool_call"
            | "local_shell_call"
            | "web_search_call"
            | "tool_search_call"
            | "image_generation_call" => {
                let idx = self.call_step(timestamp);
                let call = tool_call(line, item_type, payload);
                self.trajectory.add_call(idx, call);
            }
            "function_call_output"
            | "custom_tool_call_output"
            | "tool_search_output"
            | "local_shell_call_output" => {
                self.open_call = None;
                let call_id = field("call_id").unwrap_or("").to_owned();
                let result = tool_output(item_type, call_id, payload);
                self.push_output(line, result, timestamp, ctx);
            }
            // A message another agent of the session sent to this thread (multi-agent Codex):
            // input to the model, like a user message, with its sender and recipient kept.
            "agent_message" => self.agent_message(payload, timestamp),
            "ghost_snapshot" => ctx.ignore("response_item/ghost_snapshot"),
            other => ctx.unknown(line, &format!("response_item/{other}"))?,
        }
        Ok(())
    }

    /// A `message` item: the assistant's text joins its turn; anything else opens a step.
    fn message(&mut self, payload: &Value, timestamp: Option<&str>) {
        let parts = content_parts(payload.get("content"));
        match payload.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                let idx = self.call_step(timestamp);
                self.trajectory.steps[idx].parts.extend(parts);
            }
            role => {
                self.open_call = None;
                let source =
                    if role == Some("user") { StepSource::User } else { StepSource::System };
                let mut step = Step::new(source);
                step.parts = parts;
                step.set_timestamp(timestamp);
                if let Some(role) = role.filter(|r| !matches!(*r, "user" | "system")) {
                    step.extra.insert("role".into(), role.into());
                }
                self.trajectory.push(step);
            }
        }
    }

    /// A message another agent of the session sent to this thread (multi-agent Codex): input
    /// to the model, like a user message, with its sender and recipient kept.
    fn agent_message(&mut self, payload: &Value, timestamp: Option<&str>) {
        self.open_call = None;
        let mut step = Step::new(StepSource::User);
        step.parts = content_parts(payload.get("content"));
        step.set_timestamp(timestamp);
        step.extra.insert("role".into(), "agent_message".into());
        for key in ["author", "recipient"] {
            if let Some(value) = payload.get(key).filter(|v| !v.is_null()) {
                step.extra.insert(key.into(), value.clone());
            }
        }
        self.trajectory.push(step);
    }

    /// An `event_msg` record other than `token_count`.
    fn event(&mut self, payload: &Value, timestamp: Option<&str>, ctx: &mut Context) {
        let event_type = payload.get("type").and_then(Value::as_str).unwrap_or("");
        let text = |key: &str| payload.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
        match event_type {
            "turn_aborted" => {
                self.open_call = None;
                let reason = text("reason");
                let reason = if reason.is_empty() { "unknown".to_owned() } else { reason };
                self.trajectory.push_error(
                    "aborted",
                    &format!("turn aborted: {reason}"),
                    timestamp,
                );
            }
            "error" | "stream_error" => {
                self.open_call = None;
                // Newer CLIs classify the error (`usage_limit_exceeded`, `{"http_connection_failed":
                // {…}}`); that class is the kind, else the event type is.
                let kind = match payload.get("codex_error_info") {
                    Some(Value::String(kind)) => kind.clone(),
                    Some(Value::Object(map)) => {
                        map.keys().next().cloned().unwrap_or_else(|| event_type.to_owned())
                    }
                    _ => event_type.to_owned(),
                };
                self.trajectory.push_error(&kind, &text("message"), timestamp);
            }
            "task_complete" if payload.get("error").is_some_and(|e| !e.is_null()) => {
                self.open_call = None;
                let error = payload.get("error").unwrap_or(&Value::Null);
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| error.to_string(), str::to_owned);
                self.trajectory.push_error("task_failed", &message, timestamp);
            }
            "collab_agent_spawn_end" => {
                let field = |key: &str| payload.get(key).and_then(Value::as_str);
                if let (Some(thread), Some(call)) = (field("new_thread_id"), field("call_id")) {
                    self.trajectory.spawned_threads.push((thread.to_owned(), call.to_owned()));
                }
            }
            other => ctx.ignore(&format!("event_msg/{other}")),
        }
    }

    /// A record the fast reader took whole: imported as [`State::response_item`] and
    /// [`State::event`] import the same record parsed into a `Value`.
    fn hot(&mut self, line: usize, hot: fast::Hot<'_>, ctx: &mut Context) -> Result<()> {
        let timestamp = hot.timestamp.as_deref();
        match hot.item {
            fast::Item::Reasoning { summary } => self.reasoning(timestamp, &summary),
            fast::Item::FunctionCall { call_id, id, name, arguments, namespace, status } => {
                let idx = self.call_step(timestamp);
                let mut extra = Map::new();
                let arguments = match arguments {
                    Some(raw) => function_arguments(&raw, &mut extra),
                    None => Map::new(),
                };
                if let Some(namespace) = namespace {
                    extra.insert("namespace".into(), namespace.into());
                }
                if let Some(status) = status {
                    extra.insert("status".into(), status.into());
                }
                let id = call_id_of(line, "function_call", call_id.as_deref(), id.as_deref());
                let call = ToolCall { id, name: name.into_owned(), arguments, extra };
                self.trajectory.add_call(idx, call);
            }
            fast::Item::FunctionCallOutput { call_id, output, status, success } => {
                self.open_call = None;
                let mut extra = Map::new();
                let content = match output {
                    Some(text) => text_output(text.into_owned(), &mut extra),
                    None => Vec::new(),
                };
                output_flags(&mut extra, status.as_deref(), success);
                let result = ObsResult {
                    source_call_id: Some(call_id.into_owned()),
                    content: Some(content),
                    subagent_refs: Vec::new(),
                    subagent_paths: Vec::new(),
                    extra,
                };
                self.push_output(line, result, timestamp, ctx);
            }
            fast::Item::TokenCount { last, total } => self.token_count(line, last, total, ctx),
            fast::Item::Ignored { name } => ctx.ignore(&name),
        }
        Ok(())
    }

    /// A reasoning item: it belongs to the model call, and its summary texts (if any) become
    /// the step's reasoning.
    fn reasoning<S: std::borrow::Borrow<str>>(&mut self, timestamp: Option<&str>, summary: &[S]) {
        let idx = self.call_step(timestamp);
        if !summary.is_empty() {
            self.trajectory.steps[idx].reasoning.push(summary.join("\n\n"));
        }
    }

    /// Attaches a tool output to the step holding its call, or keeps it as a step of its own
    /// with a warning when no item made the call.
    fn push_output(
        &mut self,
        line: usize,
        result: ObsResult,
        timestamp: Option<&str>,
        ctx: &mut Context,
    ) {
        if let Some(orphan) = self.trajectory.add_result(result) {
            let call_id = self.trajectory.push_orphan_result(orphan, "call_id", timestamp);
            ctx.warn(line, &format!("output for call `{call_id}`, which no item made"));
        }
    }

    /// A `token_count` event, with its `info.last_token_usage` and `info.total_token_usage`
    /// (`None` when absent).
    fn token_count(
        &mut self,
        line: usize,
        last: Option<Value>,
        total: Option<Value>,
        ctx: &mut Context,
    ) {
        let usage = match last {
            Some(Value::Object(usage)) => usage,
            _ => {
                ctx.ignore("event_msg/token_count (no usage)");
                return;
            }
        };
        if total.is_some() && total == self.last_total {
            ctx.ignore("event_msg/token_count (repeated totals)");
            return;
        }
        if let Some(total) = total {
            // A total below the last one: the session was resumed and its counter restarted.
            if let Some(last) = self.last_total.take() {
                if restarted(&last, &total) {
                    self.banked = Some(add_usage(self.banked.take(), &last));
                }
            }
            self.last_total = Some(total);
        }
        let metrics = usage_metrics(usage);
        match self.order {
            UsageOrder::Precedes => {
                self.open_call = None;
                if let Some((earlier, _)) = self.pending_usage.replace((line, metrics)) {
                    ctx.warn(earlier, "token_count of a model call that wrote no items; its usage is only in the totals");
                }
            }
            UsageOrder::Follows => {
                self.open_call = None;
                match self.unbound_call.take() {
                    Some(idx) => self.trajectory.steps[idx].metrics = Some(metrics),
                    None => ctx.warn(line, "token_count with no model call to bind it to; its usage is only in the totals"),
                }
            }
        }
    }
}

/// The text and image parts of a message's `content` list.
fn content_parts(content: Option<&Value>) -> Vec<Part> {
    match content {
        Some(Value::String(text)) => vec![Part::Text(text.clone())],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| match item.get("type").and_then(Value::as_str) {
                Some("input_text" | "output_text" | "text") => Some(Part::Text(
                    item.get("text").and_then(Value::as_str).unwrap_or("").to_owned(),
                )),
                Some("input_image") => {
                    Some(image_url_part(item.get("image_url").and_then(Value::as_str)))
                }
                Some("encrypted_content") => None,
                _ => Some(Part::Text(item.to_string())),
            })
            .collect(),
        Some(Value::Object(_)) => {
            content_parts(Some(&Value::Array(vec![content.cloned().unwrap_or_default()])))
        }
        _ => Vec::new(),
    }
}

fn tool_call(line: usize, item_type: &str, payload: &Value) -> ToolCall {
    let field = |key: &str| payload.get(key).and_then(Value::as_str);
    let id = call_id_of(line, item_type, field("call_id"), field("id"));
    let mut extra = Map::new();
    let object_of = |value: Option<&Value>| match value {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    let (name, arguments) = match item_type {
        "function_call" => {
            let name = field("name").unwrap_or("").to_owned();
            let arguments = match payload.get("arguments") {
                Some(Value::String(raw)) => function_arguments(raw, &mut extra),
                other => object_of(other),
            };
            if let Some(namespace) = field("namespace") {
                extra.insert("namespace".into(), namespace.into());
            }
            (name, arguments)
        }
        "custom_tool_call" => {
            let input = payload.get("input").cloned().unwrap_or(Value::Null);
            extra.insert("custom".into(), Value::Bool(true));
            (field("name").unwrap_or("").to_owned(), Map::from_iter([("input".to_owned(), input)]))
        }
        "local_shell_call" => ("local_shell".to_owned(), object_of(payload.get("action"))),
        "web_search_call" => ("web_search".to_owned(), object_of(payload.get("action"))),
        "tool_search_call" => ("tool_search".to_owned(), object_of(payload.get("arguments"))),
        _ => {
            let mut args = Map::new();
            if let Some(prompt) = payload.get("revised_prompt") {
                args.insert("revised_prompt".into(), prompt.clone());
            }
            ("image_generation".to_owned(), args)
        }
    };
    if let Some(status) = field("status") {
        extra.insert("status".into(), status.into());
    }
    ToolCall { id, name, arguments, extra }
}

/// A tool call's id: its `call_id`, else its `id`, else one made of its type and line.
fn call_id_of(line: usize, item_type: &str, call_id: Option<&str>, id: Option<&str>) -> String {
    call_id.or(id).map_or_else(|| format!("{item_type}_line_{line}"), str::to_owned)
}

/// A function call's arguments, written as a JSON text: the object it holds, else the text
/// under `raw_arguments` with `extra.arguments_not_an_object`.
fn function_arguments(raw: &str, extra: &mut Map<String, Value>) -> Map<String, Value> {
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => map,
        _ => {
            extra.insert("arguments_not_an_object".into(), Value::Bool(true));
            Map::from_iter([("raw_arguments".to_owned(), Value::String(raw.to_owned()))])
        }
    }
}

/// A text tool output as one part; the 0.40 JSON wrapper's `metadata` goes into `extra`.
fn text_output(text: String, extra: &mut Map<String, Value>) -> Vec<Part> {
    if let Some(metadata) = wrapper_metadata(&text) {
        extra.insert("metadata".into(), metadata);
    }
    vec![Part::Text(text)]
}

/// A tool output's `status` and `success`, kept in `extra`.
fn output_flags(extra: &mut Map<String, Value>, status: Option<&str>, success: Option<bool>) {
    if let Some(status) = status {
        extra.insert("status".into(), status.into());
    }
    if let Some(success) = success {
        extra.insert("success".into(), success.into());
    }
}

/// A tool output as the model received it; the 0.40 JSON wrapper's `metadata` (exit code,
/// duration) is also parsed into `extra`.
fn tool_output(item_type: &str, call_id: String, payload: &mut Value) -> ObsResult {
    let mut extra = Map::new();
    let content = match item_type {
        "tool_search_output" => {
            vec![Part::Text(payload.get("tools").map(Value::to_string).unwrap_or_default())]
        }
        // Taken, not cloned: outputs are most of a rollout's bytes.
        _ => match payload.get_mut("output").map(Value::take) {
            Some(Value::String(text)) => text_output(text, &mut extra),
            Some(other @ (Value::Array(_) | Value::Object(_))) => content_parts(Some(&other)),
            Some(Value::Null) | None => Vec::new(),
            Some(other) => vec![Part::Text(other.to_string())],
        },
    };
    let status = payload.get("status").and_then(Value::as_str);
    output_flags(&mut extra, status, payload.get("success").and_then(Value::as_bool));
    ObsResult {
        source_call_id: Some(call_id),
        content: Some(content),
        subagent_refs: Vec::new(),
        subagent_paths: Vec::new(),
        extra,
    }
}

/// The `metadata` object of a Codex 0.40 output wrapper
/// (`{"output":"…","metadata":{"exit_code":0,…}}`), read from the tail of the text without
/// parsing the (possibly large) output again. Inside the output string every quote is escaped,
/// so the last `"metadata"` with bare quotes is the wrapper's own key.
fn wrapper_metadata(text: &str) -> Option<Value> {
    if !text.starts_with('{') || !text.ends_with('}') {
        return None;
    }
    let key = text.rfind("\"metadata\"")? + "\"metadata\"".len();
    let tail = text.get(key..text.len() - 1)?.trim_start().strip_prefix(':')?;
    serde_json::from_str::<Value>(tail).ok().filter(Value::is_object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Format;
    use crate::lines::DETECT_RECORDS;

    /// Imports `log` with both readers, in strict mode or not, and asserts that they agree on
    /// the trajectory, the statistics and the error.
    fn check_readers_agree(log: &[u8], strict: bool) {
        let read = |reader: Reader| -> std::result::Result<(Value, crate::Stats), String> {
            let mut records = Records::open(log, strict).map_err(|e| e.to_string())?;
            let mut ctx = Context::new(Format::CodexRollout, strict, records.layout());
            let trajectory =
                import_with(&mut records, &mut ctx, reader).map_err(|e| e.to_string())?;
            ctx.close(&mut records);
            Ok((trajectory.into_atif().into_value(), ctx.stats))
        };
        let fast = read(Reader::Fast);
        let values = read(Reader::Values);
        assert_eq!(fast, values, "strict: {strict}, log:\n{}", String::from_utf8_lossy(log));
    }

    /// A rollout whose `lines` come after the records read ahead for detection and for the
    /// usage order, so the fast reader sees them.
    fn rollout(lines: &[&str]) -> String {
        let mut log = String::from(
            r#"{"timestamp":"2025-09-25T02:12:23.966Z","type":"session_meta","payload":{"id":"s","cli_version":"0.40.0"}}"#,
        );
        log.push('\n');
        // An output item settles the usage order, which the import reads ahead for.
        log.push_str(r#"{"type":"response_item","payload":{"type":"function_call","name":"f","arguments":"{}","call_id":"c0"}}"#);
        log.push('\n');
        for _ in 0..DETECT_RECORDS {
            log.push_str(r#"{"timestamp":"2025-09-25T02:12:24.000Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"hm"}}"#);
            log.push('\n');
        }
        for line in lines {
            log.push_str(line);
            log.push('\n');
        }
        log
    }

    const CALL: &str = r#"{"timestamp":"2025-09-25T02:12:24.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}"#;

    #[test]
    fn the_fast_reader_and_the_value_reader_import_every_record_alike() {
        let cases: &[&[&str]] = &[
            // The frequent records, in Codex's member order and in sorted order.
            &[
                r#"{"timestamp":"2025-09-25T02:12:24.000Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":4,"output_tokens":2},"total_token_usage":{"input_tokens":4}}}}"#,
                r#"{"payload":{"encrypted_content":"gAAA\u00e9\n","summary":[{"text":"**a**","type":"summary_text"},{"text":"b"}],"type":"reasoning"},"timestamp":"2025-09-25T02:12:24.000Z","type":"response_item"}"#,
                CALL,
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"a\\nb\",\"metadata\":{\"exit_code\":0}}","status":"completed","success":true}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"nobody","output":"x"}}"#,
                r#"{"type":"response_item","payload":{"type":"ghost_snapshot","ghost_commit":{}}}"#,
            ],
            // Summaries: null, not a list, parts that are not objects or have no text.
            &[
                r#"{"type":"response_item","payload":{"type":"reasoning","summary":null}}"#,
                r#"{"type":"response_item","payload":{"type":"reasoning","summary":"text"}}"#,
                r#"{"type":"response_item","payload":{"type":"reasoning","summary":[1,"a",null,{"text":7},{"text":"t","text":"last"},[{"text":"x"}]]}}"#,
                r#"{"type":"response_item","payload":{"type":"reasoning","summary":[],"content":null}}"#,
            ],
            // Calls: no name, a name that is not text, call ids of every kind, arguments of
            // every kind.
            &[
                r#"{"type":"response_item","payload":{"type":"function_call","arguments":"{}"}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call","name":7}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call","name":"f","call_id":7}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call","name":"f","call_id":null,"id":"fc_1"}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call","name":"f","id":7}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call","name":"f","arguments":{"a":1}}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call","name":"f","arguments":[1]}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call","name":"f","arguments":"not json"}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call","name":"f","arguments":true,"namespace":"ns","status":"done"}}"#,
            ],
            // Outputs: content lists, numbers, null, missing, no call id, flags of other types.
            &[
                CALL,
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"t"}]}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":42}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":null}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1"}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call_output","output":"x"}}"#,
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"x","success":"yes","status":1}}"#,
            ],
            // Usage: info null, not an object, without usage, usages null or repeated, and a
            // counter that restarts.
            &[
                r#"{"type":"event_msg","payload":{"type":"token_count","info":null}}"#,
                r#"{"type":"event_msg","payload":{"type":"token_count","info":"x"}}"#,
                r#"{"type":"event_msg","payload":{"type":"token_count","info":{}}}"#,
                r#"{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":null,"total_token_usage":null}}}"#,
                CALL,
                r#"{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":9},"total_token_usage":null}}}"#,
                CALL,
                r#"{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":9},"total_token_usage":{"input_tokens":90}},"rate_limits":{"primary":{}}}}"#,
                CALL,
                r#"{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":9},"total_token_usage":{"input_tokens":90}}}}"#,
                CALL,
                r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5},"last_token_usage":{"input_tokens":5}}}}"#,
            ],
            // Events the import reads, and ones it only counts.
            &[
                CALL,
                r#"{"type":"event_msg","payload":{"type":"agent_message","message":"hi"}}"#,
                r#"{"type":"event_msg","payload":{"type":"task_complete","error":{"message":"boom"}}}"#,
                r#"{"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#,
                r#"{"type":"event_msg","payload":{"type":""}}"#,
                r#"{"type":"event_msg","payload":{"type":7}}"#,
                r#"{"type":"event_msg","payload":{}}"#,
                r#"{"type":"event_msg","payload":[]}"#,
                r#"{"type":"event_msg"}"#,
            ],
            // Repeated members keep the last value; escaped keys are the same keys.
            &[
                r#"{"type":"response_item","payload":{"type":"reasoning","summary":[{"text":"first"}]},"payload":{"type":"function_call","name":"g","call_id":"c9"}}"#,
                r#"{"type":"event_msg","type":"compacted","payload":{"message":"m"}}"#,
                r#"{"type":"compacted","type":"event_msg","payload":{"type":"agent_reasoning"}}"#,
                r#"{"ty\u0070e":"response_item","payload":{"type":"reasoning","type":"message","role":"user","content":"u"}}"#,
                r#"{"type":"response_item","payload":{"type":"message","type":"reasoning","summary":[{"text":"s"}]}}"#,
            ],
            // What the `Value` parser refuses, inside members the import skips: a lone
            // surrogate, a number out of range, nesting past the limit, bytes after the
            // object, an array line, and a last line cut short.
            &[
                r#"{"type":"response_item","payload":{"type":"reasoning","encrypted_content":"\ud800"}}"#,
                r#"{"type":"response_item","payload":{"type":"reasoning","encrypted_content":1e400}}"#,
                r#"{"type":"response_item","payload":{"type":"reasoning","x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}"#,
                r#"{"type":"response_item","payload":{"type":"reasoning"}} x"#,
                r#"{"type":"response_item","payload":{"type":"reasoning","encrypted_content":"\x"}}"#,
                r#"[{"type":"response_item"}]"#,
                r#"{"type":"response_item","payload":{"type":"reasoning","summary":[{"text":"s"}]}"#,
            ],
        ];
        for lines in cases {
            for strict in [false, true] {
                check_readers_agree(rollout(lines).as_bytes(), strict);
            }
        }
        // Bytes that are not UTF-8 inside a skipped member, and a last line cut short.
        let mut log = rollout(&[CALL]).into_bytes();
        log.extend_from_slice(b"{\"type\":\"response_item\",\"payload\":{\"type\":\"reasoning\",\"encrypted_content\":\"\xff\"}}\n");
        log.extend_from_slice(b"{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\"");
        for strict in [false, true] {
            check_readers_agree(&log, strict);
        }
    }
}
