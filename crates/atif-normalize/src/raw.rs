//! Normalising straight from JSON text: the document is read into a tree that borrows its
//! strings from the input, so strings that normalisation leaves alone are never allocated,
//! unescaped or re-escaped, and written out as they were.
//!
//! This is the fast path behind [`normalize_json`]; it gives byte-for-byte the text that
//! [`normalize`](crate::normalize) followed by [`to_canonical_string`](crate::to_canonical_string)
//! gives, which the tests check on the corpus and on arbitrary documents.

use std::borrow::Cow;
use std::collections::HashMap;

use atif_secrets::{Report, Scanner};
use serde_json::{Map, Number, Value};

use crate::canonical::{
    BLOCK, Prefix, Sink, Streaming, needs_escape, newline, skip_plain, write_number, write_string,
};
use crate::normalize::{
    DEFAULT_VOLATILE_KEYS, NEVER_TOUCHED, id_mapping, mask_addresses, normalize_with_report,
    sorted_order,
};
use crate::paths::Paths;
use crate::{Error, Masker, NormalizeOptions, Result};

/// Normalises the trajectory written as JSON in `json` and writes its canonical text to
/// `writer`: the same bytes as [`normalize`](crate::normalize) then
/// [`write_canonical`](crate::write_canonical), several times faster and in a fraction of the
/// memory, because unchanged strings are copied from the input as they are.
///
/// The JSON must be strict: a byte-order mark, a duplicate key, `NaN` or nesting deeper than
/// 128 levels is an error. Options with redactions, and documents that may hold a secret the
/// options' scanner replaces, take the general path through a `serde_json::Value` (same
/// result, ordinary speed). It returns which secrets were replaced, and where, as
/// [`normalize_with_report`](crate::normalize_with_report) does.
///
/// # Errors
/// [`Error::InvalidJson`] with line and column when `json` is not strict JSON,
/// [`Error::NotATrajectory`] as for [`normalize`](crate::normalize), and [`Error::Write`] when
/// `writer` fails.
///
/// ```
/// # fn main() -> atif_normalize::Result<()> {
/// let json = br#"{"schema_version": "ATIF-v1.8", "session_id": "s-1", "steps": []}"#;
/// let mut out = Vec::new();
/// atif_normalize::normalize_json(json, &atif_normalize::NormalizeOptions::default(), &mut out)?;
/// assert_eq!(out, b"{\n  \"schema_version\": \"ATIF-v1.8\",\n  \"steps\": []\n}\n");
/// # Ok(())
/// # }
/// ```
pub fn normalize_json<W: std::io::Write>(
    json: &[u8],
    options: &NormalizeOptions,
    mut writer: W,
) -> Result<Report> {
    normalize_json_inner(json, options, &mut writer)
}

fn normalize_json_inner(
    json: &[u8],
    options: &NormalizeOptions,
    writer: &mut dyn std::io::Write,
) -> Result<Report> {
    let text = std::str::from_utf8(json).map_err(|err| {
        let pos = err.valid_up_to();
        invalid_json(json, pos, "invalid UTF-8".to_owned())
    })?;
    if text.starts_with('\u{feff}') {
        return Err(invalid_json(json, 0, "a byte-order mark before the document".to_owned()));
    }
    let mut parser = Parser { text, bytes: json, pos: 0 };
    let root = parser.document().map_err(|(pos, message)| invalid_json(json, pos, message))?;

    // Redactions, and secrets to replace, take the general path; documents without either
    // (almost all of them) stream.
    let general = options.parsed_redactions().next().is_some()
        || options.secret_scanner().is_some_and(|scanner| may_hold_secret(&root, scanner));
    if general {
        let (normalized, report) = normalize_with_report(root.into_value(), options)?;
        crate::canonical::write_canonical(&normalized, writer)
            .map_err(|source| Error::Write { source })?;
        return Ok(report);
    }

    let Node::Object(mut members) = root else {
        return Err(crate::normalize::not_an_object("", &root.into_value()));
    };
    let ctx = Ctx {
        volatile: options.volatile_keys(),
        maskers: options.maskers(),
        sort: options.sort_subagents(),
        paths: options.paths(),
        recorded_paths: options.recorded_paths(),
    };
    normalize_trajectory(&mut members, &ctx, "")?;
    let root = Node::Object(members);

    let mut sink = Streaming { out: String::with_capacity(2 * BLOCK), writer, error: None };
    write_node(&mut sink, &root, 0);
    sink.out.push('\n');
    if let Some(source) = sink.error {
        return Err(Error::Write { source });
    }
    sink.writer.write_all(sink.out.as_bytes()).map_err(|source| Error::Write { source })?;
    Ok(Report::new())
}

