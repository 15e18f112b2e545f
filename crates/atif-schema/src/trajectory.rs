//! The typed model of an ATIF trajectory: the v1.8 superset, one Rust type per JSON object.
//!
//! These types are the wire format. Every object is closed (`deny_unknown_fields`), optional
//! fields that are absent stay absent when written back, and the open places of the format
//! (`extra` objects, tool `arguments`, `agent.tool_definitions`) are kept verbatim as
//! [`serde_json::Value`]s. Numbers in float fields (`cost_usd`, `logprobs`, `duration_sec`,
//! `total_cost_usd`, a numeric `reasoning_effort`) are kept as [`serde_json::Number`], so an
//! integer such as `"cost_usd": 0` is written back as `0`, not `0.0`.
//!
//! Two readings are deliberately not lossless, and both follow every reference implementation:
//! an explicit `null` in a typed optional field reads as absent (and is therefore not written
//! back), and an audio `media_type` alias such as `audio/mp3` reads as its canonical spelling
//! (`audio/mpeg`). Nulls inside the open places are kept.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::{Error, Result, SchemaVersion};

/// A JSON object kept verbatim: the type of every `extra` field and of tool-call `arguments`.
pub type JsonObject = Map<String, Value>;

/// One agent run: the root of an ATIF document, and also the type of each embedded subagent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trajectory {
    /// The ATIF version label this document declares, e.g. `ATIF-v1.8`. Since ATIF-v1.0.
    pub schema_version: SchemaVersion,
    /// Identifier of the run this trajectory belongs to; since v1.7 optional and run-scoped, so
    /// it may repeat across a parent, its subagents and its continuations. Since ATIF-v1.0
    /// (required until ATIF-v1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Identifier of this trajectory; required on every embedded subagent and unique within its
    /// parent's `subagent_trajectories`. Since ATIF-v1.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    /// The agent system that produced the run. Since ATIF-v1.0.
    pub agent: Agent,
    /// The interaction, in order; `step_id`s count 1, 2, 3, ... Since ATIF-v1.0.
    pub steps: Vec<Step>,
    /// Free-text notes, e.g. explaining why `final_metrics` differ from the step sums.
    /// Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Totals over the whole run. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_metrics: Option<FinalMetrics>,
    /// Where the run continues (e.g. the next file after context summarisation).
    /// Since ATIF-v1.5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_trajectory_ref: Option<String>,
    /// Producer-specific data about the whole run, kept verbatim. Since ATIF-v1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<JsonObject>,
    /// Child trajectories embedded in this document, each with its own `trajectory_id`, referred
    /// to by `subagent_trajectory_ref` entries. Since ATIF-v1.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_trajectories: Option<Vec<Trajectory>>,
}

/// The agent system that produced a trajectory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// Name of the agent system, e.g. `terminus-2`. Since ATIF-v1.0.
    pub name: String,
    /// Version of the agent system. Since ATIF-v1.0.
    pub version: String,
    /// Default model of the run; a step's own `model_name` overrides it. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// The tools offered to the model, usually OpenAI-style `{type, function}` objects, kept
    /// verbatim. Since ATIF-v1.5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_definitions: Option<Vec<JsonObject>>,
    /// Producer-specific data about the agent, kept verbatim. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<JsonObject>,
}

