//! Recorded steps written as an ATIF trajectory through atif-schema's builder: the one ATIF
//! writer shared by capture from traffic and `atif-replay`'s capture in process (through the
//! hidden `support` module).

#![allow(
    missing_docs,
    reason = "not public API: the fields are reached only through the hidden `support` module"
)]

use atif_schema::{
    Agent, AgentStepBuilder, JsonObject, Metrics, StepBuilder, Trajectory, TrajectoryBuilder,
};
use serde_json::{Map, Value};

use crate::{Error, Result, ToolCall, ToolDefinition, Usage};

/// A trajectory being recorded: the agent, its steps and its subagents.
#[derive(Debug, Clone, Default)]
pub struct TrajectoryRecord {
    pub agent_name: String,
    pub agent_version: String,
    /// The agent's model; without one, the first step's.
    pub model: Option<String>,
    pub session_id: Option<String>,
    pub trajectory_id: Option<String>,
    pub tool_definitions: Vec<ToolDefinition>,
    pub steps: Vec<StepRecord>,
    pub extra: Option<JsonObject>,
    /// Embedded subagents; each needs a `trajectory_id`.
    pub subagents: Vec<TrajectoryRecord>,
}

/// Who a recorded step is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    System,
    User,
    Agent,
}

/// One recorded step. Agent-only fields are ignored on system and user steps.
#[derive(Debug, Clone)]
pub struct StepRecord {
    pub source: Source,
    pub timestamp: Option<String>,
    pub message: String,
    pub model_name: Option<String>,
    pub reasoning: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    /// The model call's token counts; an agent step with usage stands for one LLM call.
    pub usage: Option<Usage>,
    pub results: Vec<ResultRecord>,
    pub extra: Option<JsonObject>,
}

/// One observation result: the result of a call, or a reference to subagents it started.
#[derive(Debug, Clone)]
pub struct ResultRecord {
    pub source_call_id: Option<String>,
    pub content: Option<String>,
    /// `trajectory_id`s of embedded subagents.
    pub refs: Vec<String>,
}

impl StepRecord {
    pub fn new(source: Source, message: impl Into<String>) -> Self {
        StepRecord {
            source,
            timestamp: None,
            message: message.into(),
            model_name: None,
            reasoning: None,
            tool_calls: Vec::new(),
            usage: None,
            results: Vec::new(),
            extra: None,
        }
    }

    /// The result of call `call_id` of this step, created in call order when it is new (so
    /// results reported out of order, by concurrent tools, still read in call order).
    /// `None` when the step made no such call.
    pub fn result_for(&mut self, call_id: &str) -> Option<&mut ResultRecord> {
        let call_idx = self.tool_calls.iter().position(|call| call.id == call_id)?;
        let existing = self
            .results
            .iter()
            .position(|result| result.source_call_id.as_deref() == Some(call_id));
        let idx = match existing {
            Some(idx) => idx,
            None => {
                let calls = &self.tool_calls;
                let call_order = |result: &ResultRecord| {
                    let id = result.source_call_id.as_deref()?;
                    calls.iter().position(|call| call.id == id)
                };
                let at = self
                    .results
                    .iter()
                    .position(|result| call_order(result).is_none_or(|order| order > call_idx))
                    .unwrap_or(self.results.len());
                self.results.insert(
                    at,
                    ResultRecord {
                        source_call_id: Some(call_id.to_owned()),
                        content: None,
                        refs: Vec::new(),
                    },
                );
                at
            }
        };
        Some(&mut self.results[idx])
    }
}

/// Writes `record` as an ATIF-v1.8 trajectory with atif-schema's builder (step ids,
/// `final_metrics` and validation are the builder's).
///
/// # Errors
///
/// [`Error::Schema`] when the builder refuses the record (it is built so that it never does;
/// the error is there for a schema crate that moved on).
pub fn build(record: &TrajectoryRecord) -> Result<Trajectory> {
    builder(record)?.build().map_err(|source| Error::Schema { source })
}

fn builder(record: &TrajectoryRecord) -> Result<TrajectoryBuilder> {
    let schema = |source| Error::Schema { source };
    let mut agent = Agent::new(&record.agent_name, &record.agent_version);
    let first_step_model = || record.steps.iter().find_map(|step| step.model_name.clone());
    agent.model_name = record.model.clone().or_else(first_step_model);
    if !record.tool_definitions.is_empty() {
        let tools = record.tool_definitions.iter().filter_map(|tool| match tool.to_openai() {
            Value::Object(fields) => Some(fields),
            _ => None,
        });
        agent.tool_definitions = Some(tools.collect());
    }
    let mut trajectory = TrajectoryBuilder::new(agent);
    if let Some(session_id) = &record.session_id {
        trajectory = trajectory.session_id(session_id);
    }
    if let Some(trajectory_id) = &record.trajectory_id {
        trajectory = trajectory.trajectory_id(trajectory_id);
    }
    if let Some(extra) = &record.extra {
        trajectory = trajectory.extra(extra.clone());
    }
    for child in &record.subagents {
        let id = child.trajectory_id.clone().unwrap_or_default();
        trajectory = trajectory.subagent(id, builder(child)?).map_err(schema)?;
    }
    for step in &record.steps {
        trajectory = match step.source {
            Source::Agent => trajectory.agent_step(agent_step(step).map_err(schema)?),
            Source::User | Source::System => trajectory.step(plain_step(step)),
        };
    }
    Ok(trajectory)
}