/// Whether any key or string of `node` may hold a secret `scanner` would replace.
fn may_hold_secret(node: &Node<'_>, scanner: &Scanner) -> bool {
    match node {
        Node::Null | Node::Bool(_) | Node::Number(_) => false,
        Node::Str(text) => scanner.may_hold_secret(&text.decoded()),
        Node::Array(items) => items.iter().any(|item| may_hold_secret(item, scanner)),
        Node::Object(members) => members
            .iter()
            .any(|(key, value)| scanner.may_hold_secret(key) || may_hold_secret(value, scanner)),
    }
}

fn invalid_json(json: &[u8], pos: usize, message: String) -> Error {
    let before = &json[..pos.min(json.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |idx| idx + 1);
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    Error::InvalidJson { line, column, message }
}

/// A JSON value whose strings borrow from the input where they can.
#[derive(Debug)]
enum Node<'a> {
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
enum Text<'a> {
    /// The string as written between its quotes, already in canonical form: its only escapes
    /// are `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, exactly what Python writes.
    Raw(Cow<'a, str>),
    /// The decoded string, escaped when written.
    Decoded(String),
}

impl Text<'_> {
    /// The string's value.
    fn decoded(&self) -> Cow<'_, str> {
        match self {
            Text::Raw(raw) if raw.contains('\\') => Cow::Owned(unescape_simple(raw)),
            Text::Raw(raw) => Cow::Borrowed(raw),
            Text::Decoded(s) => Cow::Borrowed(s),
        }
    }

    /// Writes path placeholders, then applies the default address masker and each extra
    /// masker in order, to the value.
    fn mask(&mut self, paths: &Paths, maskers: &[Masker]) {
        if !paths.is_empty() {
            if let Some(replaced) = paths.replace(&self.decoded()) {
                *self = Text::Decoded(replaced);
            }
        }
        let masked = match self {
            // An address is `0x` and hex digits; in a raw string without `\u` escapes every
            // escape decodes to a character that is none of those, so masking the raw text is
            // masking the value.
            Text::Raw(raw) => mask_addresses(raw).map(|m| Text::Raw(Cow::Owned(m))),
            Text::Decoded(s) => mask_addresses(s).map(Text::Decoded),
        };
        if let Some(masked) = masked {
            *self = masked;
        }
        for masker in maskers {
            // An extra masker's pattern may match escaped characters, so it runs on the value;
            // only a string it changes is decoded and written escaped.
            let value = self.decoded();
            if let Cow::Owned(masked) = masker.pattern().replace_all(&value, masker.replacement()) {
                *self = Text::Decoded(masked);
            }
        }
    }
}

fn plain(s: String) -> Node<'static> {
    Node::Str(Text::Decoded(s))
}

/// Decodes a raw string whose escapes are all single-character ones.
fn unescape_simple(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next() {
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some(other) => other,
            None => break,
        });
    }
    out
}

impl<'a> Node<'a> {
    fn into_value(self) -> Value {
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

    fn get_mut(&mut self, key: &str) -> Option<&mut Node<'a>> {
        match self {
            Node::Object(members) => find(members, key).map(move |idx| &mut members[idx].1),
            _ => None,
        }
    }
}

type Members<'a> = Vec<(Cow<'a, str>, Node<'a>)>;

fn find(members: &Members<'_>, key: &str) -> Option<usize> {
    // Most objects are small: a scan that compares lengths first skips almost every byte
    // comparison a binary search would make.
    if members.len() <= 16 {
        return members.iter().position(|(k, _)| k.len() == key.len() && k == key);
    }
    members.binary_search_by(|(k, _)| k.as_ref().cmp(key)).ok()
}

fn remove<'a>(members: &mut Members<'a>, key: &str) -> Option<Node<'a>> {
    find(members, key).map(|idx| members.remove(idx).1)
}

fn insert<'a>(members: &mut Members<'a>, key: &'static str, value: Node<'a>) {
    match members.binary_search_by(|(k, _)| k.as_ref().cmp(key)) {
        Ok(idx) => members[idx].1 = value,
        Err(idx) => members.insert(idx, (Cow::Borrowed(key), value)),
    }
}

