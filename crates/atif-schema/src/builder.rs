//! A builder for valid trajectories: step ids, agent-only fields, call joins, embedded
//! subagents and `final_metrics` are taken care of.
//!
//! Agent-only fields (`model_name`, `reasoning_effort`, `reasoning_content`, `tool_calls`,
//! `metrics`) exist only on [`AgentStepBuilder`], so a user or system step cannot get them. A
//! tool result names a call of its own step or is refused, and a subagent result names an
//! embedded subagent of the trajectory being built or [`TrajectoryBuilder::build`] refuses it.
//!
//! The builder is a by-value layer over the workspace's one trajectory draft (`draft.rs`),
//! which the importers and the captures fill too: it adds the checks above, and the metrics
//! as the caller gives them (ATIF's own, with costs and token ids), summed into
//! `final_metrics`.

use serde_json::{Number, Value};

use crate::draft::{self, ObsResult, Part};
use crate::{
    Agent, Error, FinalMetrics, JsonObject, Message, Metrics, ReasoningEffort, Result,
    SchemaVersion, Step, StepSource, Trajectory,
};

/// Builds a [`Trajectory`] step by step.
///
/// Steps get the ids 1, 2, 3, … in the order they are added; the label defaults to
/// `ATIF-v1.8`; `final_metrics` is computed from the steps by [`TrajectoryBuilder::build`].
#[derive(Debug, Clone)]
pub struct TrajectoryBuilder {
    draft: draft::Trajectory,
    /// Each step's metrics, as given (by index).
    metrics: Vec<Option<Metrics>>,
}

/// A user or system step being built: no agent-only fields can be set on it.
#[derive(Debug, Clone)]
pub struct StepBuilder {
    step: draft::Step,
}

/// An agent step being built.
#[derive(Debug, Clone)]
pub struct AgentStepBuilder {
    step: draft::Step,
    metrics: Option<Metrics>,
}

impl TrajectoryBuilder {
    /// A builder for a trajectory of `agent`, labelled `ATIF-v1.8`, with no steps yet.
    pub fn new(agent: Agent) -> TrajectoryBuilder {
        let mut draft = draft::Trajectory::new(&agent.name);
        draft.agent_version = Some(agent.version);
        draft.model_name = agent.model_name;
        draft.tool_definitions = agent.tool_definitions;
        draft.agent_extra = agent.extra.unwrap_or_default();
        TrajectoryBuilder { draft, metrics: Vec::new() }
    }

    /// Sets the label (default `ATIF-v1.8`).
    pub fn schema_version(mut self, version: SchemaVersion) -> TrajectoryBuilder {
        self.draft.schema_version = version;
        self
    }

    /// Sets the run's `session_id`.
    pub fn session_id(mut self, session_id: impl Into<String>) -> TrajectoryBuilder {
        self.draft.session_id = Some(session_id.into());
        self
    }

    /// Sets the `trajectory_id` (set for you on embedded subagents).
    pub fn trajectory_id(mut self, trajectory_id: impl Into<String>) -> TrajectoryBuilder {
        self.draft.trajectory_id = Some(trajectory_id.into());
        self
    }

    /// Sets the free-text `notes`.
    pub fn notes(mut self, notes: impl Into<String>) -> TrajectoryBuilder {
        self.draft.notes = vec![notes.into()];
        self
    }

    /// Sets `continued_trajectory_ref`, where the run continues.
    pub fn continued_trajectory_ref(mut self, reference: impl Into<String>) -> TrajectoryBuilder {
        self.draft.continued_trajectory_ref = Some(reference.into());
        self
    }

    /// Sets the trajectory's `extra` object (an empty one is left out).
    pub fn extra(mut self, extra: JsonObject) -> TrajectoryBuilder {
        self.draft.extra = extra;
        self
    }

    /// Adds a user step with this message.
    pub fn user(self, message: impl Into<Message>) -> TrajectoryBuilder {
        self.step(StepBuilder::user(message))
    }

    /// Adds a system step with this message.
    pub fn system(self, message: impl Into<Message>) -> TrajectoryBuilder {
        self.step(StepBuilder::system(message))
    }

    /// Adds a user or system step.
    pub fn step(mut self, step: StepBuilder) -> TrajectoryBuilder {
        self.draft.steps.push(step.step);
        self.metrics.push(None);
        self
    }

