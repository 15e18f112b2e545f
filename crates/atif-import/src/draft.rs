//! The draft of a trajectory that every format module fills (steps, tool-call joins,
//! metrics), and its writing as ATIF.
//!
//! Every format module fills a [`Trajectory`]; this module turns it into atif-schema's typed
//! model, the one way the workspace writes ATIF, so the rules that make the output valid
//! (agent-only fields, results joined inside the step that holds the call, timestamps the
//! validator accepts, counts ATIF's integers hold) live in one place.

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
    Image { media_type: atif_schema::ImageMediaType, path: String },
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

    /// Sets the timestamp when `timestamp` is a string in ISO 8601 as the validator reads it
    /// ([`atif_schema::check_timestamp`]); others are dropped: they would make the trajectory
    /// invalid, and timestamps are not behaviour.
    pub(crate) fn set_timestamp(&mut self, timestamp: impl Timestamp) {
        let valid = |text: &&str| atif_schema::check_timestamp(text).is_ok();
        if let Some(text) = timestamp.text().filter(valid) {
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

/// A record's timestamp as a step takes it: the member as parsed (`Option<&Value>`), or its
/// text when a fast reader read it as a string.
pub(crate) trait Timestamp {
    /// The timestamp's text, when it is a string.
    fn text(&self) -> Option<&str>;
}

impl Timestamp for Option<&Value> {
    fn text(&self) -> Option<&str> {
        self.and_then(Value::as_str)
    }
}

impl Timestamp for Option<&str> {
    fn text(&self) -> Option<&str> {
        *self
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
    /// The tools offered to the model, as the log states them.
    pub(crate) tool_definitions: Option<Vec<Map<String, Value>>>,
    pub(crate) agent_extra: Map<String, Value>,
    pub(crate) steps: Vec<Step>,
    pub(crate) final_metrics: Option<FinalMetrics>,
    pub(crate) notes: Vec<String>,
    pub(crate) extra: Map<String, Value>,
    pub(crate) subagents: Vec<atif_schema::Trajectory>,
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
            tool_definitions: None,
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
        timestamp: impl Timestamp,
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
    pub(crate) fn push_error(&mut self, kind: &str, message: &str, timestamp: impl Timestamp) {
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

    /// The trajectory as atif-schema's typed model (the one model of ATIF every crate writes
    /// with).
    pub(crate) fn into_atif(mut self) -> atif_schema::Trajectory {
        if self.crashed {
            self.extra.insert("crashed".into(), Value::Bool(true));
        }
        let agent = atif_schema::Agent {
            name: self.agent_name,
            version: self.agent_version.unwrap_or_else(|| "unknown".into()),
            model_name: self.model_name,
            tool_definitions: self.tool_definitions.filter(|tools| !tools.is_empty()),
            extra: non_empty(self.agent_extra),
        };
        let n_steps = self.steps.len() as u64;
        let steps: Vec<atif_schema::Step> =
            self.steps.into_iter().enumerate().map(|(idx, step)| step.into_atif(idx + 1)).collect();
        let final_metrics = self.final_metrics.unwrap_or_default();
        let final_metrics = atif_schema::FinalMetrics {
            total_prompt_tokens: final_metrics.prompt.map(count),
            total_completion_tokens: final_metrics.completion.map(count),
            total_cached_tokens: final_metrics.cached.map(count),
            total_cost_usd: final_metrics.cost_usd.and_then(serde_json::Number::from_f64),
            total_steps: Some(n_steps),
            extra: non_empty(final_metrics.extra),
        };
        atif_schema::Trajectory {
            schema_version: SCHEMA_VERSION,
            session_id: self.session_id,
            trajectory_id: self.trajectory_id,
            agent,
            steps,
            notes: (!self.notes.is_empty()).then(|| self.notes.join(" ")),
            final_metrics: Some(final_metrics),
            continued_trajectory_ref: None,
            extra: non_empty(self.extra),
            subagent_trajectories: (!self.subagents.is_empty()).then_some(self.subagents),
        }
    }
}

impl Step {
    /// The step as atif-schema's typed model, numbered `step_id`: the fields ATIF gives agent
    /// steps only are left out of the others, and metrics and reasoning out of an agent step
    /// that made no model call.
    fn into_atif(self, step_id: usize) -> atif_schema::Step {
        let is_agent = self.source == Source::Agent;
        let calls_model = self.llm_call_count.unwrap_or(1) > 0;
        let source = match self.source {
            Source::System => atif_schema::StepSource::System,
            Source::User => atif_schema::StepSource::User,
            Source::Agent => atif_schema::StepSource::Agent,
        };
        let mut reasoning: Vec<String> =
            self.reasoning.into_iter().filter(|r| !r.is_empty()).collect();
        let reasoning_effort = match self.reasoning_effort {
            Some(Value::String(text)) => Some(atif_schema::ReasoningEffort::Text(text)),
            Some(Value::Number(number)) => Some(atif_schema::ReasoningEffort::Number(number)),
            _ => None,
        };
        let tool_calls: Vec<atif_schema::ToolCall> = self
            .tool_calls
            .into_iter()
            .map(|call| atif_schema::ToolCall {
                tool_call_id: call.id,
                function_name: call.name,
                arguments: call.arguments,
                extra: non_empty(call.extra),
            })
            .collect();
        let results: Vec<atif_schema::ObservationResult> =
            self.results.into_iter().map(ObsResult::into_atif).collect();
        let metrics = self.metrics.map(|metrics| atif_schema::Metrics {
            prompt_tokens: metrics.prompt.map(count),
            completion_tokens: metrics.completion.map(count),
            cached_tokens: metrics.cached.map(count),
            extra: non_empty(metrics.extra),
            ..atif_schema::Metrics::default()
        });
        atif_schema::Step {
            step_id: step_id as u64,
            timestamp: self.timestamp,
            source,
            model_name: self.model_name.filter(|_| is_agent),
            reasoning_effort: reasoning_effort.filter(|_| is_agent),
            message: message(self.parts, "\n\n"),
            reasoning_content: (is_agent && calls_model && !reasoning.is_empty()).then(|| {
                match reasoning.as_mut_slice() {
                    [only] => std::mem::take(only),
                    _ => reasoning.join("\n\n"),
                }
            }),
            tool_calls: (is_agent && !tool_calls.is_empty()).then_some(tool_calls),
            observation: (!results.is_empty()).then_some(atif_schema::Observation { results }),
            metrics: metrics.filter(|_| is_agent && calls_model),
            llm_call_count: self.llm_call_count.filter(|_| is_agent),
            is_copied_context: None,
            extra: non_empty(self.extra),
        }
    }
}

impl ObsResult {
    fn into_atif(self) -> atif_schema::ObservationResult {
        let refs: Vec<atif_schema::SubagentTrajectoryRef> = self
            .subagent_refs
            .into_iter()
            .map(|id| atif_schema::SubagentTrajectoryRef {
                session_id: None,
                trajectory_id: Some(id),
                trajectory_path: None,
                extra: None,
            })
            .collect();
        atif_schema::ObservationResult {
            source_call_id: self.source_call_id,
            content: self.content.map(|parts| message(parts, "\n")),
            subagent_trajectory_ref: (!refs.is_empty()).then_some(refs),
            extra: non_empty(self.extra),
        }
    }
}

/// A message or result content: text when it is all text (joined by `separator`), else a list
/// of content parts.
fn message(mut parts: Vec<Part>, separator: &str) -> atif_schema::Message {
    // One text part (most messages and tool outputs) is moved, not copied by a join.
    if let [Part::Text(text)] = parts.as_mut_slice() {
        return atif_schema::Message::Text(std::mem::take(text));
    }
    if parts.iter().all(|p| matches!(p, Part::Text(_))) {
        let texts: Vec<String> = parts
            .into_iter()
            .filter_map(|p| match p {
                Part::Text(text) => Some(text),
                Part::Image { .. } => None,
            })
            .collect();
        return atif_schema::Message::Text(texts.join(separator));
    }
    let parts = parts
        .into_iter()
        .map(|p| match p {
            Part::Text(text) => atif_schema::ContentPart::Text { text },
            Part::Image { media_type, path } => atif_schema::ContentPart::Image {
                source: atif_schema::ImageSource { media_type, path },
            },
        })
        .collect();
    atif_schema::Message::Parts(parts)
}

/// A token count as ATIF's integer type holds it: counts past its largest value (a hostile
/// log's sums saturate at `u64::MAX`) are written as that value.
fn count(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// `None` for an empty `extra` object, which ATIF writers leave out.
fn non_empty(map: Map<String, Value>) -> Option<Map<String, Value>> {
    (!map.is_empty()).then_some(map)
}

/// An image part for a base64 payload, or a text placeholder when the media type is not one
/// ATIF accepts for images.
pub(crate) fn image_part(media_type: &str, base64: &str) -> Part {
    use atif_schema::ImageMediaType;

    let known = match media_type {
        "image/jpeg" => Some(ImageMediaType::Jpeg),
        "image/png" => Some(ImageMediaType::Png),
        "image/gif" => Some(ImageMediaType::Gif),
        "image/webp" => Some(ImageMediaType::Webp),
        _ => None,
    };
    match known {
        Some(known) => {
            Part::Image { media_type: known, path: format!("data:{media_type};base64,{base64}") }
        }
        None => Part::Text(format!(
            "[image of type {media_type} left out: ATIF accepts image/jpeg, image/png, image/gif, image/webp]"
        )),
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

#[cfg(test)]
mod tests {
    use super::*;

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
        t.push_error("aborted", "interrupted", None::<&str>);
        assert!(t.ends_in_error());
        t.push(Step::model_call());
        assert!(!t.ends_in_error());
    }
}