const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

type ParseResult<T> = std::result::Result<T, (usize, String)>;

impl<'a> Parser<'a> {
    fn document(&mut self) -> ParseResult<Node<'a>> {
        let value = self.value(0)?;
        self.skip_whitespace();
        if self.pos < self.bytes.len() {
            return Err(self.error("the end of the document after the value"));
        }
        Ok(value)
    }

    fn error(&self, expected: &str) -> (usize, String) {
        let found = match self.text.get(self.pos..).and_then(|rest| rest.chars().next()) {
            Some(c) => format!("`{}`", c.escape_debug()),
            None => "the end of the input".to_owned(),
        };
        (self.pos, format!("expected {expected}, found {found}"))
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> ParseResult<Node<'a>> {
        self.skip_whitespace();
        match self.bytes.get(self.pos) {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Node::Str(self.string()?)),
            Some(b't') => self.literal("true", Node::Bool(true)),
            Some(b'f') => self.literal("false", Node::Bool(false)),
            Some(b'n') => self.literal("null", Node::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("a JSON value")),
        }
    }

    fn literal(&mut self, word: &str, node: Node<'a>) -> ParseResult<Node<'a>> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(node)
        } else {
            Err(self.error(&format!("`{word}`")))
        }
    }

    fn enter(&self, depth: usize) -> ParseResult<()> {
        if depth > MAX_DEPTH {
            return Err((self.pos, format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn array(&mut self, depth: usize) -> ParseResult<Node<'a>> {
        self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Node::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Node::Array(items));
                }
                _ => return Err(self.error("`,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> ParseResult<Node<'a>> {
        self.enter(depth)?;
        let start = self.pos;
        self.pos += 1;
        let mut members: Members<'a> = Vec::new();
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Node::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.error("a key in double quotes"));
            }
            let key = match self.string()? {
                Text::Raw(raw) if !raw.contains('\\') => raw,
                Text::Raw(raw) => Cow::Owned(unescape_simple(&raw)),
                Text::Decoded(s) => Cow::Owned(s),
            };
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err(self.error("`:`"));
            }
            self.pos += 1;
            let value = self.value(depth)?;
            members.push((key, value));
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.error("`,` or `}`")),
            }
        }
        if !members.windows(2).all(|pair| pair[0].0 < pair[1].0) {
            members.sort_by(|a, b| a.0.cmp(&b.0));
        }
        if let Some(pair) = members.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err((start, format!("duplicate key `{}` in an object", pair[0].0)));
        }
        Ok(Node::Object(members))
    }

    /// Reads a string starting at its opening quote.
    fn string(&mut self) -> ParseResult<Text<'a>> {
        self.pos += 1;
        let start = self.pos;
        let mut needs_decoding = false;
        loop {
            self.pos = skip_plain(self.bytes, self.pos);
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(self.error("a closing `\"`"));
            };
            if !needs_escape(byte) {
                self.pos += 1;
                continue;
            }
            match byte {
                b'"' => break,
                b'\\' => {
                    match self.bytes.get(self.pos + 1) {
                        Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {}
                        Some(b'/' | b'u') => needs_decoding = true,
                        _ => {
                            self.pos += 1;
                            return Err(self.error("a valid escape after `\\`"));
                        }
                    }
                    self.pos += 2;
                }
                _ => return Err(self.error("no raw control character in a string")),
            }
        }
        let raw = &self.text[start..self.pos];
        self.pos += 1;
        if needs_decoding {
            return decode(raw).map(Text::Decoded).map_err(|message| (start, message));
        }
        Ok(Text::Raw(Cow::Borrowed(raw)))
    }

    fn number(&mut self) -> ParseResult<Node<'a>> {
        let start = self.pos;
        let digits = |p: &mut Parser<'_>| {
            let from = p.pos;
            while p.bytes.get(p.pos).is_some_and(u8::is_ascii_digit) {
                p.pos += 1;
            }
            p.pos - from
        };
        let negative = self.bytes.get(self.pos) == Some(&b'-');
        if negative {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n_int = digits(self);
        if n_int == 0 || (n_int > 1 && self.bytes[int_start] == b'0') {
            self.pos = int_start;
            return Err(self.error("digits without a leading zero"));
        }
        let mut is_float = false;
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            is_float = true;
            if digits(self) == 0 {
                return Err(self.error("a digit after `.`"));
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            is_float = true;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("a digit in the exponent"));
            }
        }
        let raw = &self.text[start..self.pos];
        // The same numbers serde_json makes: u64, else i64, else f64, and `-0` as -0.0.
        let number = if is_float {
            None
        } else if negative {
            raw.parse::<i64>().ok().filter(|n| *n != 0).map(Number::from)
        } else {
            raw.parse::<u64>().ok().map(Number::from)
        };
        let number = match number {
            Some(number) => number,
            None => raw
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .ok_or_else(|| (start, "a number in the range of a 64-bit float".to_owned()))?,
        };
        Ok(Node::Number(number))
    }
}

