//! The mutable draft of a trajectory that every writer of ATIF in the workspace fills (the log
//! importers, the captures from traffic and in process, the public builder), and its one
//! conversion into the typed model.
//!
//! A writer fills a [`Trajectory`] in whatever order its input comes (steps, tool calls joined
//! to their results by id, metrics, subagents) and converts it at the end with
//! [`Trajectory::into_atif`] (unchecked, for the importers' speed) or [`Trajectory::build`]
//! (validated). The rules that make the output valid (agent-only fields left out of other
//! steps, results inside the step that holds the call, timestamps the validator accepts,
//! counts ATIF's integers hold, empty `extra` objects left out) live here, in one place.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::{Error, Result, SchemaVersion, StepSource, ValidateOptions};

/// One piece of a message or of a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// A text; a message of text parts only is written as their text, joined.
    Text(String),
    /// An image at `path` (a file, a URL or a `data:` URL).
    Image {
        /// The image format.
        media_type: crate::ImageMediaType,
        /// Where the image is.
        path: String,
    },
    /// A part as ATIF writes it (the builder's); a message holding one is written as a list of
    /// parts, even when all are text.
    Content(crate::ContentPart),
}

/// A tool call as the model made it.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The call's id, which its result names.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, an object as ATIF wants them.
    pub arguments: Map<String, Value>,
    /// The call's `extra` (left out when empty).
    pub extra: Map<String, Value>,
}

/// One observation result.
#[derive(Debug, Clone, Default)]
pub struct ObsResult {
    /// The call it answers, if any.
    pub source_call_id: Option<String>,
    /// Its content (none: no `content` member); text parts are joined by a line break.
    pub content: Option<Vec<Part>>,
    /// The `trajectory_id`s of embedded subagents it refers to, in one result.
    pub subagent_refs: Vec<String>,
    /// The `trajectory_path`s of subagent trajectories stored elsewhere, after the embedded.
    pub subagent_paths: Vec<String>,
    /// The result's `extra` (left out when empty).
    pub extra: Map<String, Value>,
}

/// Token usage of one model call.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// `prompt_tokens`.
    pub prompt: Option<u64>,
    /// `completion_tokens`.
    pub completion: Option<u64>,
    /// `cached_tokens`.
    pub cached: Option<u64>,
    /// The metrics' `extra` (left out when empty).
    pub extra: Map<String, Value>,
}

/// A run's totals: the ones its log states, or the sums of its steps'
/// ([`Trajectory::summed_metrics`]).
#[derive(Debug, Clone, Default)]
pub struct FinalMetrics {
    /// `total_prompt_tokens`.
    pub prompt: Option<u64>,
    /// `total_completion_tokens`.
    pub completion: Option<u64>,
    /// `total_cached_tokens`.
    pub cached: Option<u64>,
    /// `total_cost_usd`.
    pub cost_usd: Option<f64>,
    /// The totals' `extra` (left out when empty).
    pub extra: Map<String, Value>,
}

/// One ATIF step under construction. Agent-only fields are left out of the written step when
/// its source is not the agent.
#[derive(Debug, Clone)]
pub struct Step {
    /// Who produced it.
    pub source: StepSource,
    /// Its message, as parts (text parts only: written as their text joined by a blank line).
    pub parts: Vec<Part>,
    /// An ISO 8601 timestamp ([`Step::set_timestamp`] keeps only valid ones).
    pub timestamp: Option<String>,
    /// The model (agent steps).
    pub model_name: Option<String>,
    /// A string or a number (agent steps); anything else is left out.
    pub reasoning_effort: Option<Value>,
    /// Reasoning texts, joined by a blank line, the empty ones left out (agent steps that
    /// call the model).
    pub reasoning: Vec<String>,
    /// The calls it made (agent steps).
    pub tool_calls: Vec<ToolCall>,
    /// Its observation's results.
    pub results: Vec<ObsResult>,
    /// The model call's token counts (agent steps that call the model).
    pub metrics: Option<Metrics>,
    /// The step's `extra` (left out when empty).
    pub extra: Map<String, Value>,
    /// How many model calls the step stands for (agent steps); 0 leaves out metrics and
    /// reasoning.
    pub llm_call_count: Option<u64>,
    /// `is_copied_context`.
    pub is_copied_context: Option<bool>,
}

