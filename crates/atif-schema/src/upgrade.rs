//! `upgrade`: rewrite an ATIF v1.x document as ATIF-v1.8, saying what changed and what could
//! not be changed safely.
//!
//! The upgrade follows the per-version table ([`CHANGES`]). Every change from v1.0 to v1.8 was
//! additive except one ([`ChangeKind::RefNamesTrajectory`]): since v1.7 a subagent ref must name
//! its trajectory by `trajectory_id` (embedded) or `trajectory_path` (stored); a v1.6-style ref
//! with only `session_id` no longer resolves. For a document labelled before that change, the
//! upgrade fixes such a ref only when the answer is in the document (exactly one embedded
//! subagent with that `session_id` and a `trajectory_id`), and otherwise leaves it as it is and
//! says so: it never invents data.

use serde_json::{Map, Value};

use crate::json_kind::json_kind;
use crate::{CHANGES, ChangeKind, Error, Result, SchemaVersion};

/// The result of [`upgrade`]: the rewritten document and what happened to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Upgrade {
    /// The document, labelled `ATIF-v1.8`.
    pub document: Value,
    /// One line per change made or not made, each starting with the JSON Pointer it concerns
    /// (`""` is the root).
    pub notes: Vec<String>,
}

/// Rewrites a v1.x document as ATIF-v1.8: the label (of the root and of every embedded
/// subagent), and the v1.7 subagent-ref change where it can be made safely.
///
/// The input is not validated (the refs this repairs are errors until it does), and anything the
/// upgrade does not need to touch is copied as it is, so the result may still be invalid:
/// [`validate`](crate::validate) it before writing it, as `atif upgrade` does. Its findings are
/// at the input's pointers, since the upgrade only adds fields.
/// A missing `schema_version` is read as `ATIF-v1.8`, as Harbor does, and noted.
///
/// # Errors
///
/// [`Error::Json`], with the JSON Pointer in its message, when the root (or an embedded
/// subagent) is not a JSON object, or its `schema_version` is not a string or not one of
/// `ATIF-v1.0` … `ATIF-v1.8`.
pub fn upgrade(document: &Value) -> Result<Upgrade> {
    upgrade_owned(document.clone())
}

/// [`upgrade`], taking the document by value and rewriting it in place, so a large document
/// is not copied first.
///
/// # Errors
///
/// As [`upgrade`].
pub fn upgrade_owned(mut document: Value) -> Result<Upgrade> {
    let mut notes = Vec::new();
    upgrade_trajectory(&mut document, "", &mut notes)?;
    Ok(Upgrade { document, notes })
}

fn upgrade_trajectory(
    trajectory: &mut Value,
    pointer: &str,
    notes: &mut Vec<String>,
) -> Result<()> {
    let Some(object) = trajectory.as_object_mut() else {
        let at = if pointer.is_empty() { "the root" } else { pointer };
        return Err(Error::Json {
            pointer: Some(pointer.to_owned()),
            line: None,
            column: None,
            message: format!(
                "expected a JSON object (an ATIF trajectory) at {at}, found {}",
                json_kind(trajectory)
            ),
        });
    };
    let version = relabel(object, pointer, notes)?;
    // Additive changes need nothing; the others are repaired where the document says how.
    for change in CHANGES.iter().filter(|change| version < change.since) {
        if change.kind == ChangeKind::RefNamesTrajectory {
            fix_session_refs(object, pointer, notes);
        }
    }
    if let Some(Value::Array(subagents)) = object.get_mut("subagent_trajectories") {
        for (idx, subagent) in subagents.iter_mut().enumerate() {
            upgrade_trajectory(subagent, &format!("{pointer}/subagent_trajectories/{idx}"), notes)?;
        }
    }
    Ok(())
}

/// Writes the newest label; returns the version the trajectory had.
fn relabel(
    object: &mut Map<String, Value>,
    pointer: &str,
    notes: &mut Vec<String>,
) -> Result<SchemaVersion> {
    let latest = SchemaVersion::LATEST.label();
    let version = match object.get("schema_version") {
        None | Some(Value::Null) => {
            notes.push(format!(
                "{pointer}/schema_version: missing, read as {latest} (the Harbor default) and written out"
            ));
            object.insert("schema_version".to_owned(), Value::String(latest.to_owned()));
            return Ok(SchemaVersion::LATEST);
        }
        Some(Value::String(label)) => match SchemaVersion::try_from(label.as_str()) {
            Ok(version) => version,
            Err(err) => {
                return Err(Error::Json {
                    pointer: Some(format!("{pointer}/schema_version")),
                    line: None,
                    column: None,
                    message: format!("{pointer}/schema_version: {err}"),
                });
            }
        },
        Some(other) => {
            return Err(Error::Json {
                pointer: Some(format!("{pointer}/schema_version")),
                line: None,
                column: None,
                message: format!(
                    "{pointer}/schema_version: expected a label such as \"ATIF-v1.5\", found {}",
                    json_kind(other)
                ),
            });
        }
    };
    if version == SchemaVersion::LATEST {
        notes.push(format!("{pointer}/schema_version: already {latest}"));
    } else {
        notes.push(format!("{pointer}/schema_version: {version} -> {latest}"));
        object.insert("schema_version".to_owned(), Value::String(latest.to_owned()));
    }
    Ok(version)
}