/// Decodes a raw string with any escapes, `\u` ones (and surrogate pairs) included.
fn decode(raw: &str) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(idx) = rest.find('\\') {
        out.push_str(&rest[..idx]);
        let escape = &rest[idx + 1..];
        let Some(kind) = escape.chars().next() else { break };
        let mut consumed = 1;
        match kind {
            'u' => {
                let high = hex4(escape.get(1..5))?;
                consumed = 5;
                let c = if (0xD800..0xDC00).contains(&high) {
                    let low = match escape.get(5..7) {
                        Some("\\u") => hex4(escape.get(7..11))?,
                        _ => return Err("a low surrogate after a high one".to_owned()),
                    };
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err("a low surrogate after a high one".to_owned());
                    }
                    consumed = 11;
                    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                } else {
                    char::from_u32(high)
                };
                out.push(c.ok_or_else(|| "no lone surrogate".to_owned())?);
            }
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            other => out.push(other),
        }
        rest = &escape[consumed..];
    }
    out.push_str(rest);
    Ok(out)
}

fn hex4(digits: Option<&str>) -> std::result::Result<u32, String> {
    digits
        .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
        .and_then(|d| u32::from_str_radix(d, 16).ok())
        .ok_or_else(|| "four hex digits after `\\u`".to_owned())
}

struct Ctx<'o> {
    volatile: &'o [String],
    maskers: &'o [Masker],
    sort: bool,
    paths: Paths,
    recorded_paths: bool,
}

impl<'o> Ctx<'o> {
    /// The context for a trajectory: these paths, plus the ones it records in `extra` when the
    /// options ask for them (as `normalize::Ctx::for_trajectory`).
    fn for_trajectory(&self, traj: &Members<'_>) -> Ctx<'o> {
        let mut paths = self.paths.clone();
        if self.recorded_paths {
            let extra = find(traj, "extra").map(|idx| &traj[idx].1);
            let field = |key: &str| match extra {
                Some(Node::Object(extra)) => match find(extra, key).map(|idx| &extra[idx].1) {
                    Some(Node::Str(text)) => Some(text.decoded()),
                    _ => None,
                },
                _ => None,
            };
            if let Some(cwd) = field("cwd") {
                paths.add_cwd(&cwd);
            }
            if let Some(home) = field("home") {
                paths.add_home(&home);
            }
        }
        Ctx {
            volatile: self.volatile,
            maskers: self.maskers,
            sort: self.sort,
            paths,
            recorded_paths: self.recorded_paths,
        }
    }

    /// Renames the keys that hold a path, as `Paths::replace_keys` does: re-sorted, and of two
    /// keys that end up alike the later one (in the old order) wins.
    fn replace_keys(&self, members: &mut Members<'_>) {
        if self.paths.is_empty() {
            return;
        }
        let mut renamed = false;
        for (key, _) in members.iter_mut() {
            if let Some(new) = self.paths.replace(key) {
                *key = Cow::Owned(new);
                renamed = true;
            }
        }
        if renamed {
            // A stable sort keeps equal keys in their old order; the last of each run wins.
            members.sort_by(|a, b| a.0.cmp(&b.0));
            let mut kept: Members<'_> = Vec::with_capacity(members.len());
            for member in members.drain(..) {
                match kept.last_mut() {
                    Some(last) if last.0 == member.0 => *last = member,
                    _ => kept.push(member),
                }
            }
            *members = kept;
        }
    }

    fn is_volatile(&self, key: &str) -> bool {
        DEFAULT_VOLATILE_KEYS.contains(&key) || self.volatile.iter().any(|k| k == key)
    }
}

/// The contract of `normalize::normalize_trajectory`, on the borrowed tree.
fn normalize_trajectory(traj: &mut Members<'_>, ctx: &Ctx<'_>, pointer: &str) -> Result<()> {
    let ctx = &ctx.for_trajectory(traj);
    let subagents = match remove(traj, "subagent_trajectories") {
        Some(Node::Array(items)) => Some(normalize_subagents(items, traj, ctx, pointer)?),
        Some(other) => {
            insert(traj, "subagent_trajectories", other);
            None
        }
        None => None,
    };
    remove(traj, "trajectory_id");
    renumber_call_ids(traj);
    if let Some((_, mapping)) = &subagents {
        for_each_subagent_ref(traj, |id| {
            let new = match &*id {
                Node::Str(old) => mapping.get(old.decoded().as_ref()),
                _ => None,
            };
            if let Some(new) = new {
                *id = plain(new.clone());
            }
        });
    }
    scrub_members(traj, ctx);
    if let Some((items, _)) = subagents {
        insert(traj, "subagent_trajectories", Node::Array(items));
    }
    Ok(())
}

type Subagents<'a> = (Vec<Node<'a>>, HashMap<String, String>);

