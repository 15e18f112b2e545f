//! The Anthropic message model shared by Claude Code transcripts and stream-json: one agent
//! step per `message.id` (split content blocks merged), tool results joined by `tool_use_id`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::Result;
use crate::context::Context;
use crate::draft::{Metrics, ObsResult, Part, Step, StepSource, ToolCall, Trajectory, image_part};
use crate::formats::common::{Kind, Member, required};

/// What an assistant or user record holds: a message object whose content is text or a list
/// of blocks.
const MESSAGE: [Member; 2] =
    [required("message", Kind::Object), required("message.content", Kind::Content)];

/// What a text block holds.
const TEXT_BLOCK: [Member; 1] = [required("text", Kind::Str)];

/// Texts Claude Code writes as a user message when the person interrupts the run.
const INTERRUPTED: &str = "[Request interrupted by user";

/// Flags of a user line that change how it is recorded.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct UserFlags {
    /// Injected by the CLI (`isMeta`).
    pub(crate) meta: bool,
    /// A compaction summary (`isCompactSummary`).
    pub(crate) compact_summary: bool,
}

/// Builds a trajectory from Anthropic-style assistant and user messages.
#[derive(Debug)]
pub(crate) struct Claude {
    pub(crate) trajectory: Trajectory,
    /// `message.id` to the index of its step.
    message_steps: HashMap<String, usize>,
    /// Step index to the `output_tokens` of the usage copy kept for it.
    kept_output: HashMap<usize, u64>,
}

impl Claude {
    pub(crate) fn new(agent_name: &str) -> Claude {
        Claude {
            trajectory: Trajectory::new(agent_name),
            message_steps: HashMap::new(),
            kept_output: HashMap::new(),
        }
    }

    /// Adds one assistant line (`record`, holding its `message`): a new step for a new
    /// `message.id`, else merged into the step of that id (Claude Code writes one line per
    /// content block, each repeating the usage).
    pub(crate) fn assistant(
        &mut self,
        line: usize,
        record: &Value,
        timestamp: Option<&Value>,
        request_id: Option<&str>,
        api_error: bool,
        ctx: &mut Context,
    ) -> Result<()> {
        if !ctx.has_shape(line, "assistant record", record, &MESSAGE)? {
            return Ok(());
        }
        let message = &record["message"];
        let model = message.get("model").and_then(Value::as_str);
        let synthetic = api_error || model == Some("<synthetic>");
        let message_id = message.get("id").and_then(Value::as_str);
        let step_idx = match message_id.and_then(|id| self.message_steps.get(id)) {
            Some(&idx) => idx,
            None => {
                let mut step = if synthetic {
                    let mut step = Step::new(StepSource::Agent);
                    step.llm_call_count = Some(0);
                    step
                } else {
                    Step::model_call()
                };
                step.set_timestamp(timestamp);
                if let Some(id) = message_id {
                    step.extra.insert("message_id".into(), id.into());
                }
                if let Some(id) = request_id {
                    step.extra.insert("request_id".into(), id.into());
                }
                let idx = self.trajectory.push(step);
                if let Some(id) = message_id {
                    self.message_steps.insert(id.to_owned(), idx);
                }
                idx
            }
        };
        if let (Some(model), false) = (model, synthetic) {
            self.trajectory.steps[step_idx].model_name = Some(model.to_owned());
            if self.trajectory.model_name.is_none() {
                self.trajectory.model_name = Some(model.to_owned());
            }
        }
        if let Some(reason) = message.get("stop_reason").and_then(Value::as_str) {
            self.trajectory.steps[step_idx].extra.insert("stop_reason".into(), reason.into());
        }
        match message.get("content") {
            Some(Value::String(text)) => {
                self.trajectory.steps[step_idx].parts.push(Part::Text(text.clone()))
            }
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    self.assistant_block(line, step_idx, block, ctx)?;
                }
            }
            _ => {}
        }
        if synthetic {
            let text = text_of(&self.trajectory.steps[step_idx].parts);
            self.trajectory.steps[step_idx].set_error("api_error", &text);
        } else if let Some(usage) = message.get("usage").filter(|u| u.is_object()) {
            // The copies repeat one usage object; output_tokens can grow between copies
            // (streaming snapshots), so keep the copy with the most output tokens.
            let output = usage.get("output_tokens").and_then(Value::as_u64).unwrap_or(0);
            let kept = self.kept_output.get(&step_idx).copied();
            if kept.is_none_or(|kept| output >= kept) {
                self.kept_output.insert(step_idx, output);
                self.trajectory.steps[step_idx].metrics = Some(usage_metrics(usage));
            }
        }
        Ok(())
    }

    fn assistant_block(
        &mut self,
        line: usize,
        step_idx: usize,
        block: &Value,
        ctx: &mut Context,
    ) -> Result<()> {
        let block_type = block.get("type").and_then(Value::as_str).unwrap_or("");
        match block_type {
            "text" => {
                if ctx.has_shape(line, "assistant text block", block, &TEXT_BLOCK)? {
                    let text = block["text"].as_str().unwrap_or_default().to_owned();
                    self.trajectory.steps[step_idx].parts.push(Part::Text(text));
                }
            }
            "thinking" => {
                let text = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                self.trajectory.steps[step_idx].reasoning.push(text.to_owned());
            }
            "redacted_thinking" => ctx.ignore("assistant content redacted_thinking"),
            "tool_use" | "server_tool_use" => {
                let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                let arguments = match block.get("input") {
                    Some(Value::Object(map)) => map.clone(),
                    Some(other) => Map::from_iter([("input".to_owned(), other.clone())]),
                    None => Map::new(),
                };
                let mut extra = Map::new();
                if block_type == "server_tool_use" {
                    extra.insert("server_tool".into(), Value::Bool(true));
                }
                self.trajectory.add_call(
                    step_idx,
                    ToolCall { id: id.to_owned(), name: name.to_owned(), arguments, extra },
                );
            }
            other => ctx.unknown(line, &format!("assistant content {other}"))?,
        }
        Ok(())
    }

    /// Adds one user line (`record`, holding its `message`): tool results join the steps
    /// holding their calls; text and images become a user step.
    pub(crate) fn user(
        &mut self,
        line: usize,
        record: &Value,
        timestamp: Option<&Value>,
        tool_use_result: Option<&Value>,
        flags: UserFlags,
        ctx: &mut Context,
    ) -> Result<()> {
        if !ctx.has_shape(line, "user record", record, &MESSAGE)? {
            return Ok(());
        }
        let message = &record["message"];
        let mut parts = Vec::new();
        let mut results = Vec::new();
        match message.get("content") {
            Some(Value::String(text)) => parts.push(Part::Text(text.clone())),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match block.get("type").and_then(Value::as_str).unwrap_or("") {
                        "tool_result" => results.push(tool_result(block)),
                        "text" => {
                            if ctx.has_shape(line, "user text block", block, &TEXT_BLOCK)? {
                                let text = block["text"].as_str().unwrap_or_default();
                                parts.push(Part::Text(text.to_owned()));
                            }
                        }
                        "image" => parts.push(image_block(block)),
                        other => ctx.unknown(line, &format!("user content {other}"))?,
                    }
                }
            }
            _ => {}
        }
        let single_result = results.len() == 1;
        for mut result in results {
            if let (true, Some(structured)) = (single_result, tool_use_result) {
                result.extra.insert("tool_use_result".into(), structured.clone());
            }
            if let Some(orphan) = self.trajectory.add_result(result) {
                let call_id = self.trajectory.push_orphan_result(orphan, "tool_use_id", timestamp);
                ctx.warn(
                    line,
                    &format!("tool result for call `{call_id}`, which no assistant message made"),
                );
            }
        }
        if parts.is_empty() {
            return Ok(());
        }
        let mut step = Step::new(StepSource::User);
        step.set_timestamp(timestamp);
        if flags.meta {
            step.extra.insert("meta".into(), Value::Bool(true));
        }
        if flags.compact_summary {
            step.extra.insert("compact_summary".into(), Value::Bool(true));
        }
        let text = text_of(&parts);
        if text.starts_with(INTERRUPTED) {
            step.set_error("interrupted", &text);
        }
        step.parts = parts;
        self.trajectory.push(step);
        Ok(())
    }
}

