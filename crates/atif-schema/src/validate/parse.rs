//! Reading JSON bytes into a `serde_json::Value` while noticing what plain `serde_json` hides or
//! refuses: duplicate keys (it keeps the last silently) and Python's `NaN`/`Infinity` literals.
//!
//! The reader is a `DeserializeSeed` that builds the `Value` itself and keeps a stack of the keys
//! and indices above the current value, so a duplicate key is reported with its JSON Pointer at
//! the cost of a push and a pop per object member (the pointer string is only built when a
//! duplicate is found). Nesting depth stays bounded by `serde_json`'s recursion limit (128), which
//! applies to any visitor, so neither the parser nor anything walking the result can overflow
//! the stack.
//!
//! `NaN`, `Infinity` and `-Infinity` are handled only when the first parse fails: the text is
//! rewritten with each literal (outside strings) replaced by a sentinel string, parsed again, and
//! the sentinels' pointers recorded. Plain documents never pay for this.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The Unicode noncharacters U+FDD0 to U+FDEF: one that the document does not contain (raw or
/// escaped) marks the strings that stand for non-finite literals, so no string of the document
/// can pass for one.
const SENTINEL_CANDIDATES: std::ops::RangeInclusive<char> = '\u{FDD0}'..='\u{FDEF}';

/// A parsed document and what the parse noticed on the way.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// The document; with later duplicate keys winning, and non-finite literals (when allowed)
    /// as sentinel strings.
    pub(crate) value: Value,
    /// The input started with a UTF-8 byte-order mark (it was skipped).
    pub(crate) bom: bool,
    /// JSON Pointer of every member whose key repeats an earlier key of the same object.
    pub(crate) duplicates: Vec<String>,
    /// JSON Pointer and literal (`NaN`, `Infinity`, `-Infinity`) of every non-finite number.
    pub(crate) non_finite: Vec<(String, &'static str)>,
    /// The first character of the strings that stand for non-finite literals in `value`
    /// (`None` when the document had none).
    pub(crate) sentinel: Option<char>,
    /// Duplicate keys beyond [`MAX_RECORDED`], counted but not kept.
    pub(crate) omitted_duplicates: usize,
    /// Non-finite literals beyond [`MAX_RECORDED`], counted but not kept.
    pub(crate) omitted_non_finite: usize,
    /// JSON Pointer of every integer written outside -2^63 … 2^64-1, which a JSON reader can
    /// only keep as a float (it is in `value` as that float); at most [`MAX_RECORDED`].
    pub(crate) big_integers: Vec<String>,
}

/// Duplicate keys and non-finite literals recorded with their pointers, at most; a hostile file
/// with millions of them must not need gigabytes of pointers.
pub(crate) const MAX_RECORDED: usize = 10_000;

/// Why bytes could not be read as JSON at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadError {
    /// Line of the problem (1-based), when known.
    pub(crate) line: Option<usize>,
    /// Column of the problem (1-based, in bytes), when known.
    pub(crate) column: Option<usize>,
    /// What was expected and what was found, with the position.
    pub(crate) message: String,
}

impl ReadError {
    fn at(line: usize, column: usize, what: impl fmt::Display) -> ReadError {
        ReadError {
            line: Some(line),
            column: Some(column),
            message: format!("invalid JSON at line {line}, column {column}: {what}"),
        }
    }
}

/// Whether `value` is a sentinel (a string starting with `sentinel`) standing for a non-finite
/// literal; returns the literal.
pub(crate) fn sentinel_literal(value: &Value, sentinel: char) -> Option<&'static str> {
    let Value::String(text) = value else { return None };
    let rest = text.strip_prefix(sentinel)?;
    NON_FINITE.iter().copied().find(|literal| *literal == rest)
}

const NON_FINITE: [&str; 3] = ["NaN", "Infinity", "-Infinity"];

