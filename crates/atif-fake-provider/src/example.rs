//! Small values that fit a JSON Schema: the arguments of a called tool, and structured replies.
//!
//! The rules are deliberately few and predictable, so a test can say what the fake will send:
//! `const`, then `default`, then the first `enum` value; the first non-null alternative of
//! `anyOf`/`oneOf`; the merged parts of `allOf`; local `$ref`s (`#/$defs/…`); and a value of the
//! first non-null `type`, within `minimum`/`maximum`, `minLength`/`maxLength` and `minItems`.

use serde_json::{Map, Value, json};

/// Which properties of an object schema get a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Only the required ones: the smallest valid tool arguments.
    Required,
    /// Every property: a structured reply an application reads in full.
    All,
}

/// How deep `$ref`s and nested schemas are followed; past it the value is `null`, so a recursive
/// schema cannot loop.
const MAX_DEPTH: usize = 32;

/// The most items given to an array with `minItems`, and characters to a string with
/// `minLength`: a hostile schema cannot make the reply large.
const MAX_REPEAT: u64 = 64;

/// A value that fits `schema`, whose `$ref`s are resolved against `schema` itself.
pub(crate) fn example(schema: &Value, fill: Fill) -> Value {
    Example { root: schema, fill }.value(schema, "", 0)
}

/// The arguments of a call of a tool with this parameter schema: always a JSON object.
pub(crate) fn tool_arguments(schema: &Value) -> Value {
    match example(schema, Fill::Required) {
        Value::Object(arguments) => Value::Object(arguments),
        _ => Value::Object(Map::new()),
    }
}

/// The value of one property `name` of `object_schema`, its `$ref`s resolved against `root`.
pub(crate) fn property_example(root: &Value, object_schema: &Value, name: &str) -> Value {
    let property = object_schema.pointer(&format!("/properties/{}", escape(name)));
    Example { root, fill: Fill::Required }.value(property.unwrap_or(&Value::Null), name, 1)
}

struct Example<'a> {
    root: &'a Value,
    fill: Fill,
}

impl<'a> Example<'a> {
    /// A value for `schema`, the schema of a property named `name` (empty at the top).
    fn value(&self, schema: &'a Value, name: &str, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        // Gemini CLI asks the model who speaks next; "user" ends its turn.
        if name == "next_speaker" {
            return json!("user");
        }
        let Some(object) = schema.as_object() else {
            return self.untyped(name);
        };
        if let Some(target) = object.get("$ref").and_then(Value::as_str) {
            return match self.resolve(target) {
                Some(target) => self.value(target, name, depth + 1),
                None => self.untyped(name),
            };
        }
        if let Some(constant) = object.get("const") {
            return constant.clone();
        }
        if let Some(default) = object.get("default") {
            return default.clone();
        }
        if let Some(first) = object.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
            return first.clone();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(alternatives) = object.get(key).and_then(Value::as_array) {
                let chosen = alternatives.iter().find(|alt| !is_null_type(alt));
                if let Some(chosen) = chosen.or(alternatives.first()) {
                    return self.value(chosen, name, depth + 1);
                }
            }
        }
        if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
            return self.all_of(parts, name, depth);
        }
        match kind(object).as_deref() {
            Some("object") => self.object(object, depth),
            Some("array") => self.array(object, depth),
            Some("string") => string(object, name),
            Some("integer" | "number") => number(object),
            Some("boolean") => json!(false),
            Some("null") => Value::Null,
            _ => self.untyped(name),
        }
    }

    fn object(&self, object: &'a Map<String, Value>, depth: usize) -> Value {
        let properties = object.get("properties").and_then(Value::as_object);
        let names: Vec<&str> = match self.fill {
            Fill::Required => object
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect(),
            Fill::All => properties.into_iter().flatten().map(|(key, _)| key.as_str()).collect(),
        };
        let mut filled = Map::new();
        for name in names {
            let property = properties.and_then(|props| props.get(name)).unwrap_or(&Value::Null);
            filled.insert(name.to_owned(), self.value(property, name, depth + 1));
        }
        Value::Object(filled)
    }

    fn array(&self, object: &'a Map<String, Value>, depth: usize) -> Value {
        let n_items = object.get("minItems").and_then(Value::as_u64).unwrap_or(0).min(MAX_REPEAT);
        if n_items == 0 {
            return json!([]);
        }
        let item = self.value(object.get("items").unwrap_or(&Value::Null), "", depth + 1);
        Value::Array(vec![item; usize::try_from(n_items).unwrap_or(0)])
    }

    fn all_of(&self, parts: &'a [Value], name: &str, depth: usize) -> Value {
        let mut merged: Option<Value> = None;
        for part in parts {
            let value = self.value(part, name, depth + 1);
            merged = Some(match (merged, value) {
                (Some(Value::Object(mut into)), Value::Object(more)) => {
                    into.extend(more);
                    Value::Object(into)
                }
                (Some(first), _) => first,
                (None, value) => value,
            });
        }
        merged.unwrap_or_else(|| self.untyped(name))
    }

    /// A `#/…` reference, read as a JSON Pointer into the root schema.
    fn resolve(&self, target: &str) -> Option<&'a Value> {
        let pointer = target.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    /// A schema that says nothing of the value's type: the value is a string.
    fn untyped(&self, name: &str) -> Value {
        string(&Map::new(), name)
    }
}

