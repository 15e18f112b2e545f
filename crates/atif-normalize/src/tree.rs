//! The few operations the normalisation contract needs from a JSON tree ([`Tree`], [`Object`],
//! [`StringValue`]), and their implementation for `serde_json::Value`.
//!
//! The contract (`contract.rs`) is written once against these traits and applied both to a
//! `serde_json::Value` and to the borrowed tree of the fast path (`borrowed_tree.rs`), so the
//! two entry points cannot drift apart: a rule added there holds for both.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::SelectorAction;
use crate::canonical::WriteCanonical;
use crate::selector::Selector;

/// A JSON value the contract can rewrite.
pub(crate) trait Tree: WriteCanonical + Sized {
    /// An object's members.
    type Object: Object<Node = Self>;
    /// A string value.
    type Str: StringValue;

    /// A mutable view of what the value is.
    fn node_mut(&mut self) -> NodeMut<'_, Self>;

    /// The object, when the value is one.
    fn as_object(&self) -> Option<&Self::Object>;

    /// The object, or the value itself when it is not one.
    fn into_object(self) -> Result<Self::Object, Self>;

    /// The array, or the value itself when it is not one.
    fn into_array(self) -> Result<Vec<Self>, Self>;

    /// The string's value, when the value is a string.
    fn as_str(&self) -> Option<Cow<'_, str>>;

    /// Whether the value is `null`.
    fn is_null(&self) -> bool;

    /// What the value is, for error messages.
    fn kind(&self) -> Kind;

    /// An object value.
    fn from_object(object: Self::Object) -> Self;

    /// An array value.
    fn from_array(items: Vec<Self>) -> Self;

    /// A string value.
    fn from_string(value: String) -> Self;

    /// The object, when the value is one.
    fn as_object_mut(&mut self) -> Option<&mut Self::Object> {
        match self.node_mut() {
            NodeMut::Object(object) => Some(object),
            _ => None,
        }
    }