/// One step of the interaction: a system event, a user message, or an agent turn.
///
/// `model_name`, `reasoning_effort`, `reasoning_content`, `tool_calls` and `metrics` belong to
/// agent steps only (a rule of the validator, not of the JSON Schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Position of the step, counting from 1 in array order. Since ATIF-v1.0.
    pub step_id: u64,
    /// When the step happened, as an ISO 8601 date-time. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Who produced the step: `system`, `user` or `agent`. Since ATIF-v1.0.
    pub source: StepSource,
    /// Model used for this agent step, overriding `agent.model_name`. Agent steps only.
    /// Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Reasoning effort requested from the model, a word such as `low` or a number.
    /// Agent steps only. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// The step's message: text, or (since ATIF-v1.6) an array of content parts; may be empty.
    /// Since ATIF-v1.0.
    pub message: Message,
    /// The model's reasoning text for this step. Agent steps only. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Tool calls the agent made in this step. Agent steps only. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// What came back: tool results, subagent results, or (on system steps, since ATIF-v1.2)
    /// system events. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observation>,
    /// Token counts and cost of the LLM call(s) behind this step. Agent steps only.
    /// Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// How many LLM calls this step stands for: absent when not tracked, above 1 when metrics
    /// are aggregated, 0 on an agent step for a deterministic dispatch (then without `metrics`
    /// and `reasoning_content`). Since ATIF-v1.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_call_count: Option<u64>,
    /// True when the step was copied from a prior trajectory as context; training consumers
    /// drop such steps. Since ATIF-v1.5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_copied_context: Option<bool>,
    /// Producer-specific data about the step (e.g. the `context_management` convention), kept
    /// verbatim. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<JsonObject>,
}

/// Who produced a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepSource {
    /// The system: prompts, events, context management.
    System,
    /// The user.
    User,
    /// The agent (its model and its tool calls).
    Agent,
}

/// A reasoning effort: a word such as `"low"` or a number such as `0.7`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ReasoningEffort {
    /// A named effort, e.g. `low`, `medium`, `high`.
    Text(String),
    /// A numeric effort, kept as written.
    Number(Number),
}

/// Text or multimodal content: the type of `step.message` and of an observation result's
/// `content`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Message {
    /// Plain text (may be empty).
    Text(String),
    /// An array of content parts: text, images and (since ATIF-v1.8) audio. Since ATIF-v1.6.
    Parts(Vec<ContentPart>),
}

/// A call the agent made to a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// Identifier of the call, matched by an observation result's `source_call_id` in the same
    /// step. Since ATIF-v1.0.
    pub tool_call_id: String,
    /// Name of the tool or function called. Since ATIF-v1.0.
    pub function_name: String,
    /// Arguments of the call as a JSON object (may be empty), kept verbatim. Since ATIF-v1.0.
    pub arguments: JsonObject,
    /// Producer-specific data about the call, kept verbatim. Since ATIF-v1.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<JsonObject>,
}

/// What came back to the agent in a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Observation {
    /// One entry per tool result, subagent result or event; may be empty. Since ATIF-v1.0.
    pub results: Vec<ObservationResult>,
}

/// One result in an observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservationResult {
    /// The `tool_call_id` of the call in the same step that produced this result.
    /// Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_call_id: Option<String>,
    /// The result: text, or (since ATIF-v1.6) an array of content parts. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Message>,
    /// The subagent trajectories that produced this result. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_trajectory_ref: Option<Vec<SubagentTrajectoryRef>>,
    /// Producer-specific data about the result, kept verbatim. Since ATIF-v1.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<JsonObject>,
}

/// A pointer to a subagent's trajectory: embedded (by `trajectory_id`) or in a file or store
/// (by `trajectory_path`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubagentTrajectoryRef {
    /// Session of the subagent run; informational since ATIF-v1.7 (the resolution key, and
    /// required, before). Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The `trajectory_id` of an embedded subagent in `subagent_trajectories`.
    /// Since ATIF-v1.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    /// Where the subagent's trajectory is stored: a path, URL or database reference.
    /// Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_path: Option<String>,
    /// Producer-specific data about the reference, kept verbatim. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<JsonObject>,
}

/// One part of multimodal content. On the wire an object with `type` and either `text` or
/// `source`; the kind of `source` always matches `type`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
#[non_exhaustive]
pub enum ContentPart {
    /// A text part. Since ATIF-v1.6.
    Text {
        /// The text (may be empty). Since ATIF-v1.6.
        text: String,
    },
    /// An image stored beside the trajectory or at a URL. Since ATIF-v1.6.
    Image {
        /// Where the image is and what format it has. Since ATIF-v1.6.
        source: ImageSource,
    },
    /// An audio clip stored beside the trajectory or at a URL. Since ATIF-v1.8.
    Audio {
        /// Where the audio is, its format and duration. Since ATIF-v1.8.
        source: AudioSource,
    },
}

