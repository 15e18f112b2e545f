//! One trace walked as a tree into a trajectory.
//!
//! The outermost agent span is the trajectory. The tree is walked depth first, children by
//! start time (ties, common with JavaScript's millisecond clocks, in file order), and:
//! - each model-call span is an agent step; what its input adds to what the previous call saw
//!   (every call repeats the conversation) gives the user steps before it, and the first
//!   system instructions a system step;
//! - each tool span is the observation of the call it answers, joined by call id, then by
//!   tool name and arguments, then by name in order (a span whose id differs from the
//!   model's is noted in `extra.span_call_id`); with content off, the tool span itself gives
//!   the call;
//! - an agent span under a tool span is a subagent, embedded and linked from that call; other
//!   agent spans (handoffs) stay in the trajectory, and each step names its agent;
//! - a model span wrapping another model span (ADK's legacy schema) is not a call of its own,
//!   so its tokens are not counted twice.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value, json};

use crate::context::Context;
use crate::draft::{Metrics, ObsResult, Part, Step, StepSource, ToolCall, Trajectory};
use crate::formats::common::millis_to_iso;
use crate::formats::otel::dialect::{self, Kind, MsgPart};
use crate::formats::otel::otlp::Span;
use crate::formats::otel::pending::{Calls, Pending};
use crate::formats::otel::{AGENT_NAME, MAX_DEPTH};

/// A trace's spans as a tree.
struct Tree {
    spans: Vec<Span>,
    kinds: Vec<Kind>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
}

/// The trajectory of one trace.
pub(crate) fn trajectory(spans: Vec<Span>, ctx: &mut Context) -> Trajectory {
    let tree = tree(spans, ctx);
    let tops = outermost_agents(&tree);
    let (starts, name) = match tops.as_slice() {
        [top] => (vec![*top], dialect::agent_name(&tree.spans[*top])),
        _ => (
            tree.roots.clone(),
            tops.first().map_or(AGENT_NAME.to_owned(), |t| dialect::agent_name(&tree.spans[*t])),
        ),
    };
    let mut builder = Builder::new(&tree, &name, String::new());
    for start in starts {
        builder.walk(start, 0, ctx);
    }
    let mut trajectory = builder.finish();
    if let Some(span) = tree.spans.first() {
        let scope = format!("{} {}", span.scope, span.scope_version);
        trajectory.agent_extra.insert("instrumentation".into(), scope.trim().into());
    }
    trajectory
}

fn tree(spans: Vec<Span>, ctx: &mut Context) -> Tree {
    let mut seen = HashMap::new();
    let mut unique = Vec::with_capacity(spans.len());
    for span in spans {
        if seen.contains_key(&span.span_id) {
            ctx.skip("span whose id another span of its trace has", 1);
            continue;
        }
        seen.insert(span.span_id.clone(), unique.len());
        unique.push(span);
    }
    let mut children = vec![Vec::new(); unique.len()];
    let mut roots = Vec::new();
    for (idx, span) in unique.iter().enumerate() {
        match span.parent_id.as_ref().and_then(|p| seen.get(p)) {
            Some(&parent) if parent != idx => children[parent].push(idx),
            _ => roots.push(idx),
        }
    }
    let by_start = |list: &mut Vec<usize>| list.sort_by_key(|&idx| (unique[idx].start, idx));
    children.iter_mut().for_each(by_start);
    by_start(&mut roots);
    let kinds = unique.iter().map(dialect::kind).collect();
    Tree { spans: unique, kinds, children, roots }
}

/// Agent spans with no agent span above them, in walk order.
fn outermost_agents(tree: &Tree) -> Vec<usize> {
    let mut found = Vec::new();
    let mut stack: Vec<(usize, usize)> = tree.roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((node, depth)) = stack.pop() {
        if tree.kinds[node] == Kind::Agent {
            found.push(node);
            continue;
        }
        if depth < MAX_DEPTH {
            stack.extend(tree.children[node].iter().rev().map(|&c| (c, depth + 1)));
        }
    }
    found
}

/// What the spans recorded of the content, for `extra.capture`.
#[derive(Default)]
struct Capture {
    model_spans: usize,
    with_input: usize,
    with_output: usize,
    tool_spans: usize,
    with_arguments: usize,
    with_result: usize,
    lost_instructions: bool,
}

struct Builder<'t> {
    tree: &'t Tree,
    draft: Trajectory,
    id: String,
    seen: usize,
    system_done: bool,
    calls: Calls,
    agent: Option<String>,
    agents: BTreeSet<String>,
    step_agents: Vec<(usize, String)>,
    under_tool: Option<usize>,
    n_invented: usize,
    n_subagents: usize,
    capture: Capture,
}

