//! How findings show keys and values: short, on one line, with control characters escaped.

use serde_json::Value;

/// A key in backquotes, or quoted with escapes when it holds control characters (a message
/// stays on one line).
pub(super) fn shown_key(key: &str) -> String {
    if key.chars().any(char::is_control) { format!("{key:?}") } else { format!("`{key}`") }
}

/// `text` as a quoted string, cut after 40 characters.
pub(super) fn quote(text: &str) -> String {
    let mut shown: String = text.chars().take(40).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    format!("{shown:?}")
}

/// A short description of a JSON value for messages: its type, and the value when short.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => format!("the string {}", quote(text)),
        Value::Array(elements) => format!("an array of {} elements", elements.len()),
        Value::Object(_) => "an object".to_owned(),
    }
}
