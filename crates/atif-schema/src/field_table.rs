//! The per-version field table: every ATIF object with its fields, and everything that changed
//! after ATIF-v1.0 with the version it arrived in.
//!
//! This is the one place that says which version has what. The validator's `version-feature`
//! warnings and unknown-field lists, [`upgrade`](crate::upgrade)'s fixes and the per-version
//! [`json_schema`](crate::json_schema)s all read it; a test checks the table against the typed
//! model, and another checks each consumer against every row.

use crate::SchemaVersion;

/// An ATIF object type, named as in the `$defs` of the JSON Schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ObjectType {
    /// The root of a document, and each embedded subagent.
    Trajectory,
    /// `agent`.
    Agent,
    /// An element of `steps`.
    Step,
    /// An element of a step's `tool_calls`.
    ToolCall,
    /// A step's `observation`.
    Observation,
    /// An element of `observation.results`.
    ObservationResult,
    /// An element of a result's `subagent_trajectory_ref`.
    SubagentTrajectoryRef,
    /// An element of a content-part array (`message` or a result's `content`).
    ContentPart,
    /// The `source` of an image content part.
    ImageSource,
    /// The `source` of an audio content part.
    AudioSource,
    /// A step's `metrics`.
    Metrics,
    /// `final_metrics`.
    FinalMetrics,
}

impl ObjectType {
    /// Every object type, the root first.
    pub const ALL: [ObjectType; 12] = [
        ObjectType::Trajectory,
        ObjectType::Agent,
        ObjectType::Step,
        ObjectType::ToolCall,
        ObjectType::Observation,
        ObjectType::ObservationResult,
        ObjectType::SubagentTrajectoryRef,
        ObjectType::ContentPart,
        ObjectType::ImageSource,
        ObjectType::AudioSource,
        ObjectType::Metrics,
        ObjectType::FinalMetrics,
    ];

    /// The name of its `$defs` entry in the JSON Schemas, e.g. `SubagentTrajectoryRef`.
    pub fn name(self) -> &'static str {
        match self {
            ObjectType::Trajectory => "Trajectory",
            ObjectType::Agent => "Agent",
            ObjectType::Step => "Step",
            ObjectType::ToolCall => "ToolCall",
            ObjectType::Observation => "Observation",
            ObjectType::ObservationResult => "ObservationResult",
            ObjectType::SubagentTrajectoryRef => "SubagentTrajectoryRef",
            ObjectType::ContentPart => "ContentPart",
            ObjectType::ImageSource => "ImageSource",
            ObjectType::AudioSource => "AudioSource",
            ObjectType::Metrics => "Metrics",
            ObjectType::FinalMetrics => "FinalMetrics",
        }
    }

    /// The object type with this `$defs` name.
    pub fn from_name(name: &str) -> Option<ObjectType> {
        ObjectType::ALL.into_iter().find(|object| object.name() == name)
    }

    /// Every field the object has in ATIF-v1.8, in the order of the typed model. Which of them
    /// an older version lacks is in [`CHANGES`]; see [`ObjectType::field_since`].
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            ObjectType::Trajectory => &[
                "schema_version",
                "session_id",
                "trajectory_id",
                "agent",
                "steps",
                "notes",
                "final_metrics",
                "continued_trajectory_ref",
                "extra",
                "subagent_trajectories",
            ],
            ObjectType::Agent => &["name", "version", "model_name", "tool_definitions", "extra"],
            ObjectType::Step => &[
                "step_id",
                "timestamp",
                "source",
                "model_name",
                "reasoning_effort",
                "message",
                "reasoning_content",
                "tool_calls",
                "observation",
                "metrics",
                "llm_call_count",
                "is_copied_context",
                "extra",
            ],
            ObjectType::ToolCall => &["tool_call_id", "function_name", "arguments", "extra"],
            ObjectType::Observation => &["results"],
            ObjectType::ObservationResult => {
                &["source_call_id", "content", "subagent_trajectory_ref", "extra"]
            }
            ObjectType::SubagentTrajectoryRef => {
                &["session_id", "trajectory_id", "trajectory_path", "extra"]
            }
            ObjectType::ContentPart => &["type", "text", "source"],
            ObjectType::ImageSource => &["media_type", "path"],
            ObjectType::AudioSource => &["media_type", "path", "duration_sec"],
            ObjectType::Metrics => &[
                "prompt_tokens",
                "completion_tokens",
                "cached_tokens",
                "cost_usd",
                "prompt_token_ids",
                "completion_token_ids",
                "logprobs",
                "extra",
            ],
            ObjectType::FinalMetrics => &[
                "total_prompt_tokens",
                "total_completion_tokens",
                "total_cached_tokens",
                "total_cost_usd",
                "total_steps",
                "extra",
            ],
        }
    }

    /// Whether `field` is one of the object's fields (in ATIF-v1.8).
    pub fn has_field(self, field: &str) -> bool {
        self.fields().contains(&field)
    }

    /// The version the object type arrived in (ATIF-v1.0 for most).
    pub fn since(self) -> SchemaVersion {
        CHANGES
            .iter()
            .find(|change| change.kind == ChangeKind::Object(self))
            .map_or(SchemaVersion::V1_0, |change| change.since)
    }

    /// The version `field` of this object arrived in: the later of the object's own arrival
    /// and the field's (`None` when the object has no such field).
    pub fn field_since(self, field: &str) -> Option<SchemaVersion> {
        if !self.has_field(field) {
            return None;
        }
        let added = CHANGES
            .iter()
            .find(|change| {
                matches!(change.kind, ChangeKind::Field { object, field: name } if object == self && name == field)
            })
            .map_or(SchemaVersion::V1_0, |change| change.since);
        Some(added.max(self.since()))
    }
}

