//! The trajectory under construction: steps, tool-call joins, metrics, and the final JSON.
//!
//! Every format module fills a [`Trajectory`]; this module owns the ATIF spelling, so the
//! rules that make the output valid (agent-only fields, results joined inside the step that
//! holds the call, ISO 8601 timestamps) live in one place.

use std::collections::HashMap;

use atif_schema::SchemaVersion;
use serde_json::{Map, Value, json};

/// The ATIF version every import writes.
pub(crate) const SCHEMA_VERSION: SchemaVersion = SchemaVersion::V1_8;

/// Who produced a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    System,
    User,
    Agent,
}

/// One piece of a message or of a tool result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    Text(String),
    Image { media_type: String, path: String },
}

/// A tool call as the model made it.
#[derive(Debug, Clone)]
pub(crate) struct ToolCall {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) extra: Map<String, Value>,
}

/// One observation result.
#[derive(Debug, Clone, Default)]
pub(crate) struct ObsResult {
    pub(crate) source_call_id: Option<String>,
    pub(crate) content: Option<Vec<Part>>,
    pub(crate) subagent_refs: Vec<String>,
    pub(crate) extra: Map<String, Value>,
}

/// Token usage of one model call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Metrics {
    pub(crate) prompt: Option<u64>,
    pub(crate) completion: Option<u64>,
    pub(crate) cached: Option<u64>,
    pub(crate) extra: Map<String, Value>,
}

/// Totals the log states itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct FinalMetrics {
    pub(crate) prompt: Option<u64>,
    pub(crate) completion: Option<u64>,
    pub(crate) cached: Option<u64>,
    pub(crate) cost_usd: Option<f64>,
    pub(crate) extra: Map<String, Value>,
}

/// One ATIF step under construction.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub(crate) source: Source,
    pub(crate) parts: Vec<Part>,
    pub(crate) timestamp: Option<String>,
    pub(crate) model_name: Option<String>,
    pub(crate) reasoning_effort: Option<Value>,
    pub(crate) reasoning: Vec<String>,
    pub(crate) tool_calls: Vec<ToolCall>,
    pub(crate) results: Vec<ObsResult>,
    pub(crate) metrics: Option<Metrics>,
    pub(crate) extra: Map<String, Value>,
    pub(crate) llm_call_count: Option<u64>,
}

impl Step {
    pub(crate) fn new(source: Source) -> Step {
        Step {
            source,
            parts: Vec::new(),
            timestamp: None,
            model_name: None,
            reasoning_effort: None,
            reasoning: Vec::new(),
            tool_calls: Vec::new(),
            results: Vec::new(),
            metrics: None,
            extra: Map::new(),
            llm_call_count: None,
        }
    }

    /// An agent step for one model call.
    pub(crate) fn model_call() -> Step {
        let mut step = Step::new(Source::Agent);
        step.llm_call_count = Some(1);
        step
    }

    /// Sets the timestamp when `timestamp` is a string in ISO 8601 (others are dropped: they
    /// would make the trajectory invalid, and timestamps are not behaviour).
    pub(crate) fn set_timestamp(&mut self, timestamp: Option<&Value>) {
        if let Some(text) = timestamp.and_then(Value::as_str).filter(|t| is_iso8601(t)) {
            self.timestamp = Some(text.to_owned());
        }
    }

    /// Marks this step as an error or a cancellation: `extra.error = {kind, message}`.
    pub(crate) fn set_error(&mut self, kind: &str, message: &str) {
        self.extra.insert("error".into(), json!({ "kind": kind, "message": message }));
    }

    pub(crate) fn is_error(&self) -> bool {
        self.extra.contains_key("error")
    }
}