/// Where an image is and what format it has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageSource {
    /// The image format, exactly one of `image/jpeg`, `image/png`, `image/gif`, `image/webp`.
    /// Since ATIF-v1.6.
    pub media_type: ImageMediaType,
    /// Path relative to the trajectory file's folder, absolute path, or URL. Since ATIF-v1.6.
    pub path: String,
}

/// The four image formats ATIF allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub enum ImageMediaType {
    /// `image/jpeg`.
    #[serde(rename = "image/jpeg")]
    Jpeg,
    /// `image/png`.
    #[serde(rename = "image/png")]
    Png,
    /// `image/gif`.
    #[serde(rename = "image/gif")]
    Gif,
    /// `image/webp`.
    #[serde(rename = "image/webp")]
    Webp,
}

/// Where an audio clip is, its format and duration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AudioSource {
    /// The audio format, one of eight canonical types; common aliases such as `audio/mp3` or
    /// `audio/x-wav` are normalised when read. Since ATIF-v1.8.
    pub media_type: AudioMediaType,
    /// Path relative to the trajectory file's folder, absolute path, or URL. Since ATIF-v1.8.
    pub path: String,
    /// Length of the clip in seconds, at least 0. Since ATIF-v1.8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub duration_sec: Option<Number>,
}

/// The eight audio formats ATIF allows, in their canonical spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[non_exhaustive]
pub enum AudioMediaType {
    /// `audio/wav` (read from `audio/x-wav`, `audio/wave`, `audio/vnd.wave` too).
    #[serde(rename = "audio/wav")]
    Wav,
    /// `audio/mpeg` (read from `audio/mp3`, `audio/mpga`, `audio/x-mpeg` too).
    #[serde(rename = "audio/mpeg")]
    Mpeg,
    /// `audio/mp4` (read from `audio/m4a`, `audio/x-m4a` too).
    #[serde(rename = "audio/mp4")]
    Mp4,
    /// `audio/aac` (read from `audio/x-aac` too).
    #[serde(rename = "audio/aac")]
    Aac,
    /// `audio/ogg`.
    #[serde(rename = "audio/ogg")]
    Ogg,
    /// `audio/flac` (read from `audio/x-flac` too).
    #[serde(rename = "audio/flac")]
    Flac,
    /// `audio/webm`.
    #[serde(rename = "audio/webm")]
    Webm,
    /// `audio/aiff` (read from `audio/x-aiff` too).
    #[serde(rename = "audio/aiff")]
    Aiff,
}

/// Token counts and cost of the LLM call(s) behind one agent step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Input tokens, cached ones included. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<i64>,
    /// Output tokens. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<i64>,
    /// Input tokens served from a cache (a subset of `prompt_tokens`). Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<i64>,
    /// Cost of the call(s) in US dollars. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<Number>,
    /// Token ids of the whole prompt, chat history included. Since ATIF-v1.4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_token_ids: Option<Vec<i64>>,
    /// Token ids of the completion. Since ATIF-v1.3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_token_ids: Option<Vec<i64>>,
    /// Log-probabilities of the completion tokens. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<Number>>,
    /// Provider-specific metrics (e.g. `reasoning_tokens`), kept verbatim. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<JsonObject>,
}

/// Totals over a whole run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct FinalMetrics {
    /// Sum of the steps' `prompt_tokens`. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_prompt_tokens: Option<i64>,
    /// Sum of the steps' `completion_tokens`. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_completion_tokens: Option<i64>,
    /// Sum of the steps' `cached_tokens`. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cached_tokens: Option<i64>,
    /// Total cost in US dollars. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<Number>,
    /// Number of steps (a difference from the step count should be explained in `notes`).
    /// Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_steps: Option<u64>,
    /// Producer-specific totals, kept verbatim. Since ATIF-v1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<JsonObject>,
}

