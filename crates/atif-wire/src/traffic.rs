//! Capture from traffic: the HTTP exchanges between an agent and its model provider, turned
//! into an ATIF trajectory with no help from the agent.

use atif_schema::StepSource;
use atif_schema::support::draft::{self, ObsResult, Step};
use serde_json::{Map, Value};

use crate::protocol::{self, Protocol};
use crate::steps;
use crate::{
    CaptureOptions, Error, HttpExchange, LlmRequest, LlmResponse, Result, Role, ToolDefinition,
};

/// The parameters of a request that say how the model was asked to answer, as they go into an
/// agent step's `extra.request_params`. Other fields (metadata, user and cache ids) are left
/// out: they change from run to run and say nothing about the answer.
pub const REQUEST_PARAMS: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "max_completion_tokens",
    "max_output_tokens",
    "stop",
    "stop_sequences",
    "seed",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
    "reasoning_effort",
    "thinking",
    "response_format",
    "text",
    "presence_penalty",
    "frequency_penalty",
    "n",
    "generationConfig",
    "toolConfig",
];

/// Turns the HTTP exchanges of an agent's run (a script's `exchanges` in `atif-replay`,
/// or what a proxy saw) into an ATIF-v1.8 trajectory (built with atif-schema's builder, so it
/// validates in both profiles).
///
/// Exchanges are read in order; those that are no model call (`/v1/models`,
/// `count_tokens`), that failed (a status other than 2xx, a provider error) or whose reply is
/// neither JSON nor an event stream are skipped. A stream cut short is read as far as it went.
/// Requests are grouped into conversations by their system prompt and first user message:
///
/// - the system prompt becomes a system step (again whenever it changes), and each user
///   message a user step, as the agent sent them;
/// - each reply becomes an agent step with the model name (the reply's, else the request's),
///   text, reasoning, tool calls, token usage as metrics (`llm_call_count: 1`) and the
///   request's parameters ([`REQUEST_PARAMS`]) in `extra.request_params`; a stream cut short
///   says why in `extra.stream_cut`;
/// - tool results found in the next request (tool messages, `tool_result` blocks,
///   `function_call_output` items, Gemini `functionResponse` parts) become the observation of
///   the step that made the call, joined by call id.
///
/// A conversation is launched by another when one of that one's tool calls holds its first
/// user message in its arguments (a `Task` call's prompt, say). Of the conversations no other
/// launched, the one with the most model calls (the first, on a tie) is the main agent; every
/// other becomes an embedded subagent trajectory of the conversation that launched it (its
/// ref goes on that call's result), or, when none did, of the main agent, referred to from a
/// closing system step. Two conversations with the same system prompt and the same first user
/// message cannot be told apart and are read as one.
///
/// `options` names the agent; [`CaptureOptions::model_name`], when set, overrides the model
/// names. Steps carry no timestamps, since traffic records none.
///
/// # Errors
///
/// [`Error::Exchange`] naming the exchange whose request or reply does not read as its
/// protocol; [`Error::Traffic`] when no exchange is a model call.
pub fn trajectory_from_traffic(
    exchanges: &[HttpExchange],
    options: &CaptureOptions,
) -> Result<atif_schema::Trajectory> {
    let mut conversations: Vec<Conversation> = Vec::new();
    for (idx, exchange) in exchanges.iter().enumerate() {
        let Some(call) = read_exchange(exchange).map_err(|source| Error::Exchange {
            exchange: idx + 1,
            path: exchange.path.clone(),
            source: Box::new(source),
        })?
        else {
            continue;
        };
        let key = conversation_key(&call);
        let conversation = match conversations.iter().position(|known| known.key == key) {
            Some(found) => &mut conversations[found],
            None => {
                conversations.push(Conversation::new(key, idx));
                let last = conversations.len() - 1;
                &mut conversations[last]
            }
        };
        conversation.add(idx, &call, options);
    }
    if conversations.is_empty() {
        return Err(Error::Traffic {
            message: format!(
                "none of the {} exchanges is a successful model call, so there is no step to \
                 write",
                exchanges.len()
            ),
        });
    }
    let main = main_conversation(&conversations);
    let parents = link_subagents(&mut conversations, main);
    let mut records: Vec<Option<(draft::Trajectory, Vec<ToolDefinition>)>> = conversations
        .into_iter()
        .map(|conversation| Some((conversation.draft, conversation.tools)))
        .collect();
    assemble(&mut records, &parents, main, options.agent_name(), options)
}

/// A model call read from an exchange.
struct Call {
    request: LlmRequest,
    response: LlmResponse,
    cut: Option<String>,
}