    /// Adds an agent step.
    pub fn agent_step(mut self, step: AgentStepBuilder) -> TrajectoryBuilder {
        self.draft.steps.push(step.step);
        self.metrics.push(step.metrics);
        self
    }

    /// Embeds a subagent's trajectory under `trajectory_id`, for agent steps to refer to with
    /// [`AgentStepBuilder::subagent_result`].
    ///
    /// # Errors
    ///
    /// [`Error::Build`] when another embedded subagent already has this id, or when the child
    /// cannot be built.
    pub fn subagent(
        mut self,
        trajectory_id: impl Into<String>,
        child: TrajectoryBuilder,
    ) -> Result<TrajectoryBuilder> {
        let trajectory_id = trajectory_id.into();
        let embedded = &self.draft.subagents;
        if embedded.iter().any(|sub| sub.trajectory_id.as_deref() == Some(&trajectory_id)) {
            return Err(build_error(format!(
                "a subagent with trajectory_id `{trajectory_id}` is already embedded"
            )));
        }
        let child = child.trajectory_id(trajectory_id).build()?;
        self.draft.subagents.push(child);
        Ok(self)
    }

    /// Builds the trajectory: numbers the steps and computes `final_metrics` (the sums of the
    /// steps' token counts and costs, where any step has them, and `total_steps`). Embedded
    /// subagents keep their own `final_metrics`; they are not added to the parent's.
    ///
    /// # Errors
    ///
    /// [`Error::Build`] when there are no steps, when an agent step with `llm_call_count(0)`
    /// has metrics or reasoning, when a subagent result refers to a `trajectory_id` that is
    /// not embedded, or when the validator (default profile) finds an error in what was given
    /// verbatim, such as a timestamp that is not ISO 8601.
    pub fn build(self) -> Result<Trajectory> {
        if self.draft.steps.is_empty() {
            return Err(build_error("a trajectory needs at least one step".to_owned()));
        }
        for (idx, (step, metrics)) in self.draft.steps.iter().zip(&self.metrics).enumerate() {
            let step_id = idx + 1;
            let dispatch = step.llm_call_count == Some(0);
            // An empty reasoning text is left out, so it is no reasoning_content.
            let reasoning = step.reasoning.iter().any(|text| !text.is_empty());
            if dispatch && (metrics.is_some() || reasoning) {
                return Err(build_error(format!(
                    "step {step_id}: llm_call_count 0 means no LLM call, so the step cannot have \
                     metrics or reasoning_content"
                )));
            }
            for id in step.results.iter().flat_map(|result| &result.subagent_refs) {
                let embedded = &self.draft.subagents;
                if !embedded.iter().any(|sub| sub.trajectory_id.as_ref() == Some(id)) {
                    return Err(build_error(format!(
                        "step {step_id}: subagent result refers to trajectory_id `{id}`, but no \
                         subagent with that id is embedded (add it with `subagent`)"
                    )));
                }
            }
        }
        let mut trajectory = self.draft.into_atif();
        for (step, metrics) in trajectory.steps.iter_mut().zip(self.metrics) {
            step.metrics = metrics;
        }
        trajectory.final_metrics = Some(final_metrics(&trajectory.steps));
        // Construction rules out the structural mistakes; what the builder takes verbatim (a
        // timestamp string, say) is checked by the validator, so a built trajectory is valid.
        crate::draft::check_valid(&trajectory)?;
        Ok(trajectory)
    }
}

impl StepBuilder {
    /// A user step with this message.
    pub fn user(message: impl Into<Message>) -> StepBuilder {
        StepBuilder { step: draft_step(StepSource::User, message.into()) }
    }

    /// A system step with this message.
    pub fn system(message: impl Into<Message>) -> StepBuilder {
        StepBuilder { step: draft_step(StepSource::System, message.into()) }
    }

    /// Sets the ISO 8601 `timestamp`, kept as given.
    pub fn timestamp(mut self, timestamp: impl Into<String>) -> StepBuilder {
        self.step.timestamp = Some(timestamp.into());
        self
    }

    /// Adds an observation result with this content and no call id (a system event, a
    /// context summary).
    pub fn result(mut self, content: impl Into<Message>) -> StepBuilder {
        push_result(&mut self.step, None, Some(content.into()), Ref::None);
        self
    }

