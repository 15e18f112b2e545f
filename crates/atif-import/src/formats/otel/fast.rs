//! A fast reader of OTLP/JSON export requests straight into spans, without a `Value` of the
//! request.
//!
//! A trace's JSON is mostly the envelope OTLP wraps around every attribute
//! (`{"key": …, "value": {"stringValue": …}}`): read into a `serde_json::Value`, each of those
//! is two maps and three strings, built only to be taken apart by `otlp::read_request` and
//! freed. This reader deserialises the requests into the spans directly, with the same values
//! (`otlp::any_value`'s decoding of `AnyValue`s, the same ids, times and status).
//!
//! It takes a log only when every line that is not blank is one request with nothing in it the
//! `Value` path would report, skip or read otherwise: a key other than `resourceSpans` or
//! `resourceLogs` at the top, a span without its ids or name, an `AnyValue` of several keys, a
//! field of an unexpected type. For anything else it gives `None`, and the log is read through
//! `Records` and `otlp::read_request` as before, with the same errors, warnings and counts
//! (the tests hold both readers to the same spans).

use std::fmt;
use std::rc::Rc;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::otlp::{Event, Span};
use super::{Obj, Read};
use crate::lines::Layout;

/// Reads `bytes` (after any byte-order mark) as JSON Lines of OTLP/JSON export requests, one
/// per line, or as one request over several lines; `None` when any record is not one the fast
/// reader takes whole.
pub(super) fn read(bytes: &[u8]) -> Option<Read> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut read = Read { spans: Vec::new(), logs: Vec::new(), records: 0, layout: Layout::Lines };
    for line in bytes.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        match serde_json::from_slice::<Request>(line) {
            Ok(request) => add(&mut read, request)?,
            // A first line that opens a request without closing it: one request over many lines.
            Err(error) if error.is_eof() && read.records == 0 => {
                read.layout = Layout::Object;
                add(&mut read, serde_json::from_slice(bytes).ok()?)?;
                return Some(read);
            }
            Err(_) => return None,
        }
    }
    (read.records > 0).then_some(read)
}

/// Adds the spans and log records of `request` to `read`; `None` when it is not one the fast
/// reader takes whole.
fn add(read: &mut Read, request: Request) -> Option<()> {
    if request.resource_spans.is_none() && request.resource_logs.is_none() {
        return None;
    }
    read.records += 1;
    for Obj(resource) in request.resource_spans.into_iter().flatten() {
        for Obj(scope_spans) in resource.scope_spans.into_iter().flatten() {
            let scope = scope_spans.scope.map(|Obj(scope)| scope).unwrap_or_default();
            let (name, version) = (Rc::<str>::from(scope.name), Rc::<str>::from(scope.version));
            for Obj(span) in scope_spans.spans.into_iter().flatten() {
                read.spans.push(span.into_span(&name, &version)?);
            }
        }
    }
    for Obj(resource) in request.resource_logs.into_iter().flatten() {
        for Obj(scope_logs) in resource.scope_logs.into_iter().flatten() {
            for Obj(log) in scope_logs.log_records.into_iter().flatten() {
                read.logs.extend(log.into_event());
            }
        }
    }
    Some(())
}

/// One export request. Any other key at the top fails it (another format's record, which
/// detection would name, never passes for a trace).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Request {
    #[serde(default)]
    resource_spans: Option<Vec<Obj<ResourceSpans>>>,
    #[serde(default)]
    resource_logs: Option<Vec<Obj<ResourceLogs>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans {
    #[serde(default)]
    scope_spans: Option<Vec<Obj<ScopeSpans>>>,
}

#[derive(Deserialize)]
struct ScopeSpans {
    #[serde(default)]
    scope: Option<Obj<Scope>>,
    #[serde(default)]
    spans: Option<Vec<Obj<RawSpan>>>,
}

