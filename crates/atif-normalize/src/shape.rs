//! The Shape of a trajectory: what the agent did, in numbers and names.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::content_hash;
use crate::view::View;

/// What an agent did in a run, reduced to what a regression test compares.
///
/// The fields serialise with these names, in this order; [`diff`](crate::diff) compares them in
/// the same order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// The number of root steps.
    pub step_count: u64,
    /// Each root step's `source`, in order.
    pub sources: Vec<String>,
    /// The sum of `llm_call_count` over root steps; an agent step without it counts 1, other
    /// steps 0.
    pub llm_calls: u64,
    /// Every root `tool_calls[].function_name`, in order.
    pub functions: Vec<String>,
    /// The function of each root tool result that records an error (`extra.is_error: true`,
    /// or an `extra.error`), in order: a tool that failed is what the agent met, not content,
    /// so a run whose tool failed differs from one where it succeeded with content comparison
    /// off too. A result that names no call of its step counts as `unknown`. Absent from a
    /// Shape serialised before it existed, and then read as empty.
    #[serde(default)]
    pub tool_errors: Vec<String>,
    /// The agent names of embedded subagents at any depth, sorted.
    pub subagents: Vec<String>,
    /// The sorted, unique `agent.model_name` and step `model_name`s, subagents included.
    pub models: Vec<String>,
    /// Whether the root's `extra.crashed` is `true`.
    pub crashed: bool,
    /// `final_metrics.total_prompt_tokens` when present, else the sum of root step
    /// `metrics.prompt_tokens`; `None` when no step reports it (a provider that sent no usage,
    /// such as a stream without `stream_options.include_usage`). An unknown count serialises as
    /// the string `"unknown"`, never as 0, so the Shape and the report do not state a count
    /// nobody measured.
    #[serde(with = "token_count")]
    pub prompt_tokens: Option<u64>,
    /// `final_metrics.total_completion_tokens` when present, else the sum of root step
    /// `metrics.completion_tokens`; `None` when no step reports it, as for `prompt_tokens`.
    #[serde(with = "token_count")]
    pub completion_tokens: Option<u64>,
    /// The first 12 hex digits of the SHA-256 of the canonical text.
    pub content_hash: String,
    /// The 1-based root step of each entry of `functions`, so that a delta can say which step
    /// gained or lost a call (`functions: step 22 removed Edit`). Derived from the steps, so
    /// neither serialised nor compared by [`diff`](crate::diff): a Shape read back from JSON has
    /// it empty, and its `functions` deltas then name no step.
    #[serde(skip)]
    pub function_steps: Vec<u64>,
    /// The 1-based root step of each entry of `tool_errors`, as `function_steps` is for
    /// `functions`; neither serialised nor compared.
    #[serde(skip)]
    pub tool_error_steps: Vec<u64>,
}

impl Shape {
    /// The fields as (name, value) pairs, in declaration order, with the names they serialise
    /// under; what [`diff`](crate::diff) compares and what `atif shape` prints.
    pub fn fields(&self) -> Vec<(String, Value)> {
        crate::diff::fields(self)
    }
}

/// The Shape of a normalised trajectory.
///
/// Missing or oddly typed fields count as absent, so this never fails; pass a document that went
/// through [`normalize`](crate::normalize) so the content hash ignores what is random.
pub fn shape(normalized: &Value) -> Shape {
    shape_of(normalized, content_hash(normalized))
}

/// [`shape`] without the content hash (`content_hash` is empty): for callers that compare
/// behaviour and never content, such as `atif-envelope`, to whom hashing the canonical text of a
/// long run would be most of the cost.
pub fn shape_without_hash(normalized: &Value) -> Shape {
    shape_of(normalized, String::new())
}

