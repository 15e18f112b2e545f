//! The rules: a walk over the `serde_json::Value` that knows the ATIF v1.8 superset object by
//! object and reports every finding.
//!
//! This module holds the walker and what every rule family shares: reporting, the walk over an
//! object's fields (unknown keys, `null` as absent), required fields and the per-version
//! features in use. The families live in the submodules: `trajectory` (the root and embedded
//! trajectories, labels, agent), `subagents`, `steps` (steps, tool calls, results and the call
//! join), `content` (content parts and media), `metrics` (step metrics and the totals), and
//! `values` (typed values, with Harbor's Python coercions).
//!
//! Pointers are built lazily: the walk carries a linked list of path segments on the stack and
//! renders a JSON Pointer only when it reports something, so a valid document costs one pass
//! with no allocation beyond a few small per-trajectory tables.

mod content;
mod messages;
mod metrics;
mod pointer;
mod python;
mod steps;
mod subagents;
mod trajectory;
mod values;

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::SchemaVersion;
use crate::field_table::{self, Change, ChangeKind, ObjectType};
use crate::validate::parse::sentinel_literal;
use crate::validate::rules::messages::{describe, shown_key};
use crate::validate::rules::pointer::{Path, Seg};
use crate::validate::rules::subagents::PendingRef;
use crate::validate::{Finding, Profile, Rule, Severity};

/// Checks `document`; returns the root's version and step count.
pub(crate) fn check(
    document: &Value,
    profile: Profile,
    sentinel: Option<char>,
    findings: &mut Vec<Finding>,
) -> (Option<SchemaVersion>, Option<usize>) {
    let root = Path { parent: None, seg: Seg::Root };
    let Value::Object(object) = document else {
        let message = match document {
            Value::Array(elements) => format!(
                "expected a JSON object (one trajectory), found an array of {} {}; a file holds \
                 one trajectory, so split the array into one file per element",
                elements.len(),
                if elements.len() == 1 { "element" } else { "elements" }
            ),
            other => format!("expected a JSON object (one trajectory), found {}", describe(other)),
        };
        findings.push(Finding::new(Rule::RootObject, Severity::Error, "", message));
        return (None, None);
    };
    let mut walker = Walker {
        profile,
        sentinel,
        findings,
        features: Vec::new(),
        refs: Vec::new(),
        embedded: HashSet::new(),
        unseen_work: false,
    };
    let summary = walker.trajectory(object, &root, 0);
    walker.resolve_refs();
    let n_steps = object.get("steps").and_then(Value::as_array).map(Vec::len);
    (summary.version, n_steps)
}

/// The walk's state: the options, the findings so far, and what the trajectory being walked
/// has shown that a later check needs.
struct Walker<'f, 'v> {
    profile: Profile,
    /// Strings starting with this character stand for non-finite literals (already reported).
    sentinel: Option<char>,
    findings: &'f mut Vec<Finding>,
    /// Features used by the trajectory being walked.
    features: Vec<FeatureUse>,
    /// Refs that must resolve to an embedded subagent.
    refs: Vec<PendingRef<'v>>,
    /// The `trajectory_id` of every embedded subagent, at any depth.
    embedded: HashSet<&'v str>,
    /// The trajectory being walked points at work whose metrics are not in it (subagents in
    /// other files, steps copied from a previous segment), so its totals may exceed its sums.
    unseen_work: bool,
}

/// A row of the per-version table that a trajectory uses: where first, and how often.
#[derive(Debug)]
struct FeatureUse {
    change: &'static Change,
    pointer: String,
    count: usize,
}

/// The hint an object type gives for an unknown key, e.g. `did you mean `step_id`?`.
type Hint = fn(&str) -> Option<&'static str>;

