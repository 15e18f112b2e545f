//! Small readers shared by the format modules; the description of a record's shape lives in
//! `context.rs`, beside the context that checks it.

use serde_json::{Map, Value};

pub(crate) use crate::context::{Kind, Member, optional, required};
use crate::draft::{Part, image_part};

/// A record type for the statistics: the type, or `(no type)` when it is empty.
pub(crate) fn type_name(record_type: &str) -> &str {
    if record_type.is_empty() { "(no type)" } else { record_type }
}

/// A non-negative integer member of `value`.
pub(crate) fn u64_field(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// Tool arguments as ATIF wants them (an object), with `extra.arguments_not_an_object` and the
/// value under `input` when the log holds something else.
pub(crate) fn object_arguments(value: Option<&Value>) -> (Map<String, Value>, Map<String, Value>) {
    match value {
        Some(Value::Object(map)) => (map.clone(), Map::new()),
        None | Some(Value::Null) => (Map::new(), Map::new()),
        Some(other) => (
            Map::from_iter([("input".to_owned(), other.clone())]),
            Map::from_iter([("arguments_not_an_object".to_owned(), Value::Bool(true))]),
        ),
    }
}

/// Message content written as a string or a list of parts: each `text` part is text, and a part
/// for which `image` gives `(media type, base64 data)` is an image; any other part is kept as
/// its JSON text, so nothing is silently dropped.
pub(crate) fn text_parts(
    content: &Value,
    image: impl Fn(&Value) -> Option<(String, String)>,
) -> Vec<Part> {
    match content {
        Value::String(text) => vec![Part::Text(text.clone())],
        Value::Array(parts) => parts
            .iter()
            .map(|part| match (part.get("text").and_then(Value::as_str), image(part)) {
                (Some(text), _) => Part::Text(text.to_owned()),
                (None, Some((media_type, data))) => image_part(&media_type, &data),
                (None, None) => Part::Text(part.to_string()),
            })
            .collect(),
        Value::Null => Vec::new(),
        other => vec![Part::Text(other.to_string())],
    }
}

/// An epoch-milliseconds timestamp (OpenCode, pi) as ISO 8601 in UTC, or `None` when it is
/// not an integer in the years 1970 to 9999.
pub(crate) fn millis_to_iso(value: Option<&Value>) -> Option<String> {
    let millis = value?.as_i64().filter(|m| (0..253_402_300_800_000).contains(m))?;
    let (days, rem) = (millis.div_euclid(86_400_000), millis.rem_euclid(86_400_000));
    // Howard Hinnant's civil-from-days algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (hour, minute, second, ms) =
        (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    Some(format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{ms:03}Z"))
}

#[cfg(test)]
mod tests {
    use crate::context::shape_error;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_shape_error_names_the_member_what_it_holds_and_what_was_expected() {
        let members =
            [required("message", Kind::Object), required("message.content", Kind::Content)];
        let check = |value: Value| shape_error(&"assistant record", &value, &members);
        assert_eq!(check(json!({"message": {"content": "hi"}})), None);
        assert_eq!(check(json!({"message": {"content": [1]}})), None);
        assert_eq!(
            check(json!({"message": "hi"})).unwrap(),
            "assistant record whose `message` is a string, expected an object"
        );
        assert_eq!(
            check(json!({"message": {"content": 42}})).unwrap(),
            "assistant record whose `message.content` is a number, expected text or a list of parts"
        );
        assert_eq!(
            check(json!({"message": {}})).unwrap(),
            "assistant record without `message.content`"
        );
        assert_eq!(
            check(json!([1])).unwrap(),
            "assistant record that is an array, expected an object"
        );
        let optional = [optional("usage", Kind::Object)];
        assert_eq!(shape_error(&"turn", &json!({"usage": null}), &optional), None);
        assert_eq!(shape_error(&"turn", &json!({}), &optional), None);
        assert_eq!(
            shape_error(&"turn", &json!({"usage": 7}), &optional).unwrap(),
            "turn whose `usage` is a number, expected an object"
        );
    }

    #[test]
    fn epoch_milliseconds_become_iso_dates() {
        assert_eq!(millis_to_iso(Some(&json!(0))).unwrap(), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            millis_to_iso(Some(&json!(1_769_231_333_010_i64))).unwrap(),
            "2026-01-24T05:08:53.010Z"
        );
        assert_eq!(
            millis_to_iso(Some(&json!(951_782_400_000_i64))).unwrap(),
            "2000-02-29T00:00:00.000Z"
        );
        assert!(millis_to_iso(Some(&json!(-1))).is_none());
        assert!(millis_to_iso(Some(&json!("x"))).is_none());
    }
}