/// Reads one exchange; `None` for one that is no successful model call.
fn read_exchange(exchange: &HttpExchange) -> Result<Option<Call>> {
    let Some(protocol) = Protocol::from_path(&exchange.path) else { return Ok(None) };
    if !(200..300).contains(&exchange.status) {
        return Ok(None);
    }
    let mut request = protocol::parse_request(protocol, &exchange.request)?;
    if request.model.is_none() {
        request.model = protocol::gemini_model_from_path(&exchange.path).map(str::to_owned);
    }
    let response = match (&exchange.events, &exchange.body) {
        (Some(events), _) => protocol::parse_stream(protocol, events),
        (None, Some(body)) => protocol::parse_response(protocol, body),
        (None, None) => return Ok(None),
    };
    let response = match response {
        Ok(response) => response,
        // The agent got an error and will retry or give up; either way, no step.
        Err(Error::Provider { .. }) => return Ok(None),
        Err(err) => return Err(err),
    };
    Ok(Some(Call { request, response, cut: exchange.cut.clone() }))
}

/// What tells conversations apart: the system prompt and the first user message.
fn conversation_key(call: &Call) -> (String, String) {
    (system_text(&call.request), first_user_text(&call.request).to_owned())
}

fn system_text(request: &LlmRequest) -> String {
    let texts: Vec<&str> = request
        .messages
        .iter()
        .filter(|message| message.role == Role::System)
        .map(|message| message.content.as_str())
        .collect();
    texts.join("\n")
}

fn first_user_text(request: &LlmRequest) -> &str {
    request
        .messages
        .iter()
        .find(|message| message.role == Role::User)
        .map_or("", |message| message.content.as_str())
}

struct Conversation {
    key: (String, String),
    /// The index of its first exchange.
    first: usize,
    calls: usize,
    system: Option<String>,
    draft: draft::Trajectory,
    /// The tools its requests offered, by name.
    tools: Vec<ToolDefinition>,
    /// The tool calls it got, as the index of the exchange and the arguments as JSON text.
    launches: Vec<(usize, String)>,
}

impl Conversation {
    fn new(key: (String, String), first: usize) -> Self {
        Conversation {
            key,
            first,
            calls: 0,
            system: None,
            draft: draft::Trajectory::new(""),
            tools: Vec::new(),
            launches: Vec::new(),
        }
    }

