//! The per-version field table: it agrees with the typed model, and validation, the JSON
//! Schemas and `upgrade` each follow every row of it.

use std::collections::BTreeSet;

use atif_schema::{
    CHANGES, Change, ChangeKind, ObjectType, Rule, SchemaVersion, ValidateOptions, Validation,
    json_schema, upgrade, validate,
};
use serde_json::{Value, json};

#[test]
fn the_table_lists_exactly_the_fields_of_the_typed_model() {
    let schema = json_schema(SchemaVersion::LATEST);
    for object in ObjectType::ALL {
        let def = &schema["$defs"][object.name()];
        assert!(def.is_object(), "no $defs/{} in the v1.8 schema", object.name());
        // A content part is one of several shapes; its fields are those of all of them.
        let shapes: Vec<&Value> = match def.get("oneOf").and_then(Value::as_array) {
            Some(variants) => variants.iter().collect(),
            None => vec![def],
        };
        let from_model: BTreeSet<&str> = shapes
            .iter()
            .filter_map(|shape| shape["properties"].as_object())
            .flat_map(|properties| properties.keys().map(String::as_str))
            .collect();
        let from_table: BTreeSet<&str> = object.fields().iter().copied().collect();
        assert_eq!(from_table, from_model, "{}", object.name());
    }
}

#[test]
fn validation_warns_about_each_later_feature_under_an_older_label_only() {
    for change in additive_changes() {
        let (older, since) = (older_than(change), change.since);
        let report = check(&example(change, older));
        let warnings: Vec<&str> = version_feature_messages(&report);
        assert!(
            warnings.iter().any(|message| message.contains(since.label())),
            "{change:?} labelled {older}: no version-feature warning naming {since}: {:?}",
            report.findings
        );
        assert!(report.is_valid(), "{change:?} labelled {older}: {:?}", report.findings);
        let report = check(&example(change, since));
        assert_eq!(version_feature_messages(&report), Vec::<&str>::new(), "{change:?} at {since}");
        assert!(report.is_valid(), "{change:?} labelled {since}: {:?}", report.findings);
    }
}

#[test]
fn each_version_schema_has_a_later_feature_only_from_the_version_it_arrived_in() {
    for change in additive_changes() {
        let (older, since) = (older_than(change), change.since);
        let newer_accepts = schema_accepts(since, &example(change, since));
        assert!(newer_accepts, "{change:?}: the {since} schema rejects its example");
        let older_accepts = schema_accepts(older, &example(change, older));
        // Which step may hold an observation relates two fields: a rule for the validator,
        // beyond what the schemas check.
        let expressible = change.kind != ChangeKind::SystemObservation;
        assert_eq!(older_accepts, !expressible, "{change:?}: the {older} schema");
    }
    for version in SchemaVersion::ALL {
        assert!(schema_accepts(version, &base(version)), "{version}: the base document");
    }
}

#[test]
fn upgrade_from_the_version_before_a_feature_gives_a_valid_latest_document() {
    for change in additive_changes() {
        let older = older_than(change);
        let upgraded = upgrade(&example(change, older)).unwrap();
        let report = check(&upgraded.document);
        assert!(report.is_valid(), "{change:?}: {:?}", report.findings);
        assert_eq!(report.version, Some(SchemaVersion::LATEST));
        assert_eq!(version_feature_messages(&report), Vec::<&str>::new(), "{change:?}");
        assert!(schema_accepts(SchemaVersion::LATEST, &upgraded.document), "{change:?}");
    }
}

#[test]
fn the_subagent_ref_rule_of_v1_7_is_the_one_change_upgrade_repairs() {
    let rows: Vec<&Change> =
        CHANGES.iter().filter(|change| change.kind == ChangeKind::RefNamesTrajectory).collect();
    let [change] = rows.as_slice() else { panic!("one RefNamesTrajectory row: {rows:?}") };
    let (older, since) = (older_than(change), change.since);
    let session_ref = |version: SchemaVersion| {
        let mut document = base(version);
        document["steps"][2] = agent_step_with_ref(json!({"session_id": "child"}));
        document
    };
    // The schemas tighten at the version of the row.
    assert!(schema_accepts(older, &session_ref(older)));
    assert!(!schema_accepts(since, &session_ref(since)));
    // The upgrade repairs a ref from before the change, when the document says how.
    let mut document = session_ref(older);
    document["subagent_trajectories"] = json!([embedded_subagent(older)]);
    let upgraded = upgrade(&document).unwrap();
    let reference = &upgraded.document["steps"][2]["observation"]["results"][0];
    assert_eq!(
        reference["subagent_trajectory_ref"][0],
        json!({"session_id": "child", "trajectory_id": "child-1"})
    );
    assert!(check(&upgraded.document).is_valid(), "{:?}", check(&upgraded.document).findings);
    // A document labelled with the change already follows it: nothing is repaired.
    let mut document = session_ref(since);
    document["subagent_trajectories"] = json!([embedded_subagent(since)]);
    let upgraded = upgrade(&document).unwrap();
    let reference = &upgraded.document["steps"][2]["observation"]["results"][0];
    assert_eq!(reference["subagent_trajectory_ref"][0], json!({"session_id": "child"}));
}

/// Every row but the non-additive one, which has its own test.
fn additive_changes() -> impl Iterator<Item = &'static Change> {
    CHANGES.iter().filter(|change| change.kind != ChangeKind::RefNamesTrajectory)
}

fn older_than(change: &Change) -> SchemaVersion {
    let minor = change.since.minor().checked_sub(1).expect("no change arrived in ATIF-v1.0");
    SchemaVersion::from_minor(minor).unwrap()
}

