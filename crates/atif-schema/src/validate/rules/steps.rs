//! Rules of steps: the step sequence, each step's fields (agent-only fields, timestamps,
//! `llm_call_count`), its tool calls and observation results, and the call join between them.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::check_timestamp;
use crate::field_table::{ChangeKind, ObjectType};
use crate::validate::Rule;
use crate::validate::rules::messages::describe;
use crate::validate::rules::metrics::Sums;
use crate::validate::rules::pointer::Path;
use crate::validate::rules::{Walker, no_hint};

/// Fields only agent steps may have.
const AGENT_ONLY: &[&str] =
    &["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    System,
    User,
    Agent,
}

impl Source {
    /// The source of a step object, when it is one of the three.
    fn of(step: &Map<String, Value>) -> Option<Source> {
        match step.get("source") {
            Some(Value::String(source)) => match source.as_str() {
                "system" => Some(Source::System),
                "user" => Some(Source::User),
                "agent" => Some(Source::Agent),
                _ => None,
            },
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Source::System => "system",
            Source::User => "user",
            Source::Agent => "agent",
        }
    }
}

/// What the trajectory needs to know about one step.
#[derive(Debug, Default)]
struct StepSummary {
    step_id: Option<i128>,
    agent_sums: Sums,
}

/// The ids a step's results must find among its calls.
#[derive(Debug, Default)]
struct CallJoin<'v> {
    /// The `tool_call_id`s in call order (for messages).
    call_ids: Vec<&'v str>,
    /// The same as a set (a step may hold thousands of calls).
    call_set: HashSet<&'v str>,
    /// Each result's index and `source_call_id`.
    result_ids: Vec<(usize, &'v str)>,
}

