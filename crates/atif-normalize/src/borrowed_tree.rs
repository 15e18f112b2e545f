//! The tree of the fast path: a JSON value whose strings borrow from the input text and stay
//! as written there when that is already their canonical form, so strings that normalisation
//! leaves alone are never allocated, unescaped or re-escaped.
//!
//! [`normalize_json`](crate::normalize_json) reads JSON text into it (`strict_parser.rs`),
//! applies the contract to it through the `Tree` trait, and writes it back as canonical text.

use std::borrow::Cow;

use atif_secrets::{Redactor, Scanner};
use serde_json::{Map, Number, Value};

use crate::SelectorAction;
use crate::canonical::{
    Sink, WriteCanonical, write_array, write_members, write_number, write_string,
};
use crate::selector::Selector;
use crate::tree::{Kind, NodeMut, Object, StringValue, Tree};

/// Whether any key or string of `root` may hold a secret `scanner` would replace.
pub(crate) fn may_hold_secret(root: &Node<'_>, scanner: &Scanner) -> bool {
    SecretProbe { scanner, keys: scanner.redactor() }.node(root)
}

/// The walk of [`may_hold_secret`]. A trajectory repeats a few dozen keys thousands of times;
/// the scanner's `Redactor` remembers what each key says, so each is asked once.
struct SecretProbe<'s> {
    scanner: &'s Scanner,
    keys: Redactor<'s>,
}

impl SecretProbe<'_> {
    fn node(&mut self, node: &Node<'_>) -> bool {
        match node {
            Node::Null | Node::Bool(_) | Node::Number(_) => false,
            Node::Str(text) => text_may_hold_secret(text, self.scanner),
            Node::Array(items) => items.iter().any(|item| self.node(item)),
            Node::Object(members) => members
                .iter()
                .any(|(key, value)| self.keys.may_hold_secret_key(key) || self.node(value)),
        }
    }
}

/// Whether a string value may hold a secret `scanner` would replace: the one rule of the walk
/// above and of the parser's probe. Raw text is decoded only when it holds a hint of a secret.
pub(crate) fn text_may_hold_secret(text: &Text<'_>, scanner: &Scanner) -> bool {
    match text {
        Text::Raw(raw) => scanner.may_hold_secret_escaped(raw, unescape_simple),
        Text::Decoded(text) => scanner.may_hold_secret(text),
    }
}

/// A JSON value whose strings borrow from the input where they can.
#[derive(Debug)]
pub(crate) enum Node<'a> {
    Null,
    Bool(bool),
    Number(Number),
    Str(Text<'a>),
    Array(Vec<Node<'a>>),
    /// Members sorted by key, keys unique.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

/// A string value.
#[derive(Debug)]
pub(crate) enum Text<'a> {
    /// The string as written between its quotes, already in canonical form: its only escapes
    /// are `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, exactly what Python writes.
    Raw(Cow<'a, str>),
    /// The decoded string, escaped when written.
    Decoded(String),
}

impl Text<'_> {
    /// The string's value.
    pub(crate) fn decoded(&self) -> Cow<'_, str> {
        match self {
            Text::Raw(raw) if raw.contains('\\') => Cow::Owned(unescape_simple(raw)),
            Text::Raw(raw) => Cow::Borrowed(raw),
            Text::Decoded(s) => Cow::Borrowed(s),
        }
    }
}

/// Decodes a raw string whose escapes are all single-character ones.
pub(crate) fn unescape_simple(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    // Copy the text between escapes whole; only the escapes are looked at one by one.
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let mut after = rest[at + 1..].chars();
        match after.next() {
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => return out,
        }
        rest = after.as_str();
    }
    out.push_str(rest);
    out
}

impl Node<'_> {
    /// The same document as a `serde_json::Value`.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Number(n) => Value::Number(n),
            Node::Str(text) => Value::String(text.decoded().into_owned()),
            Node::Array(items) => Value::Array(items.into_iter().map(Node::into_value).collect()),
            Node::Object(members) => Value::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k.into_owned(), v.into_value()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    /// The same document as a tree of its own.
    pub(crate) fn from_value(value: Value) -> Node<'static> {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(b),
            Value::Number(n) => Node::Number(n),
            Value::String(s) => Node::Str(Text::Decoded(s)),
            Value::Array(items) => Node::Array(items.into_iter().map(Node::from_value).collect()),
            Value::Object(map) => Node::Object(
                map.into_iter().map(|(k, v)| (Cow::Owned(k), Node::from_value(v))).collect(),
            ),
        }
    }
}

/// An object's members, sorted by key, keys unique.
pub(crate) type Members<'a> = Vec<(Cow<'a, str>, Node<'a>)>;

pub(crate) fn find(members: &Members<'_>, key: &str) -> Option<usize> {
    // Most objects are small: a scan that compares lengths first skips almost every byte
    // comparison a binary search would make.
    if members.len() <= 16 {
        return members.iter().position(|(k, _)| k.len() == key.len() && k == key);
    }
    members.binary_search_by(|(k, _)| k.as_ref().cmp(key)).ok()
}

impl<'a> Tree for Node<'a> {
    type Object = Members<'a>;
    type Str = Text<'a>;

    fn node_mut(&mut self) -> NodeMut<'_, Node<'a>> {
        match self {
            Node::Str(text) => NodeMut::Str(text),
            Node::Array(items) => NodeMut::Array(items),
            Node::Object(members) => NodeMut::Object(members),
            Node::Null | Node::Bool(_) | Node::Number(_) => NodeMut::Scalar,
        }
    }