/// A trajectory under construction.
#[derive(Debug, Clone)]
pub(crate) struct Trajectory {
    pub(crate) session_id: Option<String>,
    pub(crate) trajectory_id: Option<String>,
    pub(crate) agent_name: String,
    pub(crate) agent_version: Option<String>,
    pub(crate) model_name: Option<String>,
    pub(crate) agent_extra: Map<String, Value>,
    pub(crate) steps: Vec<Step>,
    pub(crate) final_metrics: Option<FinalMetrics>,
    pub(crate) notes: Vec<String>,
    pub(crate) extra: Map<String, Value>,
    pub(crate) subagents: Vec<Value>,
    /// Whether the run died (truncated log, fatal error, cancellation at the end).
    pub(crate) crashed: bool,
    /// Threads this run spawned, as (thread id, id of the spawning call), from Codex
    /// `collab_agent_spawn_end` events; used to link sibling rollout files.
    pub(crate) spawned_threads: Vec<(String, String)>,
    /// Call id to the index of the step that holds it.
    call_steps: HashMap<String, usize>,
}

impl Trajectory {
    pub(crate) fn new(agent_name: &str) -> Trajectory {
        Trajectory {
            session_id: None,
            trajectory_id: None,
            agent_name: agent_name.to_owned(),
            agent_version: None,
            model_name: None,
            agent_extra: Map::new(),
            steps: Vec::new(),
            final_metrics: None,
            notes: Vec::new(),
            extra: Map::new(),
            subagents: Vec::new(),
            crashed: false,
            spawned_threads: Vec::new(),
            call_steps: HashMap::new(),
        }
    }

    /// Appends `step` and returns its index.
    pub(crate) fn push(&mut self, step: Step) -> usize {
        self.steps.push(step);
        self.steps.len() - 1
    }

    /// Adds `call` to the step at `step_idx` and remembers where it lives for the join.
    pub(crate) fn add_call(&mut self, step_idx: usize, call: ToolCall) {
        self.call_steps.insert(call.id.clone(), step_idx);
        if let Some(step) = self.steps.get_mut(step_idx) {
            step.tool_calls.push(call);
        }
    }

    /// The index of the step holding the call `call_id`.
    pub(crate) fn step_of_call(&self, call_id: &str) -> Option<usize> {
        self.call_steps.get(call_id).copied()
    }

    /// Attaches `result` to the step that holds its call; gives it back when no step does.
    pub(crate) fn add_result(&mut self, result: ObsResult) -> Option<ObsResult> {
        let Some(step_idx) = result.source_call_id.as_deref().and_then(|id| self.step_of_call(id))
        else {
            return Some(result);
        };
        self.steps[step_idx].results.push(result);
        None
    }

    /// Keeps a result whose call no step holds as a user step of its own, the call id moved to
    /// `extra.<id_key>` (a `source_call_id` must name a call of the trajectory). Returns the
    /// call id, for the warning.
    pub(crate) fn push_orphan_result(
        &mut self,
        mut result: ObsResult,
        id_key: &str,
        timestamp: Option<&Value>,
    ) -> String {
        let call_id = result.source_call_id.take().unwrap_or_default();
        result.extra.insert(id_key.into(), call_id.clone().into());
        let mut step = Step::new(Source::User);
        step.set_timestamp(timestamp);
        step.results.push(result);
        self.push(step);
        call_id
    }

    /// Adds a subagent ref to the result of `call_id` (creating a content-less result when the
    /// call has none yet). Returns false when no step holds the call.
    pub(crate) fn add_subagent_ref(&mut self, call_id: &str, trajectory_id: &str) -> bool {
        let Some(step_idx) = self.step_of_call(call_id) else { return false };
        let step = &mut self.steps[step_idx];
        match step.results.iter_mut().find(|r| r.source_call_id.as_deref() == Some(call_id)) {
            Some(result) => result.subagent_refs.push(trajectory_id.to_owned()),
            None => step.results.push(ObsResult {
                source_call_id: Some(call_id.to_owned()),
                subagent_refs: vec![trajectory_id.to_owned()],
                ..ObsResult::default()
            }),
        }
        true
    }

    /// Appends a system step that records an error or a cancellation.
    pub(crate) fn push_error(&mut self, kind: &str, message: &str, timestamp: Option<&Value>) {
        let mut step = Step::new(Source::System);
        step.parts.push(Part::Text(message.to_owned()));
        step.set_timestamp(timestamp);
        step.set_error(kind, message);
        self.push(step);
    }