    /// Adds an observation result that points at a subagent trajectory stored elsewhere (a
    /// path, URL or database reference).
    pub fn stored_subagent_result(
        mut self,
        trajectory_path: impl Into<String>,
        content: Option<Message>,
    ) -> StepBuilder {
        push_result(&mut self.step, None, content, Ref::Stored(trajectory_path.into()));
        self
    }

    /// Adds an observation result, with no call id, that refers to the embedded subagent
    /// `trajectory_id` (embed it with [`TrajectoryBuilder::subagent`]): a system step saying
    /// that subagents were started, say.
    pub fn subagent_result(
        mut self,
        trajectory_id: impl Into<String>,
        content: Option<Message>,
    ) -> StepBuilder {
        push_result(&mut self.step, None, content, Ref::Embedded(trajectory_id.into()));
        self
    }

    /// Marks the step as copied from a prior trajectory (`is_copied_context: true`).
    pub fn copied_context(mut self) -> StepBuilder {
        self.step.is_copied_context = Some(true);
        self
    }

    /// Sets the step's `extra` object (an empty one is left out).
    pub fn extra(mut self, extra: JsonObject) -> StepBuilder {
        self.step.extra = extra;
        self
    }
}

impl AgentStepBuilder {
    /// An agent step with this message.
    pub fn new(message: impl Into<Message>) -> AgentStepBuilder {
        AgentStepBuilder { step: draft_step(StepSource::Agent, message.into()), metrics: None }
    }

    /// Sets the ISO 8601 `timestamp`, kept as given.
    pub fn timestamp(mut self, timestamp: impl Into<String>) -> AgentStepBuilder {
        self.step.timestamp = Some(timestamp.into());
        self
    }

    /// Sets the model used for this step.
    pub fn model_name(mut self, model_name: impl Into<String>) -> AgentStepBuilder {
        self.step.model_name = Some(model_name.into());
        self
    }

    /// Sets the reasoning effort.
    pub fn reasoning_effort(mut self, effort: ReasoningEffort) -> AgentStepBuilder {
        self.step.reasoning_effort = Some(match effort {
            ReasoningEffort::Text(text) => Value::String(text),
            ReasoningEffort::Number(number) => Value::Number(number),
        });
        self
    }

    /// Sets the model's reasoning text (an empty one is left out).
    pub fn reasoning_content(mut self, reasoning: impl Into<String>) -> AgentStepBuilder {
        self.step.reasoning = vec![reasoning.into()];
        self
    }

    /// Sets the step's token counts and cost.
    pub fn metrics(mut self, metrics: Metrics) -> AgentStepBuilder {
        self.metrics = Some(metrics);
        self
    }

    /// Sets how many LLM calls the step stands for (0: a deterministic dispatch, which then
    /// cannot have metrics or reasoning).
    pub fn llm_call_count(mut self, count: u64) -> AgentStepBuilder {
        self.step.llm_call_count = Some(count);
        self
    }

    /// Marks the step as copied from a prior trajectory (`is_copied_context: true`).
    pub fn copied_context(mut self) -> AgentStepBuilder {
        self.step.is_copied_context = Some(true);
        self
    }

    /// Sets the step's `extra` object (an empty one is left out).
    pub fn extra(mut self, extra: JsonObject) -> AgentStepBuilder {
        self.step.extra = extra;
        self
    }

    /// Adds a tool call. The step has a `tool_calls` array from its first call on.
    ///
    /// # Errors
    ///
    /// [`Error::Build`] when `arguments` is not a JSON object or the step already has a call
    /// with this id.
    pub fn tool_call(
        mut self,
        tool_call_id: impl Into<String>,
        function_name: impl Into<String>,
        arguments: Value,
    ) -> Result<AgentStepBuilder> {
        let tool_call_id = tool_call_id.into();
        let Value::Object(arguments) = arguments else {
            return Err(build_error(format!(
                "the arguments of tool call `{tool_call_id}` must be a JSON object"
            )));
        };
        if self.has_call(&tool_call_id) {
            return Err(build_error(format!("the step already has a tool call `{tool_call_id}`")));
        }
        self.step.tool_calls.push(draft::ToolCall {
            id: tool_call_id,
            name: function_name.into(),
            arguments,
            extra: JsonObject::new(),
        });
        Ok(self)
    }

