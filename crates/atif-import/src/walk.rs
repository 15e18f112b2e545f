//! A walk over the free text of a typed trajectory: every string and JSON object that came
//! from the log, with its JSON Pointer, in the order of the trajectory's JSON document.
//!
//! Names and fixed values that ATIF itself defines (`message`, `"source": "agent"`, media
//! types, the schema version) are not visited: they hold no secret for the default scanner (a
//! test checks every name and value of the JSON Schema), and the typed model could not hold
//! them redacted anyway.

use std::fmt::Write as _;

use atif_schema::{
    Agent, ContentPart, JsonObject, Message, ObservationResult, ReasoningEffort, Step,
    SubagentTrajectoryRef, ToolCall, Trajectory,
};

/// What a [`walk`] does with each string and each JSON object.
pub(crate) trait Visit {
    /// A string the log gave, at `pointer`.
    fn text(&mut self, text: &mut String, pointer: &str);
    /// An object the log gave (arguments, `extra`), at `pointer`.
    fn object(&mut self, object: &mut JsonObject, pointer: &str);
}

/// Visits `trajectory`'s strings and objects in the order of its JSON document, whose keys
/// sort: the order in which a walk over that document meets them.
pub(crate) fn walk(trajectory: &mut Trajectory, visit: &mut dyn Visit) {
    Walker { pointer: String::new(), visit }.trajectory(trajectory);
}

/// The walk's state: the pointer of the value being visited.
struct Walker<'v> {
    pointer: String,
    visit: &'v mut dyn Visit,
}