/// The first type a schema names other than `null`, in lowercase (Gemini writes `STRING`);
/// else `object` or `array` when the schema has `properties` or `items`.
fn kind(object: &Map<String, Value>) -> Option<String> {
    let named = match object.get("type") {
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            kinds.iter().find(|kind| !kind.eq_ignore_ascii_case("null")).or(kinds.first()).copied()
        }
        Some(kind) => kind.as_str(),
        None => None,
    };
    match named {
        Some(kind) => Some(kind.to_ascii_lowercase()),
        None if object.contains_key("properties") => Some("object".to_owned()),
        None if object.contains_key("items") => Some("array".to_owned()),
        None => None,
    }
}

fn is_null_type(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str).is_some_and(|kind| kind.eq_ignore_ascii_case("null"))
}

fn string(object: &Map<String, Value>, name: &str) -> Value {
    let base = match object.get("format").and_then(Value::as_str) {
        Some("date-time") => "2026-01-01T00:00:00Z",
        Some("date") => "2026-01-01",
        Some("time") => "00:00:00Z",
        Some("uri" | "url") => "https://example.com/",
        Some("email") => "fake@example.com",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        _ if name == "description" => "Run the scripted command",
        _ => "fake",
    };
    let mut text: String = base.to_owned();
    let min = object.get("minLength").and_then(Value::as_u64).unwrap_or(0).min(MAX_REPEAT);
    while (text.chars().count() as u64) < min {
        text.push('x');
    }
    if let Some(max) = object.get("maxLength").and_then(Value::as_u64) {
        text = text.chars().take(usize::try_from(max).unwrap_or(usize::MAX)).collect();
    }
    Value::String(text)
}

/// Zero, moved into `[minimum, maximum]` (an exclusive bound moves it one past), as an integer,
/// which fits `number` too.
fn number(object: &Map<String, Value>) -> Value {
    let bound = |key: &str| object.get(key).and_then(Value::as_f64);
    let mut value: i64 = 0;
    if let Some(min) = bound("minimum") {
        value = value.max(min.ceil() as i64);
    }
    if let Some(min) = bound("exclusiveMinimum") {
        value = value.max(min.floor() as i64 + 1);
    }
    if let Some(max) = bound("maximum") {
        value = value.min(max.floor() as i64);
    }
    if let Some(max) = bound("exclusiveMaximum") {
        value = value.min(max.ceil() as i64 - 1);
    }
    json!(value)
}

/// A property name as a JSON Pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(schema: Value, fill: Fill, expected: Value) {
        assert_eq!(example(&schema, fill), expected, "{schema}");
    }

    #[test]
    fn only_required_properties_get_values_for_tool_arguments() {
        check(
            json!({"type": "object", "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
                "hourly": {"type": "boolean"}},
                "required": ["city", "unit", "days"]}),
            Fill::Required,
            json!({"city": "fake", "unit": "celsius", "days": 1}),
        );
    }

    #[test]
    fn defaults_consts_and_bounds_are_honoured() {
        check(
            json!({"type": "object", "required": ["a", "b", "c", "d", "e", "f"], "properties": {
                "a": {"type": "integer", "default": 5},
                "b": {"const": "fixed"},
                "c": {"type": "number", "exclusiveMinimum": 0, "maximum": 10},
                "d": {"type": "integer", "maximum": -3},
                "e": {"type": "string", "minLength": 6, "maxLength": 8},
                "f": {"type": "string", "maxLength": 2}}}),
            Fill::Required,
            json!({"a": 5, "b": "fixed", "c": 1, "d": -3, "e": "fakexx", "f": "fa"}),
        );
    }

    #[test]
    fn nullable_types_refs_and_alternatives_pick_a_real_value() {
        check(
            json!({"type": "object", "required": ["when", "where", "tags", "n"],
                "$defs": {"Place": {"type": "object", "properties": {"lat": {"type": "number"}},
                                    "required": ["lat"]}},
                "properties": {
                    "when": {"type": ["null", "string"], "format": "date"},
                    "where": {"$ref": "#/$defs/Place"},
                    "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "minItems": 2},
                    "n": {"anyOf": [{"type": "null"}, {"type": "integer"}]}}}),
            Fill::Required,
            json!({"when": "2026-01-01", "where": {"lat": 0}, "tags": ["fake", "fake"], "n": 0}),
        );
    }

    #[test]
    fn a_recursive_schema_stops_at_the_depth_limit() {
        let schema = json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object",
            "properties": {"next": {"$ref": "#/$defs/Node"}}, "required": ["next"]}}});
        let mut value = &example(&schema, Fill::Required);
        let mut depth = 0;
        while let Some(next) = value.get("next") {
            value = next;
            depth += 1;
        }
        assert!(depth > 3 && depth <= MAX_DEPTH, "{depth}");
        assert_eq!(value, &Value::Null);
    }

    #[test]
    fn tool_arguments_are_always_an_object() {
        assert_eq!(tool_arguments(&Value::Null), json!({}));
        assert_eq!(tool_arguments(&json!({"type": "string"})), json!({}));
        assert_eq!(
            tool_arguments(&json!({"type": "object", "properties": {"x": {}}})),
            json!({}),
            "no property is required"
        );
    }
}
