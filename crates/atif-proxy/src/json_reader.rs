//! A JSON reader that builds a `serde_json::Value` from bytes as they arrive, writing each
//! string straight into the buffer it keeps, so a recorded request body is never held twice.
//!
//! `serde_json` reads a string from a stream into a scratch buffer and then copies it, and from
//! a slice it copies it out of the slice: either way a 200 MB prompt is held twice while it is
//! parsed. This reader takes the bytes from a [`BufRead`] whose chunks are freed once read
//! (`ChunkReader`), so a recording holds the body about once. It accepts exactly JSON text
//! (RFC 8259), nesting at most 128 deep, and reads numbers with `serde_json`'s own parser, so
//! the value equals what `serde_json::from_slice` gives for the same text; tests hold the two
//! to that.

use std::io::BufRead;
use std::sync::mpsc::Receiver;

use axum::body::Bytes;
use serde_json::{Map, Number, Value};

/// How deep arrays and objects may nest, as for `serde_json` and every other reader of ours.
const MAX_DEPTH: usize = 128;

/// Reads one JSON value, and nothing after it but whitespace, from `input`.
///
/// # Errors
/// What is wrong and where (`expected value at line 1 column 3`).
pub(crate) fn read_value(input: &mut dyn BufRead) -> Result<Value, String> {
    let mut reader = Reader { input, line: 1, column: 0 };
    let value = reader.value(0)?;
    match reader.skip_whitespace()? {
        None => Ok(value),
        Some(_) => Err(reader.error("trailing characters")),
    }
}

/// The chunks of a request body as they arrive over a channel, read in order; each is dropped
/// as soon as it has been read.
#[derive(Debug)]
pub(crate) struct ChunkReader {
    chunks: Receiver<Bytes>,
    current: Bytes,
}

impl ChunkReader {
    pub(crate) fn new(chunks: Receiver<Bytes>) -> ChunkReader {
        ChunkReader { chunks, current: Bytes::new() }
    }
}

impl std::io::Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ChunkReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.current.is_empty() {
            // The sender is dropped when the body ends (or fails): the end of input.
            match self.chunks.recv() {
                Ok(chunk) => self.current = chunk,
                Err(_) => break,
            }
        }
        Ok(&self.current)
    }

    fn consume(&mut self, amount: usize) {
        let amount = amount.min(self.current.len());
        self.current = self.current.slice(amount..);
    }
}

/// The input and the position in it, for error messages.
struct Reader<'a> {
    input: &'a mut dyn BufRead,
    line: usize,
    column: usize,
}

