//! Rules of a trajectory object (the root and each embedded subagent): its fields, its label,
//! its agent, and the per-version features it uses.

use serde_json::{Map, Value};

use crate::SchemaVersion;
use crate::field_table::ObjectType;
use crate::validate::rules::Walker;
use crate::validate::rules::messages::describe;
use crate::validate::rules::metrics::{Sums, TotalsBasis};
use crate::validate::rules::pointer::Path;
use crate::validate::{Profile, Rule};

/// What a trajectory tells its parent.
#[derive(Debug, Default)]
pub(super) struct TrajectorySummary {
    pub(super) version: Option<SchemaVersion>,
    /// Sums over its own agent steps and those of its embedded subagents, recursively.
    pub(super) sums_with_subagents: Sums,
}

impl<'v> Walker<'_, 'v> {
    /// Checks one trajectory: the root (`depth` 0) or an embedded subagent.
    pub(super) fn trajectory(
        &mut self,
        object: &'v Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
    ) -> TrajectorySummary {
        let saved_features = std::mem::take(&mut self.features);
        let saved_unseen_work = std::mem::replace(&mut self.unseen_work, false);
        let mut version = None;
        let mut steps = None;
        let mut totals = None;
        let mut sub_sums = Sums::default();
        let walk = |walker: &mut Self, key: &str, value: &'v Value, here: &Path<'_>| match key {
            "schema_version" => version = walker.schema_version(value, here),
            "session_id" | "notes" => {
                walker.string(value, here);
            }
            "trajectory_id" => {
                walker.field_feature(ObjectType::Trajectory, "trajectory_id", here);
                walker.string(value, here);
            }
            "continued_trajectory_ref" => {
                walker.field_feature(ObjectType::Trajectory, "continued_trajectory_ref", here);
                walker.string(value, here);
            }
            "extra" => {
                walker.field_feature(ObjectType::Trajectory, "extra", here);
                walker.object(value, here);
            }
            "agent" => walker.agent(value, here),
            "steps" => steps = walker.steps(value, here),
            "final_metrics" => totals = walker.final_metrics(value, here),
            "subagent_trajectories" => {
                walker.field_feature(ObjectType::Trajectory, "subagent_trajectories", here);
                sub_sums = walker.subagents(value, here, depth);
            }
            _ => {}
        };
        self.walk_fields(object, ObjectType::Trajectory, path, trajectory_hint, walk);
        if let Some(Value::Null) = object.get("schema_version") {
            self.schema_version(&Value::Null, &path.key("schema_version"));
        }
        if let Some(default) = self.required_trajectory_fields(object, path) {
            version = Some(default);
        }
        self.absent_feature(object, ObjectType::Trajectory, "session_id", path);

        let unseen_work = std::mem::replace(&mut self.unseen_work, saved_unseen_work);
        let features = std::mem::replace(&mut self.features, saved_features);
        if let Some(version) = version {
            self.version_features(version, features);
        }

        let (n_steps, own_sums) =
            steps.map_or((None, Sums::default()), |(n, sums)| (Some(n), sums));
        let mut all_sums = own_sums;
        all_sums.add(&sub_sums);
        if let Some(totals) = totals {
            let sums = TotalsBasis { own: own_sums, all: all_sums, unseen_work };
            self.check_totals(object, path, &totals, &sums, n_steps);
        }
        TrajectorySummary { version, sums_with_subagents: all_sums }
    }

    /// Reports a missing `agent`, `steps` or `schema_version`; returns the version the harbor
    /// profile reads a missing label as.
    fn required_trajectory_fields(
        &mut self,
        object: &Map<String, Value>,
        path: &Path<'_>,
    ) -> Option<SchemaVersion> {
        if object.get("agent").is_none_or(Value::is_null) {
            self.missing(object, path, "agent", "an agent object ({name, version, …})");
        }
        if object.get("steps").is_none_or(Value::is_null) {
            self.missing(object, path, "steps", "an array of steps");
        }
        if object.contains_key("schema_version") {
            return None;
        }
        match self.profile {
            Profile::Strict => {
                self.error(
                    Rule::SchemaVersion,
                    path,
                    "missing schema_version: expected a label such as \"ATIF-v1.8\" (Harbor \
                     assumes ATIF-v1.8 when it is missing, the atif package rejects the file)"
                        .to_owned(),
                );
                None
            }
            Profile::Harbor => {
                self.warn(
                    Rule::SchemaVersion,
                    path,
                    "missing schema_version: Harbor reads it as ATIF-v1.8".to_owned(),
                );
                Some(SchemaVersion::V1_8)
            }
        }
    }

    fn schema_version(&mut self, value: &Value, path: &Path<'_>) -> Option<SchemaVersion> {
        let label = match value {
            Value::String(label) => label,
            Value::Null => {
                self.error(
                    Rule::SchemaVersion,
                    path,
                    "schema_version is null: expected a label such as \"ATIF-v1.8\"".to_owned(),
                );
                return None;
            }
            other => {
                self.error(
                    Rule::SchemaVersion,
                    path,
                    format!(
                        "expected a label such as \"ATIF-v1.8\" (a string), found {}",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        if let Ok(version) = SchemaVersion::try_from(label.as_str()) {
            return Some(version);
        }
        let guess = label
            .trim()
            .trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '-')
            .trim_start_matches(['v', 'V']);
        let hint = SchemaVersion::ALL
            .into_iter()
            .find(|version| version.label().ends_with(&format!("v{guess}")) && !guess.is_empty())
            .map_or(String::new(), |version| format!(" (did you mean {:?}?)", version.label()));
        self.error(
            Rule::SchemaVersion,
            path,
            format!(
                "unknown schema_version {label:?}: expected one of ATIF-v1.0 … ATIF-v1.8{hint}"
            ),
        );
        None
    }

    fn agent(&mut self, value: &Value, path: &Path<'_>) {
        let Some(object) = self.expect_object(value, path, "an agent object ({name, version, …})")
        else {
            return;
        };
        self.walk_fields(
            object,
            ObjectType::Agent,
            path,
            agent_hint,
            |walker, key, value, here| match key {
                "name" | "model_name" => {
                    walker.string(value, here);
                }
                "version" => walker.agent_version(value, here),
                "tool_definitions" => {
                    walker.field_feature(ObjectType::Agent, "tool_definitions", here);
                    let Some(definitions) = walker.array(value, here) else { return };
                    for (def_idx, definition) in definitions.iter().enumerate() {
                        walker.expect_object(
                            definition,
                            &here.index(def_idx),
                            "a tool definition object ({type, function})",
                        );
                    }
                }
                "extra" => {
                    walker.object(value, here);
                }
                _ => {}
            },
        );
        self.require(object, path, "name", "a string (the agent's name)");
        self.require(object, path, "version", "a string (the agent's version)");
    }

    /// `agent.version`: a string, and a number is a common slip worth naming.
    fn agent_version(&mut self, value: &Value, path: &Path<'_>) {
        if let Value::Number(number) = value {
            self.error(
                Rule::Type,
                path,
                format!(
                    "expected a string, found the number {number}: write the version as a \
                     string, e.g. \"{number}\""
                ),
            );
        } else {
            self.string(value, path);
        }
    }
}

fn trajectory_hint(key: &str) -> Option<&'static str> {
    match key {
        "version" | "schemaVersion" => Some("the label lives in `schema_version`"),
        "metadata" | "meta" => Some("put producer-specific data in `extra`"),
        _ => None,
    }
}

fn agent_hint(key: &str) -> Option<&'static str> {
    match key {
        "model" => Some("did you mean `model_name`?"),
        "provider" => Some("put provider details in `agent.extra`"),
        "tools" => Some("did you mean `tool_definitions`?"),
        _ => None,
    }
}
