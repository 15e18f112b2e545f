//! `json_kind`: how messages name the kind of a JSON value.

use serde_json::Value;

/// The kind of `value` as error messages name it: `null`, `a boolean`, `a number`, `a string`,
/// `an array` or `an object`.
///
/// ```
/// assert_eq!(atif_schema::support::json_kind(&serde_json::json!([1])), "an array");
/// ```
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
