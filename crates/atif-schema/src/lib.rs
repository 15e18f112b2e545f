//! Typed models, validation and JSON Schemas for ATIF (Agent Trajectory Interchange Format)
//! v1.0 to v1.8.
//!
//! ATIF is the JSON format in which an LLM agent's run is recorded: the agent, then its steps
//! (system events, user messages, agent turns with tool calls and their results), token metrics
//! and embedded subagent runs. This crate is the one place the rest of the workspace learns
//! what a trajectory is.
//!
//! - [`Trajectory`] and its parts ([`Step`], [`ToolCall`], [`ObservationResult`],
//!   [`ContentPart`], [`Metrics`], …) are typed serde models of the v1.8 superset. They are the
//!   wire format: reading then writing a document gives the same JSON value back, the
//!   `schema_version` label is data ([`SchemaVersion`]) and is kept, and the open places
//!   (`extra` objects, tool `arguments`) are kept verbatim.
//! - [`validate`] checks every ATIF rule on a `serde_json::Value` and reports every finding
//!   with a rule id, a severity and a JSON Pointer; [`parse_json`] reads bytes strictly. It
//!   never touches the file system unless [`ValidateOptions::set_media_folder`] names the
//!   trajectory's folder, for Harbor's check that local media files exist.
//! - [`json_kind`] and [`error_chain`] are how the workspace's messages name the kind of a JSON
//!   value and write an error with its causes.
//! - [`check_timestamp`] is the one timestamp check of the workspace: what the validator's
//!   `timestamp` rule and every producer (the importers, the builder's callers) accept.
//! - [`load_trajectory`] (and [`read_path`], [`read_reader`], [`parse_trajectory`], and
//!   [`check_trajectory_bytes`] for a caller that reads the bytes its own way) is the
//!   one way a trajectory is read from outside: within a size limit ([`LoadOptions`]), stopped
//!   at the first byte of binary input, and accepted only when it is strict JSON with the form
//!   of a trajectory. Every tool of the workspace reads through it.
//! - [`TrajectoryBuilder`] writes valid trajectories from Rust code: step ids, call joins,
//!   embedded subagents and `final_metrics` are done for you, and agent-only fields exist only
//!   on [`AgentStepBuilder`].
//! - [`json_schema`] gives the Draft 2020-12 JSON Schema of each version (committed in
//!   `docs/schema/`, for generating types in other languages), and [`upgrade`] rewrites an
//!   older document as ATIF-v1.8.
//!
//! The key design decision: one model for all nine versions. Every change from v1.0 to v1.8
//! was additive except the v1.7 subagent-ref rule, so the v1.8 superset reads every version;
//! the label says what the producer claims, the validator warns when the content uses a
//! feature newer than the label, and the per-version JSON Schemas are the v1.8 schema with the
//! later fields taken out.
//!
//! # Example
//!
//! ```
//! use atif_schema::{Agent, AgentStepBuilder, Metrics, SchemaVersion, Trajectory, TrajectoryBuilder};
//! use serde_json::json;
//!
//! # fn main() -> atif_schema::Result<()> {
//! // Read a trajectory and look inside.
//! let text = r#"{
//!     "schema_version": "ATIF-v1.5",
//!     "agent": {"name": "demo", "version": "1.0"},
//!     "steps": [
//!         {"step_id": 1, "source": "user", "message": "What is 6 x 7?"},
//!         {"step_id": 2, "source": "agent", "message": "42"}
//!     ]
//! }"#;
//! let trajectory = Trajectory::from_json_str(text)?;
//! assert_eq!(trajectory.version(), SchemaVersion::V1_5);
//! assert_eq!(trajectory.steps[1].message.text(), "42");
//!
//! // Build one: ids, the call join and the totals are taken care of.
//! let built = TrajectoryBuilder::new(Agent::new("demo", "1.0"))
//!     .user("What is 6 x 7?")
//!     .agent_step(
//!         AgentStepBuilder::new("Let me compute that.")
//!             .tool_call("call-1", "calculator", json!({"expression": "6 * 7"}))?
//!             .tool_result("call-1", "42")?
//!             .metrics(Metrics { prompt_tokens: Some(12), completion_tokens: Some(5), ..Metrics::default() }),
//!     )
//!     .agent_step(AgentStepBuilder::new("6 x 7 = 42."))
//!     .build()?;
//! assert_eq!(built.steps[2].step_id, 3);
//! assert_eq!(built.final_metrics.as_ref().and_then(|m| m.total_prompt_tokens), Some(12));
//!
//! // Every built trajectory is valid.
//! let report = atif_schema::validate(&built.to_value(), &atif_schema::ValidateOptions::default());
//! assert!(report.is_valid());
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod builder;
mod error;
mod error_chain;
mod field_table;
mod into_value;
mod json_kind;
mod json_schema;
mod load;
mod timestamp;
mod trajectory;
mod upgrade;
mod validate;
mod version;

pub use builder::{AgentStepBuilder, StepBuilder, TrajectoryBuilder};
pub use error::{Error, Result};
pub use error_chain::error_chain;
pub use field_table::{CHANGES, Change, ChangeKind, ObjectType};
pub use json_kind::json_kind;
pub use json_schema::{field_since, json_schema, json_schema_file_name, json_schema_text};
pub use load::{
    DEFAULT_MAX_INPUT_BYTES, Expected, LoadOptions, TrajectoryForm, check_trajectory,
    check_trajectory_bytes, load_trajectory, parse_trajectory, read_path, read_reader, read_stdin,
};
pub use timestamp::check_timestamp;
pub use trajectory::{
    Agent, AudioMediaType, AudioSource, ContentPart, FinalMetrics, ImageMediaType, ImageSource,
    JsonObject, Message, Metrics, Observation, ObservationResult, ReasoningEffort, Step,
    StepSource, SubagentTrajectoryRef, ToolCall, Trajectory,
};
pub use upgrade::{Upgrade, upgrade, upgrade_owned};
pub use validate::{
    Finding, Profile, Rule, Severity, ValidateOptions, Validation, parse_json, validate,
    validate_bytes,
};
pub use version::SchemaVersion;