/// Reads `bytes` as one JSON document. With `allow_non_finite`, Python's `NaN`, `Infinity` and
/// `-Infinity` literals become sentinel strings (see [`sentinel_literal`]) instead of errors.
pub(crate) fn read(bytes: &[u8], allow_non_finite: bool) -> Result<Parsed, ReadError> {
    let (bytes, bom) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (rest, true),
        None => (bytes, false),
    };
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return Err(ReadError {
            line: Some(1),
            column: Some(1),
            message: "the file is UTF-16 (it starts with a UTF-16 byte-order mark): JSON must be \
                      UTF-8; PowerShell's `>` and Out-File write UTF-16 by default"
                .to_owned(),
        });
    }
    if bytes.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r')) {
        return Err(ReadError {
            line: None,
            column: None,
            message: "empty document: expected a JSON object".to_owned(),
        });
    }
    // serde_json checks UTF-8 inside strings as it goes (outside strings only ASCII is valid
    // JSON), so a separate pass over the bytes is only needed to explain a failure.
    let first_error = match parse_bytes(bytes) {
        Ok((value, state)) => {
            let big_integers = confirm_big_integers(bytes, state.big_floats);
            return Ok(Parsed {
                value,
                bom,
                duplicates: state.duplicates,
                non_finite: Vec::new(),
                sentinel: None,
                omitted_duplicates: state.omitted_duplicates,
                omitted_non_finite: 0,
                big_integers,
            });
        }
        Err(err) => err,
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let (line, column) = line_column(bytes, err.valid_up_to());
            return Err(ReadError::at(
                line,
                column,
                format_args!(
                    "invalid UTF-8 (byte 0x{:02X} at offset {}): JSON text must be UTF-8; the \
                     file may be Latin-1 or Windows-1252 encoded",
                    bytes.get(err.valid_up_to()).copied().unwrap_or(0),
                    err.valid_up_to()
                ),
            ));
        }
    };
    if first_error.is_syntax() {
        if let Some(outcome) = read_non_finite(text, bom, allow_non_finite, &first_error) {
            return outcome;
        }
    }
    Err(from_serde(&first_error))
}

/// A syntax error may be Python's `NaN`, `Infinity` or `-Infinity`: with `allow_non_finite`,
/// reads the text again with them as sentinel strings; without, names the literal when it is
/// what failed. `None` when the literals are not the story.
fn read_non_finite(
    text: &str,
    bom: bool,
    allow_non_finite: bool,
    first_error: &serde_json::Error,
) -> Option<Result<Parsed, ReadError>> {
    let sentinel = choose_sentinel(text)?;
    let rewritten = rewrite_non_finite(text, sentinel)?;
    if allow_non_finite {
        return Some(match parse_text(&rewritten.text, rewritten.sentinel) {
            Ok((value, state)) => Ok(Parsed {
                value,
                bom,
                big_integers: confirm_big_integers(rewritten.text.as_bytes(), state.big_floats),
                duplicates: state.duplicates,
                non_finite: state.non_finite,
                sentinel: Some(rewritten.sentinel),
                omitted_duplicates: state.omitted_duplicates,
                omitted_non_finite: state.omitted_non_finite,
            }),
            Err(err) => Err(rewritten.error(&err)),
        });
    }
    // Say what the literal is when it is the cause of the failure.
    let &(line, column, literal) = rewritten.literals.first()?;
    ((first_error.line(), first_error.column()) == (line, column))
        .then(|| Err(ReadError::at(line, column, non_finite_message(literal))))
}

/// The message for a non-finite literal, naming the Python habit that writes it.
pub(crate) fn non_finite_message(literal: &str) -> String {
    format!(
        "`{literal}` is not JSON (RFC 8259 has no NaN or infinities); Python's json.dumps writes \
         it unless allow_nan=False: write null, or a finite number"
    )
}

/// Line and column (both 1-based, the column in bytes) of byte `offset` of `bytes`.
fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&byte| byte == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&byte| byte == b'\n').map_or(0, |at| at + 1);
    (line, offset - line_start + 1)
}

