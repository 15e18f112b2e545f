//! Reference agents used by the workspace's end-to-end tests, and the fake models they are
//! recorded from.
//!
//! Two small real agents written on `atif-replay`'s [`LlmClient`](atif_replay::LlmClient) seam stand in for users'
//! agents: [`tool_loop_agent`] (a calculator loop that stops on `return_result` or after a
//! maximum number of iterations) and [`fan_out_agent`] (classifies items concurrently through
//! subagents spawned on tokio, completing in a genuinely random order). Both report what they do
//! through a [`CaptureHandle`], so `atif_replay::capture` turns each run into a trajectory.
//!
//! [`calculator_model`] and [`classifier_model`] stand in for a live model (deterministic, but
//! for the classifier's provider-style random call ids): the tests record scripts from them
//! exactly as a user would record from a real provider.
//!
//! [`e2e`] locates the pinned agent CLIs and Python SDKs of `cargo xtask e2e-setup`;
//! [`agents`] runs those CLIs against a local model server in a fresh working directory and
//! HOME.
#![forbid(unsafe_code)]

pub mod agents;
pub mod e2e;

/// The README's Rust example, compiled as a doctest so that it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use atif_replay::{
    CaptureHandle, Error, FakeClient, LlmRequest, LlmResponse, Message, Role, ToolCall,
    ToolDefinition, Usage,
};
use serde_json::{Value, json};

/// The system prompt of [`tool_loop_agent`].
pub const CALCULATOR_SYSTEM_PROMPT: &str = "You solve arithmetic tasks. Use the calculator tool \
    for every computation, then call return_result with the final value.";

/// The system prompt of each [`fan_out_agent`] subagent.
pub const CLASSIFIER_SYSTEM_PROMPT: &str =
    "Classify the item as one of: number, question, statement. Answer with the label only.";

/// How [`tool_loop_agent`] behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLoopOptions {
    /// The most model calls the loop makes before giving up.
    pub max_iterations: usize,
    /// After `return_result`, ask the model once more to confirm (a behaviour change the tests
    /// use to make the agent call the model more often than when its script was recorded).
    pub confirm_result: bool,
}

impl Default for ToolLoopOptions {
    fn default() -> Self {
        ToolLoopOptions { max_iterations: 8, confirm_result: false }
    }
}

/// What [`tool_loop_agent`] ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLoopOutcome {
    /// The value passed to `return_result` (or the model's text answer), `None` when the loop
    /// hit `max_iterations` first.
    pub answer: Option<String>,
    /// How many model calls were made.
    pub model_calls: usize,
}

/// The tools [`tool_loop_agent`] offers the model.
pub fn calculator_tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "calculator",
            "Evaluate an arithmetic expression with + - * / and parentheses.",
            json!({
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            }),
        ),
        ToolDefinition::new(
            "return_result",
            "Return the final answer and stop.",
            json!({
                "type": "object",
                "properties": {"value": {"type": "string"}},
                "required": ["value"],
            }),
        ),
    ]
}

/// A tool-using agent loop: asks the model, runs the calculator calls it makes, feeds the results
/// back, and stops when the model calls `return_result` (or answers in text) or after
/// `options.max_iterations` model calls.
///
/// # Errors
///
/// Any model error (an exhausted or drifted replay, for instance).
pub async fn tool_loop_agent(
    handle: CaptureHandle,
    task: String,
    options: ToolLoopOptions,
) -> Result<ToolLoopOutcome, Error> {
    let client = handle.client();
    handle.system_message(CALCULATOR_SYSTEM_PROMPT);
    handle.user_message(task.clone());
    let mut messages = vec![Message::system(CALCULATOR_SYSTEM_PROMPT), Message::user(task)];
    let mut model_calls = 0;
    while model_calls < options.max_iterations {
        let request = LlmRequest::new(messages.clone())
            .with_tools(calculator_tools())
            .with_param("temperature", json!(0));
        let response = client.complete(request).await?;
        model_calls += 1;
        messages.push(Message::assistant(&response));
        if response.tool_calls.is_empty() {
            return Ok(ToolLoopOutcome { answer: Some(response.text()), model_calls });
        }
        let mut answer = None;
        for call in &response.tool_calls {
            let result = match call.name.as_str() {
                "calculator" => {
                    let expression = string_argument(&call.arguments, "expression");
                    match evaluate(&expression) {
                        Ok(value) => format_number(value),
                        Err(reason) => format!("error: {reason}"),
                    }
                }
                "return_result" => {
                    answer = Some(string_argument(&call.arguments, "value"));
                    "accepted".to_owned()
                }
                other => format!("error: unknown tool `{other}`"),
            };
            handle.tool_result(&call.id, result.clone())?;
            messages.push(Message::tool_result(call.id.clone(), result));
        }
        if let Some(answer) = answer {
            if options.confirm_result {
                messages.push(Message::user("Are you sure? Confirm the result."));
                handle.user_message("Are you sure? Confirm the result.");
                client.complete(LlmRequest::new(messages.clone())).await?;
                model_calls += 1;
            }
            return Ok(ToolLoopOutcome { answer: Some(answer), model_calls });
        }
    }
    Ok(ToolLoopOutcome { answer: None, model_calls })
}

