//! What the captures add to atif-schema's shared trajectory draft: a model call's step (its
//! tool calls and token counts as the wire types hold them) and the finishing of a recorded
//! draft into a validated ATIF trajectory. Capture from traffic and `atif-replay`'s capture in
//! process (through the hidden `support` module) both fill the one draft the importers fill.

use atif_schema::StepSource;
use atif_schema::support::draft::{self, Metrics, ObsResult, Part, Step};
use serde_json::{Map, Value};

use crate::{Error, LlmResponse, Result, ToolDefinition, Usage};

/// An agent step for the model's reply `response`: its text, reasoning, tool calls and (when
/// the provider reported them) token counts; a step with counts stands for one model call.
pub fn response_step(response: &LlmResponse) -> Step {
    let mut step = Step::text(StepSource::Agent, response.text());
    step.reasoning.extend(response.reasoning.iter().cloned());
    step.tool_calls = response
        .tool_calls
        .iter()
        .map(|call| draft::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: arguments_object(&call.arguments),
            extra: Map::new(),
        })
        .collect();
    // Counts the provider never reported are left out, never written as 0.
    if !response.usage_unknown {
        step.metrics = Some(metrics(response.usage));
        step.llm_call_count = Some(1);
    }
    step
}

/// Adds the tools of `offered` that `known` does not name yet (the first definition of a name
/// is the one kept).
pub fn add_tools(known: &mut Vec<ToolDefinition>, offered: &[ToolDefinition]) {
    for tool in offered {
        if !known.iter().any(|known| known.name == tool.name) {
            known.push(tool.clone());
        }
    }
}

/// Writes the recorded `draft` as a validated ATIF trajectory: the agent's model is the first
/// step's when the draft names none, the tools are `tools` in the order first offered, each
/// subagent ref is a result of its own (the call's content with the first), a call result
/// reported without content has an empty one, and `final_metrics` sums the steps.
///
/// # Errors
///
/// [`Error::Traffic`] when a model reply made two tool calls with one id: a tool result names
/// its call by id, so the two results could not be told apart (one would be lost).
/// [`Error::Schema`] when the validator refuses the trajectory (the captures record nothing
/// it refuses; the error is there for a schema crate that moved on).
pub fn finish(
    mut draft: draft::Trajectory,
    tools: &[ToolDefinition],
) -> Result<atif_schema::Trajectory> {
    if let Some(id) = repeated_call_id(&draft) {
        return Err(Error::Traffic {
            message: format!(
                "a model reply made two tool calls with the id `{id}`, so their results cannot \
                 be told apart"
            ),
        });
    }
    if draft.model_name.is_none() {
        draft.model_name = draft.steps.iter().find_map(|step| step.model_name.clone());
    }
    let tools = tools.iter().filter_map(|tool| match tool.to_openai() {
        Value::Object(fields) => Some(fields),
        _ => None,
    });
    draft.tool_definitions = Some(tools.collect());
    for step in &mut draft.steps {
        step.results =
            std::mem::take(&mut step.results).into_iter().flat_map(one_ref_each).collect();
    }
    draft.final_metrics = Some(draft.summed_metrics());
    draft.build().map_err(|source| Error::Schema { source })
}

/// The first tool-call id that one step of `draft` holds twice.
fn repeated_call_id(draft: &draft::Trajectory) -> Option<&str> {
    draft.steps.iter().find_map(|step| {
        let calls = &step.tool_calls;
        calls.iter().enumerate().find_map(|(idx, call)| {
            calls[..idx].iter().any(|earlier| earlier.id == call.id).then_some(call.id.as_str())
        })
    })
}

/// `result` as results with one subagent ref each: the content goes with the first ref of a
/// call's result and with every ref of a result that answers no call; a call's result with no
/// ref and no content gets an empty content.
fn one_ref_each(mut result: ObsResult) -> Vec<ObsResult> {
    if result.subagent_refs.len() <= 1 {
        if result.subagent_refs.is_empty() && result.source_call_id.is_some() {
            result.content.get_or_insert_with(|| vec![Part::Text(String::new())]);
        }
        return vec![result];
    }
    let answers_call = result.source_call_id.is_some();
    let refs = std::mem::take(&mut result.subagent_refs);
    refs.into_iter()
        .enumerate()
        .map(|(idx, reference)| ObsResult {
            source_call_id: result.source_call_id.clone(),
            content: result.content.clone().filter(|_| idx == 0 || !answers_call),
            subagent_refs: vec![reference],
            subagent_paths: Vec::new(),
            extra: result.extra.clone(),
        })
        .collect()
}

