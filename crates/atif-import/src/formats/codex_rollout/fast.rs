//! A fast reader of a rollout's most frequent records (reasoning items, function calls and
//! their outputs, `token_count` events, and the events the import only counts), into borrowed
//! values that keep only what the import reads.
//!
//! A 100 MB rollout is mostly these records, and a reasoning item is mostly its
//! `encrypted_content`, which the import drops: parsing each line into a `serde_json::Value`
//! allocated every string and map of it only to free them again. This reader validates what
//! it skips exactly as the `Value` parser would (every value goes through serde_json's
//! `deserialize_any`, so the same strings, escapes, numbers and nesting depth are accepted),
//! and gives `None` for any record it does not take whole: such a line is then parsed into a
//! `Value` and imported as before, with the same shape checks, errors and line numbers.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The `visit_*` methods of a visitor of any JSON value for the values that are neither lists
/// nor objects: `null` gives `$null`, a string, number or boolean (read, then dropped) `$other`.
macro_rules! scalars_give {
    ($other:expr, $null:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($null)
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }

        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
}

/// A record the fast reader took whole.
#[derive(Debug)]
pub(super) struct Hot<'a> {
    pub(super) timestamp: Option<Cow<'a, str>>,
    pub(super) item: Item<'a>,
}

/// What a record the fast reader took holds.
#[derive(Debug)]
pub(super) enum Item<'a> {
    /// A `response_item` of type `reasoning`: the texts of its summary.
    Reasoning { summary: Vec<Cow<'a, str>> },
    /// A `response_item` of type `function_call`.
    FunctionCall {
        call_id: Option<Cow<'a, str>>,
        id: Option<Cow<'a, str>>,
        name: Cow<'a, str>,
        /// The arguments as the log writes them (a JSON text), if a string.
        arguments: Option<Cow<'a, str>>,
        namespace: Option<Cow<'a, str>>,
        status: Option<Cow<'a, str>>,
    },
    /// A `response_item` of type `function_call_output` whose output is text (or absent).
    FunctionCallOutput {
        call_id: Cow<'a, str>,
        output: Option<Cow<'a, str>>,
        status: Option<Cow<'a, str>>,
        success: Option<bool>,
    },
    /// An `event_msg` of type `token_count`: its `info.last_token_usage` and
    /// `info.total_token_usage`, each `None` when absent (a `null` is kept).
    TokenCount { last: Option<Value>, total: Option<Value> },
    /// A record the import only counts, under this name (`event_msg/agent_reasoning`).
    Ignored { name: String },
}

/// Reads `line` when it is one of the records this reader takes whole.
pub(super) fn read(line: &str) -> Option<Hot<'_>> {
    let record = serde_json::from_str::<Record<'_>>(line).ok()?;
    let payload = record.payload?;
    let payload_type = payload.payload_type.into_str()?;
    let item = match (record.record_type.as_str()?, &*payload_type) {
        ("response_item", "reasoning") => {
            let summary = match payload.summary {
                Summary::Missing => Vec::new(),
                Summary::List(texts) => texts,
                Summary::Other => return None,
            };
            Item::Reasoning { summary }
        }
        ("response_item", "function_call") => {
            let arguments = match payload.arguments {
                Field::Missing | Field::Null => None,
                Field::Str(text) => Some(text),
                Field::Bool(_) | Field::Other => return None,
            };
            Item::FunctionCall {
                call_id: payload.call_id.optional_str()?,
                id: payload.id.into_str(),
                name: payload.name.into_str()?,
                arguments,
                namespace: payload.namespace.into_str(),
                status: payload.status.into_str(),
            }
        }
        ("response_item", "function_call_output") => {
            let output = match payload.output {
                Field::Missing | Field::Null => None,
                Field::Str(text) => Some(text),
                Field::Bool(_) | Field::Other => return None,
            };
            Item::FunctionCallOutput {
                call_id: payload.call_id.into_str()?,
                output,
                status: payload.status.into_str(),
                success: match payload.success {
                    Field::Bool(success) => Some(success),
                    _ => None,
                },
            }
        }
        ("response_item", "ghost_snapshot") => {
            Item::Ignored { name: "response_item/ghost_snapshot".to_owned() }
        }
        ("event_msg", "token_count") => match payload.info {
            Info::Missing => Item::TokenCount { last: None, total: None },
            Info::Object { last, total } => Item::TokenCount { last, total },
            Info::Other => return None,
        },
        ("event_msg", other) if !HANDLED_EVENTS.contains(&other) => {
            Item::Ignored { name: format!("event_msg/{other}") }
        }
        _ => return None,
    };
    let timestamp = record.timestamp.into_str();
    Some(Hot { timestamp, item })
}

