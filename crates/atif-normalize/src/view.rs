//! What Shape, explain and the report read from a normalised document ([`View`]), for both
//! trees: a `serde_json::Value`, and the borrowed tree of the fast path, so that a check of a
//! long run never has to copy the run into a `Value` to say how it differs.

use std::borrow::Cow;

use serde_json::{Number, Value};

use crate::borrowed_tree::{Node, Text, find};
use crate::canonical::WriteCanonical;

/// A JSON value read, never changed.
pub(crate) trait View: WriteCanonical + Sized {
    /// The member `key`, when this is an object that has it.
    fn get(&self, key: &str) -> Option<&Self>;

    /// The string, when this is one.
    fn as_str(&self) -> Option<Cow<'_, str>>;

    /// The items, when this is an array.
    fn as_array(&self) -> Option<&[Self]>;

    /// The number, when this is an integer from 0 to 2^64-1.
    fn as_u64(&self) -> Option<u64>;

    /// Whether this is `true`.
    fn is_true(&self) -> bool;

    /// The members in key order, when this is an object.
    fn members(&self) -> Option<Vec<(&str, &Self)>>;

    /// Whether the two are equal as `serde_json::Value`s compare.
    fn json_eq(&self, other: &Self) -> bool;

    /// Whether the two have the same canonical text: [`View::json_eq`], except that a float
    /// equals a float only with the same bits (`-0.0` is not `0.0`).
    fn same_text(&self, other: &Self) -> bool;

    /// The value as a `serde_json::Value` (a copy, for small values).
    fn to_value(&self) -> Value;

    /// The string at the end of `path`, a member name per level.
    fn str_at(&self, path: &[&str]) -> Option<Cow<'_, str>> {
        path.iter().try_fold(self, |node, key| node.get(key))?.as_str()
    }

    /// Whether this is an object.
    fn is_object(&self) -> bool {
        self.members().is_some()
    }
}

impl View for Value {
    fn get(&self, key: &str) -> Option<&Value> {
        Value::get(self, key)
    }

    fn as_str(&self) -> Option<Cow<'_, str>> {
        Value::as_str(self).map(Cow::Borrowed)
    }

    fn as_array(&self) -> Option<&[Value]> {
        Value::as_array(self).map(Vec::as_slice)
    }

    fn as_u64(&self) -> Option<u64> {
        Value::as_u64(self)
    }

    fn is_true(&self) -> bool {
        *self == Value::Bool(true)
    }

    fn members(&self) -> Option<Vec<(&str, &Value)>> {
        let Value::Object(map) = self else { return None };
        let mut members: Vec<(&str, &Value)> =
            map.iter().map(|(key, value)| (key.as_str(), value)).collect();
        // In key order even where serde_json's map keeps the order of insertion.
        members.sort_by(|a, b| a.0.cmp(b.0));
        Some(members)
    }

    fn json_eq(&self, other: &Value) -> bool {
        self == other
    }

    fn same_text(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Number(a), Value::Number(b)) => same_number_text(a, b),
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.same_text(b))
            }
            (Value::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(key, a)| b.get(key).is_some_and(|b| a.same_text(b)))
            }
            _ => self == other,
        }
    }

    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl View for Node<'_> {
    fn get(&self, key: &str) -> Option<&Self> {
        match self {
            Node::Object(members) => find(members, key).map(|idx| &members[idx].1),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<Cow<'_, str>> {
        match self {
            Node::Str(text) => Some(text.decoded()),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<&[Self]> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }

    fn as_u64(&self) -> Option<u64> {
        match self {
            Node::Number(number) => number.as_u64(),
            _ => None,
        }
    }

    fn is_true(&self) -> bool {
        matches!(self, Node::Bool(true))
    }

    fn members(&self) -> Option<Vec<(&str, &Self)>> {
        match self {
            Node::Object(members) => Some(members.iter().map(|(k, v)| (k.as_ref(), v)).collect()),
            _ => None,
        }
    }

    fn json_eq(&self, other: &Self) -> bool {
        node_eq(self, other, |a, b| a == b)
    }

    fn same_text(&self, other: &Self) -> bool {
        node_eq(self, other, same_number_text)
    }

    fn to_value(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::Str(text) => Value::String(text.decoded().into_owned()),
            Node::Array(items) => Value::Array(items.iter().map(View::to_value).collect()),
            Node::Object(members) => {
                Value::Object(members.iter().map(|(k, v)| (k.to_string(), v.to_value())).collect())
            }
        }
    }
}

/// Equality of two borrowed trees, numbers compared by `same_number`. Objects hold their
/// members sorted by key, so they compare in order.
fn node_eq(a: &Node<'_>, b: &Node<'_>, same_number: fn(&Number, &Number) -> bool) -> bool {
    match (a, b) {
        (Node::Null, Node::Null) => true,
        (Node::Bool(a), Node::Bool(b)) => a == b,
        (Node::Number(a), Node::Number(b)) => same_number(a, b),
        (Node::Str(a), Node::Str(b)) => text_eq(a, b),
        (Node::Array(a), Node::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| node_eq(a, b, same_number))
        }
        (Node::Object(a), Node::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && node_eq(va, vb, same_number))
        }
        _ => false,
    }
}

/// Whether two strings hold the same value. Raw text is in canonical form, which is one
/// spelling per value, so two raw texts are compared as written.
fn text_eq(a: &Text<'_>, b: &Text<'_>) -> bool {
    match (a, b) {
        (Text::Raw(a), Text::Raw(b)) => a == b,
        _ => a.decoded() == b.decoded(),
    }
}

/// Whether two numbers have the same canonical text: a float equals a float only with the same
/// bits, and never an integer.
pub(crate) fn same_number_text(a: &Number, b: &Number) -> bool {
    match (a.is_f64(), b.is_f64()) {
        (true, true) => a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits),
        (false, false) => a == b,
        _ => false,
    }
}