impl Reader<'_> {
    fn value(&mut self, depth: usize) -> Result<Value, String> {
        match self.skip_whitespace()? {
            None => Err(self.error("EOF while parsing a value")),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => {
                self.bump();
                Ok(Value::String(self.string()?))
            }
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected value")),
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        if depth >= MAX_DEPTH {
            return Err(self.error("recursion limit exceeded"));
        }
        self.bump();
        let mut items = Vec::new();
        if self.skip_whitespace()? == Some(b']') {
            self.bump();
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            match self.skip_whitespace()? {
                Some(b',') => self.bump(),
                Some(b']') => {
                    self.bump();
                    return Ok(Value::Array(items));
                }
                None => return Err(self.error("EOF while parsing a list")),
                Some(_) => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        if depth >= MAX_DEPTH {
            return Err(self.error("recursion limit exceeded"));
        }
        self.bump();
        let mut map = Map::new();
        if self.skip_whitespace()? == Some(b'}') {
            self.bump();
            return Ok(Value::Object(map));
        }
        loop {
            match self.skip_whitespace()? {
                Some(b'"') => self.bump(),
                None => return Err(self.error("EOF while parsing an object")),
                Some(_) => return Err(self.error("key must be a string")),
            }
            let key = self.string()?;
            match self.skip_whitespace()? {
                Some(b':') => self.bump(),
                None => return Err(self.error("EOF while parsing an object")),
                Some(_) => return Err(self.error("expected `:`")),
            }
            // A repeated key keeps its last value, as `serde_json` does.
            map.insert(key, self.value(depth)?);
            match self.skip_whitespace()? {
                Some(b',') => self.bump(),
                Some(b'}') => {
                    self.bump();
                    return Ok(Value::Object(map));
                }
                None => return Err(self.error("EOF while parsing an object")),
                Some(_) => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    /// The rest of a string whose opening quote was read, escapes decoded, the bytes between
    /// escapes copied once, straight into the string's own buffer.
    fn string(&mut self) -> Result<String, String> {
        let mut out = Vec::new();
        loop {
            let buf = self.input.fill_buf().map_err(|err| err.to_string())?;
            if buf.is_empty() {
                return Err(self.error("EOF while parsing a string"));
            }
            let Some(idx) =
                buf.iter().position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)
            else {
                out.extend_from_slice(buf);
                let n = buf.len();
                self.advance(n);
                continue;
            };
            let byte = buf[idx];
            out.extend_from_slice(&buf[..idx]);
            self.advance(idx + 1);
            match byte {
                b'"' => break,
                b'\\' => self.escape(&mut out)?,
                _ => {
                    return Err(self.error(
                        "control character (\\u0000-\\u001F) found while parsing a string",
                    ));
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.error("invalid unicode code point"))
    }

    /// Decodes the escape after a backslash into `out`.
    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        let decoded = match self.next_byte()? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let ch = self.unicode_escape()?;
                out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                return Ok(());
            }
            _ => return Err(self.error("invalid escape")),
        };
        out.push(decoded);
        Ok(())
    }

    /// The character of a `\uXXXX` escape, a surrogate pair taking the `\uXXXX` after it.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if self.next_byte()? != b'\\' || self.next_byte()? != b'u' {
                    return Err(self.error("unexpected end of hex escape"));
                }
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error("lone leading surrogate in hex escape"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.error("lone leading surrogate in hex escape")),
            code => code,
        };
        char::from_u32(code).ok_or_else(|| self.error("invalid unicode code point"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = char::from(self.next_byte()?).to_digit(16);
            code = code * 16 + digit.ok_or_else(|| self.error("invalid escape"))?;
        }
        Ok(code)
    }

    /// A number, read by `serde_json`'s own number parser so that it is the same value.
    fn number(&mut self) -> Result<Value, String> {
        let mut text = String::new();
        while let Some(byte) = self.peek()? {
            if !matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                break;
            }
            text.push(char::from(byte));
            self.bump();
        }
        text.parse::<Number>().map(Value::Number).map_err(|_| self.error("invalid number"))
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Result<Value, String> {
        for &expected in word {
            if self.peek()? != Some(expected) {
                return Err(self.error("expected ident"));
            }
            self.bump();
        }
        Ok(value)
    }

    /// Skips whitespace and returns the next byte, not consumed.
    fn skip_whitespace(&mut self) -> Result<Option<u8>, String> {
        loop {
            match self.peek()? {
                Some(b' ' | b'\t' | b'\r') => self.bump(),
                Some(b'\n') => {
                    self.bump();
                    self.line += 1;
                    self.column = 0;
                }
                other => return Ok(other),
            }
        }
    }

    fn peek(&mut self) -> Result<Option<u8>, String> {
        let buf = self.input.fill_buf().map_err(|err| err.to_string())?;
        Ok(buf.first().copied())
    }

    fn next_byte(&mut self) -> Result<u8, String> {
        match self.peek()? {
            Some(byte) => {
                self.bump();
                Ok(byte)
            }
            None => Err(self.error("EOF while parsing a string")),
        }
    }

    fn bump(&mut self) {
        self.advance(1);
    }

    fn advance(&mut self, n: usize) {
        self.input.consume(n);
        self.column += n;
    }

    fn error(&self, what: &str) -> String {
        // The column of the byte that is wrong, counted from 1, as `serde_json` counts it.
        format!("{what} at line {} column {}", self.line, self.column + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `text` as the server does, from many small chunks.
    fn read_in_chunks(text: &[u8], chunk: usize) -> Result<Value, String> {
        let (sender, receiver) = std::sync::mpsc::channel();
        for piece in text.chunks(chunk.max(1)) {
            sender.send(Bytes::copy_from_slice(piece)).unwrap();
        }
        drop(sender);
        read_value(&mut ChunkReader::new(receiver))
    }

    #[test]
    fn values_equal_serde_json_s_for_the_same_text_in_any_chunking() {
        let texts = [
            r#"{"model":"m","messages":[{"role":"user","content":"hi \"there\"\n\t\u00e9\ud83d\ude00 \/"}],"stream":true}"#,
            "[1, -2, 3.5, 1e3, -0.0, 12345678901234567890, 1.7976931348623157e308, 0.1, 5e-324]",
            " \n\t{ \"a\" : [ ] , \"b\" : { } , \"c\" : null , \"d\" : false , \"e\" : true }\r\n",
            r#"{"a":1,"a":2}"#,
            r#""plain string with ünïcödé and 🦀""#,
            "0",
        ];
        for text in texts {
            let expected: Value = serde_json::from_str(text).unwrap();
            for chunk in [1, 2, 3, 7, 64, text.len()] {
                assert_eq!(read_in_chunks(text.as_bytes(), chunk), Ok(expected.clone()), "{text}");
            }
        }
    }

    #[test]
    fn what_serde_json_rejects_is_rejected_with_where() {
        let texts = [
            "",
            "{",
            r#"{"a":1,}"#,
            "[1,]",
            "{1:2}",
            r#"{"a" 1}"#,
            r#""unterminated"#,
            "\"tab\tinside\"",
            r#""\x""#,
            r#""\ud800""#,
            r#""\udc00x""#,
            "01",
            "1.",
            "-",
            "tru",
            "nul",
            "[1] 2",
            "\u{0}",
            "+1",
        ];
        for text in texts {
            assert!(serde_json::from_str::<Value>(text).is_err(), "serde_json accepts {text:?}");
            let err = read_in_chunks(text.as_bytes(), 3).unwrap_err();
            assert!(err.contains(" at line 1 column "), "{text:?}: {err}");
        }
        let text = "{\n  \"a\": [1 2]\n}";
        let err = read_in_chunks(text.as_bytes(), 4).unwrap_err();
        assert_eq!(err, serde_json::from_str::<Value>(text).unwrap_err().to_string());
    }

    #[test]
    fn invalid_utf8_in_a_string_is_an_error() {
        let err = read_in_chunks(b"\"\xff\xfe\"", 1).unwrap_err();
        assert!(err.starts_with("invalid unicode code point"), "{err}");
    }

    #[test]
    fn nesting_is_bounded_at_128() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        for n in [127, 128] {
            assert_eq!(
                read_in_chunks(deep(n).as_bytes(), 16).is_ok(),
                serde_json::from_str::<Value>(&deep(n)).is_ok(),
                "{n} deep"
            );
        }
        let err = read_in_chunks(deep(100_000).as_bytes(), 4096).unwrap_err();
        assert!(err.starts_with("recursion limit exceeded"), "{err}");
    }
}