impl Trajectory {
    /// Reads a trajectory from JSON text.
    ///
    /// # Errors
    ///
    /// [`Error::Json`] with the line and column when the text is not JSON, and with the JSON
    /// Pointer of the offending value when it is JSON but not an ATIF trajectory this model can
    /// hold (unknown key, wrong type, unknown label, missing field).
    pub fn from_json_str(json: &str) -> Result<Trajectory> {
        let mut deserializer = serde_json::Deserializer::from_str(json);
        let trajectory = serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|err| path_error(err, true))?;
        deserializer.end().map_err(|err| Error::Json {
            pointer: None,
            line: Some(err.line()),
            column: Some(err.column()),
            message: format!("trailing characters after the document: {err}"),
        })?;
        Ok(trajectory)
    }

    /// Reads a trajectory from a parsed JSON value.
    ///
    /// # Errors
    ///
    /// [`Error::Json`] with the JSON Pointer of the offending value when the value is not an
    /// ATIF trajectory this model can hold.
    pub fn from_value(value: &Value) -> Result<Trajectory> {
        serde_path_to_error::deserialize(value).map_err(|err| path_error(err, false))
    }

    /// The trajectory as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self)
            .expect("serialising never fails because every map key is a string")
    }

    /// The trajectory as pretty-printed JSON text (two-space indent, fields in the order of
    /// this model, no trailing newline).
    pub fn to_json_string_pretty(&self) -> String {
        serde_json::to_string_pretty(self)
            .expect("serialising never fails because every map key is a string")
    }

    /// The declared version of this trajectory.
    pub fn version(&self) -> SchemaVersion {
        self.schema_version
    }

    /// The embedded subagents (empty when there are none).
    pub fn subagents(&self) -> &[Trajectory] {
        self.subagent_trajectories.as_deref().unwrap_or_default()
    }
}

impl Agent {
    /// An agent with a name and a version, and nothing else.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Agent {
        Agent {
            name: name.into(),
            version: version.into(),
            model_name: None,
            tool_definitions: None,
            extra: None,
        }
    }
}

impl Step {
    /// The step's tool calls (empty when there are none).
    pub fn tool_calls(&self) -> &[ToolCall] {
        self.tool_calls.as_deref().unwrap_or_default()
    }

    /// The step's observation results (empty when there is no observation).
    pub fn results(&self) -> &[ObservationResult] {
        self.observation
            .as_ref()
            .map(|observation| observation.results.as_slice())
            .unwrap_or_default()
    }
}

