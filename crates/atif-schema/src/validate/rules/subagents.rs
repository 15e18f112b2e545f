//! Rules of subagents: embedded trajectories with unique ids, refs that say where their
//! trajectory is, and refs that resolve to an embedded trajectory somewhere in the document.

use std::collections::HashMap;

use serde_json::Value;

use crate::field_table::{self, ChangeKind, ObjectType};
use crate::validate::rules::metrics::Sums;
use crate::validate::rules::pointer::Path;
use crate::validate::rules::{Walker, no_hint};
use crate::validate::{Finding, Rule};

/// Embedded subagents deeper than this are not checked (a parsed document cannot get close:
/// the reader stops at 128 levels of nesting, and each subagent level takes two).
const MAX_SUBAGENT_DEPTH: usize = 64;

/// A subagent ref that must resolve to an embedded subagent of its trajectory.
#[derive(Debug)]
pub(super) struct PendingRef<'v> {
    pointer: String,
    trajectory_id: &'v str,
}

impl<'v> Walker<'_, 'v> {
    /// Checks the `subagent_trajectories` of a trajectory `depth` levels down: each embedded
    /// trajectory, with a `trajectory_id` unique in the array; returns the sums of their agent
    /// steps' metrics, recursively.
    pub(super) fn subagents(&mut self, value: &'v Value, path: &Path<'_>, depth: usize) -> Sums {
        let mut sums = Sums::default();
        let Some(subagents) = self.array(value, path) else { return sums };
        let mut ids: HashMap<&'v str, usize> = HashMap::new();
        for (sub_idx, subagent) in subagents.iter().enumerate() {
            let sub_path = path.index(sub_idx);
            let Some(sub_object) =
                self.expect_object(subagent, &sub_path, "an embedded trajectory")
            else {
                continue;
            };
            if depth + 1 > MAX_SUBAGENT_DEPTH {
                self.error(
                    Rule::Depth,
                    &sub_path,
                    format!(
                        "embedded subagents are nested more than {MAX_SUBAGENT_DEPTH} levels \
                         deep; not checked further"
                    ),
                );
                continue;
            }
            let summary = self.trajectory(sub_object, &sub_path, depth + 1);
            sums.add(&summary.sums_with_subagents);
            match sub_object.get("trajectory_id") {
                None | Some(Value::Null) => self.error(
                    Rule::SubagentId,
                    &sub_path,
                    "embedded subagent has no trajectory_id: every element of \
                     subagent_trajectories needs one, unique within the array, so refs can name it"
                        .to_owned(),
                ),
                Some(Value::String(id)) => {
                    self.embedded.insert(id);
                    if let Some(first) = ids.insert(id, sub_idx) {
                        ids.insert(id, first);
                        self.error(
                            Rule::SubagentId,
                            &sub_path.key("trajectory_id"),
                            format!(
                                "duplicate trajectory_id {id:?}: already used by \
                                 subagent_trajectories element {first}"
                            ),
                        );
                    }
                }
                Some(_) => {} // a type error, reported inside
            }
        }
        sums
    }

    /// Checks a result's `subagent_trajectory_ref`: an array of refs.
    pub(super) fn subagent_refs(&mut self, value: &'v Value, path: &Path<'_>) {
        if let Value::Object(_) = value {
            self.error(
                Rule::Type,
                path,
                "expected an array of refs, found an object: wrap a single ref in an array"
                    .to_owned(),
            );
            return;
        }
        let Some(refs) = self.array(value, path) else { return };
        for (ref_idx, subagent_ref) in refs.iter().enumerate() {
            self.subagent_ref(subagent_ref, &path.index(ref_idx));
        }
    }

    fn subagent_ref(&mut self, value: &'v Value, path: &Path<'_>) {
        let Some(object) = self.expect_object(
            value,
            path,
            "a subagent ref object ({trajectory_id} or {trajectory_path})",
        ) else {
            return;
        };
        let mut trajectory_id = None;
        let walk = |walker: &mut Self, key: &str, value: &'v Value, here: &Path<'_>| match key {
            "session_id" | "trajectory_path" => {
                walker.string(value, here);
            }
            "trajectory_id" => {
                walker.field_feature(ObjectType::SubagentTrajectoryRef, "trajectory_id", here);
                trajectory_id = walker.string(value, here);
            }
            "extra" => {
                walker.object(value, here);
            }
            _ => {}
        };
        self.walk_fields(object, ObjectType::SubagentTrajectoryRef, path, no_hint, walk);
        self.absent_feature(object, ObjectType::SubagentTrajectoryRef, "session_id", path);
        let present = |key: &str| object.get(key).is_some_and(|value| !value.is_null());
        if !present("trajectory_id") && !present("trajectory_path") {
            let session = match field_table::change(ChangeKind::RefNamesTrajectory) {
                Some(change) if present("session_id") => format!(
                    " (a session_id alone stopped being a valid ref in {}: it never said where \
                     the subagent is)",
                    change.since
                ),
                _ => String::new(),
            };
            self.error(
                Rule::SubagentRef,
                path,
                format!("subagent ref has neither trajectory_id nor trajectory_path{session}"),
            );
        }
        if present("trajectory_path") {
            self.unseen_work = true;
            return;
        }
        if let Some(trajectory_id) = trajectory_id {
            let pointer = path.key("trajectory_id").render();
            self.refs.push(PendingRef { pointer, trajectory_id });
        }
    }

    /// Refs that name an embedded subagent must find it somewhere in the document, unless a
    /// path says where it lives.
    pub(super) fn resolve_refs(&mut self) {
        for pending in std::mem::take(&mut self.refs) {
            if self.embedded.contains(pending.trajectory_id) {
                continue;
            }
            let message = format!(
                "subagent ref trajectory_id {:?} names no embedded subagent (no element of any \
                 subagent_trajectories in this document has that id), and the ref has no \
                 trajectory_path, so a reader cannot find the subagent{}",
                pending.trajectory_id,
                if self.harbor() { " (Harbor does not check this)" } else { "" }
            );
            self.findings.push(Finding {
                rule: Rule::SubagentResolve,
                severity: self.profile.lax_severity(),
                pointer: pending.pointer,
                message,
            });
        }
    }
}