fn from_serde(err: &serde_json::Error) -> ReadError {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let what = text.strip_suffix(&suffix).unwrap_or(&text);
    let what = match what {
        "recursion limit exceeded" => {
            "nested deeper than 128 arrays/objects (the reader's limit, which protects the stack)"
        }
        "lone leading surrogate in hex escape" | "unexpected end of hex escape" => {
            "a \\u escape in the range D800-DFFF without its surrogate pair: a lone UTF-16 \
             surrogate is not a Unicode character (Python's json.dumps writes one for a string \
             holding an unpaired surrogate, e.g. bytes decoded with surrogateescape)"
        }
        "trailing characters" => {
            "trailing characters after the JSON value (one document per file; JSON Lines is not ATIF)"
        }
        "EOF while parsing a value"
        | "EOF while parsing an object"
        | "EOF while parsing a list"
        | "EOF while parsing a string" => "the document ends early (truncated file?)",
        other => other,
    };
    ReadError::at(err.line(), err.column(), what)
}

type ParseOutput = (Value, State);

/// Whether serde_json hands out `value` as a float only because its integer literal did not fit
/// `i64`/`u64`: a whole number at or beyond 2^64 or at or below -2^63. A float literal such as
/// `1e21` gives the same kind of value, which [`confirm_big_integers`] tells apart.
fn is_big_whole(value: f64) -> bool {
    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    const MINUS_TWO_POW_63: f64 = -9_223_372_036_854_775_808.0;
    value.fract() == 0.0 && (value >= TWO_POW_64 || value <= MINUS_TWO_POW_63)
}

/// Of the pointers of big whole floats (in document order), keeps those written as integer
/// literals.
///
/// The reader sees only the float, so the text is scanned for number tokens (outside strings
/// digits appear only in numbers): the tokens that give a big whole float are, in order, the
/// values the reader recorded. Documents without such floats (nearly all) never pay for this.
fn confirm_big_integers(bytes: &[u8], candidates: Vec<String>) -> Vec<String> {
    if candidates.is_empty() {
        return candidates;
    }
    let mut written_as_integer = Vec::new();
    let mut strings = StringTracker::default();
    let mut at = 0;
    while at < bytes.len() && written_as_integer.len() < candidates.len() {
        let byte = bytes[at];
        if strings.inside(byte) {
            at += 1;
            continue;
        }
        if byte == b'-' || byte.is_ascii_digit() {
            let len = bytes[at..]
                .iter()
                .position(|byte| !matches!(byte, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                .unwrap_or(bytes.len() - at);
            let token = std::str::from_utf8(&bytes[at..at + len]).unwrap_or_default();
            let integer = !token.contains(['.', 'e', 'E']);
            let fits = token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok();
            if !(integer && fits) && token.parse::<f64>().is_ok_and(is_big_whole) {
                written_as_integer.push(integer);
            }
            at += len;
            continue;
        }
        at += 1;
    }
    if written_as_integer.len() != candidates.len() {
        // Cannot happen for text the reader accepted; rather report every candidate than none.
        return candidates;
    }
    candidates.into_iter().zip(written_as_integer).filter_map(|(p, int)| int.then_some(p)).collect()
}

fn parse_bytes(bytes: &[u8]) -> Result<ParseOutput, serde_json::Error> {
    let mut state = State::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = ValueSeed { state: &mut state }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, state))
}

/// Parses text whose non-finite literals were rewritten as sentinel strings.
fn parse_text(text: &str, sentinel: char) -> Result<ParseOutput, serde_json::Error> {
    let mut state = State::new(Some(sentinel));
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = ValueSeed { state: &mut state }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, state))
}

