//! The canonical text of a JSON document (what Python's `json.dumps(obj, indent=2,
//! sort_keys=True, ensure_ascii=False) + "\n"` writes) and the content hash derived from it.

use std::sync::OnceLock;

use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

/// The canonical text of `doc`: keys sorted by code point, two-space indentation, UTF-8 without
/// `\u` escapes for non-ASCII characters, and a trailing newline.
///
/// The text is byte-for-byte what Python writes with
/// `json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"` for the same document,
/// so teams working in other languages can reproduce golden files and hashes.
/// Floats are written the way Python's `repr` writes them: the shortest digits that read back to
/// the same value, `1.0` for integral floats, and the exponent form (`1e-05`, `1.5e+20`) when the
/// decimal exponent is below -4 or at least 16.
///
/// The one place the two can differ is an integer literal that `serde_json` reads as a float:
/// one outside the 64-bit range (written `1.2345678901234568e+29` where Python keeps every
/// digit) and `-0` (written `-0.0` where Python writes `0`).
///
/// ```
/// let doc = serde_json::json!({"b": [1, 2.0], "a": "é"});
/// assert_eq!(
///     atif_normalize::to_canonical_string(&doc),
///     "{\n  \"a\": \"é\",\n  \"b\": [\n    1,\n    2.0\n  ]\n}\n"
/// );
/// ```
pub fn to_canonical_string(doc: &Value) -> String {
    canonical_string(doc)
}

/// [`to_canonical_string`] for either tree.
pub(crate) fn canonical_string<T: WriteCanonical>(doc: &T) -> String {
    // No size estimate up front: growing by doubling costs less than a walk over the document,
    // as large reallocations are remapped rather than copied.
    let mut sink = Whole(String::new());
    doc.write_canonical(&mut sink, 0);
    sink.0.push('\n');
    sink.0
}

/// Writes the [canonical text](to_canonical_string) of `doc` to `writer` in blocks of about
/// 64 KiB, so a large document is never held twice in memory.
///
/// # Errors
/// The first error `writer` returns; what was written before it stays written.
pub fn write_canonical<W: std::io::Write>(doc: &Value, mut writer: W) -> std::io::Result<()> {
    stream(doc, &mut writer)
}

/// Writes the canonical text of `doc` to `writer` in blocks of about [`BLOCK`] bytes.
pub(crate) fn stream<T: WriteCanonical>(
    doc: &T,
    writer: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut sink = Streaming { out: String::with_capacity(2 * BLOCK), writer, error: None };
    doc.write_canonical(&mut sink, 0);
    sink.out.push('\n');
    if let Some(err) = sink.error {
        return Err(err);
    }
    sink.writer.write_all(sink.out.as_bytes())
}

/// Whether `text` is exactly the [canonical text](to_canonical_string) of `doc`.
///
/// The text of `doc` is compared block by block as it is written, never held whole, and the
/// writing stops at the first block that differs: a golden check of a run of a hundred
/// megabytes that changed early costs almost nothing here.
///
/// ```
/// let doc = serde_json::json!({"b": 1, "a": [true]});
/// let text = atif_normalize::to_canonical_string(&doc);
/// assert!(atif_normalize::is_canonical_text_of(&doc, text.as_bytes()));
/// assert!(!atif_normalize::is_canonical_text_of(&doc, b"{}\n"));
/// ```
pub fn is_canonical_text_of(doc: &Value, text: &[u8]) -> bool {
    is_canonical_text(doc, text)
}

/// [`is_canonical_text_of`] for either tree.
pub(crate) fn is_canonical_text<T: WriteCanonical>(doc: &T, text: &[u8]) -> bool {
    let mut sink = Comparing { out: String::with_capacity(2 * BLOCK), rest: text, equal: true };
    if !doc.write_canonical(&mut sink, 0) {
        return false;
    }
    sink.out.push('\n');
    sink.equal && sink.out.as_bytes() == sink.rest
}

/// The canonical text of `doc` cut after about `limit` bytes (all of it for `None`), as bytes
/// (the cut may fall inside a character). Comparing two such prefixes orders the full texts
/// whenever they differ within the prefix, so sorting rarely needs whole texts.
pub(crate) fn canonical_prefix<T: WriteCanonical>(doc: &T, limit: Option<usize>) -> Vec<u8> {
    let limit = limit.unwrap_or(usize::MAX);
    let mut sink = Prefix { out: String::new(), limit };
    if doc.write_canonical(&mut sink, 0) {
        sink.out.push('\n');
    }
    let mut bytes = sink.out.into_bytes();
    bytes.truncate(limit);
    bytes
}