/// The events the import reads rather than only counts (see `State::event`); `token_count`
/// is read above.
const HANDLED_EVENTS: &[&str] = &[
    "token_count",
    "turn_aborted",
    "error",
    "stream_error",
    "task_complete",
    "collab_agent_spawn_end",
];

/// Payload types this reader passes on however their record is typed, told as soon as the
/// payload's `type` is read so that the line is not read to its end twice.
const PASSED_ON: &[&str] = &[
    "message",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "web_search_call",
    "tool_search_call",
    "tool_search_output",
    "image_generation_call",
    "agent_message",
    "turn_aborted",
    "error",
    "stream_error",
    "task_complete",
    "collab_agent_spawn_end",
];

/// One line: `type`, `timestamp` and `payload`; any other member is validated and skipped.
/// A repeated member keeps its last value, as in a `serde_json::Value`.
struct Record<'a> {
    record_type: Field<'a>,
    timestamp: Field<'a>,
    payload: Option<Payload<'a>>,
}

impl<'de> Deserialize<'de> for Record<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Record<'de>, D::Error> {
        struct RecordVisitor;

        impl<'de> Visitor<'de> for RecordVisitor {
            type Value = Record<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a rollout record")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Record<'de>, A::Error> {
                let mut record = Record {
                    record_type: Field::Missing,
                    timestamp: Field::Missing,
                    payload: None,
                };
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "type" => {
                            record.record_type = map.next_value()?;
                            // Other records are passed on at once (the type comes first in
                            // the rollouts Codex writes).
                            if !matches!(
                                record.record_type.as_str(),
                                Some("response_item" | "event_msg")
                            ) {
                                return Err(de::Error::custom("passed on"));
                            }
                        }
                        "timestamp" => record.timestamp = map.next_value()?,
                        "payload" => record.payload = Some(map.next_value()?),
                        _ => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(record)
            }
        }

        deserializer.deserialize_map(RecordVisitor)
    }
}

/// The members of a payload that the import reads; any other is validated and skipped.
struct Payload<'a> {
    payload_type: Field<'a>,
    summary: Summary<'a>,
    name: Field<'a>,
    arguments: Field<'a>,
    call_id: Field<'a>,
    id: Field<'a>,
    namespace: Field<'a>,
    status: Field<'a>,
    output: Field<'a>,
    success: Field<'a>,
    info: Info,
}

impl<'de> Deserialize<'de> for Payload<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Payload<'de>, D::Error> {
        struct PayloadVisitor;

        impl<'de> Visitor<'de> for PayloadVisitor {
            type Value = Payload<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a rollout payload")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Payload<'de>, A::Error> {
                let mut payload = Payload {
                    payload_type: Field::Missing,
                    summary: Summary::Missing,
                    name: Field::Missing,
                    arguments: Field::Missing,
                    call_id: Field::Missing,
                    id: Field::Missing,
                    namespace: Field::Missing,
                    status: Field::Missing,
                    output: Field::Missing,
                    success: Field::Missing,
                    info: Info::Missing,
                };
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "type" => {
                            payload.payload_type = map.next_value()?;
                            if payload.payload_type.as_str().is_some_and(|t| PASSED_ON.contains(&t))
                            {
                                return Err(de::Error::custom("passed on"));
                            }
                        }
                        "summary" => payload.summary = map.next_value()?,
                        "name" => payload.name = map.next_value()?,
                        "arguments" => payload.arguments = map.next_value()?,
                        "call_id" => payload.call_id = map.next_value()?,
                        "id" => payload.id = map.next_value()?,
                        "namespace" => payload.namespace = map.next_value()?,
                        "status" => payload.status = map.next_value()?,
                        "output" => payload.output = map.next_value()?,
                        "success" => payload.success = map.next_value()?,
                        "info" => payload.info = map.next_value()?,
                        _ => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(payload)
            }
        }

        deserializer.deserialize_map(PayloadVisitor)
    }
}

/// A member read as what the import asks of it: a string, a boolean, `null`, or anything else
/// (validated and dropped).
#[derive(Debug)]
enum Field<'a> {
    Missing,
    Null,
    Str(Cow<'a, str>),
    Bool(bool),
    Other,
}