impl<'v> Walker<'_, 'v> {
    /// Checks `steps`: each step, and ids counting 1, 2, 3… in array order; returns the number
    /// of steps and the sums of the agent steps' metrics.
    pub(super) fn steps(&mut self, value: &'v Value, path: &Path<'_>) -> Option<(usize, Sums)> {
        let steps = self.array(value, path)?;
        if steps.is_empty() {
            self.error(
                Rule::EmptySteps,
                path,
                "expected at least one step, found an empty array".to_owned(),
            );
        }
        let mut sums = Sums::default();
        for (step_idx, step) in steps.iter().enumerate() {
            let step_path = path.index(step_idx);
            let summary = self.step(step, &step_path);
            sums.add(&summary.agent_sums);
            let Some(step_id) = summary.step_id else { continue };
            let expected = step_idx as i128 + 1;
            if step_id != expected {
                self.error(
                    Rule::StepSequence,
                    &step_path.key("step_id"),
                    format!(
                        "expected step_id {expected} (step ids count 1, 2, 3… in array order), \
                         found {step_id}"
                    ),
                );
            }
        }
        Some((steps.len(), sums))
    }

    fn step(&mut self, value: &'v Value, path: &Path<'_>) -> StepSummary {
        let mut summary = StepSummary::default();
        let Some(object) = self.expect_object(value, path, "a step object") else {
            return summary;
        };
        let source = Source::of(object);
        let mut llm_call_count = None;
        let mut join = CallJoin::default();
        self.walk_fields(object, ObjectType::Step, path, step_hint, |walker, key, value, here| {
            if let Some(source) = source.filter(|source| *source != Source::Agent) {
                if AGENT_ONLY.contains(&key) {
                    walker.agent_only_field(key, source, here);
                }
            }
            match key {
                "step_id" => summary.step_id = walker.integer(value, here),
                "timestamp" => walker.timestamp(value, here),
                "source" => walker.source(value, here, source),
                "model_name" | "reasoning_content" => {
                    walker.string(value, here);
                }
                "reasoning_effort" => walker.reasoning_effort(value, here),
                "message" => walker.content(value, here),
                "tool_calls" => walker.tool_calls(value, here, &mut join),
                "observation" => {
                    if source == Some(Source::System) {
                        walker.feature(ChangeKind::SystemObservation, here);
                    }
                    walker.observation(value, here, &mut join.result_ids);
                }
                "metrics" => summary.agent_sums = walker.metrics(value, here),
                "extra" => {
                    walker.object(value, here);
                }
                "llm_call_count" => {
                    walker.field_feature(ObjectType::Step, "llm_call_count", here);
                    llm_call_count = walker.count(value, here, " (null when not tracked)");
                }
                "is_copied_context" => {
                    walker.field_feature(ObjectType::Step, "is_copied_context", here);
                    if walker.boolean(value, here) == Some(true) {
                        walker.unseen_work = true;
                    }
                }
                _ => {}
            }
        });
        self.require(object, path, "step_id", "an integer (1 for the first step)");
        self.require(object, path, "source", "\"system\", \"user\" or \"agent\"");
        self.require(
            object,
            path,
            "message",
            "a string (\"\" is fine) or an array of content parts",
        );
        if source != Some(Source::Agent) {
            summary.agent_sums = Sums::default();
        }
        if source == Some(Source::Agent) && llm_call_count == Some(0) {
            self.llm_call_zero(object, path);
        }
        self.call_join(&join, path);
        summary
    }

    fn agent_only_field(&mut self, key: &str, source: Source, path: &Path<'_>) {
        self.error(
            Rule::AgentOnlyField,
            path,
            format!(
                "`{key}` is only allowed on agent steps, but this step's source is {:?}",
                source.name()
            ),
        );
    }

    fn timestamp(&mut self, value: &Value, path: &Path<'_>) {
        let Some(text) = self.string(value, path) else { return };
        if let Err(err) = check_timestamp(text) {
            self.error(Rule::Timestamp, path, err.to_string());
        }
    }

    /// `source`: a string, and one of the three when [`Source::of`] found none.
    fn source(&mut self, value: &Value, path: &Path<'_>, source: Option<Source>) {
        let Some(text) = self.string(value, path) else { return };
        if source.is_some() {
            return;
        }
        let hint = match text {
            "assistant" => " (\"assistant\" is the chat role; ATIF calls it \"agent\")",
            "tool" => " (tool output belongs in the agent step's observation)",
            _ if ["system", "user", "agent"].contains(&text.to_lowercase().as_str()) => {
                " (the values are lower-case)"
            }
            _ => "",
        };
        self.error(
            Rule::Enum,
            path,
            format!("expected \"system\", \"user\" or \"agent\", found {text:?}{hint}"),
        );
    }

    fn reasoning_effort(&mut self, value: &Value, path: &Path<'_>) {
        match value {
            Value::String(_) | Value::Number(_) => {}
            Value::Bool(flag) => self.lax(
                Rule::Type,
                path,
                format!(
                    "expected a string such as \"low\" or a number, found {flag}; Python's bool \
                     is an int, so Harbor reads it as {}",
                    if *flag { "1.0" } else { "0.0" }
                ),
            ),
            other => self.error(
                Rule::Type,
                path,
                format!("expected a string such as \"low\" or a number, found {}", describe(other)),
            ),
        }
    }

    /// An agent step that made no LLM call has no metrics and no reasoning.
    fn llm_call_zero(&mut self, object: &Map<String, Value>, path: &Path<'_>) {
        for key in ["metrics", "reasoning_content"] {
            if object.get(key).is_some_and(|value| !value.is_null()) {
                self.error(
                    Rule::LlmCallZero,
                    &path.key(key),
                    format!(
                        "`{key}` must be absent on an agent step with llm_call_count 0 (a \
                         deterministic dispatch made no LLM call)"
                    ),
                );
            }
        }
    }

    /// Checks `tool_calls`, collecting their ids for the call join.
    fn tool_calls(&mut self, value: &'v Value, path: &Path<'_>, join: &mut CallJoin<'v>) {
        let Some(calls) = self.array(value, path) else { return };
        for (call_idx, call) in calls.iter().enumerate() {
            let call_path = path.index(call_idx);
            let Some(id) = self.tool_call(call, &call_path) else { continue };
            if !join.call_set.insert(id) {
                self.warn(
                    Rule::DuplicateToolCallId,
                    &call_path.key("tool_call_id"),
                    format!(
                        "tool_call_id {id:?} is used by an earlier call of this step, so results \
                         cannot tell the calls apart"
                    ),
                );
            }
            join.call_ids.push(id);
        }
    }

    /// Checks a tool call; returns its id.
    fn tool_call(&mut self, value: &'v Value, path: &Path<'_>) -> Option<&'v str> {
        let object = self.expect_object(
            value,
            path,
            "a tool call object ({tool_call_id, function_name, arguments})",
        )?;
        let mut id = None;
        let walk = |walker: &mut Self, key: &str, value: &'v Value, here: &Path<'_>| match key {
            "tool_call_id" => id = walker.string(value, here),
            "function_name" => {
                walker.string(value, here);
            }
            "arguments" => walker.arguments(value, here),
            "extra" => {
                walker.field_feature(ObjectType::ToolCall, "extra", here);
                walker.object(value, here);
            }
            _ => {}
        };
        self.walk_fields(object, ObjectType::ToolCall, path, tool_call_hint, walk);
        self.require(object, path, "tool_call_id", "a string");
        self.require(object, path, "function_name", "a string");
        self.require(object, path, "arguments", "an object ({} when the tool takes none)");
        id
    }

    /// A tool call's `arguments`: an object, and JSON-encoded text is a common slip.
    fn arguments(&mut self, value: &Value, path: &Path<'_>) {
        match value {
            Value::Object(_) => {}
            Value::String(_) => self.error(
                Rule::Type,
                path,
                "expected an object, found a string: tool-call arguments must be a JSON object, \
                 not JSON-encoded text (OpenAI's API returns them as a string; decode it with \
                 json.loads before writing ATIF)"
                    .to_owned(),
            ),
            other => self.error(
                Rule::Type,
                path,
                format!(
                    "expected an object ({{}} when the tool takes none), found {}",
                    describe(other)
                ),
            ),
        }
    }

    /// Checks an observation, collecting each result's `source_call_id` for the call join.
    fn observation(
        &mut self,
        value: &'v Value,
        path: &Path<'_>,
        source_call_ids: &mut Vec<(usize, &'v str)>,
    ) {
        let Some(object) =
            self.expect_object(value, path, "an observation object ({results: [...]})")
        else {
            return;
        };
        let walk = |walker: &mut Self, key: &str, value: &'v Value, here: &Path<'_>| {
            if key != "results" {
                return;
            }
            let Some(results) = walker.array(value, here) else { return };
            for (result_idx, result) in results.iter().enumerate() {
                if let Some(id) = walker.result(result, &here.index(result_idx)) {
                    source_call_ids.push((result_idx, id));
                }
            }
        };
        self.walk_fields(object, ObjectType::Observation, path, observation_hint, walk);
        self.require(object, path, "results", "an array of results ([] when there are none)");
    }

    /// Checks an observation result; returns its `source_call_id`.
    fn result(&mut self, value: &'v Value, path: &Path<'_>) -> Option<&'v str> {
        let object =
            self.expect_object(value, path, "a result object ({source_call_id, content})")?;
        let mut source_call_id = None;
        let walk = |walker: &mut Self, key: &str, value: &'v Value, here: &Path<'_>| match key {
            "source_call_id" => source_call_id = walker.string(value, here),
            "content" => walker.content(value, here),
            "subagent_trajectory_ref" => walker.subagent_refs(value, here),
            "extra" => {
                walker.field_feature(ObjectType::ObservationResult, "extra", here);
                walker.object(value, here);
            }
            _ => {}
        };
        self.walk_fields(object, ObjectType::ObservationResult, path, no_hint, walk);
        source_call_id
    }

    /// Every result's `source_call_id` must be the `tool_call_id` of a call of the same step.
    fn call_join(&mut self, join: &CallJoin<'v>, path: &Path<'_>) {
        for &(result_idx, id) in &join.result_ids {
            if join.call_set.contains(id) {
                continue;
            }
            let calls = if join.call_ids.is_empty() {
                "this step has no tool_calls".to_owned()
            } else {
                let mut ids: Vec<String> =
                    join.call_ids.iter().take(5).map(|id| format!("{id:?}")).collect();
                if join.call_ids.len() > 5 {
                    ids.push(format!("and {} more", join.call_ids.len() - 5));
                }
                format!("this step's tool_call_ids are {}", ids.join(", "))
            };
            let observation = path.key("observation");
            let results = observation.key("results");
            let result = results.index(result_idx);
            self.error(
                Rule::CallJoin,
                &result.key("source_call_id"),
                format!(
                    "source_call_id {id:?} matches no tool_call_id of the same step ({calls}); a \
                     result must answer a call made in its own step"
                ),
            );
        }
    }
}

fn step_hint(key: &str) -> Option<&'static str> {
    match key {
        "role" => Some("ATIF uses `source` (system, user or agent)"),
        "content" | "text" => Some("a step's text lives in `message`"),
        "id" => Some("did you mean `step_id`?"),
        "observations" | "tool_results" => Some("tool results live in `observation.results`"),
        "usage" => Some("token counts live in `metrics`"),
        _ => None,
    }
}

fn tool_call_hint(key: &str) -> Option<&'static str> {
    match key {
        "id" => Some("OpenAI-style tool call: ATIF names it `tool_call_id`"),
        "name" => Some("OpenAI-style tool call: ATIF names it `function_name`"),
        "function" | "type" => Some(
            "OpenAI-style tool call: ATIF flattens it to {tool_call_id, function_name, arguments}",
        ),
        "input" | "args" | "parameters" => Some("did you mean `arguments`?"),
        _ => None,
    }
}

fn observation_hint(_key: &str) -> Option<&'static str> {
    Some("an observation is {\"results\": [{source_call_id, content}, …]}")
}
