//! `capture`: run an agent with a recording handle and turn what it did into an ATIF trajectory,
//! even when it fails or panics.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use atif_schema::support::draft::{self, ObsResult, Part, Step};
use atif_schema::{StepSource, error_chain};
use atif_secrets::Redactions;
use serde_json::{Map, Value};

use crate::record::lock;
use crate::{
    Chunk, ChunkStream, Error, LlmClient, LlmError, LlmRequest, LlmResponse, Result, Role,
};
use atif_wire::support as steps;
use atif_wire::{CaptureOptions, ToolDefinition};

/// What [`capture`] returns: the trajectory, always, and the agent's result.
#[derive(Debug)]
pub struct Captured<T> {
    /// The run as an ATIF-v1.8 trajectory (a JSON value that passes `atif_schema::validate`).
    pub trajectory: Value,
    /// What the agent returned; [`Error::AgentFailed`] or [`Error::AgentPanicked`] when it
    /// failed, in which case the trajectory's `extra` says `crashed: true` and holds the error.
    pub result: Result<T>,
    /// The secrets replaced by `<redacted:KIND>` markers in `trajectory`, and where.
    pub secrets: Redactions,
}

impl<T> Captured<T> {
    /// The trajectory as atif-schema's typed model.
    ///
    /// # Errors
    ///
    /// [`Error::Wire`] (holding `atif_wire::Error::Schema`) if the typed model cannot hold the captured document (it always
    /// can, as the tests check; the error is there for a schema crate that moved on).
    pub fn typed_trajectory(&self) -> Result<atif_schema::Trajectory> {
        atif_schema::Trajectory::from_value(&self.trajectory)
            .map_err(|source| Error::Wire(atif_wire::Error::Schema { source }))
    }

    /// The trajectory and the result, as a pair.
    pub fn into_parts(self) -> (Value, Result<T>) {
        (self.trajectory, self.result)
    }
}

/// Runs `agent` with a [`CaptureHandle`] and returns the trajectory of what it did, together
/// with its result.
///
/// The agent makes its model calls through [`CaptureHandle::client`]; each call becomes an agent
/// step (model name, message, reasoning, tool calls, token usage as metrics,
/// `llm_call_count: 1`). It reports tool results with [`CaptureHandle::tool_result`] (they
/// become that step's observation, joined by `source_call_id`) and starts subagents with
/// [`CaptureHandle::subagent`] (they become embedded `subagent_trajectories` with refs).
///
/// The agent runs as a tokio task, so a panic is caught: the trajectory is still returned, with
/// `extra.crashed = true` and the panic text in `extra.error`, and the panic comes back as
/// [`Error::AgentPanicked`]. An agent error is handled the same way as [`Error::AgentFailed`].
/// Secrets in what the agent and its model said (API keys, tokens, passwords; see
/// `atif-secrets`) become `<redacted:KIND>` markers, unless the options keep them.
/// Nothing is written to disk. Dropping the returned future before it completes aborts the
/// agent's task.
///
/// Must be awaited inside a tokio runtime.
///
/// # Example
///
/// ```
/// use std::sync::Arc;
///
/// use atif_replay::{CaptureOptions, Error, LlmClient, LlmRequest, LlmResponse, Message, FakeClient, capture};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
/// let model: Arc<dyn LlmClient> =
///     Arc::new(FakeClient::from_responses(Some("m-1"), vec![LlmResponse::from_text("4")]));
/// let options = CaptureOptions::new("adder", "1.0.0");
/// let captured = runtime.block_on(capture(model, &options, |handle| async move {
///     handle.user_message("2 + 2?");
///     let reply = handle.client().complete(LlmRequest::new(vec![Message::user("2 + 2?")])).await?;
///     Ok::<_, Error>(reply.text())
/// }));
/// assert_eq!(captured.trajectory["steps"][1]["source"], "agent");
/// assert_eq!(captured.trajectory["steps"][1]["model_name"], "m-1");
/// assert_eq!(captured.result?, "4");
/// # Ok(())
/// # }
/// ```
pub async fn capture<F, Fut, T, E>(
    client: Arc<dyn LlmClient>,
    options: &CaptureOptions,
    agent: F,
) -> Captured<T>
where
    F: FnOnce(CaptureHandle) -> Fut,
    Fut: Future<Output = std::result::Result<T, E>> + Send + 'static,
    T: Send + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    let model =
        options.model_name().map(str::to_owned).or_else(|| client.model().map(str::to_owned));
    let mut draft = draft::Trajectory::new(options.agent_name());
    draft.agent_version = Some(options.agent_version().to_owned());
    draft.model_name.clone_from(&model);
    draft.session_id = Some(new_id("session"));
    draft.trajectory_id = Some(new_id(options.agent_name()));
    let recorder = Arc::new(Recorder { nodes: Mutex::new(vec![Node::new(draft, None)]) });
    let handle = CaptureHandle {
        recorder: Arc::clone(&recorder),
        node: 0,
        inner: Arc::clone(&client),
        model,
    };
    // Dropping the capture (a timeout around a hanging agent, say) stops the agent too,
    // rather than leaving it running detached.
    let mut task = AbortOnDrop(tokio::spawn(agent(handle)));
    let joined = (&mut task.0).await;
    let result = match joined {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => {
            let source: Box<dyn std::error::Error + Send + Sync> = err.into();
            Err(Error::AgentFailed { message: source.to_string(), source })
        }
        Err(join_error) => {
            let message = if join_error.is_panic() {
                let payload = join_error.into_panic();
                match payload.downcast::<String>() {
                    Ok(text) => *text,
                    Err(payload) => match payload.downcast::<&'static str>() {
                        Ok(text) => (*text).to_owned(),
                        Err(_) => "the panic payload is not a string".to_owned(),
                    },
                }
            } else {
                "the agent task was cancelled".to_owned()
            };
            Err(Error::AgentPanicked { message })
        }
    };
    if let Err(err) = &result {
        client.run_failed(err);
    }
    // The whole chain: an agent's failure keeps its cause in `source()`, not in its message.
    let crash = result.as_ref().err().map(|err| error_chain(err));
    let mut trajectory = recorder.build(crash.as_deref());
    let secrets = match options.secret_scanner() {
        Some(scanner) => scanner.redact_value(&mut trajectory),
        None => Redactions::new(),
    };
    Captured { trajectory, result, secrets }
}

