//! Reading strict JSON text into the borrowed tree: strings borrow from the input and stay
//! escaped as written when that is already their canonical form.

use std::borrow::Cow;

use atif_secrets::{Redactor, Scanner};
use serde_json::Number;

use crate::borrowed_tree::{Members, Node, Text, text_may_hold_secret, unescape_simple};
use crate::canonical::{needs_escape, skip_plain};
use crate::{Error, Result};

/// Reads `json`, which must be strict JSON: UTF-8 without a byte-order mark, no duplicate keys,
/// no `NaN`, no integer outside -2^63 … 2^64-1, nesting at most 127 levels deep (the
/// limit of serde_json and `atif-schema`).
///
/// # Errors
/// [`Error::InvalidJson`] with the line and column of the first problem.
/// With a `scanner`, the second value says whether any key or string may hold a secret it
/// would replace (see `borrowed_tree::may_hold_secret`), asked of each as it is read, while
/// its text is still in the cache; without one, it is `false`.
pub(crate) fn parse<'a>(json: &'a [u8], scanner: Option<&Scanner>) -> Result<(Node<'a>, bool)> {
    let text = std::str::from_utf8(json).map_err(|err| {
        let pos = err.valid_up_to();
        invalid_json(json, pos, "invalid UTF-8".to_owned())
    })?;
    if text.starts_with('\u{feff}') {
        return Err(invalid_json(json, 0, "a byte-order mark before the document".to_owned()));
    }
    let probe = scanner.map(|scanner| Probe { scanner, keys: scanner.redactor(), found: false });
    let mut parser = Parser { text, bytes: json, pos: 0, probe };
    let root = parser.document().map_err(|(pos, message)| invalid_json(json, pos, message))?;
    Ok((root, parser.probe.is_some_and(|probe| probe.found)))
}

/// The secret probe run as the parser reads: stops asking once something may hold a secret.
struct Probe<'s> {
    scanner: &'s Scanner,
    keys: Redactor<'s>,
    found: bool,
}

fn invalid_json(json: &[u8], pos: usize, message: String) -> Error {
    let before = &json[..pos.min(json.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |idx| idx + 1);
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    Error::InvalidJson { line, column, message }
}

const MAX_DEPTH: usize = 128;

struct Parser<'a, 's> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    probe: Option<Probe<'s>>,
}

type ParseResult<T> = std::result::Result<T, (usize, String)>;

impl<'a> Parser<'a, '_> {
    fn document(&mut self) -> ParseResult<Node<'a>> {
        let value = self.value(0)?;
        self.skip_whitespace();
        if self.pos < self.bytes.len() {
            return Err(self.error("the end of the document after the value"));
        }
        Ok(value)
    }

    /// Asks the probe about a string value.
    fn probe_string(&mut self, text: &Text<'_>) {
        if let Some(probe) = self.probe.as_mut().filter(|probe| !probe.found) {
            probe.found = text_may_hold_secret(text, probe.scanner);
        }
    }

    /// Asks the probe about an object key.
    fn probe_key(&mut self, key: &str) {
        if let Some(probe) = self.probe.as_mut().filter(|probe| !probe.found) {
            probe.found = probe.keys.may_hold_secret_key(key);
        }
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
            Some(b'"') => {
                let text = self.string()?;
                self.probe_string(&text);
                Ok(Node::Str(text))
            }
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
        // The root is at depth 0: at most `MAX_DEPTH - 1` levels, as serde_json allows.
        if depth >= MAX_DEPTH {
            return Err((self.pos, format!("nesting deeper than {} levels", MAX_DEPTH - 1)));
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
            self.probe_key(&key);
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
        let digits = |p: &mut Parser<'_, '_>| {
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
        // An integer is kept exactly or refused, as `atif-schema`'s reader does: past 64 bits
        // it could only be a rounded float.
        if number.is_none() && !is_float && raw != "-0" {
            return Err((
                start,
                "an integer outside -2^63 … 2^64-1, which only a rounded float could hold"
                    .to_owned(),
            ));
        }
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
