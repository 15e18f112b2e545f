//! Binary input turned into the JSON text the importers read: gzip-compressed logs, and OTLP
//! protobuf export requests (a single `ExportTraceServiceRequest`, or the Collector file
//! exporter's `proto` format, each request after its length as 4 big-endian bytes) written as
//! OTLP/JSON lines.
//!
//! Decompression stops at the import's input limit, so a small gzip bomb cannot fill memory.

use std::borrow::Cow;
use std::io::Read as _;

use crate::{Error, Result};

/// Whether `head` (the first bytes of a file) is binary input this module reads: gzip, or
/// what can only be protobuf (JSON never starts with these bytes).
pub(crate) fn is_binary(head: &[u8]) -> bool {
    is_gzip(head) || is_protobuf(head)
}

fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The start of an OTLP export request: field 1 (`resource_spans`, length-delimited), its
/// length as a varint, then the first field of a `ResourceSpans` (`resource` or
/// `scope_spans`); or the same after a 4-byte length prefix. JSON text (even after blank
/// lines, which start with the same byte 0x0A) never starts so.
fn is_protobuf(bytes: &[u8]) -> bool {
    let first_text = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first_text, Some(b'{' | b'[') | None) {
        return false;
    }
    let request = match bytes.first() {
        Some(0x00) => bytes.get(4..).unwrap_or_default(),
        _ => bytes,
    };
    if request.first() != Some(&0x0a) {
        return false;
    }
    let varint_len = request.iter().skip(1).take(5).position(|b| b & 0x80 == 0);
    varint_len.and_then(|len| request.get(len + 2)).is_some_and(|b| matches!(b, 0x0a | 0x12))
}

/// The bytes as the importers read them: gzip decompressed (at most `max_bytes`), protobuf
/// written as OTLP/JSON lines; anything else as it is.
///
/// # Errors
/// [`Error::Compressed`] for a gzip stream that is broken or inflates past `max_bytes`,
/// [`Error::Protobuf`] for protobuf that is not an OTLP export request.
pub(crate) fn decode(bytes: &[u8], max_bytes: u64) -> Result<Cow<'_, [u8]>> {
    let bytes = match is_gzip(bytes) {
        true => Cow::Owned(gunzip(bytes, max_bytes)?),
        false => Cow::Borrowed(bytes),
    };
    if !is_protobuf(&bytes) {
        return Ok(bytes);
    }
    protobuf::to_json_lines(&bytes).map(Cow::Owned)
}

fn gunzip(bytes: &[u8], max_bytes: u64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut reader = flate2::read::MultiGzDecoder::new(bytes).take(max_bytes.saturating_add(1));
    reader.read_to_end(&mut out).map_err(|source| Error::Compressed { source })?;
    if out.len() as u64 > max_bytes {
        return Err(Error::Compressed {
            source: std::io::Error::other(format!(
                "it inflates past the input limit of {max_bytes} bytes"
            )),
        });
    }
    Ok(out)
}

#[cfg(feature = "protobuf")]
mod protobuf {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
    use opentelemetry_proto::tonic::trace::v1::Span;
    use prost::Message as _;
    use serde_json::{Value, json};

    use crate::{Error, Result};

    /// Each export request as one line of OTLP/JSON.
    pub(super) fn to_json_lines(bytes: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for request in requests(bytes)? {
            // Writing a `Value` to a `Vec` cannot fail.
            let _ = serde_json::to_writer(&mut out, &request_json(&request));
            out.push(b'\n');
        }
        Ok(out)
    }

