//! The loader's check without the tree: one pass of `serde_json` over the bytes with a visitor
//! that keeps nothing but what deciding "is this a trajectory" needs.
//!
//! The visitor keeps the kinds of the root's `schema_version` and `steps`, and, for each object
//! on the path from the root to the current value, the keys seen so far (borrowed from the bytes
//! where they hold no escape). It stops at the first thing that the strict reader would report
//! with more than the root's form: invalid JSON, a byte-order mark, a repeated key, or a number
//! that may be an integer outside 64 bits. [`check_trajectory_bytes`](super::check_trajectory_bytes)
//! then hands those bytes to [`parse_trajectory`](super::parse_trajectory), so every error is
//! the strict reader's own, and the tree is built only for input that is already refused (or,
//! rarely, holds a float such as `1e21` beyond 64-bit integers).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::TrajectoryForm;

/// The form of the document in `bytes`, or `None` when the strict reader must look at it (see
/// the module docs).
pub(super) fn form(bytes: &[u8]) -> Option<TrajectoryForm> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return None;
    }
    let mut form = TrajectoryForm { root: "null", schema_version: None, steps: None };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let root = Walker { root: Some(&mut form) }.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    form.root = root;
    Some(form)
}

/// The keys of one object seen so far: a short list for the many small objects, a set once
/// an object grows past it.
#[derive(Default)]
struct Keys<'de> {
    few: Vec<Cow<'de, str>>,
    many: HashSet<Cow<'de, str>>,
}

/// Objects with up to this many members are searched as a list.
const FEW_KEYS: usize = 16;

impl<'de> Keys<'de> {
    /// Adds `key`; false when the object already had it.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&key) {
                return false;
            }
            if self.few.len() < FEW_KEYS {
                self.few.push(key);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(key)
    }
}

/// Visits one value; `root` is set for the document's root only, to note its form.
struct Walker<'f> {
    root: Option<&'f mut TrajectoryForm>,
}

impl<'de> DeserializeSeed<'de> for Walker<'_> {
    type Value = &'static str;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Stops the walk; the strict reader says why.
fn stop<E: de::Error>() -> E {
    E::custom("left to the strict reader")
}

impl<'de> Visitor<'de> for Walker<'_> {
    type Value = &'static str;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok("a boolean")
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok("a number")
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok("a number")
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        // serde_json reads an integer literal beyond 64 bits as a float; whether this one was
        // written as an integer is the strict reader's question.
        const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
        const MINUS_TWO_POW_63: f64 = -9_223_372_036_854_775_808.0;
        if value > MINUS_TWO_POW_63 && value < TWO_POW_64 { Ok("a number") } else { Err(stop()) }
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok("a string")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok("null")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element_seed(Walker { root: None })?.is_some() {}
        Ok("an array")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut root = self.root;
        let mut keys = Keys::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let kind = map.next_value_seed(Walker { root: None })?;
            if let Some(form) = root.as_deref_mut() {
                match key.as_ref() {
                    "schema_version" => form.schema_version = Some(kind),
                    "steps" => form.steps = Some(kind),
                    _ => {}
                }
            }
            if !keys.insert(key) {
                return Err(stop());
            }
        }
        Ok("an object")
    }
}

/// Reads an object key, borrowing it from the bytes when it holds no escape.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_is_read_without_the_strict_reader() {
        let form = form(br#"{"steps": {"a": [1, 2.5, -3]}, "x": null, "schema_version": 1}"#);
        assert_eq!(
            form,
            Some(TrajectoryForm {
                root: "an object",
                schema_version: Some("a number"),
                steps: Some("an object")
            })
        );
        assert_eq!(form_of("[1, true]"), Some(("an array", None, None)));
        assert_eq!(form_of(r#""x""#), Some(("a string", None, None)));
    }

    fn form_of(text: &str) -> Option<(&'static str, Option<&'static str>, Option<&'static str>)> {
        form(text.as_bytes()).map(|form| (form.root, form.schema_version, form.steps))
    }

    #[test]
    fn what_the_strict_reader_must_explain_stops_the_walk() {
        let many: String = (0..40).map(|n| format!("\"k{n}\": {n}, ")).collect();
        let cases = [
            "{\"a\": 1, \"a\": 2}".to_owned(),
            r#"{"a": [{"b": 1, "c": {}, "b": 2}]}"#.to_owned(),
            r#"{"a\u0062": 1, "ab": 2}"#.to_owned(),
            format!("{{{many}\"k3\": 0}}"),
            r#"{"a": 1180591620717411303424}"#.to_owned(),
            r#"{"a": -9223372036854775809}"#.to_owned(),
            "\u{FEFF}{}".to_owned(),
            "{} {}".to_owned(),
            "{\"a\": NaN}".to_owned(),
            String::new(),
        ];
        for text in cases {
            assert_eq!(form(text.as_bytes()), None, "{text}");
        }
        let fine = format!("{{{many}\"k40\": 18446744073709551615, \"n\": -9223372036854775808}}");
        assert_eq!(form_of(&fine), Some(("an object", None, None)));
    }
}