/// The draft's metrics of one call; reasoning tokens, which ATIF has no field for, go in
/// `extra`.
fn metrics(usage: Usage) -> Metrics {
    let mut extra = Map::new();
    if usage.reasoning_tokens > 0 {
        extra.insert("reasoning_tokens".to_owned(), Value::from(usage.reasoning_tokens));
    }
    Metrics {
        prompt: Some(usage.prompt_tokens),
        completion: Some(usage.completion_tokens),
        cached: Some(usage.cached_tokens),
        extra,
    }
}

/// ATIF wants tool arguments as an object: a JSON-encoded object string is parsed, anything
/// else that is not an object is wrapped as `{"value": …}`.
pub(crate) fn arguments_object(arguments: &Value) -> Map<String, Value> {
    match arguments {
        Value::Object(object) => object.clone(),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(parsed)) => parsed,
            _ => wrap(arguments),
        },
        Value::Null => Map::new(),
        _ => wrap(arguments),
    }
}

fn wrap(value: &Value) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("value".to_owned(), value.clone());
    object
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tool_arguments_always_become_an_object() {
        let object = |value: Value| Value::Object(arguments_object(&value));
        assert_eq!(object(json!({"a": 1})), json!({"a": 1}));
        assert_eq!(object(json!("{\"a\":1}")), json!({"a": 1}));
        assert_eq!(object(json!("plain")), json!({"value": "plain"}));
        assert_eq!(object(json!(null)), json!({}));
    }

    #[test]
    fn reasoning_tokens_go_in_the_metrics_extra() {
        let built = metrics(Usage::new(u64::MAX, 2, 1).with_reasoning_tokens(5));
        assert_eq!(built.prompt, Some(u64::MAX));
        assert_eq!(built.extra["reasoning_tokens"], json!(5));
        assert!(metrics(Usage::new(1, 1, 0)).extra.is_empty());
    }

    #[test]
    fn a_reply_with_two_tool_calls_of_one_id_is_refused_naming_the_id() {
        let call = |id: &str| crate::ToolCall::new(id, "bash", json!({"command": "ls"}));
        let mut response = LlmResponse::from_text("");
        response.tool_calls = vec![call("c1"), call("c2"), call("c1")];
        let mut draft = draft::Trajectory::new("a");
        draft.steps.push(response_step(&response));
        let err = finish(draft, &[]).unwrap_err().to_string();
        assert!(
            err.ends_with("two tool calls with the id `c1`, so their results cannot be told apart"),
            "{err}"
        );
        response.tool_calls.pop();
        let mut draft = draft::Trajectory::new("a");
        draft.steps.push(response_step(&response));
        assert!(finish(draft, &[]).is_ok());
    }

    #[test]
    fn each_subagent_ref_is_a_result_of_its_own_and_huge_counts_saturate() {
        let mut draft = draft::Trajectory::new("a");
        let mut step =
            response_step(&LlmResponse::from_text("").with_usage(Usage::new(u64::MAX, 1, 0)));
        step.tool_calls.push(draft::ToolCall {
            id: "c".into(),
            name: "task".into(),
            arguments: Map::new(),
            extra: Map::new(),
        });
        let result = step.result_for("c").unwrap();
        result.content = Some(vec![Part::Text("done".into())]);
        result.subagent_refs = vec!["s1".into(), "s2".into()];
        draft.steps.push(step);
        for id in ["s1", "s2"] {
            let mut child = draft::Trajectory::new(id);
            child.trajectory_id = Some(id.into());
            child.steps.push(Step::text(StepSource::User, "go"));
            draft.subagents.push(finish(child, &[]).unwrap());
        }
        let written = finish(draft, &[]).unwrap().to_value();
        let results = &written["steps"][0]["observation"]["results"];
        assert_eq!(results[0]["content"], "done");
        assert_eq!(results[0]["subagent_trajectory_ref"][0]["trajectory_id"], "s1");
        assert_eq!(results[1].get("content"), None);
        assert_eq!(results[1]["subagent_trajectory_ref"][0]["trajectory_id"], "s2");
        assert_eq!(written["steps"][0]["metrics"]["prompt_tokens"], json!(i64::MAX));
        assert_eq!(written["final_metrics"]["total_prompt_tokens"], json!(i64::MAX));
    }
}