/// Aborts the agent's task when dropped; a finished task ignores it.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The agent's side of a capture: a model client that records, and ways to report tool results
/// and start subagents. Cheap to clone; clones record into the same trajectory.
#[derive(Clone)]
pub struct CaptureHandle {
    recorder: Arc<Recorder>,
    node: usize,
    inner: Arc<dyn LlmClient>,
    model: Option<String>,
}

impl fmt::Debug for CaptureHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureHandle")
            .field("node", &self.node)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl CaptureHandle {
    /// A model client whose every call becomes an agent step of this handle's trajectory,
    /// preceded by the system prompt and user messages the request added (see [`capture`]).
    pub fn client(&self) -> Arc<dyn LlmClient> {
        Arc::new(CapturingClient { handle: self.clone() })
    }

    /// Adds a user step (the task, a follow-up instruction).
    pub fn user_message(&self, text: impl Into<String>) {
        self.push_step(timed(Step::text(StepSource::User, text)));
    }

    /// Adds a system step (the system prompt, an injected notice).
    pub fn system_message(&self, text: impl Into<String>) {
        self.push_step(timed(Step::text(StepSource::System, text)));
    }

    /// Reports the result of tool call `call_id`: it becomes an observation result of the step
    /// that made the call, with `source_call_id` set.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownToolCall`] when no step of this trajectory made that call.
    pub fn tool_result(&self, call_id: &str, content: impl Into<String>) -> Result<()> {
        let content = content.into();
        self.with_result(call_id, |result| result.content = Some(vec![Part::Text(content)]))
    }

    /// Starts a subagent called `name`: returns its handle, embeds its trajectory in this one's
    /// `subagent_trajectories`, and adds a `subagent_trajectory_ref` to the observation of the
    /// step that made tool call `call_id` (or, without a call id, of a system step saying that
    /// subagents were started).
    ///
    /// # Errors
    ///
    /// [`Error::UnknownToolCall`] when `call_id` names no call of this trajectory.
    pub fn subagent(&self, name: &str, call_id: Option<&str>) -> Result<CaptureHandle> {
        let trajectory_id = new_id(name);
        // The ref is attached first, so an unknown call id leaves no orphan subagent behind.
        match call_id {
            Some(call_id) => {
                let trajectory_id = trajectory_id.clone();
                self.with_result(call_id, |result| result.subagent_refs.push(trajectory_id))?
            }
            None => {
                let mut nodes = lock(&self.recorder.nodes);
                let steps = &mut nodes[self.node].draft.steps;
                // Only this step is a system step with results.
                let delegating =
                    |step: &Step| step.source == StepSource::System && !step.results.is_empty();
                if !steps.last().is_some_and(delegating) {
                    steps.push(timed(Step::text(StepSource::System, "started subagents")));
                }
                if let Some(step) = steps.last_mut() {
                    let subagent_refs = vec![trajectory_id.clone()];
                    step.results.push(ObsResult { subagent_refs, ..ObsResult::default() });
                }
            }
        }
        let child = {
            let mut nodes = lock(&self.recorder.nodes);
            let parent = &nodes[self.node].draft;
            let mut draft = draft::Trajectory::new(name);
            draft.agent_version.clone_from(&parent.agent_version);
            draft.model_name.clone_from(&self.model);
            draft.session_id.clone_from(&parent.session_id);
            draft.trajectory_id = Some(trajectory_id);
            nodes.push(Node::new(draft, Some(self.node)));
            nodes.len() - 1
        };
        Ok(CaptureHandle {
            recorder: Arc::clone(&self.recorder),
            node: child,
            inner: Arc::clone(&self.inner),
            model: self.model.clone(),
        })
    }

    fn push_step(&self, step: Step) {
        let mut nodes = lock(&self.recorder.nodes);
        let node = &mut nodes[self.node];
        if step.source == StepSource::System {
            node.last_system = step.only_text().map(str::to_owned);
        }
        node.draft.steps.push(step);
    }

    fn with_result(&self, call_id: &str, update: impl FnOnce(&mut ObsResult)) -> Result<()> {
        let mut nodes = lock(&self.recorder.nodes);
        let draft = &mut nodes[self.node].draft;
        let found = draft.steps.iter_mut().rev().find_map(|step| step.result_for(call_id));
        let Some(result) = found else {
            return Err(Error::UnknownToolCall {
                call_id: call_id.to_owned(),
                trajectory: draft.agent_name.clone(),
            });
        };
        update(result);
        Ok(())
    }

    fn record_call(&self, request: &LlmRequest, response: &LlmResponse) {
        let mut nodes = lock(&self.recorder.nodes);
        let node = &mut nodes[self.node];
        node.add_request(request);
        steps::add_tools(&mut node.tools, &request.tools);
        let mut step = timed(steps::response_step(response));
        // A client that does not know its model (one adapter serving several) leaves the
        // choice to each request; a replay of it reports no model either, so both runs take
        // the request's and agree.
        step.model_name = self.model.clone().or_else(|| request.model.clone());
        if !request.params.is_empty() {
            let params: Map<String, Value> =
                request.params.iter().map(|(key, value)| (key.clone(), value.clone())).collect();
            let mut extra = Map::new();
            extra.insert("request_params".to_owned(), Value::Object(params));
            step.extra = extra;
        }
        node.draft.steps.push(step);
    }
}