/// An instrumentation scope: a name or version that is not text reads as empty, as in the
/// `Value` path.
#[derive(Deserialize, Default)]
struct Scope {
    #[serde(default, deserialize_with = "text_or_empty")]
    name: String,
    #[serde(default, deserialize_with = "text_or_empty")]
    version: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSpan {
    #[serde(default)]
    trace_id: Option<String>,
    #[serde(default)]
    span_id: Option<String>,
    #[serde(default)]
    parent_span_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    start_time_unix_nano: Nanos,
    #[serde(default)]
    status: Option<Obj<Status>>,
    #[serde(default)]
    events: Option<Vec<Obj<RawEvent>>>,
    #[serde(default)]
    attributes: Option<Attributes>,
}

impl RawSpan {
    /// The span, or `None` where the `Value` path would report it malformed.
    fn into_span(self, scope: &Rc<str>, scope_version: &Rc<str>) -> Option<Span> {
        let id = |id: Option<String>| id.filter(|id| !id.is_empty());
        let error = self.status.and_then(|Obj(status)| status.error());
        Some(Span {
            trace_id: id(self.trace_id)?,
            span_id: id(self.span_id)?,
            parent_id: id(self.parent_span_id),
            name: self.name?,
            start: self.start_time_unix_nano.0,
            scope: Rc::clone(scope),
            scope_version: Rc::clone(scope_version),
            attributes: self.attributes.map(|a| a.0).unwrap_or_default(),
            events: self
                .events
                .into_iter()
                .flatten()
                .map(|Obj(event)| event.into_event())
                .collect(),
            error,
        })
    }
}

/// A span's status: an error for code 2 or `STATUS_CODE_ERROR`, with its message (empty when
/// it is not text).
#[derive(Deserialize)]
struct Status {
    #[serde(default)]
    code: Option<Value>,
    #[serde(default, deserialize_with = "text_or_empty")]
    message: String,
}

impl Status {
    fn error(self) -> Option<String> {
        let is_error = match &self.code {
            Some(Value::Number(n)) => n.as_u64() == Some(2),
            Some(Value::String(code)) => code == "STATUS_CODE_ERROR",
            _ => false,
        };
        is_error.then_some(self.message)
    }
}

#[derive(Deserialize)]
struct RawEvent {
    #[serde(default, deserialize_with = "text_or_empty")]
    name: String,
    #[serde(default)]
    attributes: Option<Attributes>,
}

impl RawEvent {
    fn into_event(self) -> Event {
        Event { name: self.name, attributes: self.attributes.map(|a| a.0).unwrap_or_default() }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceLogs {
    #[serde(default)]
    scope_logs: Option<Vec<Obj<ScopeLogs>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScopeLogs {
    #[serde(default)]
    log_records: Option<Vec<Obj<RawLog>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLog {
    #[serde(default)]
    span_id: Option<String>,
    #[serde(default)]
    event_name: Option<String>,
    #[serde(default)]
    attributes: Option<Attributes>,
    /// `Some` whenever the key is there, `null` included (it becomes a `null` body).
    #[serde(default, deserialize_with = "present")]
    body: Option<AnyValue>,
}

impl RawLog {
    /// The log record as an event of the span it names; `None` (skipped, as in the `Value`
    /// path) when it names none.
    fn into_event(self) -> Option<(String, Event)> {
        let span_id = self.span_id.filter(|id| !id.is_empty())?;
        let mut attributes = self.attributes.map(|a| a.0).unwrap_or_default();
        let name = match self.event_name.filter(|n| !n.is_empty()) {
            Some(name) => name,
            None => attributes.get("event.name").and_then(Value::as_str).unwrap_or("").to_owned(),
        };
        if let Some(body) = self.body {
            attributes.insert("body".into(), body.0);
        }
        Some((span_id, Event { name, attributes }))
    }
}

/// A start time in nanoseconds: text or a number, 0 when it is neither a count nor parses.
#[derive(Default)]
struct Nanos(u64);

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Nanos, D::Error> {
        struct NanosVisitor;
        impl Visitor<'_> for NanosVisitor {
            type Value = Nanos;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a time in nanoseconds")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Nanos, E> {
                Ok(Nanos(text.parse().unwrap_or(0)))
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Nanos, E> {
                Ok(Nanos(n))
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Nanos, E> {
                Ok(Nanos(0))
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Nanos, E> {
                Ok(Nanos(0))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Nanos, E> {
                Ok(Nanos(0))
            }
        }
        deserializer.deserialize_any(NanosVisitor)
    }
}

/// A list of `{key, value: AnyValue}` as a JSON object, as `otlp::attributes` builds it: a
/// later key replaces an earlier one, a missing value is `null`.
struct Attributes(Map<String, Value>);

#[derive(Deserialize)]
struct KeyValue {
    key: String,
    #[serde(default)]
    value: Option<AnyValue>,
}

impl<'de> Deserialize<'de> for Attributes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Attributes, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = Attributes;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a list of key-value pairs")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Attributes, A::Error> {
                let mut map = Map::new();
                while let Some(Obj(pair)) = seq.next_element::<Obj<KeyValue>>()? {
                    map.insert(pair.key, pair.value.map_or(Value::Null, |v| v.0));
                }
                Ok(Attributes(map))
            }
        }
        deserializer.deserialize_seq(ListVisitor)
    }
}

/// An OTLP `AnyValue` decoded as `otlp::any_value` decodes it: a one-key object of a known kind
/// gives its value (an `intValue` written as text becomes a number, an `arrayValue` a JSON
/// array, a `kvlistValue` a JSON object), an empty object `null`, anything that is not an
/// object itself. An object of another key, or of several, fails the fast reader.
struct AnyValue(Value);

impl<'de> Deserialize<'de> for AnyValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<AnyValue, D::Error> {
        deserializer.deserialize_any(AnyValueVisitor).map(AnyValue)
    }
}

struct AnyValueVisitor;

impl<'de> Visitor<'de> for AnyValueVisitor {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an OTLP AnyValue")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut values = Vec::new();
        while let Some(value) = seq.next_element::<Value>()? {
            values.push(value);
        }
        Ok(Value::Array(values))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Some(kind) = map.next_key::<Kind>()? else { return Ok(Value::Null) };
        let value = match kind {
            Kind::Scalar => map.next_value::<Value>()?,
            Kind::Int => match map.next_value::<Value>()? {
                Value::String(text) => text.parse::<i64>().map_or(Value::String(text), Value::from),
                other => other,
            },
            Kind::Array => {
                let list = map.next_value::<Option<Obj<Values<Vec<AnyValue>>>>>()?;
                let values = list.and_then(|Obj(l)| l.values).unwrap_or_default();
                Value::Array(values.into_iter().map(|v| v.0).collect())
            }
            Kind::KvList => {
                let list = map.next_value::<Option<Obj<Values<Attributes>>>>()?;
                Value::Object(list.and_then(|Obj(l)| l.values).map(|a| a.0).unwrap_or_default())
            }
        };
        if map.next_key::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("an AnyValue of several keys"));
        }
        Ok(value)
    }
}