impl<'a> Field<'a> {
    /// The string, as `Value::as_str` gives it.
    fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(text) => Some(text),
            _ => None,
        }
    }

    fn into_str(self) -> Option<Cow<'a, str>> {
        match self {
            Field::Str(text) => Some(text),
            _ => None,
        }
    }

    /// An optional string member: `Some(None)` when absent or `null`, `None` when it holds
    /// something else (a record the shape check would skip).
    fn optional_str(self) -> Option<Option<Cow<'a, str>>> {
        match self {
            Field::Missing | Field::Null => Some(None),
            Field::Str(text) => Some(Some(text)),
            Field::Bool(_) | Field::Other => None,
        }
    }
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Field<'de>, D::Error> {
        struct FieldVisitor;

        impl<'de> Visitor<'de> for FieldVisitor {
            type Value = Field<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Field<'de>, E> {
                Ok(Field::Str(Cow::Borrowed(text)))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Field<'de>, E> {
                Ok(Field::Str(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Field<'de>, E> {
                Ok(Field::Str(Cow::Owned(text)))
            }

            fn visit_bool<E: de::Error>(self, value: bool) -> Result<Field<'de>, E> {
                Ok(Field::Bool(value))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Field<'de>, E> {
                Ok(Field::Null)
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Field<'de>, E> {
                Ok(Field::Other)
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Field<'de>, E> {
                Ok(Field::Other)
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Field<'de>, E> {
                Ok(Field::Other)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Field<'de>, A::Error> {
                Checked::drain_seq(seq).map(|_| Field::Other)
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field<'de>, A::Error> {
                Checked::drain_map(map).map(|_| Field::Other)
            }
        }

        deserializer.deserialize_any(FieldVisitor)
    }
}

/// A reasoning item's `summary`: the `text` strings of its parts (a part that is not an
/// object, or whose `text` is not a string, gives none), or something else than a list.
enum Summary<'a> {
    Missing,
    List(Vec<Cow<'a, str>>),
    Other,
}

impl<'de> Deserialize<'de> for Summary<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Summary<'de>, D::Error> {
        struct SummaryVisitor;

        impl<'de> Visitor<'de> for SummaryVisitor {
            type Value = Summary<'de>;

            scalars_give!(Summary::Other, Summary::Missing);

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of summary parts")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Summary<'de>, A::Error> {
                let mut texts = Vec::new();
                while let Some(part) = seq.next_element::<SummaryPart<'de>>()? {
                    texts.extend(part.0);
                }
                Ok(Summary::List(texts))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Summary<'de>, A::Error> {
                Checked::drain_map(map).map(|_| Summary::Other)
            }
        }

        deserializer.deserialize_any(SummaryVisitor)
    }
}

/// One part of a summary: its `text` when the part is an object whose (last) `text` is a string.
struct SummaryPart<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for SummaryPart<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SummaryPart<'de>, D::Error> {
        Ok(match Part::deserialize(deserializer)? {
            Part(Field::Str(text)) => SummaryPart(Some(text)),
            Part(_) => SummaryPart(None),
        })
    }
}

/// Any value, keeping the `text` member when it is an object.
struct Part<'a>(Field<'a>);

impl<'de> Deserialize<'de> for Part<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Part<'de>, D::Error> {
        struct PartVisitor;

        impl<'de> Visitor<'de> for PartVisitor {
            type Value = Part<'de>;

            scalars_give!(Part(Field::Other), Part(Field::Other));

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part<'de>, A::Error> {
                let mut text = Field::Missing;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "text" => text = map.next_value()?,
                        _ => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(Part(text))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Part<'de>, A::Error> {
                Checked::drain_seq(seq).map(|_| Part(Field::Other))
            }
        }

        deserializer.deserialize_any(PartVisitor)
    }
}

/// A `token_count` event's `info`: absent or `null`, an object (with its two usages, `None`
/// when absent), or something else.
enum Info {
    Missing,
    Object { last: Option<Value>, total: Option<Value> },
    Other,
}

impl<'de> Deserialize<'de> for Info {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Info, D::Error> {
        struct InfoVisitor;

        impl<'de> Visitor<'de> for InfoVisitor {
            type Value = Info;

            scalars_give!(Info::Other, Info::Missing);

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("token usage")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Info, A::Error> {
                let (mut last, mut total) = (None, None);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "last_token_usage" => last = Some(map.next_value::<Value>()?),
                        "total_token_usage" => total = Some(map.next_value::<Value>()?),
                        _ => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(Info::Object { last, total })
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Info, A::Error> {
                Checked::drain_seq(seq).map(|_| Info::Other)
            }
        }

        deserializer.deserialize_any(InfoVisitor)
    }
}

/// Any JSON value, validated as a `serde_json::Value` would be (strings and their escapes
/// decoded, numbers read, nesting counted) and dropped. Unlike `IgnoredAny`, which skips
/// strings and numbers without reading them, it accepts exactly what the `Value` parse does.
struct Checked;

impl Checked {
    fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Checked, A::Error> {
        while map.next_key::<Checked>()?.is_some() {
            map.next_value::<Checked>()?;
        }
        Ok(Checked)
    }
}

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Checked, D::Error> {
        struct CheckedVisitor;

        impl<'de> Visitor<'de> for CheckedVisitor {
            type Value = Checked;

            scalars_give!(Checked, Checked);

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Checked, A::Error> {
                Checked::drain_seq(seq)
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Checked, A::Error> {
                Checked::drain_map(map)
            }
        }

        deserializer.deserialize_any(CheckedVisitor)
    }
}
