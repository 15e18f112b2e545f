//! Reading a request of any protocol into a [`Turn`], and deciding the scripted [`Reply`].

use atif_wire::Protocol;
use serde_json::{Map, Value, json};

use crate::example::{Fill, example, property_example, tool_arguments};
use crate::{Config, ScriptedCall};

/// What the fake provider needs to know about one request, whatever its protocol.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Turn {
    /// The model the request names (Gemini names it in the path).
    pub(crate) model: String,
    /// How many messages (or input items, or contents) the request carries.
    pub(crate) n_messages: usize,
    /// The text of the tool results, when the request's last message is one.
    pub(crate) tool_result: Option<String>,
    /// How many tool results the whole conversation holds.
    pub(crate) n_tool_results: usize,
    /// The tools offered: name and JSON Schema of the arguments (`Null` when none is given).
    pub(crate) tools: Vec<(String, Value)>,
    /// Responses only: the tools offered inside a `namespace` tool (as Codex offers an MCP
    /// server's), each as its full name `NAMESPACE__TOOL` in `tools`, its namespace and its own
    /// name, which a call of it gives.
    pub(crate) namespaced: Vec<(String, String, String)>,
    /// The JSON Schema of a structured reply the request asks for.
    pub(crate) json_schema: Option<Value>,
    /// Chat Completions only: whether a stream ends with a usage chunk
    /// (`stream_options.include_usage`).
    pub(crate) include_usage: bool,
    /// Added to the reply's ids: 0, or a sampled conversation's base (see `sampling`).
    pub(crate) id_base: usize,
    /// The factor on the reply's token counts: 1, or a sampled conversation's.
    pub(crate) token_factor: f64,
}

/// The scripted reply to one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// Plain assistant text.
    Text(String),
    /// Calls of tools, in one reply: one, or several in parallel (never none).
    ToolCalls(Vec<Call>),
}

/// One tool call of a reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    /// The tool's name.
    pub(crate) name: String,
    /// Its arguments, a JSON object.
    pub(crate) arguments: Value,
}

impl Reply {
    /// A reply of one call of `name` with `arguments`.
    pub(crate) fn call(name: impl Into<String>, arguments: Value) -> Reply {
        Reply::ToolCalls(vec![Call { name: name.into(), arguments }])
    }
}

/// The id of call `index` of the reply numbered `id`: `PREFIX_ID` for the first (as a reply of
/// one call has always been numbered), `PREFIX_ID_INDEX` for the others.
pub(crate) fn call_id(prefix: &str, id: usize, index: usize) -> String {
    match index {
        0 => format!("{prefix}_{id}"),
        index => format!("{prefix}_{id}_{index}"),
    }
}

impl Reply {
    /// The deterministic reply for a turn: quote a tool result, else call a shell-like tool,
    /// else call the first tool offered, else answer in plain text.
    pub(crate) fn decide(turn: &Turn, config: &Config) -> Reply {
        if let Some(call) = scripted_call(turn, config) {
            return call;
        }
        if let Some(result) = &turn.tool_result {
            return Reply::Text(format!("The command printed: {}", quote(result, config)));
        }
        if let Some(schema) = &turn.json_schema {
            return Reply::Text(example(schema, Fill::All).to_string());
        }
        if let Some((name, schema)) = turn.tools.iter().find(|(name, _)| is_shell_tool(name)) {
            return Reply::call(name.clone(), shell_arguments(schema, config));
        }
        match turn.tools.first() {
            Some((name, schema)) => Reply::call(name.clone(), tool_arguments(schema)),
            None => Reply::Text(config.text().to_owned()),
        }
    }

    /// The reply's text, or its arguments as JSON text: what usage figures are counted from.
    pub(crate) fn content_len(&self) -> usize {
        match self {
            Reply::Text(text) => text.len(),
            Reply::ToolCalls(calls) => {
                calls.iter().map(|call| call.arguments.to_string().len()).sum()
            }
        }
    }
}

