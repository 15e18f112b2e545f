//! `upgrade`: relabelling to ATIF-v1.8 and the v1.7 subagent-ref change, with notes.

use atif_schema::{Error, SchemaVersion, Trajectory, ValidateOptions, upgrade, validate};
use serde_json::{Value, json};

use crate::{valid_corpus, valid_fixtures};

/// Upgrades `document` and checks that only the labels changed and the result is valid.
fn check_relabel_only(name: &str, document: &Value) {
    let upgraded = upgrade(document).unwrap();
    let mut expected = document.clone();
    relabel(&mut expected);
    assert_eq!(upgraded.document, expected, "{name}: more than the label changed");
    let trajectory = Trajectory::from_value(&upgraded.document).unwrap();
    assert_eq!(trajectory.version(), SchemaVersion::V1_8);
    let report = validate(&upgraded.document, &ValidateOptions::default());
    assert!(report.is_valid(), "{name}: {:?}", report.findings);
    assert!(upgraded.notes[0].starts_with("/schema_version: "), "{name}: {:?}", upgraded.notes);
}

fn relabel(document: &mut Value) {
    document["schema_version"] = json!("ATIF-v1.8");
    if let Some(Value::Array(subagents)) = document.get_mut("subagent_trajectories") {
        subagents.iter_mut().for_each(relabel);
    }
}

#[test]
fn corpus_files_and_fixtures_upgrade_by_relabelling_only() {
    for (path, document) in valid_corpus().into_iter().chain(valid_fixtures()) {
        check_relabel_only(&path.display().to_string(), &document);
    }
}

#[test]
fn a_session_only_ref_is_resolved_from_the_embedded_subagent_with_that_session() {
    let document = json!({
        "schema_version": "ATIF-v1.6",
        "session_id": "parent",
        "agent": {"name": "a", "version": "1"},
        "steps": [{
            "step_id": 1, "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": "c", "function_name": "delegate", "arguments": {}}],
            "observation": {"results": [
                {"source_call_id": "c", "subagent_trajectory_ref": [{"session_id": "child"}, {"session_id": "elsewhere"}]}
            ]}
        }],
        "subagent_trajectories": [{
            "schema_version": "ATIF-v1.7",
            "session_id": "child",
            "trajectory_id": "child-1",
            "agent": {"name": "c", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "x"}]
        }]
    });
    assert!(!validate(&document, &ValidateOptions::default()).is_valid());
    let upgraded = upgrade(&document).unwrap();
    assert_eq!(atif_schema::upgrade_owned(document.clone()).unwrap(), upgraded);
    let refs =
        &upgraded.document["steps"][0]["observation"]["results"][0]["subagent_trajectory_ref"];
    assert_eq!(refs[0], json!({"session_id": "child", "trajectory_id": "child-1"}));
    // Nothing in the document says where `elsewhere` is: it is left alone, and said so.
    assert_eq!(refs[1], json!({"session_id": "elsewhere"}));
    assert_eq!(upgraded.document["subagent_trajectories"][0]["schema_version"], "ATIF-v1.8");
    let notes = upgraded.notes.join("\n");
    for expected in [
        "/schema_version: ATIF-v1.6 -> ATIF-v1.8",
        "/subagent_trajectory_ref/0: session_id `child` resolved to the embedded subagent with trajectory_id `child-1`",
        "/subagent_trajectory_ref/1: left unchanged: session_id `elsewhere` is not the session of any embedded subagent",
        "/subagent_trajectories/0/schema_version: ATIF-v1.7 -> ATIF-v1.8",
    ] {
        assert!(notes.contains(expected), "missing `{expected}` in:\n{notes}");
    }
}

#[test]
fn a_missing_label_is_read_as_the_newest_and_a_current_one_is_noted() {
    let upgraded = upgrade(&json!({"agent": {}, "steps": []})).unwrap();
    assert_eq!(upgraded.document["schema_version"], "ATIF-v1.8");
    assert!(upgraded.notes[0].contains("missing, read as ATIF-v1.8"), "{:?}", upgraded.notes);

    let upgraded = upgrade(&json!({"schema_version": "ATIF-v1.8", "steps": []})).unwrap();
    assert_eq!(upgraded.notes, vec!["/schema_version: already ATIF-v1.8".to_owned()]);
}

#[test]
fn what_is_not_a_v1_document_is_an_error_naming_the_problem() {
    let err = upgrade(&json!([1])).unwrap_err();
    assert!(matches!(&err, Error::Json { pointer: Some(p), .. } if p.is_empty()), "{err:?}");
    assert!(err.to_string().contains("at the root, found an array"), "{err}");

    let err = upgrade(&json!({"schema_version": "ATIF-v2.0"})).unwrap_err();
    assert!(
        err.to_string().starts_with("/schema_version: unknown schema_version `ATIF-v2.0`"),
        "{err}"
    );

    let err = upgrade(&json!({"schema_version": 1.4})).unwrap_err();
    assert!(err.to_string().starts_with("/schema_version: expected a label"), "{err}");
    assert!(err.to_string().contains("found a number"), "{err}");

    // The pointer says which trajectory's label is wrong.
    let err = upgrade(&json!({
        "schema_version": "ATIF-v1.7",
        "subagent_trajectories": [{"schema_version": "ATIF-v1.7"}, {"schema_version": "v9"}]
    }))
    .unwrap_err();
    assert!(
        matches!(&err, Error::Json { pointer: Some(p), .. } if p == "/subagent_trajectories/1/schema_version"),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with("/subagent_trajectories/1/schema_version: unknown"),
        "{err}"
    );

    let err = upgrade(&json!({"schema_version": "ATIF-v1.7", "subagent_trajectories": ["x"]}))
        .unwrap_err();
    assert!(err.to_string().contains("at /subagent_trajectories/0, found a string"), "{err}");
}
