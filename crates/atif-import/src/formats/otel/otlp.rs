//! OTLP/JSON read into spans: resource spans, scope spans, span events, and the log records
//! that carry content as events (`resourceLogs`), with `AnyValue`s decoded to JSON values.
//!
//! OTLP/JSON writes 64-bit integers as strings, ids as hex text, and every attribute value as
//! an `AnyValue` object (`{"stringValue": …}`, `{"kvlistValue": {"values": […]}}`); this module
//! is the one place that knows it.

use std::rc::Rc;

use serde_json::{Map, Value};

use crate::Result;
use crate::context::{At, Context};

/// One span, as the mapping reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    pub(crate) trace_id: String,
    pub(crate) span_id: String,
    pub(crate) parent_id: Option<String>,
    pub(crate) name: String,
    /// Start time in nanoseconds since the epoch (0 when absent).
    pub(crate) start: u64,
    /// The instrumentation scope's name (`pydantic-ai`, `openinference.instrumentation…`),
    /// shared by the spans of the scope.
    pub(crate) scope: Rc<str>,
    /// The instrumentation scope's version.
    pub(crate) scope_version: Rc<str>,
    pub(crate) attributes: Map<String, Value>,
    pub(crate) events: Vec<Event>,
    /// The status message of a span whose status is `ERROR` (empty when it gave none).
    pub(crate) error: Option<String>,
}

/// A span event, or a log record attached to its span.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub(crate) name: String,
    pub(crate) attributes: Map<String, Value>,
}

impl Span {
    /// The attribute `key` as text.
    pub(crate) fn str_attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }

    /// The attribute `key` as a JSON value: JSON text in a string attribute is decoded.
    pub(crate) fn json_attr(&self, key: &str) -> Option<Value> {
        self.attributes.get(key).map(decode_json_text)
    }

    /// The attribute `key` as a count (integers written as strings included).
    pub(crate) fn count_attr(&self, key: &str) -> Option<u64> {
        match self.attributes.get(key)? {
            Value::Number(number) => number.as_u64(),
            Value::String(text) => text.parse().ok(),
            _ => None,
        }
    }
}

/// A string holding a JSON object or array, decoded; any other value as it is.
pub(crate) fn decode_json_text(value: &Value) -> Value {
    match value {
        Value::String(text) if text.trim_start().starts_with(['{', '[']) => {
            serde_json::from_str(text).unwrap_or_else(|_| value.clone())
        }
        _ => value.clone(),
    }
}

/// Whether `record` is an OTLP/JSON export request (traces or logs).
pub(crate) fn is_otlp(record: &Value) -> bool {
    record.get("resourceSpans").is_some_and(Value::is_array)
        || record.get("resourceLogs").is_some_and(Value::is_array)
}

/// The spans and log records of one export request (one line of the Collector file exporter,
/// or the whole document), appended to `spans` and `logs`. The request is taken apart: its
/// strings move into the spans rather than being copied (the messages of every model call,
/// JSON text, are most of a trace's bytes).
pub(crate) fn read_request(
    mut record: Value,
    line: usize,
    ctx: &mut Context,
    spans: &mut Vec<Span>,
    logs: &mut Vec<(String, Event)>,
) -> Result<()> {
    for (r_idx, resource) in array(&mut record, "resourceSpans").iter_mut().enumerate() {
        for (s_idx, scope_spans) in array(resource, "scopeSpans").iter_mut().enumerate() {
            let (scope, version) = scope_of(scope_spans);
            for (idx, span) in array(scope_spans, "spans").iter_mut().enumerate() {
                match read_span(span, &scope, &version) {
                    Some(span) => spans.push(span),
                    None => ctx.malformed(
                        At::inside(
                            line,
                            format!("/resourceSpans/{r_idx}/scopeSpans/{s_idx}/spans/{idx}"),
                        ),
                        "span without a traceId, a spanId or a name",
                    )?,
                }
            }
        }
    }
    for resource in array(&mut record, "resourceLogs") {
        for scope_logs in array(resource, "scopeLogs") {
            for log in array(scope_logs, "logRecords") {
                if let Some(event) = read_log(log) {
                    logs.push(event);
                }
            }
        }
    }
    Ok(())
}