    /// Adds the result of the tool call `tool_call_id` of this step.
    ///
    /// # Errors
    ///
    /// [`Error::Build`] when this step has no tool call with that id.
    pub fn tool_result(
        mut self,
        tool_call_id: &str,
        content: impl Into<Message>,
    ) -> Result<AgentStepBuilder> {
        self.check_call(tool_call_id)?;
        let content = Some(content.into());
        push_result(&mut self.step, Some(tool_call_id.to_owned()), content, Ref::None);
        Ok(self)
    }

    /// Adds the result of the tool call `tool_call_id` that ran the embedded subagent
    /// `trajectory_id` (embed it with [`TrajectoryBuilder::subagent`]).
    ///
    /// # Errors
    ///
    /// [`Error::Build`] when this step has no tool call with that id.
    pub fn subagent_result(
        mut self,
        tool_call_id: &str,
        trajectory_id: impl Into<String>,
        content: Option<Message>,
    ) -> Result<AgentStepBuilder> {
        self.check_call(tool_call_id)?;
        let reference = Ref::Embedded(trajectory_id.into());
        push_result(&mut self.step, Some(tool_call_id.to_owned()), content, reference);
        Ok(self)
    }

    fn has_call(&self, tool_call_id: &str) -> bool {
        self.step.tool_calls.iter().any(|call| call.id == tool_call_id)
    }

    fn check_call(&self, tool_call_id: &str) -> Result<()> {
        if self.has_call(tool_call_id) {
            return Ok(());
        }
        Err(build_error(format!(
            "a result for tool call `{tool_call_id}`, but this step has no call with that id \
             (add it with `tool_call` first)"
        )))
    }
}

/// The totals of the steps' metrics, and the step count.
fn final_metrics(steps: &[Step]) -> FinalMetrics {
    let metrics: Vec<&Metrics> = steps.iter().filter_map(|step| step.metrics.as_ref()).collect();
    let sum = |field: fn(&Metrics) -> Option<i64>| -> Option<i64> {
        let values: Vec<i64> = metrics.iter().filter_map(|m| field(m)).collect();
        // Saturating: a sum beyond i64 is not a real token count, and the builder never panics.
        (!values.is_empty()).then(|| values.iter().fold(0i64, |total, v| total.saturating_add(*v)))
    };
    let costs: Vec<&Number> = metrics.iter().filter_map(|m| m.cost_usd.as_ref()).collect();
    let total_cost_usd = if costs.is_empty() {
        None
    } else if let Some(total) =
        costs.iter().try_fold(0i64, |total, cost| total.checked_add(cost.as_i64()?))
    {
        // Integer costs stay integers, as they were written.
        Some(Number::from(total))
    } else {
        Number::from_f64(costs.iter().filter_map(|cost| cost.as_f64()).sum())
    };
    FinalMetrics {
        total_prompt_tokens: sum(|m| m.prompt_tokens),
        total_completion_tokens: sum(|m| m.completion_tokens),
        total_cached_tokens: sum(|m| m.cached_tokens),
        total_cost_usd,
        total_steps: Some(steps.len() as u64),
        extra: None,
    }
}

fn draft_step(source: StepSource, message: Message) -> draft::Step {
    let mut step = draft::Step::new(source);
    step.parts = parts(message);
    step
}

/// A message as the draft's parts: a text as one text part, a list of parts as given (so it is
/// written as a list; an empty list, which holds nothing, is written as `""`, as every writer
/// of the draft writes a message without content).
fn parts(message: Message) -> Vec<Part> {
    match message {
        Message::Text(text) => vec![Part::Text(text)],
        Message::Parts(parts) => parts.into_iter().map(Part::Content).collect(),
    }
}

/// The subagent a result refers to, if any.
enum Ref {
    None,
    /// Embedded in the trajectory, by `trajectory_id`.
    Embedded(String),
    /// Stored elsewhere, by `trajectory_path`.
    Stored(String),
}

fn push_result(
    step: &mut draft::Step,
    source_call_id: Option<String>,
    content: Option<Message>,
    reference: Ref,
) {
    let mut result =
        ObsResult { source_call_id, content: content.map(parts), ..ObsResult::default() };
    match reference {
        Ref::None => {}
        Ref::Embedded(trajectory_id) => result.subagent_refs.push(trajectory_id),
        Ref::Stored(trajectory_path) => result.subagent_paths.push(trajectory_path),
    }
    step.results.push(result);
}

fn build_error(reason: String) -> Error {
    Error::Build { reason }
}