impl Walker<'_> {
    /// Runs `f` with `segment` appended to the pointer.
    fn at(&mut self, segment: impl std::fmt::Display, f: impl FnOnce(&mut Self)) {
        let len = self.pointer.len();
        // Writing to a `String` cannot fail.
        let _ = write!(self.pointer, "/{segment}");
        f(self);
        self.pointer.truncate(len);
    }

    fn text(&mut self, key: &str, text: Option<&mut String>) {
        if let Some(text) = text {
            self.at(key, |w| w.visit.text(text, &w.pointer));
        }
    }

    fn object(&mut self, key: &str, object: Option<&mut JsonObject>) {
        if let Some(object) = object {
            self.at(key, |w| w.visit.object(object, &w.pointer));
        }
    }

    // Each function below visits its type's members in the order their keys sort.

    fn trajectory(&mut self, t: &mut Trajectory) {
        self.at("agent", |w| w.agent(&mut t.agent));
        self.text("continued_trajectory_ref", t.continued_trajectory_ref.as_mut());
        self.object("extra", t.extra.as_mut());
        if let Some(metrics) = &mut t.final_metrics {
            self.at("final_metrics", |w| w.object("extra", metrics.extra.as_mut()));
        }
        self.text("notes", t.notes.as_mut());
        self.text("session_id", t.session_id.as_mut());
        self.at("steps", |w| {
            for (idx, step) in t.steps.iter_mut().enumerate() {
                w.at(idx, |w| w.step(step));
            }
        });
        if let Some(subagents) = &mut t.subagent_trajectories {
            self.at("subagent_trajectories", |w| {
                for (idx, sub) in subagents.iter_mut().enumerate() {
                    w.at(idx, |w| w.trajectory(sub));
                }
            });
        }
        self.text("trajectory_id", t.trajectory_id.as_mut());
    }

    fn agent(&mut self, agent: &mut Agent) {
        self.object("extra", agent.extra.as_mut());
        self.text("model_name", agent.model_name.as_mut());
        self.text("name", Some(&mut agent.name));
        if let Some(definitions) = &mut agent.tool_definitions {
            self.at("tool_definitions", |w| {
                for (idx, definition) in definitions.iter_mut().enumerate() {
                    w.at(idx, |w| w.visit.object(definition, &w.pointer));
                }
            });
        }
        self.text("version", Some(&mut agent.version));
    }

    fn step(&mut self, step: &mut Step) {
        self.object("extra", step.extra.as_mut());
        self.at("message", |w| w.message(&mut step.message));
        if let Some(metrics) = &mut step.metrics {
            self.at("metrics", |w| w.object("extra", metrics.extra.as_mut()));
        }
        self.text("model_name", step.model_name.as_mut());
        if let Some(observation) = &mut step.observation {
            self.at("observation", |w| {
                w.at("results", |w| {
                    for (idx, result) in observation.results.iter_mut().enumerate() {
                        w.at(idx, |w| w.result(result));
                    }
                });
            });
        }
        self.text("reasoning_content", step.reasoning_content.as_mut());
        if let Some(ReasoningEffort::Text(effort)) = &mut step.reasoning_effort {
            self.text("reasoning_effort", Some(effort));
        }
        self.text("timestamp", step.timestamp.as_mut());
        if let Some(calls) = &mut step.tool_calls {
            self.at("tool_calls", |w| {
                for (idx, call) in calls.iter_mut().enumerate() {
                    w.at(idx, |w| w.call(call));
                }
            });
        }
    }

    fn call(&mut self, call: &mut ToolCall) {
        self.object("arguments", Some(&mut call.arguments));
        self.object("extra", call.extra.as_mut());
        self.text("function_name", Some(&mut call.function_name));
        self.text("tool_call_id", Some(&mut call.tool_call_id));
    }

    fn result(&mut self, result: &mut ObservationResult) {
        if let Some(content) = &mut result.content {
            self.at("content", |w| w.message(content));
        }
        self.object("extra", result.extra.as_mut());
        self.text("source_call_id", result.source_call_id.as_mut());
        if let Some(refs) = &mut result.subagent_trajectory_ref {
            self.at("subagent_trajectory_ref", |w| {
                for (idx, reference) in refs.iter_mut().enumerate() {
                    w.at(idx, |w| w.subagent_ref(reference));
                }
            });
        }
    }

    fn subagent_ref(&mut self, reference: &mut SubagentTrajectoryRef) {
        self.object("extra", reference.extra.as_mut());
        self.text("session_id", reference.session_id.as_mut());
        self.text("trajectory_id", reference.trajectory_id.as_mut());
        self.text("trajectory_path", reference.trajectory_path.as_mut());
    }

    /// A message at the current pointer: its text, or each part's text or source path.
    fn message(&mut self, message: &mut Message) {
        match message {
            Message::Text(text) => self.visit.text(text, &self.pointer),
            Message::Parts(parts) => {
                for (idx, part) in parts.iter_mut().enumerate() {
                    self.at(idx, |w| match part {
                        ContentPart::Text { text } => w.text("text", Some(text)),
                        ContentPart::Image { source } => {
                            w.at("source", |w| w.text("path", Some(&mut source.path)));
                        }
                        ContentPart::Audio { source } => {
                            w.at("source", |w| w.text("path", Some(&mut source.path)));
                        }
                        _ => {}
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use atif_schema::SchemaVersion;
    use serde_json::Value;

    /// Every property name, enum value and constant of the JSON Schema, at any depth.
    fn vocabulary(schema: &Value, words: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("properties", Value::Object(properties)) => {
                            words.extend(properties.keys().cloned());
                        }
                        ("enum", Value::Array(values)) => {
                            words
                                .extend(values.iter().filter_map(Value::as_str).map(str::to_owned));
                        }
                        ("const", Value::String(value)) => words.push(value.clone()),
                        _ => {}
                    }
                    vocabulary(value, words);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| vocabulary(item, words)),
            _ => {}
        }
    }

    #[test]
    fn the_default_scanner_finds_nothing_in_the_names_and_fixed_values_the_walk_skips() {
        let mut words = Vec::new();
        vocabulary(&atif_schema::json_schema(SchemaVersion::LATEST), &mut words);
        for expected in ["message", "source", "agent", "image/png", "tool_calls", "prompt_tokens"] {
            assert!(words.iter().any(|word| word == expected), "{expected} is not in {words:?}");
        }
        words.push(SchemaVersion::LATEST.to_string());
        let scanner = atif_secrets::Scanner::new();
        for word in &words {
            assert!(!scanner.may_hold_secret(word), "the default scanner flags {word:?}");
        }
    }
}
