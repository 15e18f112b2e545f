//! The generated JSON Schemas: committed files are current, corpus files and fixtures validate
//! against the schema of their own label, structural mistakes are rejected.

use std::path::Path;

use atif_schema::{SchemaVersion, json_schema, json_schema_file_name, json_schema_text};
use serde_json::{Value, json};

use crate::{valid_corpus, valid_fixtures};

/// A change made to a document to break it or to add a feature.
type Edit = fn(&mut Value);

fn validator(version: SchemaVersion) -> jsonschema::Validator {
    jsonschema::draft202012::new(&json_schema(version)).unwrap()
}

/// The schema of the document's own label; the document must validate against it.
fn check_valid(name: &str, document: &Value) {
    let label = document["schema_version"].as_str().unwrap();
    let version = SchemaVersion::try_from(label).unwrap();
    let validator = validator(version);
    let errors: Vec<String> = validator
        .iter_errors(document)
        .map(|err| format!("{}: {err}", err.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name} fails the {label} schema:\n{}", errors.join("\n"));
}

#[test]
fn the_committed_schemas_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema");
    let stale: Vec<String> = SchemaVersion::ALL
        .into_iter()
        .map(|version| (dir.join(json_schema_file_name(version)), json_schema_text(version)))
        .filter(|(path, wanted)| std::fs::read_to_string(path).ok().as_ref() != Some(wanted))
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(
        stale.is_empty(),
        "stale JSON Schemas (run `cargo xtask schema` to regenerate them):\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_schema_is_a_valid_draft_2020_12_schema_with_named_defs() {
    for version in SchemaVersion::ALL {
        let schema = json_schema(version);
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert_eq!(schema["$ref"], "#/$defs/Trajectory");
        for name in ["Trajectory", "Agent", "Step", "ToolCall", "Observation", "Metrics"] {
            assert!(schema["$defs"].get(name).is_some(), "{version}: no $defs/{name}");
        }
        assert_eq!(schema["$defs"]["Step"]["additionalProperties"], false, "{version}");
        jsonschema::meta::validate(&schema).unwrap();
    }
}

#[test]
fn every_type_and_property_has_a_description_for_code_generators() {
    for version in SchemaVersion::ALL {
        let schema = json_schema(version);
        let defs = schema["$defs"].as_object().unwrap();
        for (name, def) in defs {
            let described =
                |node: &Value| node["description"].as_str().is_some_and(|d| !d.is_empty());
            assert!(described(def), "{version}: $defs/{name} has no description");
            for (property, property_schema) in def["properties"].as_object().into_iter().flatten() {
                assert!(
                    described(property_schema),
                    "{version}: $defs/{name}/properties/{property} has no description"
                );
            }
        }
    }
}

#[test]
fn every_valid_corpus_file_validates_against_the_schema_of_its_label() {
    for (path, document) in valid_corpus() {
        check_valid(&path.display().to_string(), &document);
    }
}

#[test]
fn every_own_fixture_validates_against_the_schema_of_its_label() {
    for (path, document) in valid_fixtures() {
        check_valid(&path.display().to_string(), &document);
    }
}

#[test]
fn a_document_validates_only_against_the_schema_of_its_own_label() {
    let document = minimal("ATIF-v1.5");
    assert!(validator(SchemaVersion::V1_5).is_valid(&document));
    assert!(!validator(SchemaVersion::V1_8).is_valid(&document));
}

#[test]
fn structural_mistakes_fail_the_schema() {
    let cases: &[(&str, Edit)] = &[
        ("missing agent", |doc| remove(doc, "", "agent")),
        ("missing message", |doc| remove(doc, "/steps/0", "message")),
        ("null message", |doc| doc["steps"][0]["message"] = Value::Null),
        ("step_id as a string", |doc| doc["steps"][0]["step_id"] = json!("1")),
        ("step_id as a float", |doc| doc["steps"][0]["step_id"] = json!(1.5)),
        ("version as a number", |doc| doc["agent"]["version"] = json!(1)),
        ("arguments as a string", |doc| {
            doc["steps"][1]["tool_calls"] =
                json!([{"tool_call_id": "c", "function_name": "f", "arguments": "{}"}]);
        }),
        ("unknown root key", |doc| doc["banana"] = json!(1)),
        ("unknown step key", |doc| doc["steps"][0]["role"] = json!("user")),
        ("unknown metrics key", |doc| doc["steps"][1]["metrics"] = json!({"reasoning_tokens": 3})),
        ("bad source", |doc| doc["steps"][0]["source"] = json!("assistant")),
        ("bad image media type", |doc| {
            doc["steps"][0]["message"] =
                json!([{"type": "image", "source": {"media_type": "image/jpg", "path": "a"}}]);
        }),
        ("bad content part type", |doc| {
            doc["steps"][0]["message"] = json!([{"type": "video", "text": "x"}])
        }),
        ("text part with a source", |doc| {
            doc["steps"][0]["message"] = json!([{"type": "text", "text": "x", "source": {"media_type": "image/png", "path": "a"}}]);
        }),
        ("negative duration", |doc| {
            doc["steps"][0]["message"] = json!([{"type": "audio", "source": {"media_type": "audio/wav", "path": "a", "duration_sec": -1}}]);
        }),
        ("negative llm_call_count", |doc| doc["steps"][1]["llm_call_count"] = json!(-1)),
        ("ref without id or path", |doc| {
            doc["steps"][1]["observation"] =
                json!({"results": [{"subagent_trajectory_ref": [{"session_id": "s"}]}]});
        }),
        ("ref with a null id and no path", |doc| {
            doc["steps"][1]["observation"] =
                json!({"results": [{"subagent_trajectory_ref": [{"trajectory_id": null}]}]});
        }),
        ("label of another version", |doc| doc["schema_version"] = json!("ATIF-v1.7")),
    ];
    let validator = validator(SchemaVersion::V1_8);
    assert!(validator.is_valid(&minimal("ATIF-v1.8")));
    for (name, break_it) in cases {
        let mut document = minimal("ATIF-v1.8");
        break_it(&mut document);
        assert!(!validator.is_valid(&document), "{name}: still valid: {document}");
    }
}

#[test]
fn older_schemas_reject_fields_that_arrived_later() {
    let cases: &[(SchemaVersion, Edit)] = &[
        (SchemaVersion::V1_0, |doc| doc["extra"] = json!({})),
        (SchemaVersion::V1_2, |doc| {
            doc["steps"][1]["metrics"] = json!({"completion_token_ids": [1]})
        }),
        (SchemaVersion::V1_3, |doc| doc["steps"][1]["metrics"] = json!({"prompt_token_ids": [1]})),
        (SchemaVersion::V1_4, |doc| doc["steps"][0]["is_copied_context"] = json!(true)),
        (SchemaVersion::V1_4, |doc| doc["agent"]["tool_definitions"] = json!([])),
        (SchemaVersion::V1_5, |doc| {
            doc["steps"][0]["message"] = json!([{"type": "text", "text": "x"}])
        }),
        (SchemaVersion::V1_6, |doc| doc["steps"][1]["llm_call_count"] = json!(1)),
        (SchemaVersion::V1_6, |doc| doc["trajectory_id"] = json!("t")),
        (SchemaVersion::V1_6, |doc| {
            doc["steps"][1]["observation"] =
                json!({"results": [{"subagent_trajectory_ref": [{"trajectory_path": "p"}]}]});
        }),
        (SchemaVersion::V1_6, |doc| remove(doc, "", "session_id")),
        (SchemaVersion::V1_7, |doc| {
            doc["steps"][0]["message"] =
                json!([{"type": "audio", "source": {"media_type": "audio/wav", "path": "a"}}]);
        }),
    ];
    for (version, add_feature) in cases {
        let mut document = minimal(version.label());
        assert!(validator(*version).is_valid(&document), "{version}: the base document fails");
        add_feature(&mut document);
        assert!(!validator(*version).is_valid(&document), "{version}: accepts {document}");
        // The next version that has the feature accepts it (with the label changed).
        document["schema_version"] = json!(SchemaVersion::LATEST.label());
        assert!(validator(SchemaVersion::LATEST).is_valid(&document), "v1.8 rejects {document}");
    }
}

fn minimal(label: &str) -> Value {
    json!({
        "schema_version": label,
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "hi"},
            {"step_id": 2, "source": "agent", "message": "hello"}
        ]
    })
}

fn remove(document: &mut Value, pointer: &str, key: &str) {
    document.pointer_mut(pointer).unwrap().as_object_mut().unwrap().remove(key);
}