/// The scripted call due in this turn (see [`Config::set_calls`]), when its tool is offered; or,
/// with [`Config::set_parallel_calls`], every scripted call whose tool is offered, in the first
/// reply.
fn scripted_call(turn: &Turn, config: &Config) -> Option<Reply> {
    let offered = |call: &&ScriptedCall| turn.tools.iter().any(|(name, _)| *name == call.name);
    let due: Vec<&ScriptedCall> = match config.parallel_calls() {
        true if turn.n_tool_results == 0 => config.calls().iter().filter(offered).collect(),
        true => Vec::new(),
        false => config.calls().get(turn.n_tool_results).filter(offered).into_iter().collect(),
    };
    let calls: Vec<Call> = due
        .into_iter()
        .map(|call| Call { name: call.name.clone(), arguments: call.arguments.clone() })
        .collect();
    (!calls.is_empty()).then_some(Reply::ToolCalls(calls))
}

/// Reads the parts of a request body that decide the reply.
pub(crate) fn read_turn(protocol: Protocol, body: &Value, path_model: Option<&str>) -> Turn {
    let model = path_model
        .map(str::to_owned)
        .or_else(|| body.get("model").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "fake-model".to_owned());
    let mut turn = Turn {
        model,
        n_messages: 0,
        tool_result: None,
        n_tool_results: 0,
        tools: Vec::new(),
        namespaced: Vec::new(),
        json_schema: None,
        include_usage: false,
        id_base: 0,
        token_factor: 1.0,
    };
    match protocol {
        Protocol::OpenAiChat => read_chat(body, &mut turn),
        Protocol::OpenAiResponses => read_responses(body, &mut turn),
        Protocol::AnthropicMessages => read_anthropic(body, &mut turn),
        Protocol::Gemini => read_gemini(body, &mut turn),
    }
    turn
}

fn read_chat(body: &Value, turn: &mut Turn) {
    let messages = array(body, "messages");
    turn.n_messages = messages.len();
    turn.include_usage = body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));
    turn.n_tool_results = messages
        .iter()
        .filter(|message| message.get("role").and_then(Value::as_str) == Some("tool"))
        .count();
    let last = messages.last().unwrap_or(&Value::Null);
    if last.get("role").and_then(Value::as_str) == Some("tool") {
        turn.tool_result = Some(text_of(last.get("content")));
    }
    for tool in array(body, "tools") {
        let function = tool.get("function").unwrap_or(tool);
        push_tool(turn, function, "parameters");
    }
    for function in array(body, "functions") {
        push_tool(turn, function, "parameters");
    }
    if body.pointer("/response_format/type").and_then(Value::as_str) == Some("json_schema") {
        let schema = body.pointer("/response_format/json_schema/schema");
        turn.json_schema = Some(schema.cloned().unwrap_or(Value::Null));
    }
}

fn read_responses(body: &Value, turn: &mut Turn) {
    let items = array(body, "input");
    turn.n_messages = if body.get("input").is_some_and(Value::is_string) { 1 } else { items.len() };
    turn.n_tool_results = items
        .iter()
        .filter(|item| {
            item.get("type")
                .and_then(Value::as_str)
                .is_some_and(|kind| kind.ends_with("call_output"))
        })
        .count();
    if let Some(last) = items.last() {
        let kind = last.get("type").and_then(Value::as_str).unwrap_or_default();
        if kind.ends_with("call_output") {
            turn.tool_result = Some(text_of(last.get("output")));
        }
    }
    for tool in array(body, "tools") {
        match tool.get("type").and_then(Value::as_str) {
            Some("local_shell") => turn.tools.push(("local_shell".to_owned(), Value::Null)),
            Some("namespace") => push_namespace(turn, tool),
            _ => push_tool(turn, tool, "parameters"),
        }
    }
    if body.pointer("/text/format/type").and_then(Value::as_str) == Some("json_schema") {
        let schema = body.pointer("/text/format/schema");
        turn.json_schema = Some(schema.cloned().unwrap_or(Value::Null));
    }
}