/// The text with every non-finite literal outside strings replaced by a sentinel string.
struct Rewritten {
    text: String,
    sentinel: char,
    /// Line, column (in the original text) and literal of each replacement, in order.
    literals: Vec<(usize, usize, &'static str)>,
    /// Line, column in the rewritten text, and how many bytes longer the rewritten line got.
    shifts: Vec<(usize, usize, usize)>,
}

impl Rewritten {
    /// An error of the rewritten text, with its column mapped back to the original text.
    fn error(&self, err: &serde_json::Error) -> ReadError {
        let (line, column) = (err.line(), err.column());
        let shift: usize = self
            .shifts
            .iter()
            .filter(|(shift_line, shift_column, _)| *shift_line == line && *shift_column < column)
            .map(|(_, _, grown)| grown)
            .sum();
        let mapped = from_serde(err);
        let original_column = column.saturating_sub(shift);
        let what = mapped
            .message
            .split_once(": ")
            .map_or(mapped.message.as_str(), |(_, what)| what)
            .to_owned();
        ReadError::at(line, original_column, what)
    }
}

/// A sentinel character that `text` contains neither raw nor as a `\uXXXX` escape.
fn choose_sentinel(text: &str) -> Option<char> {
    let mut used = 0u32;
    let mut note = |c: char| {
        if SENTINEL_CANDIDATES.contains(&c) {
            used |= 1 << (u32::from(c) - 0xFDD0);
        }
    };
    let bytes = text.as_bytes();
    for (at, c) in text.char_indices() {
        note(c);
        if c == '\\' && bytes.get(at + 1) == Some(&b'u') {
            let escaped =
                text.get(at + 2..at + 6).and_then(|hex| u32::from_str_radix(hex, 16).ok());
            if let Some(c) = escaped.and_then(char::from_u32) {
                note(c);
            }
        }
    }
    SENTINEL_CANDIDATES.clone().find(|c| used & (1 << (u32::from(*c) - 0xFDD0)) == 0)
}

/// Follows JSON text byte by byte to tell the bytes of strings (quotes included) from the rest.
#[derive(Debug, Default)]
struct StringTracker {
    in_string: bool,
    escaped: bool,
}

impl StringTracker {
    /// Whether `byte`, the next byte of the text, belongs to a string.
    fn inside(&mut self, byte: u8) -> bool {
        if !self.in_string {
            self.in_string = byte == b'"';
            return self.in_string;
        }
        match (self.escaped, byte) {
            (true, _) => self.escaped = false,
            (false, b'\\') => self.escaped = true,
            (false, b'"') => self.in_string = false,
            _ => {}
        }
        true
    }
}

/// Replaces `NaN`, `Infinity` and `-Infinity` outside strings with strings starting with
/// `sentinel`; `None` when there are none.
fn rewrite_non_finite(text: &str, sentinel: char) -> Option<Rewritten> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 64);
    let mut literals = Vec::new();
    let mut shifts = Vec::new();
    let (mut line, mut line_start, mut grown_on_line) = (1, 0, 0);
    let mut strings = StringTracker::default();
    let mut copied_up_to = 0;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if strings.inside(byte) {
            at += 1;
            continue;
        }
        match byte {
            b'\n' => {
                line += 1;
                line_start = at + 1;
                grown_on_line = 0;
            }
            b'N' | b'I' | b'-' => {
                let found =
                    NON_FINITE.iter().find(|literal| bytes[at..].starts_with(literal.as_bytes()));
                if let Some(literal) = found {
                    out.push_str(&text[copied_up_to..at]);
                    out.push('"');
                    out.push(sentinel);
                    out.push_str(literal);
                    out.push('"');
                    let column = at - line_start + 1;
                    literals.push((line, column, *literal));
                    let grown = 2 + sentinel.len_utf8();
                    shifts.push((line, column + grown_on_line, grown));
                    grown_on_line += grown;
                    at += literal.len();
                    copied_up_to = at;
                    continue;
                }
            }
            _ => {}
        }
        at += 1;
    }
    if literals.is_empty() {
        return None;
    }
    out.push_str(&text[copied_up_to..]);
    Some(Rewritten { text: out, sentinel, literals, shifts })
}

/// One step of the path from the root to the value being built.
#[derive(Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

#[derive(Debug)]
struct State {
    path: Vec<Seg>,
    duplicates: Vec<String>,
    non_finite: Vec<(String, &'static str)>,
    omitted_duplicates: usize,
    omitted_non_finite: usize,
    /// Pointers of floats that may stand for integer literals too big for `i64`/`u64`.
    big_floats: Vec<String>,
    /// Set when parsing rewritten text: strings starting with it stand for non-finite literals.
    sentinel: Option<char>,
}

impl State {
    fn new(sentinel: Option<char>) -> State {
        State {
            path: Vec::new(),
            duplicates: Vec::new(),
            non_finite: Vec::new(),
            omitted_duplicates: 0,
            omitted_non_finite: 0,
            big_floats: Vec::new(),
            sentinel,
        }
    }