/// A fan-out agent: asks the model to plan one `classify` call per item, runs each as a
/// subagent on its own tokio task (each waits a random few milliseconds first, so they start and
/// finish in a random order), reports each label as the result of its call, and asks the model
/// for a summary. Returns `(item, label)` pairs in item order.
///
/// # Errors
///
/// Any model error, or a subagent task that panicked.
pub async fn fan_out_agent(
    handle: CaptureHandle,
    items: Vec<String>,
) -> Result<Vec<(String, String)>, Error> {
    let client = handle.client();
    let task = format!("Classify each item: {}", items.join(" | "));
    handle.user_message(task.clone());
    let tools = vec![ToolDefinition::new(
        "classify",
        "Classify one item in a subagent.",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
    )];
    let mut messages = vec![Message::user(task)];
    let plan = client.complete(LlmRequest::new(messages.clone()).with_tools(tools.clone())).await?;
    messages.push(Message::assistant(&plan));

    let mut tasks = Vec::new();
    for call in plan.tool_calls.clone() {
        let handle = handle.clone();
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(random_below(15))).await;
            let item = string_argument(&call.arguments, "item");
            let child = handle.subagent("classifier", Some(&call.id))?;
            child.user_message(format!("Classify: {item}"));
            let request = LlmRequest::new(vec![
                Message::system(CLASSIFIER_SYSTEM_PROMPT),
                Message::user(format!("Classify: {item}")),
            ]);
            let label = child.client().complete(request).await?.text();
            Ok::<_, Error>((call.id, item, label))
        }));
    }
    let mut labels = Vec::new();
    for task in tasks {
        let (call_id, item, label) =
            task.await.map_err(|err| Error::provider(format!("subagent task failed: {err}")))??;
        handle.tool_result(&call_id, label.clone())?;
        messages.push(Message::tool_result(call_id, label.clone()));
        labels.push((item, label));
    }
    client.complete(LlmRequest::new(messages).with_tools(tools)).await?;
    Ok(labels)
}

/// A deterministic stand-in for a live model driving [`tool_loop_agent`] on
/// `"What is (2 + 3) * 4?"`: with `turns == 1` it returns the result at once; with more turns
/// it computes step by step with the calculator (`turns - 1` calculator calls, capped at 2),
/// reading the previous result from the request. Token usage grows with the prompt.
pub fn calculator_model(turns: usize) -> FakeClient {
    FakeClient::from_fn(Some("calc-model-1"), move |call, request| {
        let last_result = request
            .messages
            .iter()
            .rev()
            .find(|message| message.role == Role::Tool)
            .map(|message| message.content.clone());
        let calculator_calls = turns.saturating_sub(1).min(2);
        let tool_call = if call <= calculator_calls {
            let expression = match (call, &last_result) {
                (1, _) if calculator_calls == 1 => "(2 + 3) * 4".to_owned(),
                (1, _) => "2 + 3".to_owned(),
                (_, Some(previous)) => format!("{previous} * 4"),
                (_, None) => "0".to_owned(),
            };
            ToolCall::new(
                format!("call_calc_{call}"),
                "calculator",
                json!({"expression": expression}),
            )
        } else {
            let value = last_result.unwrap_or_else(|| "20".to_owned());
            ToolCall::new(format!("call_ret_{call}"), "return_result", json!({"value": value}))
        };
        if request.messages.last().is_some_and(|message| message.role == Role::User && call > 1) {
            return Ok(LlmResponse::from_text("Yes, I am sure.").with_usage(usage_for(request)));
        }
        Ok(LlmResponse::from_tool_calls(vec![tool_call])
            .with_reasoning(format!("step {call} of {turns}"))
            .with_usage(usage_for(request)))
    })
}