/// Something that changed after ATIF-v1.0: one row of the per-version table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// The first version with the change.
    pub since: SchemaVersion,
    /// What changed.
    pub kind: ChangeKind,
    /// How messages name it, e.g. `` `agent.tool_definitions` ``.
    pub what: &'static str,
}

/// What a [`Change`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// A new optional field of an existing object.
    Field {
        /// The object the field belongs to.
        object: ObjectType,
        /// The field's name.
        field: &'static str,
    },
    /// A new object type, whose fields arrive with it.
    Object(ObjectType),
    /// A new value of a content part's `type` (the part's `source` object arrives with it).
    ContentPartType(&'static str),
    /// An `observation` on a system step, not only on agent steps.
    SystemObservation,
    /// A field that was required before and is optional since.
    NoLongerRequired {
        /// The object the field belongs to.
        object: ObjectType,
        /// The field's name.
        field: &'static str,
    },
    /// A subagent ref must say where its trajectory is (`trajectory_id` of an embedded one, or
    /// `trajectory_path`): a ref with only a `session_id` no longer resolves. The one change that
    /// is not additive, and the one [`upgrade`](crate::upgrade) repairs where it can.
    RefNamesTrajectory,
}

/// Everything that changed after ATIF-v1.0, oldest first.
pub static CHANGES: &[Change] = &[
    field(SchemaVersion::V1_1, ObjectType::Trajectory, "extra", "root `extra`"),
    Change {
        since: SchemaVersion::V1_2,
        kind: ChangeKind::SystemObservation,
        what: "an observation on a system step",
    },
    field(
        SchemaVersion::V1_3,
        ObjectType::Metrics,
        "completion_token_ids",
        "`metrics.completion_token_ids`",
    ),
    field(
        SchemaVersion::V1_4,
        ObjectType::Metrics,
        "prompt_token_ids",
        "`metrics.prompt_token_ids`",
    ),
    field(SchemaVersion::V1_5, ObjectType::Agent, "tool_definitions", "`agent.tool_definitions`"),
    field(
        SchemaVersion::V1_5,
        ObjectType::Trajectory,
        "continued_trajectory_ref",
        "`continued_trajectory_ref`",
    ),
    field(SchemaVersion::V1_5, ObjectType::Step, "is_copied_context", "`is_copied_context`"),
    Change {
        since: SchemaVersion::V1_6,
        kind: ChangeKind::Object(ObjectType::ContentPart),
        what: "content-part arrays",
    },
    Change {
        since: SchemaVersion::V1_6,
        kind: ChangeKind::Object(ObjectType::ImageSource),
        what: "image content parts",
    },
    field(SchemaVersion::V1_7, ObjectType::Trajectory, "trajectory_id", "root `trajectory_id`"),
    field(
        SchemaVersion::V1_7,
        ObjectType::Trajectory,
        "subagent_trajectories",
        "embedded `subagent_trajectories`",
    ),
    field(SchemaVersion::V1_7, ObjectType::Step, "llm_call_count", "`llm_call_count`"),
    field(SchemaVersion::V1_7, ObjectType::ToolCall, "extra", "`tool_calls[].extra`"),
    field(
        SchemaVersion::V1_7,
        ObjectType::ObservationResult,
        "extra",
        "`observation.results[].extra`",
    ),
    field(
        SchemaVersion::V1_7,
        ObjectType::SubagentTrajectoryRef,
        "trajectory_id",
        "`subagent_trajectory_ref[].trajectory_id`",
    ),
    Change {
        since: SchemaVersion::V1_7,
        kind: ChangeKind::NoLongerRequired { object: ObjectType::Trajectory, field: "session_id" },
        what: "`session_id`",
    },
    Change {
        since: SchemaVersion::V1_7,
        kind: ChangeKind::NoLongerRequired {
            object: ObjectType::SubagentTrajectoryRef,
            field: "session_id",
        },
        what: "`session_id` on a subagent ref",
    },
    Change {
        since: SchemaVersion::V1_7,
        kind: ChangeKind::RefNamesTrajectory,
        what: "a subagent ref that names its trajectory (trajectory_id or trajectory_path)",
    },
    Change {
        since: SchemaVersion::V1_8,
        kind: ChangeKind::ContentPartType("audio"),
        what: "audio content parts",
    },
    Change {
        since: SchemaVersion::V1_8,
        kind: ChangeKind::Object(ObjectType::AudioSource),
        what: "audio content parts",
    },
];