    fn pointer(&self) -> String {
        let mut pointer = String::new();
        for seg in &self.path {
            pointer.push('/');
            match seg {
                Seg::Key(key) => push_escaped(&mut pointer, key),
                Seg::Index(index) => pointer.push_str(&index.to_string()),
            }
        }
        pointer
    }
}

/// Appends `key` to a JSON Pointer with `~` and `/` escaped (RFC 6901).
pub(crate) fn push_escaped(pointer: &mut String, key: &str) {
    if key.contains(['~', '/']) {
        pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
    } else {
        pointer.push_str(key);
    }
}

struct ValueSeed<'s> {
    state: &'s mut State,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        if is_big_whole(value) && self.state.big_floats.len() < MAX_RECORDED {
            let pointer = self.state.pointer();
            self.state.big_floats.push(pointer);
        }
        // serde_json only hands out finite floats.
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        self.visit_string(value.to_owned())
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        let value = Value::String(value);
        if let Some(sentinel) = self.state.sentinel {
            if let Some(literal) = sentinel_literal(&value, sentinel) {
                if self.state.non_finite.len() < MAX_RECORDED {
                    let pointer = self.state.pointer();
                    self.state.non_finite.push((pointer, literal));
                } else {
                    self.state.omitted_non_finite += 1;
                }
            }
        }
        Ok(value)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut elements = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        self.state.path.push(Seg::Index(0));
        loop {
            if let Some(Seg::Index(index)) = self.state.path.last_mut() {
                *index = elements.len();
            }
            match seq.next_element_seed(ValueSeed { state: &mut *self.state })? {
                Some(element) => elements.push(element),
                None => break,
            }
        }
        self.state.path.pop();
        Ok(Value::Array(elements))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.state.path.push(Seg::Key(key));
            let value = map.next_value_seed(ValueSeed { state: &mut *self.state })?;
            let Some(Seg::Key(key)) = self.state.path.pop() else {
                return Err(de::Error::custom("internal error: reader path out of balance"));
            };
            match object.entry(key) {
                serde_json::map::Entry::Vacant(entry) => {
                    entry.insert(value);
                }
                serde_json::map::Entry::Occupied(mut entry) => {
                    if self.state.duplicates.len() < MAX_RECORDED {
                        let mut pointer = self.state.pointer();
                        pointer.push('/');
                        push_escaped(&mut pointer, entry.key());
                        self.state.duplicates.push(pointer);
                    } else {
                        self.state.omitted_duplicates += 1;
                    }
                    entry.insert(value);
                }
            }
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_ok(text: &str, lenient: bool) -> Parsed {
        read(text.as_bytes(), lenient).unwrap()
    }

    fn read_err(bytes: &[u8], lenient: bool) -> ReadError {
        read(bytes, lenient).unwrap_err()
    }

    #[test]
    fn duplicate_keys_are_found_at_every_depth_and_the_last_wins() {
        let parsed = read_ok(r#"{"a": 1, "b": [{"x~/": 1, "x~/": 2}], "a": 3}"#, false);
        assert_eq!(parsed.duplicates, ["/b/0/x~0~1", "/a"]);
        assert_eq!(parsed.value, serde_json::json!({"a": 3, "b": [{"x~/": 2}]}));
    }

    #[test]
    fn the_value_equals_what_serde_json_builds() {
        let text = r#"{"s": "x\u00e9\n", "n": [1, -2, 3.5, 1e300, 18446744073709551615], "t": true, "z": null, "o": {}}"#;
        let plain: Value = serde_json::from_str(text).unwrap();
        assert_eq!(read_ok(text, false).value, plain);
    }

    #[test]
    fn non_finite_literals_become_sentinels_only_when_allowed() {
        let text = "{\"a\": NaN,\n \"b\": [\"NaN\", -Infinity], \"c\": Infinity}";
        let parsed = read_ok(text, true);
        assert_eq!(
            parsed.non_finite,
            [
                ("/a".to_owned(), "NaN"),
                ("/b/1".to_owned(), "-Infinity"),
                ("/c".to_owned(), "Infinity")
            ]
        );
        assert_eq!(parsed.value["b"][0], "NaN");
        assert_eq!(sentinel_literal(&parsed.value["a"], parsed.sentinel.unwrap()), Some("NaN"));
        let err = read_err(text.as_bytes(), false);
        assert_eq!((err.line, err.column), (Some(1), Some(7)));
        assert!(err.message.contains("allow_nan=False"), "{}", err.message);
    }

    #[test]
    fn the_marker_is_a_noncharacter_the_document_does_not_use() {
        let parsed = read_ok("{\"a\": \"\u{FDD0}\", \"b\": \"\\uFdD1\", \"c\": NaN}", true);
        assert_eq!(parsed.sentinel, Some('\u{FDD2}'));
        assert_eq!(sentinel_literal(&parsed.value["c"], '\u{FDD2}'), Some("NaN"));
        assert_eq!(sentinel_literal(&parsed.value["a"], '\u{FDD2}'), None);
    }

    #[test]
    fn errors_after_a_rewritten_literal_keep_their_original_column() {
        let err = read_err(b"{\"a\": NaN, \"b\": x}", true);
        assert_eq!((err.line, err.column), (Some(1), Some(17)), "{}", err.message);
    }

    #[test]
    fn hostile_inputs_are_clear_errors() {
        let cases: [(&[u8], &str); 10] = [
            (b"{\"a\": \"\\ud800\"}", "line 1, column 14: a \\u escape in the range D800-DFFF"),
            (b"{\"a\": \"\\udc00\"}", "lone UTF-16 surrogate"),
            (b"", "empty document"),
            (b" \n\t", "empty document"),
            (b"{\"a\": \"\xff\"}", "invalid UTF-8 (byte 0xFF at offset 7)"),
            (b"\xFF\xFE{\x00}\x00", "UTF-16"),
            (b"{} {}", "trailing characters"),
            (b"{\"a\": 1", "ends early"),
            (b"{\"a\" 1}", "line 1, column 6: expected `:`"),
            (b"{\"a\": [1, 2,]}", "line 1, column 13"),
        ];
        for (bytes, expected) in cases {
            let err = read_err(bytes, true);
            assert!(err.message.contains(expected), "{expected}: {}", err.message);
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let err = read_err(text.as_bytes(), true);
        assert!(err.message.contains("nested deeper than 128"), "{}", err.message);
    }

    #[test]
    fn a_byte_order_mark_is_skipped_and_flagged() {
        let parsed = read_ok("\u{FEFF}{\"a\": 1}", false);
        assert!(parsed.bom);
        assert_eq!(parsed.value["a"], 1);
    }

    #[test]
    fn integers_too_big_for_64_bits_are_found_but_big_float_literals_are_not() {
        let text = r#"{"a": 1180591620717411303424, "b": [1e21, -9223372036854775809],
            "c": "12345678901234567890123", "d": 18446744073709551615, "e": 2e19,
            "f": -9223372036854775808, "g": 36893488147419103232.0}"#;
        let parsed = read_ok(text, false);
        assert_eq!(parsed.big_integers, ["/a", "/b/1"]);
        let parsed = read_ok(r#"{"x": NaN, "y": 99999999999999999999999}"#, true);
        assert_eq!(parsed.big_integers, ["/y"]);
    }

    #[test]
    fn non_finite_words_inside_strings_are_left_alone() {
        let parsed = read_ok(r#"{"a": "NaN \" -Infinity", "b": NaN}"#, true);
        assert_eq!(parsed.value["a"], "NaN \" -Infinity");
        assert_eq!(parsed.non_finite, [("/b".to_owned(), "NaN")]);
    }
}
