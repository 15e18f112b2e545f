//! A builder for valid trajectories: step ids, agent-only fields, call joins, embedded
//! subagents and `final_metrics` are taken care of.
//!
//! Agent-only fields (`model_name`, `reasoning_effort`, `reasoning_content`, `tool_calls`,
//! `metrics`) exist only on [`AgentStepBuilder`], so a user or system step cannot get them. A
//! tool result names a call of its own step or is refused, and a subagent result names an
//! embedded subagent of the trajectory being built or [`TrajectoryBuilder::build`] refuses it.

use serde_json::{Number, Value};

use crate::{
    Agent, Error, FinalMetrics, JsonObject, Message, Metrics, Observation, ObservationResult,
    ReasoningEffort, Result, SchemaVersion, Step, StepSource, SubagentTrajectoryRef, ToolCall,
    Trajectory, ValidateOptions,
};

/// Builds a [`Trajectory`] step by step.
///
/// Steps get the ids 1, 2, 3, … in the order they are added; the label defaults to
/// `ATIF-v1.8`; `final_metrics` is computed from the steps by [`TrajectoryBuilder::build`].
#[derive(Debug, Clone)]
pub struct TrajectoryBuilder {
    schema_version: SchemaVersion,
    session_id: Option<String>,
    trajectory_id: Option<String>,
    agent: Agent,
    steps: Vec<Step>,
    notes: Option<String>,
    continued_trajectory_ref: Option<String>,
    extra: Option<JsonObject>,
    subagents: Vec<Trajectory>,
}

/// A user or system step being built: no agent-only fields can be set on it.
#[derive(Debug, Clone)]
pub struct StepBuilder {
    step: Step,
}

/// An agent step being built.
#[derive(Debug, Clone)]
pub struct AgentStepBuilder {
    step: Step,
}

impl TrajectoryBuilder {
    /// A builder for a trajectory of `agent`, labelled `ATIF-v1.8`, with no steps yet.
    pub fn new(agent: Agent) -> TrajectoryBuilder {
        TrajectoryBuilder {
            schema_version: SchemaVersion::LATEST,
            session_id: None,
            trajectory_id: None,
            agent,
            steps: Vec::new(),
            notes: None,
            continued_trajectory_ref: None,
            extra: None,
            subagents: Vec::new(),
        }
    }

    /// Sets the label (default `ATIF-v1.8`).
    pub fn schema_version(mut self, version: SchemaVersion) -> TrajectoryBuilder {
        self.schema_version = version;
        self
    }

    /// Sets the run's `session_id`.
    pub fn session_id(mut self, session_id: impl Into<String>) -> TrajectoryBuilder {
        self.session_id = Some(session_id.into());
        self
    }

    /// Sets the `trajectory_id` (set for you on embedded subagents).
    pub fn trajectory_id(mut self, trajectory_id: impl Into<String>) -> TrajectoryBuilder {
        self.trajectory_id = Some(trajectory_id.into());
        self
    }

    /// Sets the free-text `notes`.
    pub fn notes(mut self, notes: impl Into<String>) -> TrajectoryBuilder {
        self.notes = Some(notes.into());
        self
    }

    /// Sets `continued_trajectory_ref`, where the run continues.
    pub fn continued_trajectory_ref(mut self, reference: impl Into<String>) -> TrajectoryBuilder {
        self.continued_trajectory_ref = Some(reference.into());
        self
    }

    /// Sets the trajectory's `extra` object.
    pub fn extra(mut self, extra: JsonObject) -> TrajectoryBuilder {
        self.extra = Some(extra);
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
        self.steps.push(step.step);
        self
    }

    /// Adds an agent step.
    pub fn agent_step(mut self, step: AgentStepBuilder) -> TrajectoryBuilder {
        self.steps.push(step.step);
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
        if self.subagents.iter().any(|sub| sub.trajectory_id.as_deref() == Some(&trajectory_id)) {
            return Err(build_error(format!(
                "a subagent with trajectory_id `{trajectory_id}` is already embedded"
            )));
        }
        let child = child.trajectory_id(trajectory_id).build()?;
        self.subagents.push(child);
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
        if self.steps.is_empty() {
            return Err(build_error("a trajectory needs at least one step".to_owned()));
        }
        let mut steps = self.steps;
        for (idx, step) in steps.iter_mut().enumerate() {
            step.step_id = idx as u64 + 1;
        }
        for step in &steps {
            let dispatch = step.llm_call_count == Some(0);
            if dispatch && (step.metrics.is_some() || step.reasoning_content.is_some()) {
                return Err(build_error(format!(
                    "step {}: llm_call_count 0 means no LLM call, so the step cannot have \
                     metrics or reasoning_content",
                    step.step_id
                )));
            }
            for result in step.results() {
                for reference in result.subagent_trajectory_ref.iter().flatten() {
                    let Some(id) = &reference.trajectory_id else { continue };
                    if !self.subagents.iter().any(|sub| sub.trajectory_id.as_ref() == Some(id)) {
                        return Err(build_error(format!(
                            "step {}: subagent result refers to trajectory_id `{id}`, but no \
                             subagent with that id is embedded (add it with `subagent`)",
                            step.step_id
                        )));
                    }
                }
            }
        }
        let final_metrics = final_metrics(&steps);
        let trajectory = Trajectory {
            schema_version: self.schema_version,
            session_id: self.session_id,
            trajectory_id: self.trajectory_id,
            agent: self.agent,
            steps,
            notes: self.notes,
            final_metrics: Some(final_metrics),
            continued_trajectory_ref: self.continued_trajectory_ref,
            extra: self.extra,
            subagent_trajectories: (!self.subagents.is_empty()).then_some(self.subagents),
        };
        // Construction rules out the structural mistakes; what the builder takes verbatim (a
        // timestamp string, say) is checked by the validator, so a built trajectory is valid.
        let report = crate::validate(&trajectory.to_value(), &ValidateOptions::default());
        let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
        if !errors.is_empty() {
            return Err(build_error(format!(
                "the trajectory would be invalid: {}",
                errors.join("; ")
            )));
        }
        Ok(trajectory)
    }
}