/// A span, its strings and attributes taken out of `span`; `None` (with `span` partly taken)
/// when it has no trace id, span id or name.
fn read_span(span: &mut Value, scope: &Rc<str>, scope_version: &Rc<str>) -> Option<Span> {
    let id = |span: &mut Value, key: &str| match span.get_mut(key).map(Value::take) {
        Some(Value::String(id)) if !id.is_empty() => Some(id),
        _ => None,
    };
    let status = span.get("status");
    let status_code = status.and_then(|s| s.get("code"));
    let is_error = matches!(status_code, Some(Value::Number(n)) if n.as_u64() == Some(2))
        || status_code.and_then(Value::as_str) == Some("STATUS_CODE_ERROR");
    let message = status.and_then(|s| s.get("message")).and_then(Value::as_str).unwrap_or("");
    let error = is_error.then(|| message.to_owned());
    let trace_id = id(span, "traceId")?;
    let span_id = id(span, "spanId")?;
    let parent_id = id(span, "parentSpanId");
    let name = match span.get_mut("name").map(Value::take) {
        Some(Value::String(name)) => name,
        _ => return None,
    };
    let start = nanos(span.get("startTimeUnixNano"));
    let events = array(span, "events")
        .iter_mut()
        .map(|event| Event {
            name: event.get("name").and_then(Value::as_str).unwrap_or("").to_owned(),
            attributes: attributes(event.get_mut("attributes")),
        })
        .collect();
    Some(Span {
        trace_id,
        span_id,
        parent_id,
        name,
        start,
        scope: Rc::clone(scope),
        scope_version: Rc::clone(scope_version),
        attributes: attributes(span.get_mut("attributes")),
        events,
        error,
    })
}

/// A log record as an event of the span it names: its `eventName` (or `event.name`
/// attribute), its attributes and its body (as `body`).
fn read_log(log: &mut Value) -> Option<(String, Event)> {
    let span_id = log.get("spanId").and_then(Value::as_str).filter(|id| !id.is_empty())?.to_owned();
    let event_name = log.get("eventName").and_then(Value::as_str).filter(|n| !n.is_empty());
    let event_name = event_name.map(str::to_owned);
    let mut attributes = attributes(log.get_mut("attributes"));
    let name = match event_name {
        Some(name) => name,
        None => attributes.get("event.name").and_then(Value::as_str).unwrap_or("").to_owned(),
    };
    if let Some(body) = log.get_mut("body") {
        attributes.insert("body".into(), any_value(body));
    }
    Some((span_id, Event { name, attributes }))
}

fn scope_of(scope_spans: &Value) -> (Rc<str>, Rc<str>) {
    let scope = scope_spans.get("scope");
    let text =
        |key: &str| Rc::from(scope.and_then(|s| s.get(key)).and_then(Value::as_str).unwrap_or(""));
    (text("name"), text("version"))
}

fn array<'v>(value: &'v mut Value, key: &str) -> &'v mut [Value] {
    value.get_mut(key).and_then(Value::as_array_mut).map_or(&mut [], Vec::as_mut_slice)
}

/// A time in nanoseconds, written as a string (OTLP/JSON) or a number.
fn nanos(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::String(text)) => text.parse().unwrap_or(0),
        Some(Value::Number(number)) => number.as_u64().unwrap_or(0),
        _ => 0,
    }
}

/// A list of `{key, value: AnyValue}` as a JSON object, its values taken out of the list.
fn attributes(list: Option<&mut Value>) -> Map<String, Value> {
    let mut map = Map::new();
    for pair in list.and_then(Value::as_array_mut).map_or(&mut [][..], Vec::as_mut_slice) {
        let Some(Value::String(key)) = pair.get_mut("key").map(Value::take) else { continue };
        map.insert(key, pair.get_mut("value").map_or(Value::Null, any_value));
    }
    map
}

/// An OTLP `AnyValue` as a JSON value, taken out of `value`: 64-bit integers written as
/// strings become numbers, arrays and key-value lists become JSON arrays and objects.
pub(crate) fn any_value(value: &mut Value) -> Value {
    let Some(object) = value.as_object_mut() else { return value.take() };
    let Some((kind, inner)) = object.iter_mut().next() else { return Value::Null };
    match kind.as_str() {
        "stringValue" | "boolValue" | "bytesValue" | "doubleValue" => inner.take(),
        "intValue" => match inner {
            Value::String(text) => text.parse::<i64>().map_or_else(|_| inner.take(), Value::from),
            _ => inner.take(),
        },
        "arrayValue" => Value::Array(array(inner, "values").iter_mut().map(any_value).collect()),
        "kvlistValue" => Value::Object(attributes(inner.get_mut("values"))),
        _ => value.take(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn any_values_are_decoded_with_integers_written_as_strings() {
        let value = json!({"kvlistValue": {"values": [
            {"key": "n", "value": {"intValue": "9007199254740993"}},
            {"key": "list", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"boolValue": true}]}}},
            {"key": "x", "value": {"doubleValue": 0.5}}
        ]}});
        assert_eq!(
            any_value(&mut value.clone()),
            json!({"n": 9_007_199_254_740_993_i64, "list": ["a", true], "x": 0.5})
        );
    }

    #[test]
    fn json_text_in_an_attribute_is_decoded_and_other_text_is_kept() {
        assert_eq!(decode_json_text(&json!("[{\"role\":\"user\"}]")), json!([{"role": "user"}]));
        assert_eq!(decode_json_text(&json!("[not json")), json!("[not json"));
        assert_eq!(decode_json_text(&json!("plain")), json!("plain"));
    }
}