/// A deterministic stand-in for a live model driving [`fan_out_agent`]: plans one `classify`
/// call per item (with provider-style random call ids), labels each item by a fixed rule, and
/// summarises the labels.
pub fn classifier_model() -> FakeClient {
    FakeClient::from_fn(Some("classify-model-1"), |_, request| {
        let last =
            request.last_message().map(|message| message.content.clone()).unwrap_or_default();
        let usage = usage_for(request);
        if let Some(list) = last.strip_prefix("Classify each item: ") {
            let calls = list
                .split(" | ")
                .map(|item| {
                    let id = format!("call_{:012x}", random_below(1 << 48));
                    ToolCall::new(id, "classify", json!({"item": item}))
                })
                .collect();
            return Ok(LlmResponse::from_tool_calls(calls).with_usage(usage));
        }
        if let Some(item) = last.strip_prefix("Classify: ") {
            return Ok(LlmResponse::from_text(classify(item)).with_usage(usage));
        }
        let labels: Vec<&str> = request
            .messages
            .iter()
            .filter(|message| message.role == Role::Tool)
            .map(|message| message.content.as_str())
            .collect();
        Ok(LlmResponse::from_text(format!(
            "Classified {} items: {}",
            labels.len(),
            labels.join(", ")
        ))
        .with_usage(usage))
    })
}

/// The label [`classifier_model`] gives an item.
pub fn classify(item: &str) -> &'static str {
    if !item.is_empty() && item.chars().all(|c| c.is_ascii_digit()) {
        "number"
    } else if item.ends_with('?') {
        "question"
    } else {
        "statement"
    }
}

/// Evaluates `+ - * /` with parentheses over decimal numbers.
///
/// # Errors
///
/// A sentence saying what is wrong with the expression.
pub fn evaluate(expression: &str) -> Result<f64, String> {
    let tokens: Vec<char> = expression.chars().filter(|c| !c.is_whitespace()).collect();
    let mut parser = Parser { tokens: &tokens, pos: 0 };
    let value = parser.sum()?;
    if parser.pos != tokens.len() {
        return Err(format!("unexpected `{}` at position {}", tokens[parser.pos], parser.pos + 1));
    }
    Ok(value)
}

struct Parser<'a> {
    tokens: &'a [char],
    pos: usize,
}

impl Parser<'_> {
    fn sum(&mut self) -> Result<f64, String> {
        let mut value = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            let rhs = self.product()?;
            value = if op == '+' { value + rhs } else { value - rhs };
        }
        Ok(value)
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut value = self.atom()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.pos += 1;
            let rhs = self.atom()?;
            if op == '/' && rhs == 0.0 {
                return Err("division by zero".to_owned());
            }
            value = if op == '*' { value * rhs } else { value / rhs };
        }
        Ok(value)
    }

    fn atom(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let value = self.sum()?;
                if self.peek() != Some(')') {
                    return Err("missing `)`".to_owned());
                }
                self.pos += 1;
                Ok(value)
            }
            Some('-') => {
                self.pos += 1;
                Ok(-self.atom()?)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
                    self.pos += 1;
                }
                let text: String = self.tokens[start..self.pos].iter().collect();
                text.parse().map_err(|_| format!("`{text}` is not a number"))
            }
            Some(c) => Err(format!("unexpected `{c}` at position {}", self.pos + 1)),
            None => Err("the expression ends too early".to_owned()),
        }
    }

    fn peek(&self) -> Option<char> {
        self.tokens.get(self.pos).copied()
    }
}

/// A number as the calculator reports it: integers without a fraction.
fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        value.to_string()
    }
}

fn string_argument(arguments: &Value, key: &str) -> String {
    match &arguments[key] {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Tokens a fake model charges: a quarter of the prompt's characters, and a fixed completion.
fn usage_for(request: &LlmRequest) -> Usage {
    let chars: usize = request
        .messages
        .iter()
        .map(|message| {
            let calls: usize = message
                .tool_calls
                .iter()
                .map(|call| call.name.len() + call.arguments.to_string().len())
                .sum();
            message.content.len() + calls
        })
        .sum();
    Usage::new((chars / 4 + 20) as u64, 12, 0)
}

/// A random number below `bound` (std's per-process random hasher keys, no extra crate).
fn random_below(bound: u64) -> u64 {
    RandomState::new().build_hasher().finish() % bound.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calculator_evaluates_with_precedence_and_parentheses() {
        assert_eq!(evaluate("(2 + 3) * 4"), Ok(20.0));
        assert_eq!(evaluate("2 + 3 * 4"), Ok(14.0));
        assert_eq!(evaluate("-1.5 * 2"), Ok(-3.0));
        assert_eq!(evaluate("1 / 0"), Err("division by zero".to_owned()));
        assert_eq!(evaluate("2 +"), Err("the expression ends too early".to_owned()));
        assert_eq!(evaluate("2 ) 3"), Err("unexpected `)` at position 2".to_owned()));
        assert_eq!(format_number(20.0), "20");
        assert_eq!(format_number(2.5), "2.5");
    }

    #[test]
    fn classifier_labels_are_fixed_by_rule() {
        assert_eq!(classify("42"), "number");
        assert_eq!(classify("is it raining?"), "question");
        assert_eq!(classify("the sky is blue"), "statement");
    }
}