struct CapturingClient {
    handle: CaptureHandle,
}

#[async_trait]
impl LlmClient for CapturingClient {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError> {
        let response = self.handle.inner.complete(request.clone()).await?;
        self.handle.record_call(&request, &response);
        Ok(response)
    }

    fn model(&self) -> Option<&str> {
        self.handle.model.as_deref()
    }

    async fn complete_stream(&self, request: LlmRequest) -> Result<ChunkStream, LlmError> {
        let mut inner = self.handle.inner.complete_stream(request.clone()).await?;
        let (sender, stream) = ChunkStream::channel(16);
        let handle = self.handle.clone();
        // The step is recorded when the stream ends, before the agent sees the end.
        tokio::spawn(async move {
            let mut chunks: Vec<Chunk> = Vec::new();
            while let Some(item) = inner.next().await {
                let failed = item.is_err();
                if let Ok(chunk) = &item {
                    chunks.push(chunk.clone());
                }
                if sender.send(item).await.is_err() || failed {
                    return;
                }
            }
            handle.record_call(&request, &LlmResponse::from_chunks(&chunks));
        });
        Ok(stream)
    }
}

#[derive(Debug)]
struct Recorder {
    nodes: Mutex<Vec<Node>>,
}

/// One trajectory of the capture (the agent's or a subagent's) and where it is embedded.
#[derive(Debug)]
struct Node {
    draft: draft::Trajectory,
    /// The tools its requests offered, by name.
    tools: Vec<ToolDefinition>,
    parent: Option<usize>,
    /// The system prompt last recorded, so each request's does not repeat it.
    last_system: Option<String>,
}

impl Node {
    fn new(draft: draft::Trajectory, parent: Option<usize>) -> Node {
        Node { draft, tools: Vec::new(), parent, last_system: None }
    }