fn read_anthropic(body: &Value, turn: &mut Turn) {
    let messages = array(body, "messages");
    turn.n_messages = messages.len();
    turn.n_tool_results = messages
        .iter()
        .flat_map(|message| array(message, "content"))
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
        .count();
    if let Some(last) = messages.last() {
        let results: Vec<String> = last
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
            .map(|block| text_of(block.get("content")))
            .collect();
        if !results.is_empty() {
            turn.tool_result = Some(results.join("\n"));
        }
    }
    for tool in array(body, "tools") {
        push_tool(turn, tool, "input_schema");
    }
}

fn read_gemini(body: &Value, turn: &mut Turn) {
    let contents = array(body, "contents");
    turn.n_messages = contents.len();
    turn.n_tool_results = contents
        .iter()
        .flat_map(|content| array(content, "parts"))
        .filter(|part| part.get("functionResponse").is_some())
        .count();
    if let Some(last) = contents.last() {
        let results: Vec<String> = array(last, "parts")
            .iter()
            .filter_map(|part| part.get("functionResponse"))
            .map(|response| match response.pointer("/response/output") {
                Some(Value::String(output)) => output.clone(),
                _ => text_of(response.get("response")),
            })
            .collect();
        if !results.is_empty() {
            turn.tool_result = Some(results.join("\n"));
        }
    }
    for tool in array(body, "tools") {
        for declaration in array(tool, "functionDeclarations") {
            let key = if declaration.get("parametersJsonSchema").is_some() {
                "parametersJsonSchema"
            } else {
                "parameters"
            };
            push_tool(turn, declaration, key);
        }
    }
    let config = body.get("generationConfig").unwrap_or(&Value::Null);
    if config.get("responseMimeType").and_then(Value::as_str) == Some("application/json") {
        let schema = config.get("responseJsonSchema").or_else(|| config.get("responseSchema"));
        turn.json_schema = Some(schema.cloned().unwrap_or(Value::Null));
    }
}

/// The tools of a Responses `namespace` tool, each under its full name `NAMESPACE__TOOL`.
fn push_namespace(turn: &mut Turn, namespace: &Value) {
    let Some(prefix) = namespace.get("name").and_then(Value::as_str) else { return };
    for tool in array(namespace, "tools") {
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            let full = format!("{prefix}__{name}");
            let schema = tool.get("parameters").cloned().unwrap_or(Value::Null);
            turn.tools.push((full.clone(), schema));
            turn.namespaced.push((full, prefix.to_owned(), name.to_owned()));
        }
    }
}

fn push_tool(turn: &mut Turn, tool: &Value, schema_key: &str) {
    if let Some(name) = tool.get("name").and_then(Value::as_str) {
        turn.tools.push((name.to_owned(), tool.get(schema_key).cloned().unwrap_or(Value::Null)));
    }
}

fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// The text of a message content or tool output: a string, a list of text parts, or JSON.
fn text_of(content: Option<&Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|part| match part {
                Value::String(text) => text.clone(),
                _ => match part.get("text").and_then(Value::as_str) {
                    Some(text) => text.to_owned(),
                    None => text_of(part.get("content").or(part.get("output"))),
                },
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
    }
}

/// The names of the tools that run a shell command, in lowercase: when one of them is offered
/// (compared without case), the fake provider calls it with [`Config::command`] rather than
/// the first tool.
pub const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "exec_command",
    "run_shell_command",
    "local_shell",
    "shell_command",
    "execute_command",
    "run_command",
    "terminal",
];

pub(crate) fn is_shell_tool(name: &str) -> bool {
    SHELL_TOOLS.iter().any(|shell| shell.eq_ignore_ascii_case(name))
}

/// The part of a tool result the final text quotes: the first match of the quote pattern, else
/// the last non-empty line (so volatile headers such as timings stay out of the reply).
fn quote(result: &str, config: &Config) -> String {
    if let Some(found) = config.quote_pattern().find(result) {
        return found.as_str().to_owned();
    }
    let line = result.lines().map(str::trim).rfind(|line| !line.is_empty()).unwrap_or_default();
    line.chars().take(200).collect()
}