impl Step {
    /// An empty step from `source`.
    #[inline]
    pub fn new(source: StepSource) -> Step {
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
            is_copied_context: None,
        }
    }

    /// A step from `source` whose message is `text`.
    pub fn text(source: StepSource, text: impl Into<String>) -> Step {
        let mut step = Step::new(source);
        step.parts.push(Part::Text(text.into()));
        step
    }

    /// The step's message when it is one text part.
    pub fn only_text(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Text(text)] => Some(text),
            _ => None,
        }
    }

    /// The result of call `call_id` of this step, created in call order when it is new (so
    /// results reported out of order, by concurrent tools, still read in call order).
    /// `None` when the step made no such call.
    pub fn result_for(&mut self, call_id: &str) -> Option<&mut ObsResult> {
        let call_idx = self.tool_calls.iter().position(|call| call.id == call_id)?;
        let existing = self
            .results
            .iter()
            .position(|result| result.source_call_id.as_deref() == Some(call_id));
        let idx = match existing {
            Some(idx) => idx,
            None => {
                let calls = &self.tool_calls;
                let call_order = |result: &ObsResult| {
                    let id = result.source_call_id.as_deref()?;
                    calls.iter().position(|call| call.id == id)
                };
                let at = self
                    .results
                    .iter()
                    .position(|result| call_order(result).is_none_or(|order| order > call_idx))
                    .unwrap_or(self.results.len());
                let result =
                    ObsResult { source_call_id: Some(call_id.to_owned()), ..ObsResult::default() };
                self.results.insert(at, result);
                at
            }
        };
        Some(&mut self.results[idx])
    }

    /// An agent step for one model call.
    #[inline]
    pub fn model_call() -> Step {
        let mut step = Step::new(StepSource::Agent);
        step.llm_call_count = Some(1);
        step
    }

    /// Sets the timestamp when `timestamp` is a string in ISO 8601 as the validator reads it
    /// ([`crate::check_timestamp`]); others are dropped: they would make the trajectory
    /// invalid, and timestamps are not behaviour.
    #[inline]
    pub fn set_timestamp(&mut self, timestamp: impl Timestamp) {
        let valid = |text: &&str| crate::check_timestamp(text).is_ok();
        if let Some(text) = timestamp.text().filter(valid) {
            self.timestamp = Some(text.to_owned());
        }
    }

    /// Marks this step as an error or a cancellation: `extra.error = {kind, message}`.
    pub fn set_error(&mut self, kind: &str, message: &str) {
        self.extra.insert("error".into(), json!({ "kind": kind, "message": message }));
    }

    /// Whether [`Step::set_error`] marked it.
    pub fn is_error(&self) -> bool {
        self.extra.contains_key("error")
    }
}

/// A record's timestamp as a step takes it: the member as parsed (`Option<&Value>`), or its
/// text when a fast reader read it as a string.
pub trait Timestamp {
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
pub struct Trajectory {
    /// The label (default `ATIF-v1.8`).
    pub schema_version: SchemaVersion,
    /// `session_id`.
    pub session_id: Option<String>,
    /// `trajectory_id`.
    pub trajectory_id: Option<String>,
    /// The agent's name.
    pub agent_name: String,
    /// The agent's version (`unknown` when none).
    pub agent_version: Option<String>,
    /// The agent's model.
    pub model_name: Option<String>,
    /// The tools offered to the model, as the log states them (left out when empty).
    pub tool_definitions: Option<Vec<Map<String, Value>>>,
    /// The agent's `extra` (left out when empty).
    pub agent_extra: Map<String, Value>,
    /// The steps, numbered 1, 2, 3, … when written.
    pub steps: Vec<Step>,
    /// The totals; `total_steps` is always the step count.
    pub final_metrics: Option<FinalMetrics>,
    /// Notes, joined by a space.
    pub notes: Vec<String>,
    /// `continued_trajectory_ref`.
    pub continued_trajectory_ref: Option<String>,
    /// The trajectory's `extra` (left out when empty).
    pub extra: Map<String, Value>,
    /// Embedded subagents, written; each has the `trajectory_id` their refs name.
    pub subagents: Vec<crate::Trajectory>,
    /// Whether the run died (truncated log, fatal error, cancellation at the end).
    pub crashed: bool,
    /// Threads this run spawned, as (thread id, id of the spawning call), from Codex
    /// `collab_agent_spawn_end` events; used to link sibling rollout files.
    pub spawned_threads: Vec<(String, String)>,
    /// Call id to the index of the step that holds it.
    call_steps: HashMap<String, usize>,
}

impl Trajectory {
    /// An empty draft for the agent `agent_name`, labelled `ATIF-v1.8`.
    pub fn new(agent_name: &str) -> Trajectory {
        Trajectory {
            schema_version: SchemaVersion::LATEST,
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
            continued_trajectory_ref: None,
            extra: Map::new(),
            subagents: Vec::new(),
            crashed: false,
            spawned_threads: Vec::new(),
            call_steps: HashMap::new(),
        }
    }