    /// Whether the run ended in an error or a cancellation: some step carries `extra.error`
    /// and no model call follows it.
    pub(crate) fn ends_in_error(&self) -> bool {
        let last_error = self.steps.iter().rposition(Step::is_error);
        let last_call = self
            .steps
            .iter()
            .rposition(|s| s.source == Source::Agent && s.llm_call_count.unwrap_or(1) > 0);
        match (last_error, last_call) {
            (Some(error), Some(call)) => error > call,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// The sums of the step metrics, for logs that state no totals of their own.
    pub(crate) fn summed_metrics(&self) -> FinalMetrics {
        let mut totals = FinalMetrics::default();
        for metrics in self.steps.iter().filter_map(|s| s.metrics.as_ref()) {
            add(&mut totals.prompt, metrics.prompt);
            add(&mut totals.completion, metrics.completion);
            add(&mut totals.cached, metrics.cached);
        }
        return totals;

        fn add(total: &mut Option<u64>, value: Option<u64>) {
            if let Some(value) = value {
                *total = Some(total.unwrap_or(0).saturating_add(value));
            }
        }
    }

    /// The ATIF-v1.8 document.
    pub(crate) fn into_value(mut self) -> Value {
        if self.crashed {
            self.extra.insert("crashed".into(), Value::Bool(true));
        }
        let mut root = Map::new();
        root.insert("schema_version".into(), SCHEMA_VERSION.label().into());
        if let Some(id) = self.session_id {
            root.insert("session_id".into(), id.into());
        }
        if let Some(id) = self.trajectory_id {
            root.insert("trajectory_id".into(), id.into());
        }
        let mut agent = Map::new();
        agent.insert("name".into(), self.agent_name.into());
        agent.insert(
            "version".into(),
            self.agent_version.unwrap_or_else(|| "unknown".into()).into(),
        );
        if let Some(model) = self.model_name {
            agent.insert("model_name".into(), model.into());
        }
        if !self.agent_extra.is_empty() {
            agent.insert("extra".into(), self.agent_extra.into());
        }
        root.insert("agent".into(), agent.into());
        let n_steps = self.steps.len();
        let steps: Vec<Value> = self
            .steps
            .into_iter()
            .enumerate()
            .map(|(idx, step)| step_value(idx + 1, step))
            .collect();
        root.insert("steps".into(), steps.into());
        if !self.notes.is_empty() {
            root.insert("notes".into(), self.notes.join(" ").into());
        }
        let final_metrics = self.final_metrics.unwrap_or_default();
        let mut fm = Map::new();
        insert_u64(&mut fm, "total_prompt_tokens", final_metrics.prompt);
        insert_u64(&mut fm, "total_completion_tokens", final_metrics.completion);
        insert_u64(&mut fm, "total_cached_tokens", final_metrics.cached);
        if let Some(cost) = final_metrics.cost_usd.and_then(serde_json::Number::from_f64) {
            fm.insert("total_cost_usd".into(), Value::Number(cost));
        }
        fm.insert("total_steps".into(), (n_steps as u64).into());
        if !final_metrics.extra.is_empty() {
            fm.insert("extra".into(), final_metrics.extra.into());
        }
        root.insert("final_metrics".into(), fm.into());
        if !self.extra.is_empty() {
            root.insert("extra".into(), self.extra.into());
        }
        if !self.subagents.is_empty() {
            root.insert("subagent_trajectories".into(), self.subagents.into());
        }
        Value::Object(root)
    }
}

fn step_value(step_id: usize, step: Step) -> Value {
    let mut out = Map::new();
    out.insert("step_id".into(), (step_id as u64).into());
    if let Some(ts) = step.timestamp {
        out.insert("timestamp".into(), ts.into());
    }
    let source = match step.source {
        Source::System => "system",
        Source::User => "user",
        Source::Agent => "agent",
    };
    out.insert("source".into(), source.into());
    let is_agent = step.source == Source::Agent;
    let calls_model = step.llm_call_count.unwrap_or(1) > 0;
    if is_agent {
        if let Some(model) = step.model_name {
            out.insert("model_name".into(), model.into());
        }
        if let Some(effort) = step.reasoning_effort {
            out.insert("reasoning_effort".into(), effort);
        }
    }
    out.insert("message".into(), parts_value(step.parts, "\n\n"));
    let reasoning: Vec<String> = step.reasoning.into_iter().filter(|r| !r.is_empty()).collect();
    if is_agent && calls_model && !reasoning.is_empty() {
        out.insert("reasoning_content".into(), reasoning.join("\n\n").into());
    }
    if is_agent && !step.tool_calls.is_empty() {
        let calls: Vec<Value> = step
            .tool_calls
            .into_iter()
            .map(|call| {
                let mut c = Map::new();
                c.insert("tool_call_id".into(), call.id.into());
                c.insert("function_name".into(), call.name.into());
                c.insert("arguments".into(), call.arguments.into());
                if !call.extra.is_empty() {
                    c.insert("extra".into(), call.extra.into());
                }
                Value::Object(c)
            })
            .collect();
        out.insert("tool_calls".into(), calls.into());
    }
    if !step.results.is_empty() {
        let results: Vec<Value> = step.results.into_iter().map(result_value).collect();
        out.insert("observation".into(), json!({ "results": results }));
    }
    if is_agent && calls_model {
        if let Some(metrics) = step.metrics {
            let mut m = Map::new();
            insert_u64(&mut m, "prompt_tokens", metrics.prompt);
            insert_u64(&mut m, "completion_tokens", metrics.completion);
            insert_u64(&mut m, "cached_tokens", metrics.cached);
            if !metrics.extra.is_empty() {
                m.insert("extra".into(), metrics.extra.into());
            }
            out.insert("metrics".into(), m.into());
        }
    }
    if !step.extra.is_empty() {
        out.insert("extra".into(), step.extra.into());
    }
    if is_agent {
        if let Some(count) = step.llm_call_count {
            out.insert("llm_call_count".into(), count.into());
        }
    }
    Value::Object(out)
}

fn result_value(result: ObsResult) -> Value {
    let mut out = Map::new();
    if let Some(id) = result.source_call_id {
        out.insert("source_call_id".into(), id.into());
    }
    if let Some(content) = result.content {
        out.insert("content".into(), parts_value(content, "\n"));
    }
    if !result.subagent_refs.is_empty() {
        let refs: Vec<Value> =
            result.subagent_refs.into_iter().map(|id| json!({ "trajectory_id": id })).collect();
        out.insert("subagent_trajectory_ref".into(), refs.into());
    }
    if !result.extra.is_empty() {
        out.insert("extra".into(), result.extra.into());
    }
    Value::Object(out)
}

/// A message or result content: a string when it is all text (joined by `separator`), else an
/// array of content parts.
fn parts_value(parts: Vec<Part>, separator: &str) -> Value {
    if parts.iter().all(|p| matches!(p, Part::Text(_))) {
        let texts: Vec<String> = parts
            .into_iter()
            .filter_map(|p| match p {
                Part::Text(text) => Some(text),
                Part::Image { .. } => None,
            })
            .collect();
        return texts.join(separator).into();
    }
    let values: Vec<Value> = parts
        .into_iter()
        .map(|p| match p {
            Part::Text(text) => json!({ "type": "text", "text": text }),
            Part::Image { media_type, path } => {
                json!({ "type": "image", "source": { "media_type": media_type, "path": path } })
            }
        })
        .collect();
    values.into()
}

fn insert_u64(map: &mut Map<String, Value>, key: &str, value: Option<u64>) {
    if let Some(value) = value {
        map.insert(key.into(), value.into());
    }
}

/// An image part for a base64 payload, or a text placeholder when the media type is not one
/// ATIF accepts for images.
pub(crate) fn image_part(media_type: &str, base64: &str) -> Part {
    const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];
    if IMAGE_TYPES.contains(&media_type) {
        Part::Image {
            media_type: media_type.to_owned(),
            path: format!("data:{media_type};base64,{base64}"),
        }
    } else {
        Part::Text(format!(
            "[image of type {media_type} left out: ATIF accepts {}]",
            IMAGE_TYPES.join(", ")
        ))
    }
}

/// An image part for a `data:` URL (Codex `input_image`), or a placeholder text.
pub(crate) fn image_url_part(url: Option<&str>) -> Part {
    match url.and_then(|u| u.strip_prefix("data:")).and_then(|rest| rest.split_once(";base64,")) {
        Some((media_type, data)) => image_part(media_type, data),
        None => match url {
            Some(url) => Part::Text(format!("[image {url}]")),
            None => Part::Text("[image]".to_owned()),
        },
    }
}

/// Whether `text` reads as an ISO 8601 date-time the way the ATIF references accept it
/// (`YYYY-MM-DD`, optionally `THH[:MM[:SS[.fff]]]`, optionally `Z` or an offset).
pub(crate) fn is_iso8601(text: &str) -> bool {
    // Byte offsets below are char boundaries only because every accepted character is ASCII.
    if !text.is_ascii() {
        return false;
    }
    let b = text.as_bytes();
    let digits = |from: usize, n: usize| -> Option<u32> {
        let slice = b.get(from..from + n)?;
        if !slice.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(slice.iter().fold(0, |acc, d| acc * 10 + u32::from(d - b'0')))
    };
    let (Some(_), Some(month), Some(day)) = (digits(0, 4), digits(5, 2), digits(8, 2)) else {
        return false;
    };
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
    {
        return false;
    }
    let mut pos = 10;
    if pos == b.len() {
        return true;
    }
    if !matches!(b[pos], b'T' | b' ') {
        return false;
    }
    pos += 1;
    let Some(hour) = digits(pos, 2).filter(|h| *h < 24) else { return false };
    let _ = hour;
    pos += 2;
    for _ in 0..2 {
        if b.get(pos) == Some(&b':') {
            if digits(pos + 1, 2).filter(|v| *v < 60).is_none() {
                return false;
            }
            pos += 3;
        }
    }
    if matches!(b.get(pos), Some(b'.' | b',')) {
        let start = pos + 1;
        pos = start;
        while b.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        if pos == start {
            return false;
        }
    }
    match b.get(pos) {
        None => true,
        Some(b'Z') => pos + 1 == b.len(),
        Some(b'+' | b'-') => {
            let rest = &text[pos + 1..];
            let ok_hm = |h: &str, m: &str| {
                h.len() == 2
                    && m.len() == 2
                    && h.bytes().chain(m.bytes()).all(|c| c.is_ascii_digit())
                    && h < "24"
                    && m < "60"
            };
            match rest.len() {
                2 => ok_hm(rest, "00"),
                4 => ok_hm(&rest[..2], &rest[2..]),
                5 => rest.as_bytes()[2] == b':' && ok_hm(&rest[..2], &rest[3..]),
                _ => false,
            }
        }
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_timestamps_are_recognised() {
        for ok in [
            "2025-10-26T10:40:00.000Z",
            "2025-10-26",
            "2025-10-26T10:40",
            "2025-10-26T10:40:00+05:30",
            "2025-10-26 10:40:00",
        ] {
            assert!(is_iso8601(ok), "{ok}");
        }
        for bad in [
            "2025-10-26T10:40:00+1\u{e9}2",
            "2025-10-26T10:40:00-\u{e9}\u{e9}",
            "[trimmed for fixture]",
            "2025-13-01",
            "2025-10-26T24:00:00Z",
            "2025-10-26T10:40:00z",
            "1761475200",
            "",
        ] {
            assert!(!is_iso8601(bad), "{bad}");
        }
    }

    #[test]
    fn a_result_joins_the_step_holding_its_call() {
        let mut t = Trajectory::new("a");
        let idx = t.push(Step::model_call());
        t.push(Step::new(Source::User));
        t.add_call(
            idx,
            ToolCall {
                id: "c1".into(),
                name: "f".into(),
                arguments: Map::new(),
                extra: Map::new(),
            },
        );
        let orphan =
            t.add_result(ObsResult { source_call_id: Some("c2".into()), ..ObsResult::default() });
        assert!(orphan.is_some());
        assert!(
            t.add_result(ObsResult { source_call_id: Some("c1".into()), ..ObsResult::default() })
                .is_none()
        );
        assert_eq!(t.steps[0].results.len(), 1);
    }

    #[test]
    fn crash_is_an_error_after_the_last_model_call() {
        let mut t = Trajectory::new("a");
        t.push(Step::model_call());
        assert!(!t.ends_in_error());
        t.push_error("aborted", "interrupted", None);
        assert!(t.ends_in_error());
        t.push(Step::model_call());
        assert!(!t.ends_in_error());
    }
}