    /// Records what a request added to the conversation since the model's last reply (the
    /// whole conversation, for the first call): its system prompt and user messages become
    /// steps, unless the agent reported the same text since its last model call (those
    /// steps then take the request's order, after what the agent reported and did not send),
    /// and its tool results fill calls the agent left without one.
    fn add_request(&mut self, request: &LlmRequest) {
        let steps = &mut self.draft.steps;
        let last_agent = steps.iter().rposition(|step| step.source == StepSource::Agent);
        let start = match last_agent {
            None => 0,
            Some(_) => request
                .messages
                .iter()
                .rposition(|message| message.role == Role::Assistant)
                .map_or(0, |idx| idx + 1),
        };
        let mut reported: Vec<Option<Step>> =
            steps.drain(last_agent.map_or(0, |idx| idx + 1)..).map(Some).collect();
        let mut added = Vec::new();
        for message in &request.messages[start..] {
            let source = match message.role {
                Role::System => StepSource::System,
                Role::User => StepSource::User,
                Role::Tool => {
                    let id = message.tool_call_id.as_deref().unwrap_or_default();
                    let result = steps.iter_mut().rev().find_map(|step| step.result_for(id));
                    if let Some(result) = result.filter(|result| result.content.is_none()) {
                        result.content = Some(vec![Part::Text(message.content.clone())]);
                    }
                    continue;
                }
                Role::Assistant => continue,
            };
            let same = |step: &Option<Step>| {
                step.as_ref().is_some_and(|step| {
                    step.source == source && step.only_text() == Some(message.content.as_str())
                })
            };
            if let Some(step) = reported.iter_mut().find(|step| same(step)) {
                added.extend(step.take());
                continue;
            }
            if source == StepSource::System && self.last_system.as_deref() == Some(&message.content)
            {
                continue;
            }
            if source == StepSource::System {
                self.last_system = Some(message.content.clone());
            }
            added.push(timed(Step::text(source, message.content.clone())));
        }
        // What the agent reported without sending it stays first, as it came first.
        steps.extend(reported.into_iter().flatten());
        steps.extend(added);
    }
}

impl Recorder {
    fn build(&self, crash: Option<&str>) -> Value {
        let mut nodes = lock(&self.nodes);
        // Most validators (Harbor, and ours by default) require at least one step. A
        // trajectory that recorded none gets one system step saying why, rather than an
        // empty array that fails validation.
        for (idx, node) in nodes.iter_mut().enumerate() {
            if node.draft.steps.is_empty() {
                let message = match crash {
                    Some(error) if idx == 0 => {
                        format!("the agent crashed before its first step: {error}")
                    }
                    _ => "no steps were recorded".to_owned(),
                };
                node.draft.steps.push(timed(Step::text(StepSource::System, message)));
            }
        }
        let mut crash_extra = Map::new();
        if let Some(error) = crash {
            crash_extra.insert("crashed".to_owned(), Value::Bool(true));
            crash_extra.insert("error".to_owned(), Value::String(error.to_owned()));
        }
        match tree(&nodes, 0, &crash_extra) {
            Ok(trajectory) => trajectory.to_value(),
            // The drafts are made so the validator accepts them; should a schema crate that
            // moved on refuse one, the caller still gets a trajectory saying why.
            Err(err) => {
                let message = format!("the trajectory could not be built: {}", error_chain(&err));
                let mut draft = nodes[0].draft.clone();
                draft.steps = vec![timed(Step::text(StepSource::System, message))];
                draft.extra = crash_extra;
                steps::finish(draft, &nodes[0].tools)
                    .map_or(Value::Null, |trajectory| trajectory.to_value())
            }
        }
    }
}

/// The trajectory of node `idx` with its subagents embedded; `extra` replaces its own when
/// not empty.
fn tree(
    nodes: &[Node],
    idx: usize,
    extra: &Map<String, Value>,
) -> atif_wire::Result<atif_schema::Trajectory> {
    let mut draft = nodes[idx].draft.clone();
    if !extra.is_empty() {
        draft.extra.clone_from(extra);
    }
    for child in (0..nodes.len()).filter(|child| nodes[*child].parent == Some(idx)) {
        draft.subagents.push(tree(nodes, child, &Map::new())?);
    }
    steps::finish(draft, &nodes[idx].tools)
}

/// A step stamped with the current time.
fn timed(mut step: Step) -> Step {
    step.timestamp = Some(now_rfc3339());
    step
}

/// A fresh id: `<prefix>-<16 hex digits>`, random per process and unique within it.
fn new_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    format!("{prefix}-{:016x}", hasher.finish())
}

/// The current time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn now_rfc3339() -> String {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    format_utc(since_epoch.as_secs(), since_epoch.subsec_millis())
}

fn format_utc(secs: u64, millis: u32) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Proleptic Gregorian date of the day `days` after 1970-01-01 (Howard Hinnant's algorithm,
/// restricted to dates after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(format_utc(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_utc(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(format_utc(1_798_761_599, 999), "2026-12-31T23:59:59.999Z");
    }
}