    fn as_object(&self) -> Option<&Members<'a>> {
        match self {
            Node::Object(members) => Some(members),
            _ => None,
        }
    }

    fn into_object(self) -> std::result::Result<Members<'a>, Node<'a>> {
        match self {
            Node::Object(members) => Ok(members),
            other => Err(other),
        }
    }

    fn into_array(self) -> std::result::Result<Vec<Node<'a>>, Node<'a>> {
        match self {
            Node::Array(items) => Ok(items),
            other => Err(other),
        }
    }

    fn as_str(&self) -> Option<Cow<'_, str>> {
        match self {
            Node::Str(text) => Some(text.decoded()),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    fn kind(&self) -> Kind {
        match self {
            Node::Null => Kind::Null,
            Node::Bool(_) => Kind::Boolean,
            Node::Number(_) => Kind::Number,
            Node::Str(_) => Kind::String,
            Node::Array(_) => Kind::Array,
            Node::Object(_) => Kind::Object,
        }
    }

    fn from_object(object: Members<'a>) -> Node<'a> {
        Node::Object(object)
    }

    fn from_array(items: Vec<Node<'a>>) -> Node<'a> {
        Node::Array(items)
    }

    fn from_string(value: String) -> Node<'a> {
        Node::Str(Text::Decoded(value))
    }
}

impl<'a> Object for Members<'a> {
    type Node = Node<'a>;

    fn get(&self, key: &str) -> Option<&Node<'a>> {
        find(self, key).map(|idx| &self[idx].1)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Node<'a>> {
        find(self, key).map(move |idx| &mut self[idx].1)
    }

    fn remove(&mut self, key: &str) -> Option<Node<'a>> {
        find(self, key).map(|idx| Vec::remove(self, idx).1)
    }

    fn insert(&mut self, key: &'static str, value: Node<'a>) {
        match self.binary_search_by(|(k, _)| k.as_ref().cmp(key)) {
            Ok(idx) => self[idx].1 = value,
            Err(idx) => Vec::insert(self, idx, (Cow::Borrowed(key), value)),
        }
    }

    fn retain(&mut self, mut keep: impl FnMut(&str, &Node<'a>) -> bool) {
        Vec::retain(self, |(key, value)| keep(key, value));
    }

    fn for_each_mut(&mut self, mut f: impl FnMut(&str, &mut Node<'a>)) {
        for (key, value) in self.iter_mut() {
            f(key, value);
        }
    }

    fn rename_keys(&mut self, rename: impl Fn(&str) -> Option<String>) {
        let mut renamed = false;
        for (key, _) in self.iter_mut() {
            if let Some(new) = rename(key) {
                *key = Cow::Owned(new);
                renamed = true;
            }
        }
        if !renamed {
            return;
        }
        // A stable sort keeps equal keys in their old order; the last of each run wins.
        self.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Members<'a> = Vec::with_capacity(self.len());
        for member in self.drain(..) {
            match kept.last_mut() {
                Some(last) if last.0 == member.0 => *last = member,
                _ => kept.push(member),
            }
        }
        *self = kept;
    }

    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }

    fn apply_selector(&mut self, selector: &Selector, action: &SelectorAction) {
        // Redactions are rare and select by structure, so they run on a `Value` copy.
        let mut object = Node::Object(std::mem::take(self)).into_value();
        selector.apply(&mut object, action);
        // A selector never replaces the value it starts from.
        if let Node::Object(redacted) = Node::from_value(object) {
            *self = redacted;
        }
    }
}

impl StringValue for Text<'_> {
    fn rewrite(&mut self, rewrite: impl FnOnce(&str) -> Option<String>) {
        let rewritten = rewrite(&self.decoded());
        if let Some(rewritten) = rewritten {
            *self = Text::Decoded(rewritten);
        }
    }

    fn rewrite_escaped(&mut self, rewrite: impl FnOnce(&str) -> Option<String>) {
        let rewritten = match self {
            // The escaped text holds the same matches as the value, and what is written in
            // place of them needs no escape, so the result is still in canonical form.
            Text::Raw(raw) => rewrite(raw).map(|s| Text::Raw(Cow::Owned(s))),
            Text::Decoded(s) => rewrite(s).map(Text::Decoded),
        };
        if let Some(rewritten) = rewritten {
            *self = rewritten;
        }
    }
}

impl WriteCanonical for Node<'_> {
    fn write_canonical<S: Sink>(&self, sink: &mut S, depth: usize) -> bool {
        let out = sink.buf();
        match self {
            Node::Null => out.push_str("null"),
            Node::Bool(true) => out.push_str("true"),
            Node::Bool(false) => out.push_str("false"),
            Node::Number(number) => write_number(out, number),
            Node::Str(Text::Raw(raw)) => {
                out.push('"');
                out.push_str(raw);
                out.push('"');
            }
            Node::Str(Text::Decoded(s)) => write_string(out, s),
            Node::Array(items) => return write_array(sink, items, depth),
            Node::Object(members) => return members.write_canonical(sink, depth),
        }
        true
    }
}

impl WriteCanonical for Members<'_> {
    fn write_canonical<S: Sink>(&self, sink: &mut S, depth: usize) -> bool {
        write_members(sink, self.iter().map(|(key, value)| (key.as_ref(), value)), depth)
    }
}