    /// Adds the call of exchange `exchange`.
    fn add(&mut self, exchange: usize, call: &Call, options: &CaptureOptions) {
        let request = &call.request;
        let system = system_text(request);
        if !system.is_empty() && self.system.as_deref() != Some(system.as_str()) {
            self.draft.steps.push(Step::text(StepSource::System, system.clone()));
            self.system = Some(system);
        }
        // What the agent added since the model's last reply: the tool results and new user
        // messages after the last assistant message (everything, in a first request).
        let start = match self.calls {
            0 => 0,
            _ => request
                .messages
                .iter()
                .rposition(|message| message.role == Role::Assistant)
                .map_or(0, |idx| idx + 1),
        };
        for message in &request.messages[start..] {
            match message.role {
                Role::User => {
                    self.draft.steps.push(Step::text(StepSource::User, message.content.clone()))
                }
                Role::Tool => {
                    let id = message.tool_call_id.as_deref().unwrap_or_default();
                    let result = self.draft.steps.iter_mut().rev().find_map(|step| {
                        (step.source == StepSource::Agent).then(|| step.result_for(id)).flatten()
                    });
                    // A result for a call this conversation never saw (a compacted history)
                    // has no step to belong to.
                    if let Some(result) = result {
                        result.content = Some(vec![draft::Part::Text(message.content.clone())]);
                    }
                }
                Role::System | Role::Assistant => {}
            }
        }
        steps::add_tools(&mut self.tools, &request.tools);
        let response = &call.response;
        let mut step = steps::response_step(response);
        step.model_name = options
            .model_name()
            .map(str::to_owned)
            .or_else(|| response.model.clone())
            .or_else(|| request.model.clone());
        for tool_call in &response.tool_calls {
            self.launches.push((exchange, tool_call.arguments.to_string()));
        }
        let mut extra = Map::new();
        let params: Map<String, Value> = request
            .params
            .iter()
            .filter(|(key, _)| REQUEST_PARAMS.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        if !params.is_empty() {
            extra.insert("request_params".to_owned(), Value::Object(params));
        }
        if let Some(cut) = &call.cut {
            extra.insert("stream_cut".to_owned(), Value::String(cut.clone()));
        }
        step.extra = extra;
        self.draft.steps.push(step);
        self.calls += 1;
    }

    /// Whether a tool call this conversation got before exchange `before` holds `task` in its
    /// arguments.
    fn launched(&self, task: &str, before: usize) -> bool {
        let needle = json_escaped(task);
        self.launches
            .iter()
            .any(|(exchange, arguments)| *exchange < before && arguments.contains(&needle))
    }
}

/// The main agent: of the conversations no other one launched, the one with the most model
/// calls, the first on a tie. A subagent that works longer than its parent is still the
/// subagent. The first conversation cannot have been launched, so there is always one.
fn main_conversation(conversations: &[Conversation]) -> usize {
    let launched = |child: usize| {
        let task = conversations[child].key.1.trim();
        !task.is_empty()
            && conversations[..child]
                .iter()
                .any(|parent| parent.launched(task, conversations[child].first))
    };
    (0..conversations.len())
        .filter(|idx| !launched(*idx))
        .max_by_key(|idx| (conversations[*idx].calls, std::cmp::Reverse(*idx)))
        .unwrap_or(0)
}

/// Finds each subagent's parent (by index) and puts the ref on the launching call's result;
/// a subagent nobody launched is the main agent's, referred to later from a system step.
fn link_subagents(conversations: &mut [Conversation], main: usize) -> Vec<Option<usize>> {
    let mut parents: Vec<Option<usize>> = vec![None; conversations.len()];
    for child in 0..conversations.len() {
        if child == main {
            continue;
        }
        let trajectory_id = subagent_name(child);
        conversations[child].draft.trajectory_id = Some(trajectory_id.clone());
        let task = conversations[child].key.1.trim().to_owned();
        // The main agent first, then the conversations that started before this one.
        let candidates = std::iter::once(main).chain((0..child).filter(|idx| *idx != main));
        let mut linked = None;
        'search: for parent in candidates {
            if task.is_empty() {
                break;
            }
            for step in &mut conversations[parent].draft.steps {
                let launches = |call: &&draft::ToolCall| {
                    Value::Object(call.arguments.clone()).to_string().contains(&json_escaped(&task))
                };
                let Some(call_id) =
                    step.tool_calls.iter().find(launches).map(|call| call.id.clone())
                else {
                    continue;
                };
                let taken = step.results.iter().any(|result| {
                    result.source_call_id.as_deref() == Some(call_id.as_str())
                        && !result.subagent_refs.is_empty()
                });
                if taken {
                    continue;
                }
                if let Some(result) = step.result_for(&call_id) {
                    result.subagent_refs.push(trajectory_id.clone());
                    linked = Some(parent);
                    break 'search;
                }
            }
        }
        parents[child] = Some(linked.unwrap_or(main));
        if linked.is_none() {
            let steps = &mut conversations[main].draft.steps;
            if steps.last().is_none_or(|step| step.only_text() != Some(UNLAUNCHED)) {
                steps.push(Step::text(StepSource::System, UNLAUNCHED));
            }
            if let Some(step) = steps.last_mut() {
                let result =
                    ObsResult { subagent_refs: vec![trajectory_id], ..ObsResult::default() };
                step.results.push(result);
            }
        }
    }
    parents
}

const UNLAUNCHED: &str = "conversations no tool call of this agent launched";

/// A task as it appears inside JSON-encoded arguments.
fn json_escaped(text: &str) -> String {
    let quoted = Value::String(text.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// The trajectory of conversation `idx`, by the agent `agent_name`, with its subagents
/// embedded, named by `options`.
fn assemble(
    records: &mut [Option<(draft::Trajectory, Vec<ToolDefinition>)>],
    parents: &[Option<usize>],
    idx: usize,
    agent_name: &str,
    options: &CaptureOptions,
) -> Result<atif_schema::Trajectory> {
    let (mut draft, tools) =
        records[idx].take().unwrap_or_else(|| (draft::Trajectory::new(""), Vec::new()));
    agent_name.clone_into(&mut draft.agent_name);
    draft.agent_version = Some(options.agent_version().to_owned());
    draft.model_name = options.model_name().map(str::to_owned);
    for child in 0..parents.len() {
        if parents[child] == Some(idx) && child != idx {
            let name = format!("{}/{}", options.agent_name(), subagent_name(child));
            draft.subagents.push(assemble(records, parents, child, &name, options)?);
        }
    }
    steps::finish(draft, &tools)
}

fn subagent_name(idx: usize) -> String {
    format!("subagent-{}", idx + 1)
}