fn normalize_subagents<'a>(
    items: Vec<Node<'a>>,
    parent: &mut Members<'a>,
    ctx: &Ctx<'_>,
    pointer: &str,
) -> Result<Subagents<'a>> {
    let mut first_ref = HashMap::new();
    for_each_subagent_ref(parent, |id| {
        let next = first_ref.len();
        if let Node::Str(id) = &*id {
            first_ref.entry(id.decoded().into_owned()).or_insert(next);
        }
    });
    let mut old_ids = Vec::with_capacity(items.len());
    let mut normalized = Vec::with_capacity(items.len());
    for (idx, item) in items.into_iter().enumerate() {
        let item_pointer = format!("{pointer}/subagent_trajectories/{idx}");
        let Node::Object(mut sub) = item else {
            return Err(crate::normalize::not_an_object(&item_pointer, &item.into_value()));
        };
        old_ids.push(match sub.iter().find(|(k, _)| k == "trajectory_id") {
            Some((_, Node::Str(id))) => Some(id.decoded().into_owned()),
            _ => None,
        });
        normalize_trajectory(&mut sub, ctx, &item_pointer)?;
        normalized.push(Node::Object(sub));
    }
    let order: Vec<usize> = if ctx.sort {
        let ref_pos: Vec<usize> = old_ids
            .iter()
            .map(|id| id.as_ref().and_then(|id| first_ref.get(id)).copied().unwrap_or(usize::MAX))
            .collect();
        sorted_order(
            |idx, limit| {
                let mut sink = Prefix { out: String::new(), limit: limit.unwrap_or(usize::MAX) };
                if write_node(&mut sink, &normalized[idx], 0) {
                    sink.out.push('\n');
                }
                let mut bytes = sink.out.into_bytes();
                bytes.truncate(limit.unwrap_or(usize::MAX));
                bytes
            },
            &ref_pos,
        )
    } else {
        (0..normalized.len()).collect()
    };
    let mut slots: Vec<Option<Node<'a>>> = normalized.into_iter().map(Some).collect();
    let mut items = Vec::with_capacity(slots.len());
    let mut new_ids = vec![String::new(); slots.len()];
    for (position, &idx) in order.iter().enumerate() {
        let new_id = format!("subagent_{}", position + 1);
        if let Some(Node::Object(mut sub)) = slots[idx].take() {
            insert(&mut sub, "trajectory_id", plain(new_id.clone()));
            items.push(Node::Object(sub));
        }
        new_ids[idx] = new_id;
    }
    Ok((items, id_mapping(old_ids, new_ids)))
}

fn steps_mut<'t, 'a>(traj: &'t mut Members<'a>) -> &'t mut [Node<'a>] {
    match find(traj, "steps").map(|idx| &mut traj[idx].1) {
        Some(Node::Array(steps)) => steps,
        _ => &mut [],
    }
}

fn for_each_subagent_ref(traj: &mut Members<'_>, mut f: impl FnMut(&mut Node<'_>)) {
    for step in steps_mut(traj) {
        let Some(Node::Array(results)) =
            step.get_mut("observation").and_then(|o| o.get_mut("results"))
        else {
            continue;
        };
        for result in results {
            let Some(Node::Array(refs)) = result.get_mut("subagent_trajectory_ref") else {
                continue;
            };
            for reference in refs {
                if let Some(id) = reference.get_mut("trajectory_id") {
                    f(id);
                }
            }
        }
    }
}