impl<'t> Builder<'t> {
    fn new(tree: &'t Tree, name: &str, id: String) -> Builder<'t> {
        Builder {
            tree,
            draft: Trajectory::new(name),
            id,
            seen: 0,
            system_done: false,
            calls: Calls::default(),
            agent: None,
            agents: BTreeSet::new(),
            step_agents: Vec::new(),
            under_tool: None,
            n_invented: 0,
            n_subagents: 0,
            capture: Capture::default(),
        }
    }

    fn walk(&mut self, node: usize, depth: usize, ctx: &mut Context) {
        if depth > MAX_DEPTH {
            ctx.skip("span nested deeper than 256 levels", 1);
            return;
        }
        let span = &self.tree.spans[node];
        match self.tree.kinds[node] {
            Kind::Agent if self.under_tool.is_some() => {
                let call = self.under_tool.unwrap_or_default();
                self.subagent(node, depth, call, ctx);
                return;
            }
            Kind::Agent => {
                let name = dialect::agent_name(span);
                self.agents.insert(name.clone());
                let outer = self.agent.replace(name);
                self.walk_children(node, depth, ctx);
                self.agent = outer;
                return;
            }
            Kind::Model if self.wraps_model(node) => {
                ctx.ignore("model span wrapping another model span");
            }
            Kind::Model => self.model(node),
            Kind::Tool => {
                let call = self.tool(node);
                let outer = self.under_tool.replace(call);
                self.walk_children(node, depth, ctx);
                self.under_tool = outer;
                return;
            }
            Kind::Other => ctx.ignore(&format!("span {}", span.name)),
        }
        self.walk_children(node, depth, ctx);
    }

    fn walk_children(&mut self, node: usize, depth: usize, ctx: &mut Context) {
        for &child in &self.tree.children[node] {
            self.walk(child, depth + 1, ctx);
        }
    }

    /// Whether a model span has another model span below it.
    fn wraps_model(&self, node: usize) -> bool {
        let mut stack = self.tree.children[node].clone();
        let mut visited = 0;
        while let Some(next) = stack.pop() {
            visited += 1;
            if self.tree.kinds[next] == Kind::Model {
                return true;
            }
            if visited < 10_000 {
                stack.extend(&self.tree.children[next]);
            }
        }
        false
    }

    fn subagent(&mut self, node: usize, depth: usize, call: usize, ctx: &mut Context) {
        let name = dialect::agent_name(&self.tree.spans[node]);
        self.n_subagents += 1;
        let id = match self.id.as_str() {
            "" => format!("{name}-{}", self.n_subagents),
            parent => format!("{parent}/{name}-{}", self.n_subagents),
        };
        let mut sub = Builder::new(self.tree, &name, id.clone());
        sub.walk(node, depth, ctx);
        let mut trajectory = sub.finish();
        trajectory.trajectory_id = Some(id.clone());
        self.draft.subagents.push(trajectory.into_atif());
        if let Some(pending) = self.calls.get_mut(call) {
            pending.subagents.push(id);
        }
    }

    fn model(&mut self, node: usize) {
        let span = &self.tree.spans[node];
        let call = dialect::model_call(span);
        self.capture.model_spans += 1;
        self.capture.with_input += usize::from(call.input.is_some());
        self.capture.with_output += usize::from(call.output.is_some());
        if span.scope.contains("openai_agents") || span.scope.contains("openai-agents") {
            self.capture.lost_instructions = true;
        }
        if self.draft.tool_definitions.is_none() {
            self.draft.tool_definitions = call
                .tools
                .as_ref()
                .map(|tools| tools.iter().filter_map(|t| t.as_object().cloned()).collect());
        }
        if self.draft.model_name.is_none() {
            self.draft.model_name.clone_from(&call.model);
        }
        let timestamp = millis_to_iso(Some(&json!(span.start / 1_000_000)));
        self.context_steps(&call, timestamp.as_deref());
        let mut step = Step::model_call();
        step.model_name.clone_from(&call.model);
        step.set_timestamp(timestamp.as_deref());
        step.metrics = metrics(&call);
        // The output is read once, here: its parts move into the step.
        let mut new_calls = Vec::new();
        for part in call.output.into_iter().flatten().flat_map(|m| m.parts) {
            match part {
                MsgPart::Text(text) => step.parts.push(Part::Text(text)),
                MsgPart::Reasoning(text) => step.reasoning.push(text),
                MsgPart::Call { id, name, arguments } => new_calls.push((id, name, arguments)),
                MsgPart::Response { .. } => {}
            }
        }
        let step_idx = self.draft.push(step);
        if let Some(agent) = &self.agent {
            self.step_agents.push((step_idx, agent.clone()));
        }
        for (id, name, arguments) in new_calls {
            self.add_call(step_idx, id, name, arguments);
        }
    }

    /// The system step (once) and the user steps of what this call's input adds to what the
    /// previous call saw; tool responses in it answer calls no tool span answered.
    fn context_steps(&mut self, call: &dialect::ModelCall, timestamp: Option<&str>) {
        let input = call.input.as_deref().unwrap_or_default();
        if !self.system_done {
            let from_messages = || {
                let texts: Vec<String> = input
                    .iter()
                    .filter(|m| matches!(m.role.as_str(), "system" | "developer"))
                    .flat_map(|m| &m.parts)
                    .filter_map(|p| match p {
                        MsgPart::Text(text) => Some(text.clone()),
                        _ => None,
                    })
                    .collect();
                (!texts.is_empty()).then(|| texts.join("\n\n"))
            };
            if let Some(system) = call.system.clone().or_else(from_messages) {
                let mut step = Step::new(StepSource::System);
                step.parts.push(Part::Text(system));
                step.set_timestamp(timestamp);
                self.draft.push(step);
                self.system_done = true;
            }
        }
        if call.input.is_none() {
            return;
        }
        let new = match input.get(self.seen..) {
            Some(new) => new,
            None => {
                let last =
                    input.iter().rposition(|m| matches!(m.role.as_str(), "assistant" | "model"));
                &input[last.map_or(0, |idx| idx + 1)..]
            }
        };
        for message in new {
            if matches!(message.role.as_str(), "system" | "developer" | "assistant" | "model") {
                continue;
            }
            let mut texts = Vec::new();
            for part in &message.parts {
                match part {
                    MsgPart::Text(text) => texts.push(text.clone()),
                    MsgPart::Response { id, result } => {
                        self.answer_from_message(id.as_deref(), result)
                    }
                    MsgPart::Reasoning(_) | MsgPart::Call { .. } => {}
                }
            }
            if !texts.is_empty() {
                let mut step = Step::new(StepSource::User);
                step.parts.extend(texts.into_iter().map(Part::Text));
                step.set_timestamp(timestamp);
                self.draft.push(step);
            }
        }
        self.seen = input.len() + call.output.as_ref().map_or(0, Vec::len);
    }

    fn add_call(&mut self, step_idx: usize, id: Option<String>, name: String, arguments: Value) {
        let mut extra = Map::new();
        let id = match id {
            Some(id) => id,
            None => {
                self.n_invented += 1;
                extra.insert("invented_id".into(), Value::Bool(true));
                format!("otel_call_{}", self.n_invented)
            }
        };
        let (object, call_extra) = arguments_object(&arguments);
        extra.extend(call_extra);
        self.draft.add_call(
            step_idx,
            ToolCall { id: id.clone(), name: name.clone(), arguments: object, extra },
        );
        self.calls.push(Pending {
            id,
            name,
            arguments,
            content: None,
            extra: Map::new(),
            subagents: Vec::new(),
            by_span: false,
        });
    }

    fn answer_from_message(&mut self, id: Option<&str>, result: &Value) {
        let found = match id {
            Some(id) => self.calls.contentless_by_id(id),
            None => self.calls.first_unanswered(),
        };
        if let Some(call) = found.and_then(|idx| self.calls.get_mut(idx)).filter(|c| !c.by_span) {
            call.content = Some(result_text(result));
        }
    }

    /// Joins a tool span to its call; returns the call's index.
    fn tool(&mut self, node: usize) -> usize {
        let span = &self.tree.spans[node];
        let run = dialect::tool_run(span);
        self.capture.tool_spans += 1;
        self.capture.with_arguments += usize::from(run.arguments.is_some());
        self.capture.with_result += usize::from(run.result.is_some() || run.error.is_some());
        let calls = &mut self.calls;
        let by_id = run.call_id.as_deref().and_then(|id| calls.open_by_id(id));
        let found = match (by_id, run.name.as_deref()) {
            (Some(idx), _) => Some(idx),
            (None, Some(name)) => match run.arguments.as_ref() {
                Some(arguments) => calls
                    .open_by_name(name, Some(arguments))
                    .or_else(|| calls.open_by_name(name, None)),
                None => calls.open_by_name(name, None),
            },
            (None, None) => calls.first_open(),
        };
        let idx = match found {
            Some(idx) => idx,
            None => self.call_from_span(&run, &span.name),
        };
        let Some(call) = self.calls.get_mut(idx) else { return idx };
        call.by_span = true;
        if let Some(span_id) = run.call_id.filter(|id| *id != call.id) {
            call.extra.insert("span_call_id".into(), span_id.into());
        }
        if let Some(result) = &run.result {
            call.content = Some(result_text(result));
        }
        if let Some((kind, message)) = run.error {
            if run.result.is_none() {
                call.content = Some(message.clone());
            }
            call.extra.insert("error".into(), json!({ "kind": kind, "message": message }));
        }
        idx
    }

    /// A call made from a tool span the model's output does not show (content off): on the
    /// last agent step, or a step of its own when there is none.
    fn call_from_span(&mut self, run: &dialect::ToolRun, span_name: &str) -> usize {
        let step_idx = match self.draft.steps.iter().rposition(|s| s.source == StepSource::Agent) {
            Some(idx) => idx,
            None => {
                let mut step = Step::new(StepSource::Agent);
                step.llm_call_count = Some(0);
                self.draft.push(step)
            }
        };
        let name = run.name.clone().unwrap_or_else(|| span_name.to_owned());
        let arguments = run.arguments.clone().unwrap_or(Value::Object(Map::new()));
        self.add_call(step_idx, run.call_id.clone(), name, arguments);
        self.calls.len() - 1
    }

    fn finish(mut self) -> Trajectory {
        for call in std::mem::take(&mut self.calls).into_vec() {
            if call.content.is_none() && call.subagents.is_empty() && call.extra.is_empty() {
                continue;
            }
            let result = ObsResult {
                source_call_id: Some(call.id),
                content: call.content.map(|text| vec![Part::Text(text)]),
                subagent_refs: call.subagents,
                subagent_paths: Vec::new(),
                extra: call.extra,
            };
            if let Some(orphan) = self.draft.add_result(result) {
                self.draft.push_orphan_result(orphan, "call_id", None::<&str>);
            }
        }
        if self.agents.len() > 1 {
            for (step_idx, agent) in &self.step_agents {
                self.draft.steps[*step_idx].extra.insert("agent".into(), agent.clone().into());
            }
        }
        self.draft.extra.insert("capture".into(), capture(&self.capture, self.system_done));
        self.draft.final_metrics = Some(self.draft.summed_metrics());
        self.draft
    }
}

fn metrics(call: &dialect::ModelCall) -> Option<Metrics> {
    let mut extra = Map::new();
    if let Some(reasoning) = call.reasoning_tokens {
        extra.insert("reasoning_tokens".into(), reasoning.into());
    }
    let any = call.prompt_tokens.is_some() || call.completion_tokens.is_some();
    any.then_some(Metrics {
        prompt: call.prompt_tokens,
        completion: call.completion_tokens,
        cached: call.cached_tokens,
        extra,
    })
}

/// Arguments as ATIF's object: an object as it is; anything else under `input`, noted.
fn arguments_object(arguments: &Value) -> (Map<String, Value>, Map<String, Value>) {
    match arguments {
        Value::Object(object) => (object.clone(), Map::new()),
        Value::Null => (Map::new(), Map::new()),
        other => {
            let mut object = Map::new();
            object.insert("input".into(), other.clone());
            let mut extra = Map::new();
            extra.insert("arguments_not_an_object".into(), Value::Bool(true));
            (object, extra)
        }
    }
}

fn result_text(result: &Value) -> String {
    match result {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `extra.capture`: how much content the spans held (`full`, `partial`, `none`) and what is
/// missing.
fn capture(capture: &Capture, system_found: bool) -> Value {
    let mut missing = Vec::new();
    if capture.with_input < capture.model_spans {
        missing.push("model input messages");
    }
    if capture.with_output < capture.model_spans {
        missing.push("model output messages");
    }
    if capture.with_arguments < capture.tool_spans {
        missing.push("tool arguments");
    }
    if capture.with_result < capture.tool_spans {
        missing.push("tool results");
    }
    if capture.lost_instructions && !system_found {
        missing.push("system instructions");
    }
    let none = capture.with_input == 0 && capture.with_output == 0;
    let content = match () {
        () if none => "none",
        () if missing.is_empty() => "full",
        () => "partial",
    };
    json!({ "content": content, "missing": missing })
}
