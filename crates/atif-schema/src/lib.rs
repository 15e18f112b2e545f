//! Typed models, validation and JSON Schemas for ATIF (Agent Trajectory Interchange Format)
//! v1.0 to v1.8: the JSON format in which an LLM agent's run is recorded (the agent, its steps
//! with tool calls and their results, token metrics, embedded subagent runs).
//!
//! Which function for which job:
//! - Read a trajectory: [`load_trajectory`] from a file, [`parse_trajectory`] from bytes you
//!   hold; both bounded and strict (no duplicate keys, no integer beyond 64 bits), failing with
//!   the JSON Pointer of what is not a trajectory. [`Trajectory::from_json_str`] gives the
//!   typed model. The bounded reader under them ([`read_path`], [`read_reader`], with
//!   [`Expected`] naming another kind of document) is for what is not a trajectory.
//! - Check one: [`validate`] (or [`validate_bytes`]) reports every finding with a rule id, a
//!   severity and a JSON Pointer, under a [`Profile`] (`strict`, or `harbor`).
//! - Write one from Rust: [`TrajectoryBuilder`] does step ids, call joins, subagents and
//!   `final_metrics`.
//! - Convert: [`upgrade`] rewrites an older document as ATIF-v1.8; [`json_schema`] gives each
//!   version's JSON Schema (committed in `docs/schema/`).
//!
//! [`Trajectory`] and its parts ([`Step`], [`ToolCall`], [`Metrics`], …) are the wire format:
//! reading then writing a document gives the same JSON back, `extra` objects and tool
//! arguments verbatim. [`check_timestamp`] and [`error_chain`] are the workspace's one
//! timestamp rule and its way of writing an error with its causes.
//!
//! The key design decision: one model for all nine versions. Every change from v1.0 to v1.8
//! was additive except the v1.7 subagent-ref rule, so the v1.8 superset reads every version;
//! the label says what the producer claims, and the validator warns when the content uses a
//! feature newer than the label.
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
mod draft;
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
pub use json_schema::{json_schema, json_schema_file_name, json_schema_text};
pub use load::{
    DEFAULT_MAX_INPUT_BYTES, Expected, LoadOptions, load_trajectory, parse_trajectory, read_path,
    read_reader,
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

/// What other crates of this workspace share with this one (the CLI's readers, the importers'
/// messages): not public API, and free to change in any release.
#[doc(hidden)]
pub mod support {
    pub use crate::json_kind::json_kind;
    pub use crate::load::{TrajectoryForm, check_trajectory, check_trajectory_bytes, read_stdin};

    /// The mutable draft every writer of ATIF in the workspace fills (the importers, both
    /// captures, the builder), converted once into the typed model.
    pub mod draft {
        pub use crate::draft::{
            FinalMetrics, Metrics, ObsResult, Part, Step, Timestamp, ToolCall, Trajectory,
        };
    }
}