    fn requests(bytes: &[u8]) -> Result<Vec<ExportTraceServiceRequest>> {
        let failed = |offset: usize, error: String| Error::Protobuf {
            reason: format!("at byte {offset}: not an OTLP ExportTraceServiceRequest: {error}"),
        };
        if bytes.first() != Some(&0x00) {
            let request =
                ExportTraceServiceRequest::decode(bytes).map_err(|e| failed(0, e.to_string()))?;
            return Ok(vec![request]);
        }
        let mut requests = Vec::new();
        let mut offset = 0;
        while offset < bytes.len() {
            let Some(prefix) = bytes.get(offset..offset + 4) else {
                return Err(failed(offset, "a length prefix cut short".into()));
            };
            let len = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
            let start = offset + 4;
            let Some(body) = bytes.get(start..start.saturating_add(len)) else {
                return Err(failed(offset, format!("a request of {len} bytes cut short")));
            };
            let request = ExportTraceServiceRequest::decode(body)
                .map_err(|e| failed(start, e.to_string()))?;
            requests.push(request);
            offset = start + len;
        }
        Ok(requests)
    }

    fn request_json(request: &ExportTraceServiceRequest) -> Value {
        let resource_spans: Vec<Value> = request
            .resource_spans
            .iter()
            .map(|resource| {
                let scopes: Vec<Value> = resource
                    .scope_spans
                    .iter()
                    .map(|scope_spans| {
                        let scope = scope_spans.scope.as_ref();
                        json!({
                            "scope": {
                                "name": scope.map_or("", |s| s.name.as_str()),
                                "version": scope.map_or("", |s| s.version.as_str()),
                            },
                            "spans": scope_spans.spans.iter().map(span_json).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                json!({ "scopeSpans": scopes })
            })
            .collect();
        json!({ "resourceSpans": resource_spans })
    }

    fn span_json(span: &Span) -> Value {
        let events: Vec<Value> = span
            .events
            .iter()
            .map(|e| json!({ "name": e.name, "attributes": attributes(&e.attributes) }))
            .collect();
        let status = span.status.as_ref();
        json!({
            "traceId": hex(&span.trace_id),
            "spanId": hex(&span.span_id),
            "parentSpanId": hex(&span.parent_span_id),
            "name": span.name,
            "startTimeUnixNano": span.start_time_unix_nano.to_string(),
            "endTimeUnixNano": span.end_time_unix_nano.to_string(),
            "attributes": attributes(&span.attributes),
            "events": events,
            "status": {
                "code": status.map_or(0, |s| s.code),
                "message": status.map_or("", |s| s.message.as_str()),
            },
        })
    }

    fn attributes(list: &[KeyValue]) -> Vec<Value> {
        list.iter()
            .map(|kv| json!({ "key": kv.key, "value": kv.value.as_ref().map_or(Value::Null, any_value_json) }))
            .collect()
    }

    fn any_value_json(value: &AnyValue) -> Value {
        match &value.value {
            Some(any_value::Value::StringValue(text)) => json!({ "stringValue": text }),
            Some(any_value::Value::BoolValue(flag)) => json!({ "boolValue": flag }),
            Some(any_value::Value::IntValue(int)) => json!({ "intValue": int.to_string() }),
            Some(any_value::Value::DoubleValue(double)) => json!({ "doubleValue": double }),
            Some(any_value::Value::ArrayValue(array)) => {
                let values: Vec<Value> = array.values.iter().map(any_value_json).collect();
                json!({ "arrayValue": { "values": values } })
            }
            Some(any_value::Value::KvlistValue(list)) => {
                json!({ "kvlistValue": { "values": attributes(&list.values) } })
            }
            Some(any_value::Value::BytesValue(bytes)) => json!({ "bytesValue": hex(bytes) }),
            #[allow(unreachable_patterns)] // Newer OTLP versions add kinds (string indexes).
            _ => Value::Null,
        }
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(not(feature = "protobuf"))]
mod protobuf {
    use crate::{Error, Result};

    pub(super) fn to_json_lines(_bytes: &[u8]) -> Result<Vec<u8>> {
        Err(Error::Protobuf {
            reason: "OTLP protobuf input needs atif-import's `protobuf` feature (the `atif` binary has it)".into(),
        })
    }
}