/// The content hash of `doc`: the first 12 hexadecimal digits of the SHA-256 of its
/// [canonical text](to_canonical_string).
///
/// The text is hashed block by block as it is written, never held whole.
///
/// ```
/// let hash = atif_normalize::content_hash(&serde_json::json!({}));
/// assert_eq!(hash.len(), 12);
/// ```
pub fn content_hash(doc: &Value) -> String {
    hex12(&digest(doc))
}

/// [`content_hash`] for either tree.
pub(crate) fn hash_of<T: WriteCanonical>(doc: &T) -> String {
    hex12(&digest(doc))
}

/// The SHA-256 of the canonical text of `doc`, hashed block by block as it is written.
pub(crate) fn digest<T: WriteCanonical>(doc: &T) -> [u8; 32] {
    let mut sink = Hashing { out: String::with_capacity(2 * BLOCK), hasher: Sha256::new() };
    doc.write_canonical(&mut sink, 0);
    sink.out.push('\n');
    sink.hasher.update(sink.out.as_bytes());
    sink.hasher.finalize().into()
}

fn hex12(digest: &[u8]) -> String {
    let mut hex = String::with_capacity(12);
    for byte in &digest[..6] {
        hex.push(HEX[usize::from(byte >> 4)] as char);
        hex.push(HEX[usize::from(byte & 0xf)] as char);
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// How much text the streaming sinks gather before handing it on.
const BLOCK: usize = 64 * 1024;

/// Where the writer puts text: a buffer, and a checkpoint after each array element and object
/// member that may hand the buffer on, or stop the writing early.
pub(crate) trait Sink {
    fn buf(&mut self) -> &mut String;
    /// Returns `false` to stop writing.
    fn checkpoint(&mut self) -> bool;
}

/// The whole text in one string.
struct Whole(String);

impl Sink for Whole {
    fn buf(&mut self) -> &mut String {
        &mut self.0
    }
    fn checkpoint(&mut self) -> bool {
        true
    }
}

/// The text up to about `limit` bytes.
struct Prefix {
    out: String,
    limit: usize,
}

impl Sink for Prefix {
    fn buf(&mut self) -> &mut String {
        &mut self.out
    }
    fn checkpoint(&mut self) -> bool {
        self.out.len() <= self.limit
    }
}

/// The text handed to a writer block by block.
struct Streaming<'w> {
    out: String,
    writer: &'w mut dyn std::io::Write,
    error: Option<std::io::Error>,
}

impl Sink for Streaming<'_> {
    fn buf(&mut self) -> &mut String {
        &mut self.out
    }
    fn checkpoint(&mut self) -> bool {
        if self.out.len() >= BLOCK {
            if let Err(err) = self.writer.write_all(self.out.as_bytes()) {
                self.error = Some(err);
                return false;
            }
            self.out.clear();
        }
        true
    }
}

/// The text compared block by block with the text it should be.
struct Comparing<'t> {
    out: String,
    /// What the text still to come should be.
    rest: &'t [u8],
    equal: bool,
}

impl Sink for Comparing<'_> {
    fn buf(&mut self) -> &mut String {
        &mut self.out
    }
    fn checkpoint(&mut self) -> bool {
        if self.out.len() >= BLOCK {
            let written = self.out.as_bytes();
            match self.rest.strip_prefix(written) {
                Some(rest) => self.rest = rest,
                None => {
                    self.equal = false;
                    return false;
                }
            }
            self.out.clear();
        }
        true
    }
}

/// The text hashed block by block.
struct Hashing {
    out: String,
    hasher: Sha256,
}

impl Sink for Hashing {
    fn buf(&mut self) -> &mut String {
        &mut self.out
    }
    fn checkpoint(&mut self) -> bool {
        if self.out.len() >= BLOCK {
            self.hasher.update(self.out.as_bytes());
            self.out.clear();
        }
        true
    }
}

/// A JSON tree that can be written as canonical text: `serde_json::Value` and the borrowed
/// tree of the fast path. Each writes its scalars; arrays and objects go through
/// [`write_array`] and [`write_members`], so the layout is defined once.
pub(crate) trait WriteCanonical {
    /// Writes `self` at `depth`; returns `false` when the sink stopped the writing early.
    fn write_canonical<S: Sink>(&self, sink: &mut S, depth: usize) -> bool;
}

impl WriteCanonical for Value {
    fn write_canonical<S: Sink>(&self, sink: &mut S, depth: usize) -> bool {
        let out = sink.buf();
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Number(number) => write_number(out, number),
            Value::String(s) => write_string(out, s),
            Value::Array(items) => return write_array(sink, items, depth),
            Value::Object(map) => return map.write_canonical(sink, depth),
        }
        true
    }
}

