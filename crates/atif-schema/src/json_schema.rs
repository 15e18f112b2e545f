//! JSON Schemas (Draft 2020-12) for every ATIF version, generated from the typed model.
//!
//! The typed model is the v1.8 superset; [`json_schema`] generates its schema with schemars and
//! then removes what arrived after the requested version (see
//! [`ObjectType::field_since`](crate::ObjectType::field_since)), so each schema accepts exactly
//! the fields of its version. The schemas check structure (required fields,
//! types, closed objects, enumerations); rules that relate fields to each other (step ids in
//! order, agent-only fields, call joins) are the validator's job.

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema as schema};
use serde_json::{Map, Value, json};

use crate::{CHANGES, Change, ChangeKind, ObjectType, SchemaVersion, Trajectory};

/// Where `$defs` live in every generated schema.
const DEFS: &str = "#/$defs/";

/// The JSON Schema (Draft 2020-12) of one ATIF version, as a JSON value.
///
/// The schema accepts exactly the fields of `version` and requires `schema_version` to be its
/// label (embedded subagents included). The root is a `$ref` to `#/$defs/Trajectory`; every
/// object is closed (`additionalProperties: false`) except the open `extra` objects, tool
/// `arguments` and tool definitions, and every property has a description.
pub fn json_schema(version: SchemaVersion) -> Value {
    let generator = SchemaSettings::draft2020_12().for_deserialize().into_generator();
    let mut root = generator.into_root_schema_for::<Trajectory>().to_value();
    restrict(&mut root, version);
    root
}

/// The file name of a version's committed schema, e.g. `atif-v1.8.schema.json`.
pub fn json_schema_file_name(version: SchemaVersion) -> String {
    format!("atif-v1.{}.schema.json", version.minor())
}

/// A version's schema as the text committed in `docs/schema/`: pretty-printed, ending with a
/// newline.
pub fn json_schema_text(version: SchemaVersion) -> String {
    let mut text = serde_json::to_string_pretty(&json_schema(version))
        .expect("serialising a JSON value never fails because its map keys are strings");
    text.push('\n');
    text
}

/// Turns the generated v1.8 superset schema into the schema of `version`.
fn restrict(root: &mut Value, version: SchemaVersion) {
    let Some(root_object) = root.as_object_mut() else { return };
    let mut defs = match root_object.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };

    // The root is the Trajectory schema itself; move it under `$defs` so that code generators
    // name it, and point the recursion (`"$ref": "#"`) there.
    let mut trajectory = Map::new();
    for key in ["type", "description", "properties", "required", "additionalProperties"] {
        if let Some(value) = root_object.remove(key) {
            trajectory.insert(key.to_owned(), value);
        }
    }
    defs.insert("Trajectory".to_owned(), Value::Object(trajectory));
    let mut defs = Value::Object(defs);
    rewrite_refs(&mut defs, "#", &format!("{DEFS}Trajectory"));

    let label = version.label();
    set_property(
        &mut defs,
        "Trajectory",
        "schema_version",
        json!({
            "description": format!("The ATIF version label; this schema is for `{label}`. Since ATIF-v1.0."),
            "type": "string",
            "const": label,
        }),
    );
    remove_def(&mut defs, "SchemaVersion");

    for change in CHANGES {
        apply_change(&mut defs, change, version >= change.since);
    }

    if let Some(defs_object) = defs.as_object_mut() {
        for def in defs_object.values_mut() {
            constants_to_enum(def);
        }
        describe_tags(defs_object);
    }
    tidy_descriptions(&mut defs);
    prune_unreferenced(&mut defs);

    root_object.insert("title".to_owned(), Value::String(format!("{label} trajectory")));
    root_object.insert(
        "description".to_owned(),
        Value::String(format!(
            "An agent trajectory in the Agent Trajectory Interchange Format, version {label}. \
             Generated from the atif-schema crate; checks structure only (field names, types, \
             required fields, enumerations), not the rules that relate fields to each other."
        )),
    );
    root_object.insert("$ref".to_owned(), Value::String(format!("{DEFS}Trajectory")));
    root_object.insert("$defs".to_owned(), defs);
}