impl StepBuilder {
    /// A user step with this message.
    pub fn user(message: impl Into<Message>) -> StepBuilder {
        StepBuilder { step: empty_step(StepSource::User, message.into()) }
    }

    /// A system step with this message.
    pub fn system(message: impl Into<Message>) -> StepBuilder {
        StepBuilder { step: empty_step(StepSource::System, message.into()) }
    }

    /// Sets the ISO 8601 `timestamp`, kept as given.
    pub fn timestamp(mut self, timestamp: impl Into<String>) -> StepBuilder {
        self.step.timestamp = Some(timestamp.into());
        self
    }

    /// Adds an observation result with this content and no call id (a system event, a
    /// context summary).
    pub fn result(mut self, content: impl Into<Message>) -> StepBuilder {
        push_result(&mut self.step, None, Some(content.into()), None);
        self
    }

    /// Adds an observation result that points at a subagent trajectory stored elsewhere (a
    /// path, URL or database reference).
    pub fn stored_subagent_result(
        mut self,
        trajectory_path: impl Into<String>,
        content: Option<Message>,
    ) -> StepBuilder {
        let reference = SubagentTrajectoryRef {
            session_id: None,
            trajectory_id: None,
            trajectory_path: Some(trajectory_path.into()),
            extra: None,
        };
        push_result(&mut self.step, None, content, Some(reference));
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
        let reference = SubagentTrajectoryRef {
            session_id: None,
            trajectory_id: Some(trajectory_id.into()),
            trajectory_path: None,
            extra: None,
        };
        push_result(&mut self.step, None, content, Some(reference));
        self
    }

    /// Marks the step as copied from a prior trajectory (`is_copied_context: true`).
    pub fn copied_context(mut self) -> StepBuilder {
        self.step.is_copied_context = Some(true);
        self
    }

    /// Sets the step's `extra` object.
    pub fn extra(mut self, extra: JsonObject) -> StepBuilder {
        self.step.extra = Some(extra);
        self
    }
}

impl AgentStepBuilder {
    /// An agent step with this message.
    pub fn new(message: impl Into<Message>) -> AgentStepBuilder {
        AgentStepBuilder { step: empty_step(StepSource::Agent, message.into()) }
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
        self.step.reasoning_effort = Some(effort);
        self
    }

    /// Sets the model's reasoning text.
    pub fn reasoning_content(mut self, reasoning: impl Into<String>) -> AgentStepBuilder {
        self.step.reasoning_content = Some(reasoning.into());
        self
    }

    /// Sets the step's token counts and cost.
    pub fn metrics(mut self, metrics: Metrics) -> AgentStepBuilder {
        self.step.metrics = Some(metrics);
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

    /// Sets the step's `extra` object.
    pub fn extra(mut self, extra: JsonObject) -> AgentStepBuilder {
        self.step.extra = Some(extra);
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
        self.step.tool_calls.get_or_insert_with(Vec::new).push(ToolCall {
            tool_call_id,
            function_name: function_name.into(),
            arguments,
            extra: None,
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
        push_result(&mut self.step, Some(tool_call_id.to_owned()), Some(content.into()), None);
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
        let reference = SubagentTrajectoryRef {
            session_id: None,
            trajectory_id: Some(trajectory_id.into()),
            trajectory_path: None,
            extra: None,
        };
        push_result(&mut self.step, Some(tool_call_id.to_owned()), content, Some(reference));
        Ok(self)
    }

    fn has_call(&self, tool_call_id: &str) -> bool {
        self.step.tool_calls().iter().any(|call| call.tool_call_id == tool_call_id)
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

fn empty_step(source: StepSource, message: Message) -> Step {
    Step {
        step_id: 0,
        timestamp: None,
        source,
        model_name: None,
        reasoning_effort: None,
        message,
        reasoning_content: None,
        tool_calls: None,
        observation: None,
        metrics: None,
        llm_call_count: None,
        is_copied_context: None,
        extra: None,
    }
}

fn push_result(
    step: &mut Step,
    source_call_id: Option<String>,
    content: Option<Message>,
    reference: Option<SubagentTrajectoryRef>,
) {
    let observation = step.observation.get_or_insert_with(|| Observation { results: Vec::new() });
    observation.results.push(ObservationResult {
        source_call_id,
        content,
        subagent_trajectory_ref: reference.map(|reference| vec![reference]),
        extra: None,
    });
}

fn build_error(reason: String) -> Error {
    Error::Build { reason }
}