/// A document valid in every version (a system, a user and an agent step), labelled `version`.
fn base(version: SchemaVersion) -> Value {
    json!({
        "schema_version": version.label(),
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "system", "message": "be brief"},
            {"step_id": 2, "source": "user", "message": "hi"},
            {"step_id": 3, "source": "agent", "message": "hello"}
        ]
    })
}

/// The base document labelled `version`, using what `change` brought. A new row of the table
/// needs an example here.
fn example(change: &Change, version: SchemaVersion) -> Value {
    let mut document = base(version);
    let doc = &mut document;
    match change.kind {
        ChangeKind::Field { object: ObjectType::Trajectory, field: "extra" } => {
            doc["extra"] = json!({"producer": "test"});
        }
        ChangeKind::Field { object: ObjectType::Trajectory, field: "continued_trajectory_ref" } => {
            doc["continued_trajectory_ref"] = json!("part-2.json");
        }
        ChangeKind::Field { object: ObjectType::Trajectory, field: "trajectory_id" } => {
            doc["trajectory_id"] = json!("t-1");
        }
        ChangeKind::Field { object: ObjectType::Trajectory, field: "subagent_trajectories" } => {
            doc["subagent_trajectories"] = json!([embedded_subagent(version)]);
        }
        ChangeKind::Field { object: ObjectType::Agent, field: "tool_definitions" } => {
            doc["agent"]["tool_definitions"] =
                json!([{"type": "function", "function": {"name": "ls"}}]);
        }
        ChangeKind::Field { object: ObjectType::Metrics, field: "completion_token_ids" } => {
            doc["steps"][2]["metrics"] =
                json!({"completion_tokens": 1, "completion_token_ids": [7]});
        }
        ChangeKind::Field { object: ObjectType::Metrics, field: "prompt_token_ids" } => {
            doc["steps"][2]["metrics"] = json!({"prompt_tokens": 1, "prompt_token_ids": [7]});
        }
        ChangeKind::Field { object: ObjectType::Step, field: "is_copied_context" } => {
            doc["steps"][1]["is_copied_context"] = json!(true);
        }
        ChangeKind::Field { object: ObjectType::Step, field: "llm_call_count" } => {
            doc["steps"][2]["llm_call_count"] = json!(1);
        }
        ChangeKind::Field { object: ObjectType::ToolCall, field: "extra" } => {
            doc["steps"][2]["tool_calls"] = json!([
                {"tool_call_id": "c", "function_name": "ls", "arguments": {}, "extra": {"k": 1}}
            ]);
        }
        ChangeKind::Field { object: ObjectType::ObservationResult, field: "extra" } => {
            doc["steps"][2]["tool_calls"] =
                json!([{"tool_call_id": "c", "function_name": "ls", "arguments": {}}]);
            doc["steps"][2]["observation"] =
                json!({"results": [{"source_call_id": "c", "content": "x", "extra": {"k": 1}}]});
        }
        ChangeKind::Field { object: ObjectType::SubagentTrajectoryRef, field: "trajectory_id" } => {
            doc["steps"][2] = agent_step_with_ref(
                json!({"session_id": "child", "trajectory_id": "child-1", "trajectory_path": "child.json"}),
            );
        }
        ChangeKind::NoLongerRequired { object: ObjectType::Trajectory, field: "session_id" } => {
            doc.as_object_mut().unwrap().remove("session_id");
        }
        ChangeKind::NoLongerRequired {
            object: ObjectType::SubagentTrajectoryRef,
            field: "session_id",
        } => {
            doc["steps"][2] = agent_step_with_ref(json!({"trajectory_path": "child.json"}));
        }
        ChangeKind::Object(ObjectType::ContentPart) => {
            doc["steps"][1]["message"] = json!([{"type": "text", "text": "hi"}]);
        }
        ChangeKind::Object(ObjectType::ImageSource) => {
            doc["steps"][1]["message"] =
                json!([{"type": "image", "source": {"media_type": "image/png", "path": "a.png"}}]);
        }
        ChangeKind::Object(ObjectType::AudioSource) | ChangeKind::ContentPartType("audio") => {
            doc["steps"][1]["message"] =
                json!([{"type": "audio", "source": {"media_type": "audio/wav", "path": "a.wav"}}]);
        }
        ChangeKind::SystemObservation => {
            doc["steps"][0]["observation"] = json!({"results": [{"content": "booted"}]});
        }
        _ => panic!("no example for {change:?}: add one to `example`"),
    }
    document
}

fn agent_step_with_ref(reference: Value) -> Value {
    json!({
        "step_id": 3, "source": "agent", "message": "delegating",
        "tool_calls": [{"tool_call_id": "d", "function_name": "delegate", "arguments": {}}],
        "observation": {"results": [{"source_call_id": "d", "subagent_trajectory_ref": [reference]}]}
    })
}

fn embedded_subagent(version: SchemaVersion) -> Value {
    json!({
        "schema_version": version.label(),
        "session_id": "child",
        "trajectory_id": "child-1",
        "agent": {"name": "child", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "look"}]
    })
}

fn check(document: &Value) -> Validation {
    validate(document, &ValidateOptions::default())
}

fn version_feature_messages(report: &Validation) -> Vec<&str> {
    report
        .findings
        .iter()
        .filter(|finding| finding.rule == Rule::VersionFeature)
        .map(|finding| finding.message.as_str())
        .collect()
}

fn schema_accepts(version: SchemaVersion, document: &Value) -> bool {
    jsonschema::draft202012::new(&json_schema(version)).unwrap().is_valid(document)
}