/// The `values` of an `arrayValue` or `kvlistValue`.
#[derive(Deserialize)]
#[serde(bound = "T: Deserialize<'de>")]
struct Values<T> {
    #[serde(default)]
    values: Option<T>,
}

/// The kind of an `AnyValue`, its one key.
#[derive(Deserialize)]
enum Kind {
    #[serde(
        rename = "stringValue",
        alias = "boolValue",
        alias = "bytesValue",
        alias = "doubleValue"
    )]
    Scalar,
    #[serde(rename = "intValue")]
    Int,
    #[serde(rename = "arrayValue")]
    Array,
    #[serde(rename = "kvlistValue")]
    KvList,
}

/// A string, or `""` for any value that is not one (as `as_str().unwrap_or("")` reads it).
fn text_or_empty<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) => text,
        _ => String::new(),
    })
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<AnyValue>, D::Error> {
    AnyValue::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::context::Context;
    use crate::format::Format;
    use crate::lines::Records;

    /// What the `Value` path reads of `bytes`.
    fn value_read(bytes: &[u8]) -> Read {
        let mut records = Records::open(bytes, true).unwrap();
        let mut ctx = Context::new(Format::Otel, true, records.layout());
        super::super::read_records(&mut records, &mut ctx).unwrap()
    }

    fn lines(requests: &[serde_json::Value]) -> Vec<u8> {
        requests.iter().map(|r| format!("{r}\n")).collect::<String>().into_bytes()
    }

    fn span(id: &str, extra: serde_json::Value) -> serde_json::Value {
        let mut span = json!({"traceId": "t1", "spanId": id, "name": format!("span {id}")});
        span.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        span
    }

    /// Every field the `Value` path reads, in each form it accepts.
    fn every_form() -> Vec<serde_json::Value> {
        let attributes = json!([
            {"key": "s", "value": {"stringValue": "text"}},
            {"key": "b", "value": {"boolValue": true}},
            {"key": "d", "value": {"doubleValue": 0.25}},
            {"key": "bytes", "value": {"bytesValue": "AAE="}},
            {"key": "i", "value": {"intValue": "9007199254740993"}},
            {"key": "i_number", "value": {"intValue": 7}},
            {"key": "i_not_a_number", "value": {"intValue": "seven"}},
            {"key": "list", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}, {"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": false}}]}}]}}},
            {"key": "empty_list", "value": {"arrayValue": {}}},
            {"key": "null_list", "value": {"arrayValue": null}},
            {"key": "map", "value": {"kvlistValue": {"values": [{"key": "x", "value": {"stringValue": "y"}}, {"key": "x", "value": {"stringValue": "z"}}]}}},
            {"key": "empty", "value": {}},
            {"key": "plain", "value": "not an AnyValue"},
            {"key": "plain_list", "value": [1, {"a": "b"}]},
            {"key": "missing"},
            {"key": "null", "value": null},
            {"key": "s", "value": {"stringValue": "later wins"}},
        ]);
        let spans = json!([
            span(
                "a0",
                json!({"startTimeUnixNano": "1700000000000000000", "attributes": attributes, "resource": "ignored"})
            ),
            span(
                "a1",
                json!({"parentSpanId": "a0", "startTimeUnixNano": 1_700_000_000_000_000_001_u64, "status": {"code": 2, "message": "boom"}})
            ),
            span(
                "a2",
                json!({"parentSpanId": "", "startTimeUnixNano": "not a time", "status": {"code": "STATUS_CODE_ERROR"}})
            ),
            span(
                "a3",
                json!({"startTimeUnixNano": -5, "status": {"code": 1, "message": "fine"}, "events": [
                    {"name": "exception", "attributes": [{"key": "exception.message", "value": {"stringValue": "bad"}}]},
                    {"name": 3},
                    {}
                ]})
            ),
            span(
                "a4",
                json!({"startTimeUnixNano": 1.5, "status": {"message": 4}, "attributes": null, "events": null})
            ),
        ]);
        let logs = json!([
            {"spanId": "a1", "eventName": "gen_ai.user.message", "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "hi"}}]}}},
            {"spanId": "a1", "attributes": [{"key": "event.name", "value": {"stringValue": "gen_ai.choice"}}], "body": null},
            {"spanId": "a1", "eventName": ""},
            {"eventName": "no span"},
            {"spanId": "", "eventName": "empty span"},
        ]);
        vec![
            json!({"resourceSpans": [
                {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "x"}}]},
                 "scopeSpans": [{"scope": {"name": "pydantic-ai", "version": "1.0"}, "spans": spans}, {"scope": {"name": 5}}, {"spans": []}]},
                {}
            ]}),
            json!({"resourceLogs": [{"scopeLogs": [{"logRecords": logs}, {}]}], "resourceSpans": null}),
            json!({"resourceSpans": []}),
        ]
    }

    #[test]
    fn the_fast_reader_reads_what_the_value_path_reads() {
        let fixtures: [&[u8]; 2] = [
            include_bytes!("../../../tests/fixtures/otel/pydantic-ai-run1.json"),
            include_bytes!("../../../tests/fixtures/otel/pydantic-ai-run2.json"),
        ];
        let every_form = lines(&every_form());
        let with_blank_lines_and_a_mark =
            [b"\xEF\xBB\xBF\n".as_slice(), &every_form, b"\r\n  \n"].concat();
        for (idx, bytes) in
            fixtures.into_iter().chain([&every_form[..], &with_blank_lines_and_a_mark]).enumerate()
        {
            let fast =
                read(bytes).unwrap_or_else(|| panic!("case {idx}: the fast reader declined"));
            assert_eq!(fast, value_read(bytes), "case {idx}");
            assert!(!fast.spans.is_empty(), "case {idx}");
        }
        let read = read(&every_form).unwrap();
        assert_eq!(read.records, 3);
        assert_eq!(read.logs.len(), 3, "the log records without a span are skipped");
        let attributes = &read.spans[0].attributes;
        assert_eq!(attributes["i"], json!(9_007_199_254_740_993_i64));
        assert_eq!(attributes["list"], json!(["a", 2, {"k": false}]));
        assert_eq!(attributes["map"], json!({"x": "z"}));
        assert_eq!(attributes["s"], json!("later wins"));
        assert_eq!(read.spans[1].error.as_deref(), Some("boom"));
        assert_eq!(read.spans[2].error.as_deref(), Some(""));
    }

    #[test]
    fn the_fast_reader_declines_what_the_value_path_reports_or_reads_otherwise() {
        let good = span("a0", json!({}));
        let request = |spans: serde_json::Value| json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]});
        let cases = [
            ("another key at the top", lines(&[json!({"resourceSpans": [], "type": "user"})])),
            ("a span without a trace id", lines(&[request(json!([{"spanId": "a", "name": "n"}]))])),
            (
                "a span with an empty span id",
                lines(&[request(json!([{"traceId": "t", "spanId": "", "name": "n"}]))]),
            ),
            ("a span without a name", lines(&[request(json!([{"traceId": "t", "spanId": "a"}]))])),
            (
                "an AnyValue of two keys",
                lines(&[request(json!([span(
                    "a",
                    json!({"attributes": [{"key": "k", "value": {"stringValue": "a", "boolValue": true}}]})
                )]))]),
            ),
            (
                "an AnyValue of another kind",
                lines(&[request(json!([span(
                    "a",
                    json!({"attributes": [{"key": "k", "value": {"other": 1}}]})
                )]))]),
            ),
            (
                "a key that is not text",
                lines(&[request(json!([span(
                    "a",
                    json!({"attributes": [{"key": 1, "value": {"stringValue": "a"}}]})
                )]))]),
            ),
            (
                "attributes that are not a list",
                lines(&[request(json!([span("a", json!({"attributes": {"k": "v"}}))]))]),
            ),
            (
                "a record that is no request",
                lines(&[request(json!([good.clone()])), json!({"type": "user"})]),
            ),
            ("a request of neither kind", lines(&[json!({})])),
            (
                "a line cut short",
                [lines(&[request(json!([good.clone()]))]), b"{\"resourceSpans\": [".to_vec()]
                    .concat(),
            ),
            (
                "a request over several lines, then another",
                [
                    serde_json::to_vec_pretty(&request(json!([good.clone()]))).unwrap(),
                    lines(&[request(json!([good.clone()]))]),
                ]
                .concat(),
            ),
            ("an array of requests", serde_json::to_vec(&json!([request(json!([good]))])).unwrap()),
            ("nothing", Vec::new()),
            // Objects written as arrays, which serde's derived structs would read by position
            // while the `Value` path finds no key in them.
            ("a span as an array", lines(&[request(json!([["t", "s", null, "n"]]))])),
            ("a resource as an array", lines(&[json!({"resourceSpans": [[[]]]})])),
            (
                "a scope as an array",
                lines(&[
                    json!({"resourceSpans": [{"scopeSpans": [{"scope": ["pydantic-ai", "1"], "spans": [good.clone()]}]}]}),
                ]),
            ),
            (
                "a status as an array",
                lines(&[request(json!([span("a", json!({"status": [2, "boom"]}))]))]),
            ),
            (
                "an attribute as an array",
                lines(&[request(json!([span(
                    "a",
                    json!({"attributes": [["k", {"stringValue": "v"}]]})
                )]))]),
            ),
            (
                "an event as an array",
                lines(&[request(json!([span("a", json!({"events": [["e", []]]}))]))]),
            ),
            (
                "an arrayValue's values as an array",
                lines(&[request(json!([span(
                    "a",
                    json!({"attributes": [{"key": "k", "value": {"arrayValue": [[{"stringValue": "x"}]]}}]})
                )]))]),
            ),
            (
                "a kvlistValue's values as an array",
                lines(&[request(json!([span(
                    "a",
                    json!({"attributes": [{"key": "k", "value": {"kvlistValue": [[]]}}]})
                )]))]),
            ),
            (
                "a log record as an array",
                lines(&[json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [["a0", "e"]]}]}]})]),
            ),
        ];
        for (case, bytes) in cases {
            assert!(read(&bytes).is_none(), "{case}");
        }
    }
}