/// The row of `kind`, when the table has one.
pub(crate) fn change(kind: ChangeKind) -> Option<&'static Change> {
    CHANGES.iter().find(|change| change.kind == kind)
}

const fn field(
    since: SchemaVersion,
    object: ObjectType,
    field: &'static str,
    what: &'static str,
) -> Change {
    Change { since, kind: ChangeKind::Field { object, field }, what }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_names_a_field_the_object_has_and_rows_are_oldest_first() {
        for change in CHANGES {
            if let ChangeKind::Field { object, field }
            | ChangeKind::NoLongerRequired { object, field } = change.kind
            {
                assert!(object.has_field(field), "{change:?}");
            }
        }
        assert!(CHANGES.windows(2).all(|pair| pair[0].since <= pair[1].since));
    }

    #[test]
    fn a_field_arrives_with_its_object_or_later() {
        assert_eq!(ObjectType::Step.field_since("llm_call_count"), Some(SchemaVersion::V1_7));
        assert_eq!(ObjectType::Step.field_since("message"), Some(SchemaVersion::V1_0));
        assert_eq!(ObjectType::AudioSource.field_since("path"), Some(SchemaVersion::V1_8));
        assert_eq!(ObjectType::ImageSource.field_since("path"), Some(SchemaVersion::V1_6));
        assert_eq!(ObjectType::Step.field_since("banana"), None);
        assert_eq!(ObjectType::from_name("ToolCall"), Some(ObjectType::ToolCall));
        assert_eq!(ObjectType::from_name("Banana"), None);
    }
}