fn agent_step(step: &StepRecord) -> atif_schema::Result<AgentStepBuilder> {
    let mut out = AgentStepBuilder::new(step.message.as_str());
    if let Some(timestamp) = &step.timestamp {
        out = out.timestamp(timestamp);
    }
    if let Some(model) = &step.model_name {
        out = out.model_name(model);
    }
    if let Some(reasoning) = &step.reasoning {
        out = out.reasoning_content(reasoning);
    }
    for call in &step.tool_calls {
        out = out.tool_call(&call.id, &call.name, arguments_object(&call.arguments))?;
    }
    for result in &step.results {
        let content = result.content.clone().map(atif_schema::Message::from);
        match (&result.source_call_id, result.refs.as_slice()) {
            (Some(call_id), []) => {
                out = out.tool_result(call_id, content.unwrap_or_else(|| "".into()))?;
            }
            (Some(call_id), refs) => {
                for (idx, reference) in refs.iter().enumerate() {
                    // The call's result text goes with its first subagent.
                    let content = if idx == 0 { content.clone() } else { None };
                    out = out.subagent_result(call_id, reference, content)?;
                }
            }
            // An agent step's results answer its calls; the recorders make no others.
            (None, _) => {}
        }
    }
    if let Some(usage) = step.usage {
        out = out.metrics(metrics(usage)).llm_call_count(1);
    }
    if let Some(extra) = &step.extra {
        out = out.extra(extra.clone());
    }
    Ok(out)
}

fn plain_step(step: &StepRecord) -> StepBuilder {
    let mut out = match step.source {
        Source::User => StepBuilder::user(step.message.as_str()),
        Source::System | Source::Agent => StepBuilder::system(step.message.as_str()),
    };
    if let Some(timestamp) = &step.timestamp {
        out = out.timestamp(timestamp);
    }
    for result in &step.results {
        for reference in &result.refs {
            out = out.subagent_result(reference, result.content.clone().map(Into::into));
        }
    }
    if let Some(extra) = &step.extra {
        out = out.extra(extra.clone());
    }
    out
}

/// ATIF metrics of one call; reasoning tokens, which ATIF has no field for, go in `extra`.
fn metrics(usage: Usage) -> Metrics {
    // Saturating: counts beyond i64 are not real and must not cost the trajectory.
    let count = |value: u64| Some(i64::try_from(value).unwrap_or(i64::MAX));
    let extra = (usage.reasoning_tokens > 0).then(|| {
        let mut extra = Map::new();
        extra.insert("reasoning_tokens".to_owned(), Value::from(usage.reasoning_tokens));
        extra
    });
    Metrics {
        prompt_tokens: count(usage.prompt_tokens),
        completion_tokens: count(usage.completion_tokens),
        cached_tokens: count(usage.cached_tokens),
        extra,
        ..Metrics::default()
    }
}

/// ATIF wants tool arguments as an object: a JSON-encoded object string is parsed, anything
/// else that is not an object is wrapped as `{"value": …}`.
pub(crate) fn arguments_object(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(parsed @ Value::Object(_)) => parsed,
            _ => wrap(arguments),
        },
        Value::Null => Value::Object(Map::new()),
        _ => wrap(arguments),
    }
}

fn wrap(value: &Value) -> Value {
    let mut object = Map::new();
    object.insert("value".to_owned(), value.clone());
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tool_arguments_always_become_an_object() {
        assert_eq!(arguments_object(&json!({"a": 1})), json!({"a": 1}));
        assert_eq!(arguments_object(&json!("{\"a\":1}")), json!({"a": 1}));
        assert_eq!(arguments_object(&json!("plain")), json!({"value": "plain"}));
        assert_eq!(arguments_object(&json!(null)), json!({}));
    }

    #[test]
    fn results_keep_call_order_whatever_order_they_arrive_in() {
        let mut step = StepRecord::new(Source::Agent, "");
        step.tool_calls = vec![
            ToolCall::new("a", "f", json!({})),
            ToolCall::new("b", "f", json!({})),
            ToolCall::new("c", "f", json!({})),
        ];
        for id in ["c", "a", "b"] {
            step.result_for(id).unwrap().content = Some(id.to_owned());
        }
        let order: Vec<_> =
            step.results.iter().map(|result| result.source_call_id.as_deref()).collect();
        assert_eq!(order, [Some("a"), Some("b"), Some("c")]);
        assert!(step.result_for("zz").is_none());
    }

    #[test]
    fn reasoning_tokens_go_in_the_metrics_extra_and_huge_counts_saturate() {
        let built = metrics(Usage::new(u64::MAX, 2, 1).with_reasoning_tokens(5));
        assert_eq!(built.prompt_tokens, Some(i64::MAX));
        assert_eq!(built.extra.unwrap()["reasoning_tokens"], json!(5));
        assert_eq!(metrics(Usage::new(1, 1, 0)).extra, None);
    }
}