impl Message {
    /// The text of the message: the string itself, or the text parts joined with newlines
    /// (media parts are skipped).
    pub fn text(&self) -> String {
        match self {
            Message::Text(text) => text.clone(),
            Message::Parts(parts) => parts
                .iter()
                .filter_map(|part| match part {
                    ContentPart::Text { text } => Some(text.as_str()),
                    ContentPart::Image { .. } | ContentPart::Audio { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::Text(text.to_owned())
    }
}

impl From<String> for Message {
    fn from(text: String) -> Message {
        Message::Text(text)
    }
}

impl From<Vec<ContentPart>> for Message {
    fn from(parts: Vec<ContentPart>) -> Message {
        Message::Parts(parts)
    }
}

impl ImageMediaType {
    /// The media type as written, e.g. `image/png`.
    pub fn as_str(self) -> &'static str {
        match self {
            ImageMediaType::Jpeg => "image/jpeg",
            ImageMediaType::Png => "image/png",
            ImageMediaType::Gif => "image/gif",
            ImageMediaType::Webp => "image/webp",
        }
    }
}

impl AudioMediaType {
    /// Every audio media type, in the order of the format note.
    pub const ALL: [AudioMediaType; 8] = [
        AudioMediaType::Wav,
        AudioMediaType::Mpeg,
        AudioMediaType::Mp4,
        AudioMediaType::Aac,
        AudioMediaType::Ogg,
        AudioMediaType::Flac,
        AudioMediaType::Webm,
        AudioMediaType::Aiff,
    ];

    /// The canonical media type, e.g. `audio/mpeg`.
    pub fn as_str(self) -> &'static str {
        match self {
            AudioMediaType::Wav => "audio/wav",
            AudioMediaType::Mpeg => "audio/mpeg",
            AudioMediaType::Mp4 => "audio/mp4",
            AudioMediaType::Aac => "audio/aac",
            AudioMediaType::Ogg => "audio/ogg",
            AudioMediaType::Flac => "audio/flac",
            AudioMediaType::Webm => "audio/webm",
            AudioMediaType::Aiff => "audio/aiff",
        }
    }

    /// Reads a media type the way the reference implementations do: trimmed, lower-cased, and
    /// with the common aliases (`audio/mp3`, `audio/x-wav`, `audio/m4a`, ...) mapped to their
    /// canonical type. `None` for anything else.
    pub fn parse(media_type: &str) -> Option<AudioMediaType> {
        let lowered = media_type.trim().to_ascii_lowercase();
        let subtype = lowered.strip_prefix("audio/")?;
        let canonical = match subtype {
            "wav" | "x-wav" | "wave" | "vnd.wave" => AudioMediaType::Wav,
            "mpeg" | "mp3" | "mpga" | "x-mpeg" => AudioMediaType::Mpeg,
            "mp4" | "m4a" | "x-m4a" => AudioMediaType::Mp4,
            "aac" | "x-aac" => AudioMediaType::Aac,
            "ogg" => AudioMediaType::Ogg,
            "flac" | "x-flac" => AudioMediaType::Flac,
            "webm" => AudioMediaType::Webm,
            "aiff" | "x-aiff" => AudioMediaType::Aiff,
            _ => return None,
        };
        Some(canonical)
    }
}

impl fmt::Display for StepSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StepSource::System => "system",
            StepSource::User => "user",
            StepSource::Agent => "agent",
        })
    }
}

impl<'de> Deserialize<'de> for AudioMediaType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<AudioMediaType, D::Error> {
        let media_type = String::deserialize(deserializer)?;
        AudioMediaType::parse(&media_type).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown audio media_type `{media_type}`: expected one of audio/wav, audio/mpeg, \
                 audio/mp4, audio/aac, audio/ogg, audio/flac, audio/webm, audio/aiff \
                 (or an alias such as audio/mp3)"
            ))
        })
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Message, D::Error> {
        struct MessageVisitor;

        impl<'de> Visitor<'de> for MessageVisitor {
            type Value = Message;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content parts")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Message, E> {
                Ok(Message::Text(text.to_owned()))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Message, E> {
                Ok(Message::Text(text))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Message, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(part) = seq.next_element()? {
                    parts.push(part);
                }
                Ok(Message::Parts(parts))
            }
        }

        deserializer.deserialize_any(MessageVisitor)
    }
}

impl<'de> Deserialize<'de> for ReasoningEffort {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ReasoningEffort, D::Error> {
        struct EffortVisitor;

        impl Visitor<'_> for EffortVisitor {
            type Value = ReasoningEffort;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a number")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<ReasoningEffort, E> {
                Ok(ReasoningEffort::Text(text.to_owned()))
            }

            fn visit_u64<E: de::Error>(self, number: u64) -> Result<ReasoningEffort, E> {
                Ok(ReasoningEffort::Number(number.into()))
            }

            fn visit_i64<E: de::Error>(self, number: i64) -> Result<ReasoningEffort, E> {
                Ok(ReasoningEffort::Number(number.into()))
            }

            fn visit_f64<E: de::Error>(self, number: f64) -> Result<ReasoningEffort, E> {
                Number::from_f64(number)
                    .map(ReasoningEffort::Number)
                    .ok_or_else(|| E::custom("reasoning_effort must be a finite number"))
            }
        }

        deserializer.deserialize_any(EffortVisitor)
    }
}

