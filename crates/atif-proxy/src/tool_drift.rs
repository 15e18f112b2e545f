//! What a model request's drift says about tool results: a replayed agent sends the model the
//! results of its tools, so a tool that answered otherwise than when it was recorded (an MCP
//! server, a shell command) shows up as a changed request. This names the tool, and its MCP
//! server when it has one, before the diff.

use std::collections::{BTreeMap, HashMap};

use atif_wire::{Protocol, Role, parse_request};
use serde_json::Value;

/// One line per tool result that differs between the recorded and the current request body
/// (both normalised), naming the tool and its MCP server; `None` when no result changed or a
/// body cannot be read.
pub(crate) fn changed_tool_results(
    protocol: Protocol,
    recorded: &Value,
    now: &Value,
    tool_servers: &HashMap<String, String>,
) -> Option<String> {
    let recorded = results(protocol, recorded)?;
    let now = results(protocol, now)?;
    let lines: Vec<String> = now
        .iter()
        .filter(|(id, (_, content))| recorded.get(*id).is_some_and(|(_, was)| was != content))
        .map(|(id, (tool, _))| match tool_servers.get(tool) {
            Some(server) => format!(
                "the result of tool `{tool}` of MCP server `{server}` (call {id}), as the agent \
                 sent it back, changed"
            ),
            None => format!(
                "the result of tool `{tool}` (call {id}), as the agent sent it back, changed"
            ),
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// Each tool result of a request body by its call id: the tool's name and the result's text.
fn results(protocol: Protocol, body: &Value) -> Option<BTreeMap<String, (String, String)>> {
    let request = parse_request(protocol, body).ok()?;
    let names: HashMap<&str, &str> = request
        .messages
        .iter()
        .flat_map(|message| &message.tool_calls)
        .map(|call| (call.id.as_str(), call.name.as_str()))
        .collect();
    let results = request.messages.iter().filter(|message| message.role == Role::Tool);
    Some(
        results
            .filter_map(|message| {
                let id = message.tool_call_id.as_deref()?;
                let tool = names.get(id).copied().unwrap_or("?");
                Some((id.to_owned(), (tool.to_owned(), message.content.clone())))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use serde_json::json;

    use super::*;

    fn body(result: &str) -> Value {
        json!({"model": "m", "max_tokens": 10, "messages": [
            {"role": "user", "content": "read it"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "mcp__files__read_text_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": result},
                {"type": "tool_result", "tool_use_id": "t2", "content": "a"}]}]})
    }

    #[test]
    fn a_changed_mcp_result_names_the_tool_and_its_server() {
        let servers =
            HashMap::from([("mcp__files__read_text_file".to_owned(), "files".to_owned())]);
        let protocol = Protocol::AnthropicMessages;
        let changed = changed_tool_results(protocol, &body("Thursday"), &body("Friday"), &servers);
        assert_eq!(
            changed.as_deref(),
            Some(
                "the result of tool `mcp__files__read_text_file` of MCP server `files` (call t1), \
                 as the agent sent it back, changed"
            )
        );
        assert_eq!(changed_tool_results(protocol, &body("same"), &body("same"), &servers), None);
    }
}