impl<'v> Walker<'_, 'v> {
    fn report(&mut self, rule: Rule, severity: Severity, path: &Path<'_>, message: String) {
        self.findings.push(Finding { rule, severity, pointer: path.render(), message });
    }

    fn error(&mut self, rule: Rule, path: &Path<'_>, message: String) {
        self.report(rule, Severity::Error, path, message);
    }

    fn warn(&mut self, rule: Rule, path: &Path<'_>, message: String) {
        self.report(rule, Severity::Warning, path, message);
    }

    /// An error in the strict profile that Harbor accepts: a warning there.
    fn lax(&mut self, rule: Rule, path: &Path<'_>, message: String) {
        self.report(rule, self.profile.lax_severity(), path, message);
    }

    fn harbor(&self) -> bool {
        self.profile == Profile::Harbor
    }

    fn sentinel(&self, value: &Value) -> Option<&'static str> {
        self.sentinel.and_then(|sentinel| sentinel_literal(value, sentinel))
    }

    // ----- fields ------------------------------------------------------------------------------

    /// Walks the fields of `object`, an ATIF object of type `object_type`: a key the type does
    /// not define is reported (with `hint`'s advice), a defined field that is `null` counts as
    /// absent, and `visit` checks each other field with its pointer.
    fn walk_fields<'o>(
        &mut self,
        object: &'o Map<String, Value>,
        object_type: ObjectType,
        path: &Path<'_>,
        hint: Hint,
        mut visit: impl FnMut(&mut Self, &'o str, &'o Value, &Path<'_>),
    ) {
        for (key, value) in object {
            let here = path.key(key);
            if !object_type.has_field(key) {
                self.unknown(&here, key, object_type, hint(key));
            } else if !value.is_null() {
                visit(&mut *self, key.as_str(), value, &here);
            }
        }
    }

    fn require(&mut self, object: &Map<String, Value>, path: &Path<'_>, key: &str, expected: &str) {
        if object.get(key).is_none_or(Value::is_null) {
            self.missing(object, path, key, expected);
        }
    }

    fn missing(&mut self, object: &Map<String, Value>, path: &Path<'_>, key: &str, expected: &str) {
        match object.get(key) {
            Some(Value::Null) => self.error(
                Rule::Required,
                &path.key(key),
                format!("`{key}` is null: expected {expected} (null counts as missing)"),
            ),
            _ => self.error(
                Rule::Required,
                path,
                format!("missing required field `{key}`: expected {expected}"),
            ),
        }
    }

    fn unknown(&mut self, path: &Path<'_>, key: &str, object_type: ObjectType, hint: Option<&str>) {
        let hint = hint.map_or(String::new(), |hint| format!(" ({hint})"));
        self.error(
            Rule::UnknownField,
            path,
            format!(
                "unknown field {}{hint}; expected one of: {}",
                shown_key(key),
                object_type.fields().join(", ")
            ),
        );
    }

    // ----- per-version features ----------------------------------------------------------------

    /// Records a use of a row of the per-version table, for the `version-feature` check once
    /// the trajectory's label is known.
    fn feature(&mut self, kind: ChangeKind, path: &Path<'_>) {
        let Some(change) = field_table::change(kind) else { return };
        match self.features.iter_mut().find(|used| std::ptr::eq(used.change, change)) {
            Some(used) => used.count += 1,
            None => self.features.push(FeatureUse { change, pointer: path.render(), count: 1 }),
        }
    }

    /// Records the use of a field that arrived after ATIF-v1.0.
    fn field_feature(&mut self, object: ObjectType, field: &'static str, path: &Path<'_>) {
        self.feature(ChangeKind::Field { object, field }, path);
    }

    /// Records that `object` lacks `field` where a row of the table says older versions
    /// required it.
    fn absent_feature(
        &mut self,
        object: &Map<String, Value>,
        object_type: ObjectType,
        field: &'static str,
        path: &Path<'_>,
    ) {
        if object.get(field).is_none_or(Value::is_null) {
            self.feature(ChangeKind::NoLongerRequired { object: object_type, field }, path);
        }
    }

    /// Warns about each row of the per-version table that the trajectory uses (or, for a field
    /// that used to be required, lacks) although its label is older.
    fn version_features(&mut self, version: SchemaVersion, features: Vec<FeatureUse>) {
        for used in features {
            let since = used.change.since;
            if since <= version {
                continue;
            }
            let more = match used.count {
                1 => String::new(),
                n => format!(" (and {} more places)", n - 1),
            };
            let what = used.change.what;
            let message = match used.change.kind {
                ChangeKind::NoLongerRequired { .. } => format!(
                    "{version} requires {what} (it became optional in {since}){more}; no \
                     reference validator enforces this any more"
                ),
                _ => format!(
                    "{what} arrived in {since}, but the document is labelled {version}{more}; \
                     readers accept it (no reference gates by label), but the label should be at \
                     least {since}"
                ),
            };
            self.findings.push(Finding {
                rule: Rule::VersionFeature,
                severity: Severity::Warning,
                pointer: used.pointer,
                message,
            });
        }
    }
}

/// For objects whose unknown keys get no particular advice.
fn no_hint(_key: &str) -> Option<&'static str> {
    None
}