/// The wire form of a content part, read before it is checked against its `type`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContentPart {
    #[serde(rename = "type")]
    kind: PartKind,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    source: Option<RawMediaSource>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum PartKind {
    Text,
    Image,
    Audio,
}

/// The wire form of an image or audio source, read before it is checked against the part's
/// `type`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMediaSource {
    media_type: String,
    path: String,
    #[serde(default)]
    duration_sec: Option<Number>,
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ContentPart, D::Error> {
        let raw = RawContentPart::deserialize(deserializer)?;
        match (raw.kind, raw.text, raw.source) {
            (PartKind::Text, Some(text), None) => Ok(ContentPart::Text { text }),
            (PartKind::Text, None, _) => Err(de::Error::custom("a text part needs `text`")),
            (PartKind::Text, Some(_), Some(_)) => {
                Err(de::Error::custom("a text part cannot have a `source`"))
            }
            (PartKind::Image | PartKind::Audio, Some(_), _) => {
                Err(de::Error::custom("an image or audio part cannot have `text`"))
            }
            (PartKind::Image | PartKind::Audio, None, None) => {
                Err(de::Error::custom("an image or audio part needs a `source`"))
            }
            (PartKind::Image, None, Some(source)) => {
                if source.duration_sec.is_some() {
                    return Err(de::Error::custom(
                        "an image source has no `duration_sec` (is this part meant to be audio?)",
                    ));
                }
                let media_type = match source.media_type.as_str() {
                    "image/jpeg" => ImageMediaType::Jpeg,
                    "image/png" => ImageMediaType::Png,
                    "image/gif" => ImageMediaType::Gif,
                    "image/webp" => ImageMediaType::Webp,
                    other => {
                        return Err(de::Error::custom(format!(
                            "unknown image media_type `{other}`: expected one of image/jpeg, \
                             image/png, image/gif, image/webp"
                        )));
                    }
                };
                Ok(ContentPart::Image { source: ImageSource { media_type, path: source.path } })
            }
            (PartKind::Audio, None, Some(source)) => {
                let Some(media_type) = AudioMediaType::parse(&source.media_type) else {
                    return Err(de::Error::custom(format!(
                        "unknown audio media_type `{}`: expected one of audio/wav, audio/mpeg, \
                         audio/mp4, audio/aac, audio/ogg, audio/flac, audio/webm, audio/aiff",
                        source.media_type
                    )));
                };
                Ok(ContentPart::Audio {
                    source: AudioSource {
                        media_type,
                        path: source.path,
                        duration_sec: source.duration_sec,
                    },
                })
            }
        }
    }
}

/// Turns a deserialisation error with its path into this crate's error.
fn path_error(err: serde_path_to_error::Error<serde_json::Error>, from_text: bool) -> Error {
    let pointer = pointer_of(err.path());
    let inner = err.into_inner();
    let (line, column) = if from_text && inner.line() > 0 {
        (Some(inner.line()), Some(inner.column()))
    } else {
        (None, None)
    };
    let detail = strip_position(&inner.to_string());
    let message = if inner.is_syntax() || inner.is_eof() {
        format!("not valid JSON: {detail}")
    } else {
        let at = if pointer.is_empty() { "the root".to_owned() } else { format!("`{pointer}`") };
        format!("not an ATIF trajectory at {at}: {detail}")
    };
    Error::Json { pointer: Some(pointer), line, column, message }
}

/// The JSON Pointer of a serde path (`steps[2].message` becomes `/steps/2/message`).
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;

    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => {
                pointer.push('/');
                pointer.push_str(&index.to_string());
            }
            Segment::Map { key } => {
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    pointer
}

/// serde_json appends " at line L column C" to its messages; we report those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(idx) => message[..idx].to_owned(),
        None => message.to_owned(),
    }
}