/// A `tool_result` block as the model received it; `is_error` goes to `extra`.
fn tool_result(block: &Value) -> ObsResult {
    let call_id = block.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
    let content = match block.get("content") {
        Some(Value::String(text)) => vec![Part::Text(text.clone())],
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item.get("type").and_then(Value::as_str) {
                Some("image") => image_block(item),
                Some("text") => {
                    Part::Text(item.get("text").and_then(Value::as_str).unwrap_or("").to_owned())
                }
                _ => Part::Text(item.to_string()),
            })
            .collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![Part::Text(other.to_string())],
    };
    let mut extra = Map::new();
    if block.get("is_error").and_then(Value::as_bool) == Some(true) {
        extra.insert("is_error".into(), Value::Bool(true));
    }
    ObsResult {
        source_call_id: Some(call_id.to_owned()),
        content: Some(content),
        subagent_refs: Vec::new(),
        subagent_paths: Vec::new(),
        extra,
    }
}

/// An Anthropic `image` block (`source: {type: base64, media_type, data}`).
fn image_block(block: &Value) -> Part {
    let source = block.get("source");
    let field = |key: &str| source.and_then(|s| s.get(key)).and_then(Value::as_str);
    match (field("type"), field("media_type"), field("data"), field("url")) {
        (Some("base64"), Some(media_type), Some(data), _) => image_part(media_type, data),
        (_, _, _, Some(url)) => Part::Text(format!("[image {url}]")),
        _ => Part::Text("[image]".to_owned()),
    }
}

/// Anthropic usage as ATIF metrics: the prompt is input + cache reads + cache writes.
pub(crate) fn usage_metrics(usage: &Value) -> Metrics {
    let field = |key: &str| usage.get(key).and_then(Value::as_u64);
    let input = field("input_tokens");
    let cache_read = field("cache_read_input_tokens");
    let cache_write = field("cache_creation_input_tokens");
    let prompt = match (input, cache_read, cache_write) {
        (None, None, None) => None,
        // Saturating: a hostile log's counts must not overflow (a panic in debug builds).
        _ => Some(
            input
                .unwrap_or(0)
                .saturating_add(cache_read.unwrap_or(0))
                .saturating_add(cache_write.unwrap_or(0)),
        ),
    };
    let extra = match usage {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    Metrics {
        prompt,
        completion: field("output_tokens"),
        cached: cache_read.or(prompt.map(|_| 0)),
        extra,
    }
}

/// The text parts of a message joined, for error texts.
fn text_of(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(text) => Some(text.as_str()),
            Part::Image { .. } | Part::Content(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