/// Arguments for a shell tool with this JSON Schema: the scripted command under the command
/// property, and a plain value for every other required property.
pub(crate) fn shell_arguments(schema: &Value, config: &Config) -> Value {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = array(schema, "required").iter().filter_map(Value::as_str).collect();
    let command_key = ["command", "cmd", "script"]
        .into_iter()
        .find(|key| properties.is_some_and(|props| props.contains_key(*key)))
        .or_else(|| {
            required.iter().copied().find(|key| {
                properties.and_then(|props| props.get(*key)).and_then(|p| p.get("type"))
                    == Some(&json!("string"))
            })
        })
        .unwrap_or("command");
    let mut arguments = Map::new();
    let command_schema = properties.and_then(|props| props.get(command_key));
    let command = match command_schema.and_then(|p| p.get("type")).and_then(Value::as_str) {
        Some("array") => json!(["bash", "-lc", config.command()]),
        _ => json!(config.command()),
    };
    arguments.insert(command_key.to_owned(), command);
    for key in required {
        if key == command_key {
            continue;
        }
        arguments.insert(key.to_owned(), property_example(schema, schema, key));
    }
    Value::Object(arguments)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn check(protocol: Protocol, body: Value, expected: Reply) {
        let turn = read_turn(protocol, &body, None);
        assert_eq!(Reply::decide(&turn, &Config::default()), expected, "{turn:?}");
    }

    fn call(name: &str, arguments: Value) -> Reply {
        Reply::call(name, arguments)
    }

    #[test]
    fn a_shell_tool_is_called_with_the_scripted_command() {
        let command = Config::default().command().to_owned();
        check(
            Protocol::OpenAiChat,
            json!({"messages": [{"role": "user", "content": "hi"}],
                   "tools": [{"type": "function", "function": {"name": "read"}},
                             {"type": "function", "function": {"name": "bash", "parameters":
                              {"type": "object", "properties": {"command": {"type": "string"},
                               "description": {"type": "string"}}, "required": ["command", "description"]}}}]}),
            call("bash", json!({"command": command, "description": "Run the scripted command"})),
        );
        check(
            Protocol::OpenAiResponses,
            json!({"input": [{"type": "message", "role": "user", "content": "hi"}],
                   "tools": [{"type": "function", "name": "exec_command", "parameters":
                              {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}]}),
            call("exec_command", json!({"cmd": command})),
        );
        check(
            Protocol::AnthropicMessages,
            json!({"messages": [{"role": "user", "content": "hi"}],
                   "tools": [{"name": "Bash", "input_schema": {"type": "object", "properties":
                              {"command": {"type": "string"}, "timeout": {"type": "number"}}, "required": ["command"]}}]}),
            call("Bash", json!({"command": command})),
        );
        check(
            Protocol::Gemini,
            json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                   "tools": [{"functionDeclarations": [{"name": "run_shell_command", "parametersJsonSchema":
                              {"type": "object", "properties": {"command": {"type": "string"},
                               "is_background": {"type": "boolean"}}, "required": ["command", "is_background"]}}]}]}),
            call("run_shell_command", json!({"command": command, "is_background": false})),
        );
    }

    #[test]
    fn an_array_command_property_gets_an_argv() {
        check(
            Protocol::OpenAiResponses,
            json!({"input": "hi", "tools": [{"type": "function", "name": "shell", "parameters":
                   {"type": "object", "properties": {"command": {"type": "array"}}}}]}),
            call("shell", json!({"command": ["bash", "-lc", Config::default().command()]})),
        );
    }

    #[test]
    fn scripted_calls_follow_the_count_of_tool_results_when_their_tool_is_offered() {
        let mut config = Config::default();
        let scripted =
            |name: &str, arguments: Value| crate::ScriptedCall { name: name.to_owned(), arguments };
        config.set_calls(vec![
            scripted("ToolSearch", json!({"query": "select:mcp__files__read_text_file"})),
            scripted("mcp__files__read_text_file", json!({"path": "notes.txt"})),
        ]);
        let tools = |names: &[&str]| -> Vec<Value> {
            names
                .iter()
                .map(|name| json!({"name": name, "input_schema": {"type": "object"}}))
                .collect()
        };
        let result = |id: &str| json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]});
        let decide = |body: Value| {
            Reply::decide(&read_turn(Protocol::AnthropicMessages, &body, None), &config)
        };
        let user = json!({"role": "user", "content": "hi"});
        let first = json!({"messages": [user], "tools": tools(&["Bash", "ToolSearch"])});
        assert_eq!(
            decide(first),
            call("ToolSearch", json!({"query": "select:mcp__files__read_text_file"}))
        );
        let second = json!({"messages": [user, {"role": "assistant", "content": []}, result("t1")],
                            "tools": tools(&["Bash", "ToolSearch", "mcp__files__read_text_file"])});
        assert_eq!(
            decide(second),
            call("mcp__files__read_text_file", json!({"path": "notes.txt"}))
        );
        // Past the list, the usual loop: the last result is quoted.
        let third =
            json!({"messages": [user, result("t1"), result("t2")], "tools": tools(&["Bash"])});
        assert_eq!(decide(third), Reply::Text("The command printed: ok".to_owned()));
        // A scripted tool that is not offered is not called.
        let side = json!({"messages": [user], "tools": tools(&["Bash"])});
        assert_eq!(decide(side), call("Bash", json!({"command": Config::default().command()})));
    }

    #[test]
    fn a_tool_result_is_quoted_in_the_final_text() {
        let done = |text: &str| Reply::Text(format!("The command printed: {text}"));
        check(
            Protocol::OpenAiChat,
            json!({"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c", "content": "atif-e2e-42\n"}],
                   "tools": [{"type": "function", "function": {"name": "bash"}}]}),
            done("atif-e2e-42"),
        );
        check(
            Protocol::OpenAiResponses,
            json!({"input": [{"type": "function_call_output", "call_id": "c",
                   "output": "Chunk ID: 1f2e3d\nWall time: 0.0012 seconds\nOutput:\natif-e2e-42\n"}]}),
            done("atif-e2e-42"),
        );
        check(
            Protocol::AnthropicMessages,
            json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                   "content": [{"type": "text", "text": "no marker here\nlast line"}]}]}]}),
            done("last line"),
        );
        check(
            Protocol::Gemini,
            json!({"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
                   "response": {"output": "Output: atif-e2e-42\nExit Code: 0"}}}]}]}),
            done("atif-e2e-42"),
        );
    }

    #[test]
    fn without_a_shell_tool_the_first_tool_is_called_with_its_required_arguments() {
        check(
            Protocol::AnthropicMessages,
            json!({"messages": [{"role": "user", "content": "weather?"}],
                   "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties":
                              {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}, "required": ["city", "unit"]}},
                             {"name": "get_time"}]}),
            call("get_weather", json!({"city": "fake", "unit": "c"})),
        );
        check(
            Protocol::Gemini,
            json!({"contents": [{"role": "user", "parts": [{"text": "time?"}]}],
                   "tools": [{"functionDeclarations": [{"name": "get_time"}]}]}),
            call("get_time", json!({})),
        );
    }

    #[test]
    fn a_shell_tool_wins_over_an_earlier_tool() {
        check(
            Protocol::OpenAiChat,
            json!({"messages": [{"role": "user", "content": "hi"}],
                   "tools": [{"type": "function", "function": {"name": "get_weather"}},
                             {"type": "function", "function": {"name": "Terminal"}}]}),
            call("Terminal", json!({"command": Config::default().command()})),
        );
    }

    #[test]
    fn without_any_tool_the_reply_is_plain_text() {
        check(
            Protocol::OpenAiChat,
            json!({"messages": [{"role": "user", "content": "Generate a title"}]}),
            Reply::Text(Config::default().text().to_owned()),
        );
    }

    #[test]
    fn a_structured_request_gets_json_fitting_its_schema() {
        check(
            Protocol::Gemini,
            json!({"contents": [{"role": "user", "parts": [{"text": "who speaks next?"}]}],
                   "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema":
                    {"type": "object", "properties": {"reasoning": {"type": "string"},
                     "next_speaker": {"type": "string", "enum": ["model", "user"]}}}}}),
            Reply::Text(json!({"reasoning": "fake", "next_speaker": "user"}).to_string()),
        );
    }
}