    /// The array, when the value is one.
    fn as_array_mut(&mut self) -> Option<&mut Vec<Self>> {
        match self.node_mut() {
            NodeMut::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The member `key`, when the value is an object that has it.
    fn get_mut(&mut self, key: &str) -> Option<&mut Self> {
        self.as_object_mut().and_then(|object| object.get_mut(key))
    }
}

/// What a JSON value is, in either tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    /// The kind as error messages name it (as `atif_schema::json_kind` does): `null`,
    /// `a boolean`, `a number`, `a string`, `an array` or `an object`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// A mutable view of a value: the parts the contract looks into.
pub(crate) enum NodeMut<'t, T: Tree> {
    /// A string.
    Str(&'t mut T::Str),
    /// An array.
    Array(&'t mut Vec<T>),
    /// An object.
    Object(&'t mut T::Object),
    /// `null`, a boolean or a number.
    Scalar,
}

/// An object's members, unique keys, written in key order.
pub(crate) trait Object: WriteCanonical + Sized {
    /// The values of the members.
    type Node: Tree<Object = Self>;

    /// The member `key`.
    fn get(&self, key: &str) -> Option<&Self::Node>;

    /// The member `key`.
    fn get_mut(&mut self, key: &str) -> Option<&mut Self::Node>;

    /// Removes the member `key` and returns its value.
    fn remove(&mut self, key: &str) -> Option<Self::Node>;

    /// Sets the member `key`.
    fn insert(&mut self, key: &'static str, value: Self::Node);

    /// Keeps only the members for which `keep` says yes.
    fn retain(&mut self, keep: impl FnMut(&str, &Self::Node) -> bool);

    /// Calls `f` on every member, in key order.
    fn for_each_mut(&mut self, f: impl FnMut(&str, &mut Self::Node));

    /// Renames the keys `rename` gives a new name; when two keys end up alike, the later one in
    /// key order before the renaming wins.
    fn rename_keys(&mut self, rename: impl Fn(&str) -> Option<String>);

    /// Whether there are no members.
    fn is_empty(&self) -> bool;

    /// Removes or replaces what `selector` selects under this object (never the object itself).
    fn apply_selector(&mut self, selector: &Selector, action: &SelectorAction);
}

/// A string value that masking may rewrite.
pub(crate) trait StringValue {
    /// Replaces the value by `rewrite(value)` when that is `Some`.
    fn rewrite(&mut self, rewrite: impl FnOnce(&str) -> Option<String>);

    /// Like [`rewrite`](StringValue::rewrite), for a `rewrite` whose matches never contain a
    /// backslash nor start with a letter of an escape (`b f n r t u`), and which writes nothing
    /// JSON escapes (the address masker): it gives the same value run on the string as JSON
    /// writes it, so a tree that keeps strings escaped need not decode them.
    fn rewrite_escaped(&mut self, rewrite: impl FnOnce(&str) -> Option<String>);
}

impl Tree for Value {
    type Object = Map<String, Value>;
    type Str = String;

    fn node_mut(&mut self) -> NodeMut<'_, Value> {
        match self {
            Value::String(s) => NodeMut::Str(s),
            Value::Array(items) => NodeMut::Array(items),
            Value::Object(map) => NodeMut::Object(map),
            Value::Null | Value::Bool(_) | Value::Number(_) => NodeMut::Scalar,
        }
    }

    fn as_object(&self) -> Option<&Map<String, Value>> {
        self.as_object()
    }

    fn into_object(self) -> Result<Map<String, Value>, Value> {
        match self {
            Value::Object(map) => Ok(map),
            other => Err(other),
        }
    }

    fn into_array(self) -> Result<Vec<Value>, Value> {
        match self {
            Value::Array(items) => Ok(items),
            other => Err(other),
        }
    }

    fn as_str(&self) -> Option<Cow<'_, str>> {
        self.as_str().map(Cow::Borrowed)
    }

    fn is_null(&self) -> bool {
        self.is_null()
    }

    fn kind(&self) -> Kind {
        match self {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Boolean,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        }
    }

    fn from_object(object: Map<String, Value>) -> Value {
        Value::Object(object)
    }

    fn from_array(items: Vec<Value>) -> Value {
        Value::Array(items)
    }

    fn from_string(value: String) -> Value {
        Value::String(value)
    }
}

impl Object for Map<String, Value> {
    type Node = Value;

    fn get(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.get_mut(key)
    }

    fn remove(&mut self, key: &str) -> Option<Value> {
        self.remove(key)
    }

    fn insert(&mut self, key: &'static str, value: Value) {
        self.insert(key.to_owned(), value);
    }

    fn retain(&mut self, mut keep: impl FnMut(&str, &Value) -> bool) {
        self.retain(|key, value| keep(key, value));
    }

    fn for_each_mut(&mut self, mut f: impl FnMut(&str, &mut Value)) {
        for (key, value) in self.iter_mut() {
            f(key, value);
        }
    }

    fn rename_keys(&mut self, rename: impl Fn(&str) -> Option<String>) {
        if self.keys().all(|key| rename(key).is_none()) {
            return;
        }
        for (key, value) in std::mem::take(self) {
            let key = rename(&key).unwrap_or(key);
            self.insert(key, value);
        }
    }

    fn is_empty(&self) -> bool {
        self.is_empty()
    }

    fn apply_selector(&mut self, selector: &Selector, action: &SelectorAction) {
        let mut object = Value::Object(std::mem::take(self));
        selector.apply(&mut object, action);
        // A selector never replaces the value it starts from.
        if let Value::Object(redacted) = object {
            *self = redacted;
        }
    }
}

impl StringValue for String {
    fn rewrite(&mut self, rewrite: impl FnOnce(&str) -> Option<String>) {
        if let Some(rewritten) = rewrite(self) {
            *self = rewritten;
        }
    }

    fn rewrite_escaped(&mut self, rewrite: impl FnOnce(&str) -> Option<String>) {
        self.rewrite(rewrite);
    }
}