/// Runs `background` on a second thread while `foreground` runs on this one, and returns both
/// results; a panic in `background` is resumed here.
///
/// Checking a run against a golden does the same work once per side (reading, parsing,
/// hashing); this is how `atif-golden` and `atif` overlap the two, hashing one
/// [`NormalizedDocument`](crate::NormalizedDocument) while the other side is read or explained.
///
/// ```
/// let (a, b) = atif_normalize::support::join(|| 6 * 7, || "foreground");
/// assert_eq!((a, b), (42, "foreground"));
/// ```
pub fn join<A: Send, B>(
    background: impl FnOnce() -> A + Send,
    foreground: impl FnOnce() -> B,
) -> (A, B) {
    std::thread::scope(|scope| {
        let handle = scope.spawn(background);
        let b = foreground();
        match handle.join() {
            Ok(a) => (a, b),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// [`shape`] for either tree, with its content hash given.
pub(crate) fn shape_of<V: View>(normalized: &V, content_hash: String) -> Shape {
    let steps: &[V] = normalized.get("steps").and_then(V::as_array).unwrap_or(&[]);

    let sources =
        steps.iter().filter_map(|s| s.get("source")?.as_str().map(Cow::into_owned)).collect();
    let llm_calls = steps.iter().map(step_llm_calls).fold(0u64, u64::saturating_add);
    let mut functions = Vec::new();
    let mut function_steps = Vec::new();
    let mut tool_errors = Vec::new();
    let mut tool_error_steps = Vec::new();
    for (step_idx, step) in steps.iter().enumerate() {
        for function in step_functions(step) {
            functions.push(function.into_owned());
            function_steps.push(step_idx as u64 + 1);
        }
        for function in step_tool_errors(step) {
            tool_errors.push(function.into_owned());
            tool_error_steps.push(step_idx as u64 + 1);
        }
    }

    let mut subagents = Vec::new();
    collect_subagent_names(normalized, &mut subagents);
    subagents.sort();

    let mut models = BTreeSet::new();
    collect_models(normalized, &mut models);

    let crashed =
        normalized.get("extra").and_then(|extra| extra.get("crashed")).is_some_and(V::is_true);
    let tokens = |total: &str, per_step: &str| {
        let stated = normalized.get("final_metrics").and_then(|m| m.get(total)).and_then(V::as_u64);
        stated.or_else(|| {
            let counts: Vec<u64> =
                steps.iter().filter_map(|s| s.get("metrics")?.get(per_step)?.as_u64()).collect();
            // No step with a count: unknown, not 0.
            (!counts.is_empty()).then(|| counts.into_iter().fold(0u64, u64::saturating_add))
        })
    };

    Shape {
        step_count: steps.len() as u64,
        sources,
        llm_calls,
        functions,
        tool_errors,
        subagents,
        models: models.into_iter().map(Cow::into_owned).collect(),
        crashed,
        prompt_tokens: tokens("total_prompt_tokens", "prompt_tokens"),
        completion_tokens: tokens("total_completion_tokens", "completion_tokens"),
        content_hash,
        function_steps,
        tool_error_steps,
    }
}

/// The LLM calls a step stands for: its `llm_call_count`, else 1 for an agent step, else 0.
pub(crate) fn step_llm_calls<V: View>(step: &V) -> u64 {
    match step.get("llm_call_count").and_then(V::as_u64) {
        Some(count) => count,
        None if step.get("source").and_then(V::as_str).is_some_and(|s| s == "agent") => 1,
        None => 0,
    }
}

/// The function names a step calls, in order.
pub(crate) fn step_functions<V: View>(step: &V) -> impl Iterator<Item = Cow<'_, str>> {
    step.get("tool_calls")
        .and_then(V::as_array)
        .into_iter()
        .flatten()
        .filter_map(|call| call.get("function_name")?.as_str())
}

/// The function of each result of a step's observation that records an error, in order: the
/// call its `source_call_id` names, or `unknown`.
fn step_tool_errors<V: View>(step: &V) -> impl Iterator<Item = Cow<'_, str>> {
    let results = step.get("observation").and_then(|o| o.get("results")).and_then(V::as_array);
    results.into_iter().flatten().filter(|result| result_is_error(*result)).map(move |result| {
        let call_id = result.get("source_call_id").and_then(V::as_str);
        let calls = step.get("tool_calls").and_then(V::as_array).unwrap_or(&[]);
        let call = call_id.and_then(|id| {
            calls
                .iter()
                .find(|call| call.get("tool_call_id").and_then(V::as_str) == Some(id.clone()))
        });
        call.and_then(|call| call.get("function_name")?.as_str())
            .unwrap_or(Cow::Borrowed("unknown"))
    })
}

/// Whether a tool result records an error: `extra.is_error: true`, as the agent CLIs' and
/// Anthropic's logs mark one, or an `extra.error` object or text, as a trace's failed tool span
/// does.
fn result_is_error<V: View>(result: &V) -> bool {
    let Some(extra) = result.get("extra") else { return false };
    let error =
        extra.get("error").is_some_and(|error| error.is_object() || error.as_str().is_some());
    error || extra.get("is_error").is_some_and(V::is_true)
}

pub(crate) fn subagents_of<V: View>(traj: &V) -> &[V] {
    traj.get("subagent_trajectories").and_then(V::as_array).unwrap_or(&[])
}

fn collect_subagent_names<V: View>(traj: &V, names: &mut Vec<String>) {
    for sub in subagents_of(traj) {
        if let Some(name) = sub.str_at(&["agent", "name"]) {
            names.push(name.into_owned());
        }
        collect_subagent_names(sub, names);
    }
}

fn collect_models<'a, V: View>(traj: &'a V, models: &mut BTreeSet<Cow<'a, str>>) {
    if let Some(model) = traj.str_at(&["agent", "model_name"]) {
        models.insert(model);
    }
    for step in traj.get("steps").and_then(V::as_array).into_iter().flatten() {
        if let Some(model) = step.get("model_name").and_then(V::as_str) {
            models.insert(model);
        }
    }
    for sub in subagents_of(traj) {
        collect_models(sub, models);
    }
}

/// A token count as the Shape serialises it: the number, or `"unknown"` when no step reported
/// one.
mod token_count {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// What an unknown count serialises as.
    const UNKNOWN: &str = "unknown";

    pub(super) fn serialize<S: Serializer>(count: &Option<u64>, out: S) -> Result<S::Ok, S::Error> {
        match count {
            Some(count) => count.serialize(out),
            None => out.serialize_str(UNKNOWN),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        input: D,
    ) -> Result<Option<u64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Count {
            Known(u64),
            Word(String),
        }
        match Count::deserialize(input)? {
            Count::Known(count) => Ok(Some(count)),
            Count::Word(word) if word == UNKNOWN => Ok(None),
            Count::Word(word) => Err(serde::de::Error::custom(format!(
                "expected a token count or \"{UNKNOWN}\", got \"{word}\""
            ))),
        }
    }
}