fn renumber_call_ids(traj: &mut Members<'_>) {
    let mut mapping: HashMap<String, String> = HashMap::new();
    let mut renumber = |id: &mut Node<'_>| {
        if let Node::Str(old) = id {
            let next = mapping.len() + 1;
            let new =
                mapping.entry(old.decoded().into_owned()).or_insert_with(|| format!("call_{next}"));
            *id = plain(new.clone());
        }
    };
    for step in steps_mut(traj) {
        if let Some(Node::Array(calls)) = step.get_mut("tool_calls") {
            for call in calls {
                if let Some(id) = call.get_mut("tool_call_id") {
                    renumber(id);
                }
            }
        }
        if let Some(Node::Array(results)) =
            step.get_mut("observation").and_then(|o| o.get_mut("results"))
        {
            for result in results {
                if let Some(id) = result.get_mut("source_call_id") {
                    renumber(id);
                }
            }
        }
    }
}

fn scrub_members(members: &mut Members<'_>, ctx: &Ctx<'_>) {
    members.retain(|(key, value)| !matches!(value, Node::Null) && !ctx.is_volatile(key));
    ctx.replace_keys(members);
    for (key, value) in members.iter_mut() {
        match (key.as_ref(), value) {
            (key, Node::Str(_)) if NEVER_TOUCHED.contains(&key) => {}
            ("tool_calls", Node::Array(calls)) => {
                for call in calls {
                    match call {
                        Node::Object(call) => scrub_tool_call(call, ctx),
                        other => scrub_node(other, ctx),
                    }
                }
            }
            (_, value) => scrub_node(value, ctx),
        }
    }
    drop_empty_extra(members);
}

fn scrub_tool_call(call: &mut Members<'_>, ctx: &Ctx<'_>) {
    call.retain(|(key, value)| !matches!(value, Node::Null) && !ctx.is_volatile(key));
    ctx.replace_keys(call);
    for (key, value) in call.iter_mut() {
        match (key.as_ref(), value) {
            ("arguments", value) => mask_only(value, ctx),
            (key, Node::Str(_)) if NEVER_TOUCHED.contains(&key) => {}
            (_, value) => scrub_node(value, ctx),
        }
    }
    drop_empty_extra(call);
}

fn drop_empty_extra(members: &mut Members<'_>) {
    let empty = find(members, "extra")
        .filter(|&idx| matches!(&members[idx].1, Node::Object(extra) if extra.is_empty()));
    if let Some(idx) = empty {
        members.remove(idx);
    }
}

fn scrub_node(node: &mut Node<'_>, ctx: &Ctx<'_>) {
    match node {
        Node::Str(text) => text.mask(&ctx.paths, ctx.maskers),
        Node::Array(items) => items.iter_mut().for_each(|item| scrub_node(item, ctx)),
        Node::Object(members) => scrub_members(members, ctx),
        _ => {}
    }
}

fn mask_only(node: &mut Node<'_>, ctx: &Ctx<'_>) {
    match node {
        Node::Str(text) => text.mask(&ctx.paths, ctx.maskers),
        Node::Array(items) => items.iter_mut().for_each(|item| mask_only(item, ctx)),
        Node::Object(members) => {
            ctx.replace_keys(members);
            members.iter_mut().for_each(|(_, value)| mask_only(value, ctx));
        }
        _ => {}
    }
}

/// Writes `node` as canonical text; returns `false` when the sink stopped the writing early.
fn write_node<S: Sink>(sink: &mut S, node: &Node<'_>, depth: usize) -> bool {
    let out = sink.buf();
    match node {
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
        Node::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return true;
            }
            out.push('[');
            for (idx, item) in items.iter().enumerate() {
                let out = sink.buf();
                if idx > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                if !write_node(sink, item, depth + 1) || !sink.checkpoint() {
                    return false;
                }
            }
            let out = sink.buf();
            newline(out, depth);
            out.push(']');
        }
        Node::Object(members) => {
            if members.is_empty() {
                out.push_str("{}");
                return true;
            }
            out.push('{');
            for (idx, (key, value)) in members.iter().enumerate() {
                let out = sink.buf();
                if idx > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_string(out, key);
                out.push_str(": ");
                if !write_node(sink, value, depth + 1) || !sink.checkpoint() {
                    return false;
                }
            }
            let out = sink.buf();
            newline(out, depth);
            out.push('}');
        }
    }
    true
}