    /// Appends `step` and returns its index.
    #[inline]
    pub fn push(&mut self, step: Step) -> usize {
        self.steps.push(step);
        self.steps.len() - 1
    }

    /// Adds `call` to the step at `step_idx` and remembers where it lives for the join; a call
    /// for a step the draft does not have is dropped.
    pub fn add_call(&mut self, step_idx: usize, call: ToolCall) {
        if let Some(step) = self.steps.get_mut(step_idx) {
            self.call_steps.insert(call.id.clone(), step_idx);
            step.tool_calls.push(call);
        }
    }

    /// The index of the step holding the call `call_id`.
    pub fn step_of_call(&self, call_id: &str) -> Option<usize> {
        self.call_steps.get(call_id).copied()
    }

    /// Attaches `result` to the step that holds its call; gives it back when no step does.
    pub fn add_result(&mut self, result: ObsResult) -> Option<ObsResult> {
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
    pub fn push_orphan_result(
        &mut self,
        mut result: ObsResult,
        id_key: &str,
        timestamp: impl Timestamp,
    ) -> String {
        let call_id = result.source_call_id.take().unwrap_or_default();
        result.extra.insert(id_key.into(), call_id.clone().into());
        let mut step = Step::new(StepSource::User);
        step.set_timestamp(timestamp);
        step.results.push(result);
        self.push(step);
        call_id
    }

    /// Adds a subagent ref to the result of `call_id` (creating a content-less result when the
    /// call has none yet). Returns false when no step holds the call.
    pub fn add_subagent_ref(&mut self, call_id: &str, trajectory_id: &str) -> bool {
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
    pub fn push_error(&mut self, kind: &str, message: &str, timestamp: impl Timestamp) {
        let mut step = Step::new(StepSource::System);
        step.parts.push(Part::Text(message.to_owned()));
        step.set_timestamp(timestamp);
        step.set_error(kind, message);
        self.push(step);
    }

    /// Whether the run ended in an error or a cancellation: some step carries `extra.error`
    /// and no model call follows it.
    pub fn ends_in_error(&self) -> bool {
        let last_error = self.steps.iter().rposition(Step::is_error);
        let last_call = self
            .steps
            .iter()
            .rposition(|s| s.source == StepSource::Agent && s.llm_call_count.unwrap_or(1) > 0);
        match (last_error, last_call) {
            (Some(error), Some(call)) => error > call,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// The sums of the step metrics, for logs that state no totals of their own.
    pub fn summed_metrics(&self) -> FinalMetrics {
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

    /// The trajectory as the typed model, checked by the validator (default profile), for
    /// writers whose input may hold what ATIF refuses.
    ///
    /// # Errors
    ///
    /// [`Error::Build`] listing what the validator finds wrong.
    pub fn build(self) -> Result<crate::Trajectory> {
        let trajectory = self.into_atif();
        check_valid(&trajectory)?;
        Ok(trajectory)
    }

    /// The trajectory as the typed model, unchecked: the steps numbered from 1, `total_steps`
    /// set, the agent-only fields left out of other steps.
    pub fn into_atif(mut self) -> crate::Trajectory {
        if self.crashed {
            self.extra.insert("crashed".into(), Value::Bool(true));
        }
        let agent = crate::Agent {
            name: self.agent_name,
            version: self.agent_version.unwrap_or_else(|| "unknown".into()),
            model_name: self.model_name,
            tool_definitions: self.tool_definitions.filter(|tools| !tools.is_empty()),
            extra: non_empty(self.agent_extra),
        };
        let n_steps = self.steps.len() as u64;
        let steps: Vec<crate::Step> =
            self.steps.into_iter().enumerate().map(|(idx, step)| step.into_atif(idx + 1)).collect();
        let final_metrics = self.final_metrics.unwrap_or_default();
        let final_metrics = crate::FinalMetrics {
            total_prompt_tokens: final_metrics.prompt.map(count),
            total_completion_tokens: final_metrics.completion.map(count),
            total_cached_tokens: final_metrics.cached.map(count),
            total_cost_usd: final_metrics.cost_usd.and_then(serde_json::Number::from_f64),
            total_steps: Some(n_steps),
            extra: non_empty(final_metrics.extra),
        };
        crate::Trajectory {
            schema_version: self.schema_version,
            session_id: self.session_id,
            trajectory_id: self.trajectory_id,
            agent,
            steps,
            notes: (!self.notes.is_empty()).then(|| self.notes.join(" ")),
            final_metrics: Some(final_metrics),
            continued_trajectory_ref: self.continued_trajectory_ref,
            extra: non_empty(self.extra),
            subagent_trajectories: (!self.subagents.is_empty()).then_some(self.subagents),
        }
    }
}

impl Step {
    /// The step as atif-schema's typed model, numbered `step_id`: the fields ATIF gives agent
    /// steps only are left out of the others, and metrics and reasoning out of an agent step
    /// that made no model call.
    fn into_atif(self, step_id: usize) -> crate::Step {
        let is_agent = self.source == StepSource::Agent;
        let calls_model = self.llm_call_count.unwrap_or(1) > 0;
        let mut reasoning: Vec<String> =
            self.reasoning.into_iter().filter(|r| !r.is_empty()).collect();
        let reasoning_effort = match self.reasoning_effort {
            Some(Value::String(text)) => Some(crate::ReasoningEffort::Text(text)),
            Some(Value::Number(number)) => Some(crate::ReasoningEffort::Number(number)),
            _ => None,
        };
        let tool_calls: Vec<crate::ToolCall> = self
            .tool_calls
            .into_iter()
            .map(|call| crate::ToolCall {
                tool_call_id: call.id,
                function_name: call.name,
                arguments: call.arguments,
                extra: non_empty(call.extra),
            })
            .collect();
        let results: Vec<crate::ObservationResult> =
            self.results.into_iter().map(ObsResult::into_atif).collect();
        let metrics = self.metrics.map(|metrics| crate::Metrics {
            prompt_tokens: metrics.prompt.map(count),
            completion_tokens: metrics.completion.map(count),
            cached_tokens: metrics.cached.map(count),
            extra: non_empty(metrics.extra),
            ..crate::Metrics::default()
        });
        crate::Step {
            step_id: step_id as u64,
            timestamp: self.timestamp,
            source: self.source,
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
            observation: (!results.is_empty()).then_some(crate::Observation { results }),
            metrics: metrics.filter(|_| is_agent && calls_model),
            llm_call_count: self.llm_call_count.filter(|_| is_agent),
            is_copied_context: self.is_copied_context,
            extra: non_empty(self.extra),
        }
    }
}

impl ObsResult {
    fn into_atif(self) -> crate::ObservationResult {
        let embedded = self.subagent_refs.into_iter().map(|id| crate::SubagentTrajectoryRef {
            session_id: None,
            trajectory_id: Some(id),
            trajectory_path: None,
            extra: None,
        });
        let stored = self.subagent_paths.into_iter().map(|path| crate::SubagentTrajectoryRef {
            session_id: None,
            trajectory_id: None,
            trajectory_path: Some(path),
            extra: None,
        });
        let refs: Vec<crate::SubagentTrajectoryRef> = embedded.chain(stored).collect();
        crate::ObservationResult {
            source_call_id: self.source_call_id,
            content: self.content.map(|parts| message(parts, "\n")),
            subagent_trajectory_ref: (!refs.is_empty()).then_some(refs),
            extra: non_empty(self.extra),
        }
    }
}

/// Fails with [`Error::Build`] when the validator (default profile) finds an error in
/// `trajectory`.
pub(crate) fn check_valid(trajectory: &crate::Trajectory) -> Result<()> {
    let report = crate::validate(&trajectory.to_value(), &ValidateOptions::default());
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(Error::Build { reason: format!("the trajectory would be invalid: {}", errors.join("; ")) })
}

/// A message or result content: text when it is all text (joined by `separator`), else a list
/// of content parts.
fn message(mut parts: Vec<Part>, separator: &str) -> crate::Message {
    // One text part (most messages and tool outputs) is moved, not copied by a join.
    if let [Part::Text(text)] = parts.as_mut_slice() {
        return crate::Message::Text(std::mem::take(text));
    }
    if parts.iter().all(|p| matches!(p, Part::Text(_))) {
        let texts: Vec<String> = parts
            .into_iter()
            .filter_map(|p| match p {
                Part::Text(text) => Some(text),
                Part::Image { .. } | Part::Content(_) => None,
            })
            .collect();
        return crate::Message::Text(texts.join(separator));
    }
    let parts = parts
        .into_iter()
        .map(|p| match p {
            Part::Text(text) => crate::ContentPart::Text { text },
            Part::Image { media_type, path } => {
                crate::ContentPart::Image { source: crate::ImageSource { media_type, path } }
            }
            Part::Content(part) => part,
        })
        .collect();
    crate::Message::Parts(parts)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "f".into(), arguments: Map::new(), extra: Map::new() }
    }

    #[test]
    fn a_result_joins_the_step_holding_its_call() {
        let mut t = Trajectory::new("a");
        let idx = t.push(Step::model_call());
        t.push(Step::new(StepSource::User));
        t.add_call(idx, call("c1"));
        let orphan =
            t.add_result(ObsResult { source_call_id: Some("c2".into()), ..ObsResult::default() });
        assert!(orphan.is_some());
        assert!(
            t.add_result(ObsResult { source_call_id: Some("c1".into()), ..ObsResult::default() })
                .is_none()
        );
        assert_eq!(t.steps[0].results.len(), 1);
        // A call for a step the draft does not have is dropped, so its result is an orphan.
        t.add_call(7, call("c3"));
        let result = ObsResult { source_call_id: Some("c3".into()), ..ObsResult::default() };
        assert!(t.add_result(result).is_some());
        assert!(!t.add_subagent_ref("c3", "s1"));
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

    #[test]
    fn results_keep_call_order_whatever_order_they_arrive_in() {
        let mut step = Step::new(StepSource::Agent);
        step.tool_calls = vec![call("a"), call("b"), call("c")];
        for id in ["c", "a", "b"] {
            step.result_for(id).unwrap().content = Some(vec![Part::Text(id.to_owned())]);
        }
        let order: Vec<_> =
            step.results.iter().map(|result| result.source_call_id.as_deref()).collect();
        assert_eq!(order, [Some("a"), Some("b"), Some("c")]);
        assert!(step.result_for("zz").is_none());
    }

    #[test]
    fn agent_only_fields_are_left_out_of_other_steps() {
        let mut t = Trajectory::new("a");
        let mut user = Step::text(StepSource::User, "hi");
        user.model_name = Some("m".into());
        user.reasoning.push("thought".into());
        user.metrics = Some(Metrics { prompt: Some(1), ..Metrics::default() });
        t.push(user);
        let mut agent = Step::text(StepSource::Agent, "hello");
        agent.model_name = Some("m".into());
        agent.reasoning = vec!["one".into(), String::new(), "two".into()];
        t.push(agent);
        let written = t.into_atif().to_value();
        assert_eq!(written["steps"][0], json!({"step_id": 1, "source": "user", "message": "hi"}));
        assert_eq!(written["steps"][1]["model_name"], "m");
        assert_eq!(written["steps"][1]["reasoning_content"], "one\n\ntwo");
        assert_eq!(written["final_metrics"], json!({"total_steps": 2}));
    }

    #[test]
    fn build_refuses_what_the_validator_refuses() {
        let mut t = Trajectory::new("a");
        let mut step = Step::text(StepSource::User, "hi");
        step.timestamp = Some("yesterday".into());
        t.push(step);
        let err = t.clone().build().unwrap_err().to_string();
        assert!(err.contains("the trajectory would be invalid"), "{err}");
        t.steps[0].timestamp = None;
        assert_eq!(t.build().unwrap().steps[0].message.text(), "hi");
    }
}