/// Gives a `session_id`-only subagent ref the `trajectory_id` of the one embedded subagent that
/// has that session id, or notes why it cannot.
fn fix_session_refs(object: &mut Map<String, Value>, pointer: &str, notes: &mut Vec<String>) {
    // (session_id, trajectory_id) of every embedded subagent, for resolving refs.
    let embedded: Vec<(Option<String>, Option<String>)> = match object.get("subagent_trajectories")
    {
        Some(Value::Array(subagents)) => subagents
            .iter()
            .map(|subagent| {
                (string_at(subagent, "session_id"), string_at(subagent, "trajectory_id"))
            })
            .collect(),
        _ => Vec::new(),
    };
    let Some(Value::Array(steps)) = object.get_mut("steps") else { return };
    for (step_idx, step) in steps.iter_mut().enumerate() {
        let Some(Value::Array(results)) = step.pointer_mut("/observation/results") else {
            continue;
        };
        for (result_idx, result) in results.iter_mut().enumerate() {
            let Some(Value::Array(refs)) = result.get_mut("subagent_trajectory_ref") else {
                continue;
            };
            for (ref_idx, reference) in refs.iter_mut().enumerate() {
                let at = format!(
                    "{pointer}/steps/{step_idx}/observation/results/{result_idx}/subagent_trajectory_ref/{ref_idx}"
                );
                fix_session_ref(reference, &embedded, &at, notes);
            }
        }
    }
}

fn fix_session_ref(
    reference: &mut Value,
    embedded: &[(Option<String>, Option<String>)],
    at: &str,
    notes: &mut Vec<String>,
) {
    let Some(reference) = reference.as_object_mut() else { return };
    let has = |key: &str| reference.get(key).is_some_and(|value| !value.is_null());
    if has("trajectory_id") || has("trajectory_path") {
        return;
    }
    let Some(session_id) = reference.get("session_id").and_then(Value::as_str).map(str::to_owned)
    else {
        notes.push(format!(
            "{at}: left unchanged: the ref has no trajectory_id, trajectory_path or session_id to resolve; \
             ATIF-v1.8 requires trajectory_id or trajectory_path"
        ));
        return;
    };
    let matches: Vec<&Option<String>> = embedded
        .iter()
        .filter(|(embedded_session, _)| embedded_session.as_deref() == Some(session_id.as_str()))
        .map(|(_, trajectory_id)| trajectory_id)
        .collect();
    match matches.as_slice() {
        [Some(trajectory_id)] => {
            notes.push(format!(
                "{at}: session_id `{session_id}` resolved to the embedded subagent with trajectory_id `{trajectory_id}`"
            ));
            reference.insert("trajectory_id".to_owned(), Value::String(trajectory_id.clone()));
        }
        [None] => notes.push(format!(
            "{at}: left unchanged: session_id `{session_id}` matches an embedded subagent without a trajectory_id; \
             give that subagent a trajectory_id and add it to the ref"
        )),
        [] => notes.push(format!(
            "{at}: left unchanged: session_id `{session_id}` is not the session of any embedded subagent; \
             ATIF-v1.8 requires trajectory_id or trajectory_path, so add the path of that subagent's trajectory by hand"
        )),
        _ => notes.push(format!(
            "{at}: left unchanged: session_id `{session_id}` matches {} embedded subagents; \
             choose the right trajectory_id by hand",
            matches.len()
        )),
    }
}

fn string_at(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_subagent_ref_resolves_only_when_the_answer_is_unambiguous() {
        let embedded = [
            (Some("s1".to_owned()), Some("t1".to_owned())),
            (Some("s2".to_owned()), Some("t2a".to_owned())),
            (Some("s2".to_owned()), Some("t2b".to_owned())),
            (Some("s3".to_owned()), None),
        ];
        for (session, expected_id, expected_note) in [
            ("s1", Some("t1"), "resolved to the embedded subagent with trajectory_id `t1`"),
            ("s2", None, "matches 2 embedded subagents"),
            ("s3", None, "without a trajectory_id"),
            ("s4", None, "is not the session of any embedded subagent"),
        ] {
            let mut reference = json!({"session_id": session});
            let mut notes = Vec::new();
            fix_session_ref(&mut reference, &embedded, "/x", &mut notes);
            assert_eq!(
                reference.get("trajectory_id").and_then(Value::as_str),
                expected_id,
                "{session}"
            );
            assert_eq!(notes.len(), 1);
            assert!(
                notes[0].starts_with("/x: ") && notes[0].contains(expected_note),
                "{}",
                notes[0]
            );
        }
    }
}