impl WriteCanonical for Map<String, Value> {
    fn write_canonical<S: Sink>(&self, sink: &mut S, depth: usize) -> bool {
        if maps_iterate_sorted() {
            write_members(sink, self.iter().map(|(key, value)| (key.as_str(), value)), depth)
        } else {
            let mut members: Vec<(&str, &Value)> =
                self.iter().map(|(key, value)| (key.as_str(), value)).collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            write_members(sink, members, depth)
        }
    }
}

/// Whether serde_json's map iterates in key order, as its default `BTreeMap` does; a
/// dependency that switches on serde_json's `preserve_order` feature would change that for the
/// whole build, and then members are sorted here instead.
fn maps_iterate_sorted() -> bool {
    static SORTED: OnceLock<bool> = OnceLock::new();
    *SORTED.get_or_init(|| {
        let mut probe = Map::new();
        probe.insert("b".to_owned(), Value::Null);
        probe.insert("a".to_owned(), Value::Null);
        probe.keys().next().is_some_and(|first| first == "a")
    })
}

/// Writes an array of `items`; returns `false` when the sink stopped the writing early.
pub(crate) fn write_array<T: WriteCanonical, S: Sink>(
    sink: &mut S,
    items: &[T],
    depth: usize,
) -> bool {
    write_container(sink, ['[', ']'], items.iter().map(|item| (None, item)), depth)
}

/// Writes an object of `members`, which must come sorted by key; returns `false` when the sink
/// stopped the writing early.
pub(crate) fn write_members<'t, T: WriteCanonical + 't, S: Sink>(
    sink: &mut S,
    members: impl IntoIterator<Item = (&'t str, &'t T)>,
    depth: usize,
) -> bool {
    write_container(sink, ['{', '}'], members.into_iter().map(|(k, v)| (Some(k), v)), depth)
}

/// Writes an array (entries without keys) or an object (entries with keys) between `brackets`,
/// empty ones on one line.
fn write_container<'t, T: WriteCanonical + 't, S: Sink>(
    sink: &mut S,
    [open, close]: [char; 2],
    entries: impl Iterator<Item = (Option<&'t str>, &'t T)>,
    depth: usize,
) -> bool {
    let mut entries = entries.peekable();
    if entries.peek().is_none() {
        let out = sink.buf();
        out.push(open);
        out.push(close);
        return true;
    }
    sink.buf().push(open);
    for (idx, (key, value)) in entries.enumerate() {
        let out = sink.buf();
        if idx > 0 {
            out.push(',');
        }
        newline(out, depth + 1);
        if let Some(key) = key {
            write_string(out, key);
            out.push_str(": ");
        }
        if !value.write_canonical(sink, depth + 1) || !sink.checkpoint() {
            return false;
        }
    }
    let out = sink.buf();
    newline(out, depth);
    out.push(close);
    true
}

fn newline(out: &mut String, depth: usize) {
    const SPACES: &str = "                                                                ";
    out.push('\n');
    let mut width = depth * 2;
    while width > 0 {
        let chunk = width.min(SPACES.len());
        out.push_str(&SPACES[..chunk]);
        width -= chunk;
    }
}

/// Which bytes Python escapes with `ensure_ascii=False`: `"`, `\` and every control character
/// below 0x20 (DEL and U+2028 pass through).
pub(crate) const fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut idx = 0;
    loop {
        idx = skip_plain(bytes, idx);
        let Some(&byte) = bytes.get(idx) else { break };
        if needs_escape(byte) {
            // Escaped bytes are ASCII, so `idx` is a character boundary.
            out.push_str(&s[start..idx]);
            match byte {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                b'\n' => out.push_str("\\n"),
                b'\r' => out.push_str("\\r"),
                b'\t' => out.push_str("\\t"),
                0x08 => out.push_str("\\b"),
                0x0c => out.push_str("\\f"),
                _ => {
                    out.push_str("\\u00");
                    out.push(HEX[usize::from(byte >> 4)] as char);
                    out.push(HEX[usize::from(byte & 0xf)] as char);
                }
            }
            start = idx + 1;
        }
        idx += 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// The index of the first byte from `idx` on that needs escaping, found eight bytes at a time;
/// in the tail shorter than that, the index where the tail starts.
///
/// Each eight bytes are one `u64`, tested with the usual word tricks: `(x - 0x20 per byte) & !x`
/// sets the high bit of a byte below 0x20, and of a zero byte after `x ^ '"'` or `x ^ '\\'`
/// for a quote or a backslash. A borrow can also set the bit of a byte above a byte that was
/// found, never below one, so the lowest set bit is the first byte that needs escaping.
pub(crate) fn skip_plain(bytes: &[u8], mut idx: usize) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = ONES * 0x80;
    while let Some(word) = bytes.get(idx..idx + 8) {
        let Ok(word) = <[u8; 8]>::try_from(word) else { break };
        let x = u64::from_le_bytes(word);
        let quote = x ^ (ONES * u64::from(b'"'));
        let backslash = x ^ (ONES * u64::from(b'\\'));
        let found = (x.wrapping_sub(ONES * 0x20) & !x)
            | (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash);
        let found = found & HIGH;
        if found != 0 {
            return idx + (found.trailing_zeros() / 8) as usize;
        }
        idx += 8;
    }
    idx
}

