//! [`Trajectory::into_value`]: a trajectory's JSON value, built by moving its strings and maps
//! instead of copying them.
//!
//! `serde_json::to_value` serialises from a reference, so every string and every `extra` or
//! `arguments` map is copied, and a large trajectory is held twice until the typed one is
//! dropped. This conversion takes the trajectory by value and moves its parts into the
//! `Value`. It writes what the `Serialize` impls of the model write (a test compares the two
//! on every fixture and corpus file); every struct is destructured without `..`, so a field
//! added to the model does not compile here until it is written.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::{
    Agent, FinalMetrics, Message, Metrics, Observation, ObservationResult, ReasoningEffort, Step,
    ToolCall, Trajectory,
};

impl Trajectory {
    /// The trajectory as a JSON value, equal to [`Trajectory::to_value`], with its strings and
    /// maps moved into the value rather than copied.
    pub fn into_value(self) -> Value {
        let Trajectory {
            schema_version,
            session_id,
            trajectory_id,
            agent,
            steps,
            notes,
            final_metrics,
            continued_trajectory_ref,
            extra,
            subagent_trajectories,
        } = self;
        let mut map = Map::new();
        map.insert("schema_version".into(), serialized(&schema_version));
        put(&mut map, "session_id", session_id);
        put(&mut map, "trajectory_id", trajectory_id);
        map.insert("agent".into(), agent_value(agent));
        map.insert("steps".into(), steps.into_iter().map(Step::into_value).collect());
        put(&mut map, "notes", notes);
        put(&mut map, "final_metrics", final_metrics.map(final_metrics_value));
        put(&mut map, "continued_trajectory_ref", continued_trajectory_ref);
        put(&mut map, "extra", extra);
        let subagents = subagent_trajectories
            .map(|subagents| subagents.into_iter().map(Trajectory::into_value).collect::<Value>());
        put(&mut map, "subagent_trajectories", subagents);
        Value::Object(map)
    }
}

fn agent_value(agent: Agent) -> Value {
    let Agent { name, version, model_name, tool_definitions, extra } = agent;
    let mut map = Map::new();
    map.insert("name".into(), name.into());
    map.insert("version".into(), version.into());
    put(&mut map, "model_name", model_name);
    let definitions = tool_definitions
        .map(|definitions| definitions.into_iter().map(Value::Object).collect::<Value>());
    put(&mut map, "tool_definitions", definitions);
    put(&mut map, "extra", extra);
    Value::Object(map)
}

impl Step {
    /// The step as a JSON value, equal to its `serde_json::to_value`, with its strings and
    /// maps moved into the value rather than copied.
    pub fn into_value(self) -> Value {
        step_value(self)
    }
}

fn step_value(step: Step) -> Value {
    let Step {
        step_id,
        timestamp,
        source,
        model_name,
        reasoning_effort,
        message,
        reasoning_content,
        tool_calls,
        observation,
        metrics,
        llm_call_count,
        is_copied_context,
        extra,
    } = step;
    let mut map = Map::new();
    map.insert("step_id".into(), step_id.into());
    put(&mut map, "timestamp", timestamp);
    map.insert("source".into(), serialized(&source));
    put(&mut map, "model_name", model_name);
    let effort = reasoning_effort.map(|effort| match effort {
        ReasoningEffort::Text(text) => Value::String(text),
        ReasoningEffort::Number(number) => Value::Number(number),
    });
    put(&mut map, "reasoning_effort", effort);
    map.insert("message".into(), message_value(message));
    put(&mut map, "reasoning_content", reasoning_content);
    let calls = tool_calls.map(|calls| calls.into_iter().map(tool_call_value).collect::<Value>());
    put(&mut map, "tool_calls", calls);
    put(&mut map, "observation", observation.map(observation_value));
    put(&mut map, "metrics", metrics.map(metrics_value));
    put(&mut map, "llm_call_count", llm_call_count);
    put(&mut map, "is_copied_context", is_copied_context);
    put(&mut map, "extra", extra);
    Value::Object(map)
}

fn message_value(message: Message) -> Value {
    match message {
        Message::Text(text) => Value::String(text),
        // Content parts are rare and small: written by their `Serialize` impl.
        Message::Parts(parts) => serialized(&parts),
    }
}

fn tool_call_value(call: ToolCall) -> Value {
    let ToolCall { tool_call_id, function_name, arguments, extra } = call;
    let mut map = Map::new();
    map.insert("tool_call_id".into(), tool_call_id.into());
    map.insert("function_name".into(), function_name.into());
    map.insert("arguments".into(), Value::Object(arguments));
    put(&mut map, "extra", extra);
    Value::Object(map)
}

fn observation_value(observation: Observation) -> Value {
    let Observation { results } = observation;
    let results: Value = results.into_iter().map(result_value).collect();
    Value::Object(Map::from_iter([("results".to_owned(), results)]))
}

fn result_value(result: ObservationResult) -> Value {
    let ObservationResult { source_call_id, content, subagent_trajectory_ref, extra } = result;
    let mut map = Map::new();
    put(&mut map, "source_call_id", source_call_id);
    put(&mut map, "content", content.map(message_value));
    put(&mut map, "subagent_trajectory_ref", subagent_trajectory_ref.map(|refs| serialized(&refs)));
    put(&mut map, "extra", extra);
    Value::Object(map)
}

fn metrics_value(metrics: Metrics) -> Value {
    let Metrics {
        prompt_tokens,
        completion_tokens,
        cached_tokens,
        cost_usd,
        prompt_token_ids,
        completion_token_ids,
        logprobs,
        extra,
    } = metrics;
    let mut map = Map::new();
    put(&mut map, "prompt_tokens", prompt_tokens);
    put(&mut map, "completion_tokens", completion_tokens);
    put(&mut map, "cached_tokens", cached_tokens);
    put(&mut map, "cost_usd", cost_usd);
    put(&mut map, "prompt_token_ids", prompt_token_ids);
    put(&mut map, "completion_token_ids", completion_token_ids);
    put(&mut map, "logprobs", logprobs);
    put(&mut map, "extra", extra);
    Value::Object(map)
}

fn final_metrics_value(metrics: FinalMetrics) -> Value {
    let FinalMetrics {
        total_prompt_tokens,
        total_completion_tokens,
        total_cached_tokens,
        total_cost_usd,
        total_steps,
        extra,
    } = metrics;
    let mut map = Map::new();
    put(&mut map, "total_prompt_tokens", total_prompt_tokens);
    put(&mut map, "total_completion_tokens", total_completion_tokens);
    put(&mut map, "total_cached_tokens", total_cached_tokens);
    put(&mut map, "total_cost_usd", total_cost_usd);
    put(&mut map, "total_steps", total_steps);
    put(&mut map, "extra", extra);
    Value::Object(map)
}

/// Inserts `value` under `key` when it is there: the model leaves absent optional fields out.
fn put(map: &mut Map<String, Value>, key: &str, value: Option<impl Into<Value>>) {
    if let Some(value) = value {
        map.insert(key.to_owned(), value.into());
    }
}

/// A small part written by its `Serialize` impl.
fn serialized(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("serialising never fails because every map key is a string")
}