/// Makes the schema follow one row of the per-version table, for a version that has the change
/// (`arrived`) or not.
fn apply_change(defs: &mut Value, change: &Change, arrived: bool) {
    match (change.kind, arrived) {
        (ChangeKind::Field { object, field }, false) => {
            remove_property(defs, object.name(), field);
        }
        (ChangeKind::Object(ObjectType::ContentPart), false) => {
            // Before content parts, a message or result content is a plain string.
            defs["Message"] = json!({
                "description": "Text: the type of `step.message` and of an observation result's `content`.",
                "type": "string",
            });
        }
        (ChangeKind::ContentPartType(part_type), false) => {
            if let Some(variants) =
                defs.pointer_mut("/ContentPart/oneOf").and_then(Value::as_array_mut)
            {
                variants.retain(|variant| {
                    variant.pointer("/properties/type/const") != Some(&json!(part_type))
                });
            }
            if let Some(Value::String(description)) = defs.pointer_mut("/ContentPart/description") {
                description.push_str(&format!(
                    " {} parts arrive in {}.",
                    capitalized(part_type),
                    change.since
                ));
            }
        }
        (ChangeKind::NoLongerRequired { object, field }, false) => {
            add_required(defs, object.name(), field);
            set_non_null(defs, object.name(), field);
        }
        (ChangeKind::RefNamesTrajectory, true) => {
            // A ref must say where the trajectory is: embedded or stored. Written as if/then
            // (no trajectory_id, so a trajectory_path) rather than anyOf, which code generators
            // would turn into two ref types.
            let name = ObjectType::SubagentTrajectoryRef.name();
            if let Some(reference) = defs.get_mut(name).and_then(Value::as_object_mut) {
                reference.insert(
                    "if".to_owned(),
                    json!({"anyOf": [
                        {"not": {"required": ["trajectory_id"]}},
                        {"properties": {"trajectory_id": {"type": "null"}}},
                    ]}),
                );
                reference.insert(
                    "then".to_owned(),
                    json!({"required": ["trajectory_path"], "properties": {"trajectory_path": {"type": "string"}}}),
                );
            }
        }
        // Objects of later versions are pruned once nothing refers to them; an observation on a
        // system step is a rule between fields, which the schemas leave to the validator.
        _ => {}
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// Replaces every `"$ref": from` below `value` with `"$ref": to`.
fn rewrite_refs(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::Object(object) => {
            for (key, child) in object.iter_mut() {
                if key == "$ref" && child.as_str() == Some(from) {
                    *child = Value::String(to.to_owned());
                } else {
                    rewrite_refs(child, from, to);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite_refs(item, from, to)),
        _ => {}
    }
}

fn set_property(defs: &mut Value, definition: &str, property: &str, schema: Value) {
    if let Some(properties) =
        defs.pointer_mut(&format!("/{definition}/properties")).and_then(Value::as_object_mut)
    {
        properties.insert(property.to_owned(), schema);
    }
}

fn remove_property(defs: &mut Value, definition: &str, property: &str) {
    let Some(def) = defs.get_mut(definition) else { return };
    if let Some(properties) = def.get_mut("properties").and_then(Value::as_object_mut) {
        properties.remove(property);
    }
    if let Some(required) = def.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| name.as_str() != Some(property));
    }
}

fn remove_def(defs: &mut Value, definition: &str) {
    if let Some(defs) = defs.as_object_mut() {
        defs.remove(definition);
    }
}

fn add_required(defs: &mut Value, definition: &str, property: &str) {
    let Some(def) = defs.get_mut(definition).and_then(Value::as_object_mut) else { return };
    let required = def.entry("required").or_insert_with(|| json!([]));
    if let Some(required) = required.as_array_mut() {
        if !required.iter().any(|name| name.as_str() == Some(property)) {
            required.push(Value::String(property.to_owned()));
        }
    }
}

/// Makes a `["string", "null"]` property plain `"string"` (required fields are non-null).
fn set_non_null(defs: &mut Value, definition: &str, property: &str) {
    let pointer = format!("/{definition}/properties/{property}/type");
    if let Some(kind) = defs.pointer_mut(&pointer) {
        if let Some(kinds) = kind.as_array() {
            let non_null: Vec<Value> =
                kinds.iter().filter(|kind| kind.as_str() != Some("null")).cloned().collect();
            if let [single] = non_null.as_slice() {
                *kind = single.clone();
            }
        }
    }
}

/// schemars writes a unit-variant enum as `oneOf` of documented `const`s; code generators make
/// nicer enums from a plain `enum` list, and the variant docs are repeated in the description.
fn constants_to_enum(def: &mut Value) {
    let Some(variants) = def.get("oneOf").and_then(Value::as_array) else { return };
    let constants: Option<Vec<Value>> = variants
        .iter()
        .map(|variant| match (variant.get("const"), variant.get("properties")) {
            (Some(constant @ Value::String(_)), None) => Some(constant.clone()),
            _ => None,
        })
        .collect();
    let Some(constants) = constants else { return };
    let Some(object) = def.as_object_mut() else { return };
    object.remove("oneOf");
    object.insert("type".to_owned(), Value::String("string".to_owned()));
    object.insert("enum".to_owned(), Value::Array(constants));
}

/// The `type` tag of a content part has no doc comment of its own; give it one, and give each
/// variant a title.
fn describe_tags(defs: &mut Map<String, Value>) {
    let Some(variants) = defs.get_mut("ContentPart").and_then(|def| def.get_mut("oneOf")) else {
        return;
    };
    let Some(variants) = variants.as_array_mut() else { return };
    for variant in variants {
        let Some(tag) = variant.pointer_mut("/properties/type").and_then(Value::as_object_mut)
        else {
            continue;
        };
        let kind = tag.get("const").and_then(Value::as_str).unwrap_or("").to_owned();
        let since = CHANGES
            .iter()
            .find(|change| matches!(change.kind, ChangeKind::ContentPartType(tag) if tag == kind))
            .map_or(ObjectType::ContentPart.since(), |change| change.since);
        let title = match kind.as_str() {
            "text" => "TextPart",
            "image" => "ImagePart",
            _ => "AudioPart",
        };
        tag.insert(
            "description".to_owned(),
            Value::String(format!("The kind of this part: `{kind}`. Since {since}.")),
        );
        // Code generators name the variant types after their titles.
        if let Some(variant) = variant.as_object_mut() {
            variant.insert("title".to_owned(), Value::String(title.to_owned()));
        }
    }
}

/// Doc comments are wrapped at 100 columns; descriptions read better as one line per paragraph.
/// Also drops schemars' Rust integer formats (`int64`, `uint64`), which are not JSON Schema
/// formats and which code generators warn about.
fn tidy_descriptions(value: &mut Value) {
    match value {
        Value::Object(object) => {
            let rust_format = object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| format.starts_with("int") || format.starts_with("uint"));
            if rust_format {
                object.remove("format");
            }
            for (key, child) in object.iter_mut() {
                match child {
                    Value::String(text) if key == "description" => {
                        *text = text
                            .split("\n\n")
                            .map(|paragraph| paragraph.split('\n').collect::<Vec<_>>().join(" "))
                            .collect::<Vec<_>>()
                            .join("\n\n");
                    }
                    _ => tidy_descriptions(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tidy_descriptions),
        _ => {}
    }
}

/// Removes `$defs` entries that nothing refers to any more (e.g. `ContentPart` before v1.6).
fn prune_unreferenced(defs: &mut Value) {
    loop {
        let Some(object) = defs.as_object() else { return };
        let mut referenced = vec!["Trajectory".to_owned()];
        collect_refs(defs, &mut referenced);
        let unused: Vec<String> =
            object.keys().filter(|name| !referenced.contains(name)).cloned().collect();
        if unused.is_empty() {
            return;
        }
        if let Some(object) = defs.as_object_mut() {
            for name in unused {
                object.remove(&name);
            }
        }
    }
}

fn collect_refs(value: &Value, names: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                match child.as_str().and_then(|target| target.strip_prefix(DEFS)) {
                    Some(name) if key == "$ref" => names.push(name.to_owned()),
                    _ => collect_refs(child, names),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, names)),
        _ => {}
    }
}

impl JsonSchema for SchemaVersion {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("SchemaVersion")
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        let labels: Vec<&str> = SchemaVersion::ALL.iter().map(|version| version.label()).collect();
        schema!({
            "description": "An ATIF version label, `ATIF-v1.0` to `ATIF-v1.8`.",
            "type": "string",
            "enum": labels,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The version in which `property` of the `$defs` entry `definition` arrived, as the
    /// per-version table ([`CHANGES`](crate::CHANGES)) says (v1.0 for names it does not know).
    ///
    /// A field of an object that itself arrived later (`ImageSource` in v1.6, `AudioSource` in
    /// v1.8) arrived with it.
    fn field_since(definition: &str, property: &str) -> SchemaVersion {
        ObjectType::from_name(definition)
            .and_then(|object| object.field_since(property))
            .unwrap_or(SchemaVersion::V1_0)
    }

    /// Every property of a `$defs` entry, with its description.
    fn properties(schema: &Value) -> Vec<(String, String, Option<String>)> {
        let mut found = Vec::new();
        let defs = schema["$defs"].as_object().expect("schemas have $defs");
        for (def_name, def) in defs {
            let mut objects = vec![def];
            if let Some(variants) = def.get("oneOf").and_then(Value::as_array) {
                objects.extend(variants);
            }
            for object in objects {
                let Some(props) = object.get("properties").and_then(Value::as_object) else {
                    continue;
                };
                for (name, prop) in props {
                    let description = prop.get("description").and_then(Value::as_str);
                    found.push((def_name.clone(), name.clone(), description.map(str::to_owned)));
                }
            }
        }
        found
    }

    #[test]
    fn every_property_of_every_version_has_a_description() {
        for version in SchemaVersion::ALL {
            for (def, name, description) in properties(&json_schema(version)) {
                let description = description.unwrap_or_default();
                assert!(!description.is_empty(), "{version}: {def}.{name} has no description");
            }
        }
    }

    #[test]
    fn the_since_table_agrees_with_the_field_docs() {
        // The doc comment of each field names the version it arrived in; the table that strips
        // later fields from older schemas must say the same.
        for (def, name, description) in properties(&json_schema(SchemaVersion::LATEST)) {
            if name == "schema_version" {
                continue;
            }
            let description = description.unwrap_or_default();
            let since = field_since(&def, &name);
            // The audio variant of a content part arrived after the part itself.
            let audio_part = def == "ContentPart" && description.contains("Since ATIF-v1.8");
            assert!(
                audio_part || description.contains(&format!("Since {}", since.label())),
                "{def}.{name}: table says {since}, docs say: {description}"
            );
        }
    }

    #[test]
    fn older_schemas_lack_later_fields() {
        let v1_5 = json_schema(SchemaVersion::V1_5);
        assert!(v1_5.pointer("/$defs/Step/properties/llm_call_count").is_none());
        assert!(v1_5.pointer("/$defs/Step/properties/is_copied_context").is_some());
        assert!(v1_5.pointer("/$defs/ContentPart").is_none());
        assert!(v1_5.pointer("/$defs/ToolCall/properties/extra").is_none());
        let v1_2 = json_schema(SchemaVersion::V1_2);
        assert!(v1_2.pointer("/$defs/Metrics/properties/completion_token_ids").is_none());
        let v1_3 = json_schema(SchemaVersion::V1_3);
        assert!(v1_3.pointer("/$defs/Metrics/properties/completion_token_ids").is_some());
        let v1_7 = json_schema(SchemaVersion::V1_7);
        assert!(v1_7.pointer("/$defs/AudioSource").is_none());
        assert!(v1_7.pointer("/$defs/ImageSource").is_some());
        assert!(json_schema(SchemaVersion::V1_8).pointer("/$defs/AudioSource").is_some());
    }
}