pub(crate) fn write_number(out: &mut String, number: &Number) {
    if let Some(n) = number.as_u64() {
        write_u64(out, n);
    } else if let Some(n) = number.as_i64() {
        out.push('-');
        write_u64(out, n.unsigned_abs());
    } else if let Some(f) = number.as_f64() {
        write_f64(out, f);
    }
}

fn write_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &digit in &buf[pos..] {
        out.push(digit as char);
    }
}

/// Writes `f` the way Python's `repr(float)` does.
pub(crate) fn write_f64(out: &mut String, f: f64) {
    if !f.is_finite() {
        // Not representable in a serde_json value; Python would write these spellings.
        out.push_str(if f.is_nan() {
            "NaN"
        } else if f > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        });
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits, the same digits Python's repr picks.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if negative {
        out.push('-');
    }
    if !(-4..16).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let magnitude = exp.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        write_u64(out, u64::from(magnitude));
        return;
    }
    if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
        return;
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        out.push_str(&digits);
        for _ in digits.len()..int_len {
            out.push('0');
        }
        out.push_str(".0");
    } else {
        out.push_str(&digits[..int_len]);
        out.push('.');
        out.push_str(&digits[int_len..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_scan_stops_at_the_first_byte_to_escape() {
        let plain: Vec<u8> = (0x20..=0xFF).filter(|&byte| !needs_escape(byte)).collect();
        let text = plain.repeat(3);
        // No byte to escape: the scan stops only at the tail shorter than a word.
        let end = skip_plain(&text, 0);
        assert!(end <= text.len() && text.len() - end < 8, "{end} of {}", text.len());
        for at in 0..40 {
            for escaped in [0x00, 0x01, 0x1F, b'"', b'\\'] {
                // Bytes that borrow or look alike around the one to find, after it.
                let mut bytes = text[..48].to_vec();
                bytes[at] = escaped;
                bytes[at + 1] = 0x00;
                bytes[at + 2] = 0x21;
                assert_eq!(skip_plain(&bytes, 0), at, "{escaped:#x} at {at}");
                assert_eq!(skip_plain(&bytes, at), at, "{escaped:#x} at {at}, from there");
            }
        }
    }

    fn check_float(f: f64, expected: &str) {
        let mut out = String::new();
        write_f64(&mut out, f);
        assert_eq!(out, expected, "repr of {f:?}");
    }

    #[test]
    fn floats_are_written_like_python_repr() {
        for (f, expected) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e-4, "0.0001"),
            (1e-5, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (123456789.125, "123456789.125"),
            (1e15, "1000000000000000.0"),
            (9999999999999998.0, "9999999999999998.0"),
            (1e16, "1e+16"),
            (1.5e20, "1.5e+20"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.30000000000000004, "0.30000000000000004"),
        ] {
            check_float(f, expected);
        }
    }

    /// The escaping rule spelled out one character at a time, to check the eight-at-a-time scan.
    fn reference_escape(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn the_block_scan_escapes_exactly_what_the_per_character_rule_escapes() {
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let mut runner = TestRunner::new_with_rng(
            Config { cases: 2000, failure_persistence: None, ..Config::default() },
            TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
        );
        let strategy =
            proptest::string::string_regex("[\\x00-\\x7f\"\\\\é😀\u{2028}]{0,40}").unwrap();
        runner
            .run(&strategy, |s| {
                let mut out = String::new();
                write_string(&mut out, &s);
                proptest::prop_assert_eq!(out, reference_escape(&s));
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn control_characters_are_escaped_in_lowercase_hex() {
        let mut out = String::new();
        write_string(&mut out, "a\u{1}\u{1f}\u{7f}\u{2028}é\"\\\n\r\t\u{8}\u{c}");
        assert_eq!(out, "\"a\\u0001\\u001f\u{7f}\u{2028}é\\\"\\\\\\n\\r\\t\\b\\f\"");
    }
}
