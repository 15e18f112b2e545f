//! The one way a trajectory comes in from outside: read with a size limit, stopped at the first
//! byte that cannot be JSON, and accepted only when it is a trajectory.
//!
//! Every command of the `atif` binary, `atif-golden` and the xtask read trajectories through
//! this module, so "what is a trajectory" is decided in one place: strict JSON (no duplicate
//! keys, no integer that a JSON reader would round to a float), a root object, a
//! `schema_version` string and a `steps` array. Everything else is [`validate`](crate::validate)'s
//! business, which reports every finding rather than the first.
//!
//! Reading is bounded and fails fast. A regular file larger than the limit is refused before a
//! byte is read; a stream (standard input, a FIFO, a character device such as `/dev/zero`) is
//! read in chunks, each checked as it arrives for bytes that valid JSON text never holds (a
//! control character other than tab and line breaks, or a byte that is never UTF-8), and for a
//! first non-blank byte that cannot start JSON. Binary input therefore fails within the first
//! chunk, whatever its length.

use std::io::{self, Read};
use std::path::Path;

use serde_json::Value;

use crate::{Error, Result};

mod walk;

/// The default limit on the bytes read from one input: 4 GiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// How inputs are read: the size limit, and what the input should be, for the words of an
/// error about its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LoadOptions {
    max_bytes: u64,
    expected: Expected,
}

/// What an input read through [`read_path`] and the other readers should be, so that an error
/// about bytes that cannot be JSON says what was expected instead.
///
/// The loader knows one kind of document, the trajectory ([`Expected::TRAJECTORY`], the
/// default); a crate that reads another kind through it names that kind itself, as
/// `atif-replay` does for its scripts and `atif-import` for agent logs.
///
/// ```
/// use atif_schema::{Expected, LoadOptions, read_reader};
///
/// let log = Expected::new("an agent log", "JSON or JSON Lines, starting with `{` or `[`");
/// let err = read_reader(&b"\x89PNG"[..], "run.log", LoadOptions::new().set_expected(log))
///     .unwrap_err();
/// assert!(err.to_string().ends_with("binary data, not an agent log"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Expected {
    noun: &'static str,
    start: &'static str,
}

impl Expected {
    /// An ATIF trajectory: a JSON object (the default).
    pub const TRAJECTORY: Expected = Expected::object("an ATIF trajectory");

    /// A document named by the noun phrase `noun`, with its article (`"an agent log"`), whose
    /// text starts as `start` says (`"JSON or JSON Lines, starting with `{` or `[`"`).
    pub const fn new(noun: &'static str, start: &'static str) -> Expected {
        Expected { noun, start }
    }

    /// A document that is a JSON object, named by `noun` (`"a replay script"`).
    pub const fn object(noun: &'static str) -> Expected {
        Expected::new(noun, "a JSON object, starting with `{`")
    }

    /// What the input is, with its article: `an ATIF trajectory`.
    pub fn noun(self) -> &'static str {
        self.noun
    }

    /// How its text starts: `a JSON object, starting with `{``.
    pub fn start(self) -> &'static str {
        self.start
    }
}

impl Default for Expected {
    fn default() -> Expected {
        Expected::TRAJECTORY
    }
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions { max_bytes: DEFAULT_MAX_INPUT_BYTES, expected: Expected::TRAJECTORY }
    }
}

impl LoadOptions {
    /// The defaults: a limit of [`DEFAULT_MAX_INPUT_BYTES`].
    pub fn new() -> LoadOptions {
        LoadOptions::default()
    }

    /// Sets the most bytes read from one input; more is [`Error::TooLarge`].
    pub fn set_max_bytes(&mut self, max_bytes: u64) -> &mut LoadOptions {
        self.max_bytes = max_bytes;
        self
    }

    /// The most bytes read from one input.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Sets what the input should be (an ATIF trajectory by default), which an error about
    /// bytes that cannot be JSON names.
    pub fn set_expected(&mut self, expected: Expected) -> &mut LoadOptions {
        self.expected = expected;
        self
    }

    /// What the input should be.
    pub fn expected(&self) -> Expected {
        self.expected
    }
}

/// Reads the trajectory at `path` and checks that it is one (see [`parse_trajectory`]).
///
/// # Errors
///
/// [`Error::Read`] when the file cannot be read (missing, a directory, no permission),
/// [`Error::TooLarge`] past the limit, and [`Error::NotTrajectory`] when the bytes are not an
/// ATIF trajectory.
pub fn load_trajectory(path: &Path, options: &LoadOptions) -> Result<Value> {
    let bytes = read_path(path, options)?;
    parse_trajectory(&bytes, &path.display().to_string())
}

/// Reads the bytes of the file at `path`, within the limit, failing at the first byte that
/// cannot be part of a JSON object (see the module docs). A FIFO or a device is read as a
/// stream.
///
/// # Errors
///
/// [`Error::Read`], [`Error::TooLarge`], or [`Error::NotTrajectory`] for binary input.
pub fn read_path(path: &Path, options: &LoadOptions) -> Result<Vec<u8>> {
    let name = path.display().to_string();
    let read_error = |source| Error::Read { file: name.clone(), source };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let metadata = file.metadata().map_err(read_error)?;
    if metadata.is_dir() {
        return Err(read_error(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory, expected a JSON file",
        )));
    }
    let capacity = if metadata.is_file() {
        if metadata.len() > options.max_bytes {
            return Err(Error::TooLarge { file: name, limit: options.max_bytes });
        }
        // A file that grows while it is read is still stopped at the limit below.
        usize::try_from(metadata.len()).unwrap_or(0)
    } else {
        CHUNK
    };
    read_bounded(file, &name, options, capacity)
}

/// Reads the bytes of standard input, as [`read_reader`] does; errors call it `standard input`.
///
/// # Errors
///
/// As [`read_reader`].
pub fn read_stdin(options: &LoadOptions) -> Result<Vec<u8>> {
    read_reader(io::stdin().lock(), "standard input", options)
}

/// Reads the bytes of any reader within the limit, failing at the first byte that cannot be
/// part of a JSON object; `name` names the input in errors.
///
/// # Errors
///
/// [`Error::Read`] on an I/O error, [`Error::TooLarge`] past the limit, and
/// [`Error::NotTrajectory`] for binary input.
pub fn read_reader(reader: impl Read, name: &str, options: &LoadOptions) -> Result<Vec<u8>> {
    read_bounded(reader, name, options, CHUNK)
}

/// Parses `bytes` as an ATIF trajectory: strict JSON ([`parse_json`](crate::parse_json): no
/// duplicate keys, no byte-order mark, no `NaN`, no integer beyond 64 bits), then
/// [`check_trajectory`]. `name` names the input in errors.
///
/// # Errors
///
/// [`Error::NotTrajectory`] with the JSON pointer (or line and column) of the first problem.
pub fn parse_trajectory(bytes: &[u8], name: &str) -> Result<Value> {
    let value = crate::parse_json(bytes).map_err(|err| match err {
        Error::Json { pointer, line, column, message } => {
            Error::NotTrajectory { file: name.to_owned(), pointer, line, column, message }
        }
        other => other,
    })?;
    check_trajectory(&value, name)?;
    Ok(value)
}

/// Checks that `bytes` are an ATIF trajectory, as [`parse_trajectory`] does and with the same
/// errors, without keeping the parsed document: for a caller that goes on to read the bytes its
/// own way (`atif normalize` into a tree that borrows its strings), so that two whole trees are
/// never held at once. `name` names the input in errors.
///
/// One pass of `serde_json` visits the document, keeping only the keys of the objects on the
/// path to the current value and the kinds of the root's `schema_version` and `steps`. Input
/// that the strict reader would refuse for more than the root's form (invalid JSON, a
/// byte-order mark, a repeated key, an integer beyond 64 bits) is handed to
/// [`parse_trajectory`], so its error is that reader's own.
///
/// ```
/// let text = br#"{"schema_version": "ATIF-v1.8", "steps": []}"#;
/// assert!(atif_schema::support::check_trajectory_bytes(text, "t.json").is_ok());
/// let err = atif_schema::support::check_trajectory_bytes(br#"{"steps": []}"#, "t.json").unwrap_err();
/// assert!(err.to_string().starts_with("t.json: /schema_version: missing"));
/// ```
///
/// # Errors
///
/// [`Error::NotTrajectory`] as [`parse_trajectory`] gives it.
pub fn check_trajectory_bytes(bytes: &[u8], name: &str) -> Result<()> {
    match walk::form(bytes) {
        Some(form) => form.check(name),
        None => parse_trajectory(bytes, name).map(drop),
    }
}

/// Checks that a parsed document has the form of a trajectory: a root object with a
/// `schema_version` string and a `steps` array. For a value that did not come through
/// [`parse_trajectory`] (duplicate keys and big integers are gone from a `Value`).
///
/// # Errors
///
/// [`Error::NotTrajectory`] naming `name` and the pointer of what is missing or wrong.
pub fn check_trajectory(value: &Value, name: &str) -> Result<()> {
    let member = |key: &str| value.as_object()?.get(key).map(crate::json_kind::json_kind);
    let form = TrajectoryForm {
        root: crate::json_kind::json_kind(value),
        schema_version: member("schema_version"),
        steps: member("steps"),
    };
    form.check(name)
}

/// The kinds of the three values that make a trajectory's form, named as
/// [`json_kind`](crate::json_kind::json_kind) names them (`an object`, `a string`, …): what
/// [`check_trajectory`] and [`check_trajectory_bytes`] judge, for a caller that read the
/// document its own way and knows these kinds.
///
/// ```
/// let form = atif_schema::support::TrajectoryForm {
///     root: "an object",
///     schema_version: Some("a string"),
///     steps: Some("an object"),
/// };
/// let err = form.check("t.json").unwrap_err();
/// assert!(err.to_string().contains("/steps: expected an array of steps, found an object"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrajectoryForm {
    /// The root's kind.
    pub root: &'static str,
    /// The kind of the root's `schema_version`, when the root is an object that has one.
    pub schema_version: Option<&'static str>,
    /// The kind of the root's `steps`, when the root is an object that has one.
    pub steps: Option<&'static str>,
}

impl TrajectoryForm {
    /// Checks that these are a trajectory's kinds: a root object with a `schema_version`
    /// string and a `steps` array. `name` names the input in errors.
    ///
    /// # Errors
    ///
    /// [`Error::NotTrajectory`] naming `name` and the pointer of what is missing or wrong.
    pub fn check(self, name: &str) -> Result<()> {
        let fail = |pointer: &str, message: String| Error::NotTrajectory {
            file: name.to_owned(),
            pointer: Some(pointer.to_owned()),
            line: None,
            column: None,
            message: format!("{}: {message}", if pointer.is_empty() { "(root)" } else { pointer }),
        };
        if self.root != "an object" {
            return Err(fail(
                "",
                format!(
                    "the root is {}: an ATIF trajectory is a JSON object with `schema_version` and \
                     `steps`",
                    self.root
                ),
            ));
        }
        match self.schema_version {
            Some("a string") => {}
            None => {
                return Err(fail(
                    "/schema_version",
                    "missing: not an ATIF trajectory (expected `\"schema_version\": \"ATIF-v1.8\"` \
                     or another ATIF-v1.x label)"
                        .to_owned(),
                ));
            }
            Some(other) => {
                return Err(fail(
                    "/schema_version",
                    format!("expected a string such as \"ATIF-v1.8\", found {other}"),
                ));
            }
        }
        match self.steps {
            Some("an array") => Ok(()),
            None => Err(fail(
                "/steps",
                "missing: not an ATIF trajectory (expected an array of steps)".to_owned(),
            )),
            Some(other) => {
                Err(fail("/steps", format!("expected an array of steps, found {other}")))
            }
        }
    }
}

/// Bytes read at a time from a stream; each chunk is checked before the next is read.
const CHUNK: usize = 256 * 1024;

fn read_bounded(
    mut reader: impl Read,
    name: &str,
    options: &LoadOptions,
    capacity: usize,
) -> Result<Vec<u8>> {
    let limit = options.max_bytes;
    let mut bytes = Vec::with_capacity(capacity.min(usize::try_from(limit).unwrap_or(usize::MAX)));
    let mut seen_start = false;
    let mut probe = [0u8; 4096];
    let read_error = |source| Error::Read { file: name.to_owned(), source };
    loop {
        // Read straight into the buffer, a chunk at a time (within what was reserved, so a
        // file of known size never makes it grow), so that each chunk is checked before the
        // next is read and no byte is copied twice. Once the reserve is full, one small read
        // says whether more follows (a stream, a file that grew).
        let before = bytes.len();
        let room = bytes.capacity() - before;
        let n = if room == 0 {
            let n = fill(&mut reader, &mut probe[..]).map_err(read_error)?;
            bytes.extend_from_slice(&probe[..n]);
            n
        } else {
            bytes.resize(before + room.min(CHUNK), 0);
            let n = fill(&mut reader, &mut bytes[before..]).map_err(read_error)?;
            bytes.truncate(before + n);
            n
        };
        if n == 0 {
            return Ok(bytes);
        }
        if bytes.len() as u64 > limit {
            return Err(Error::TooLarge { file: name.to_owned(), limit });
        }
        let new = &bytes[before..before + n];
        if let Some(at) = first_bad_byte(new, before == 0, &mut seen_start) {
            let (good, bad) = bytes.split_at(before + at);
            return Err(not_json_at(good, bad, name, options.expected));
        }
    }
}

/// Reads into `buffer` until it is full or the input ends; the bytes read.
fn fill(reader: &mut impl Read, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// Whether JSON text never holds `byte`: a control character other than tab, line feed and
/// carriage return (strings must escape them), or a byte that never occurs in UTF-8. Written
/// without branches, so that a scan over many bytes runs many at a time.
fn never_in_json(byte: u8) -> bool {
    let control = (byte < 0x20) & (byte != b'\t') & (byte != b'\n') & (byte != b'\r');
    control | (byte >= 0xF5) | (byte & 0xFE == 0xC0)
}

/// The offset of the first byte of `bytes` that JSON text never holds: whole blocks are
/// checked at once, and only a block that holds one is searched byte by byte.
fn first_never_in_json(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 64;
    let mut blocks = bytes.chunks_exact(BLOCK);
    let mut offset = 0;
    for block in &mut blocks {
        if block.iter().fold(false, |any, &byte| any | never_in_json(byte)) {
            break;
        }
        offset += BLOCK;
    }
    bytes[offset..].iter().position(|&byte| never_in_json(byte)).map(|at| offset + at)
}

/// The offset in `chunk` of the first byte that cannot be part of JSON text; the first
/// non-blank byte of the input (after a UTF-8 byte-order mark, which the parser explains) must
/// be one that starts a JSON value (the parser then says when it is not an object).
fn first_bad_byte(chunk: &[u8], at_start: bool, seen_start: &mut bool) -> Option<usize> {
    let mut from = 0;
    if !*seen_start {
        if at_start && chunk.starts_with(b"\xEF\xBB\xBF") {
            from = 3;
        }
        match chunk[from..].iter().position(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r')) {
            Some(offset) => {
                *seen_start = true;
                if !matches!(
                    chunk[from + offset],
                    b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
                ) {
                    return Some(from + offset);
                }
                from += offset;
            }
            None => return None,
        }
    }
    first_never_in_json(&chunk[from..]).map(|at| from + at)
}

/// The error for the first byte of `rest` (just past `before`), which cannot be where it is.
fn not_json_at(before: &[u8], rest: &[u8], name: &str, expected: Expected) -> Error {
    let offset = before.len();
    let found = rest.first().copied().unwrap_or(0);
    let line = before.iter().filter(|&&byte| byte == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&byte| byte == b'\n').map_or(0, |at| at + 1);
    let column = offset - line_start + 1;
    let what = match found {
        _ if offset == 0 && (rest.starts_with(b"\xFF\xFE") || rest.starts_with(b"\xFE\xFF")) => {
            "the input starts with a UTF-16 byte-order mark: JSON must \
             be UTF-8; PowerShell's `>` and Out-File write UTF-16 by default"
                .to_owned()
        }
        byte if byte.is_ascii_graphic() => format!(
            "`{}` cannot start JSON text ({} is {})",
            char::from(byte),
            expected.noun(),
            expected.start()
        ),
        byte => format!(
            "byte 0x{byte:02X} cannot appear in JSON text: this is binary data, not {}",
            expected.noun()
        ),
    };
    Error::NotTrajectory {
        file: name.to_owned(),
        pointer: None,
        line: Some(line),
        column: Some(column),
        message: format!("invalid JSON at line {line}, column {column}: {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8], max: u64) -> Result<Vec<u8>> {
        let mut options = LoadOptions::new();
        options.set_max_bytes(max);
        read_reader(bytes, "input", &options)
    }

    fn message(err: Error) -> String {
        err.to_string()
    }

    #[test]
    fn a_trajectory_is_read_whole() {
        let text = br#" {"schema_version": "ATIF-v1.8", "steps": []}"#;
        assert_eq!(read(text, 1000).unwrap(), text);
    }

    #[test]
    fn reading_stops_at_the_first_byte_json_never_holds() {
        let cases: [(&[u8], &str); 5] = [
            (b"\0\0\0", "line 1, column 1: byte 0x00"),
            (b"\n  {\"a\": \"x\x01", "line 2, column 11: byte 0x01"),
            (b"\xFF\xFE{\0", "UTF-16"),
            (b"<html>", "`<` cannot start JSON text"),
            (b"  x42", "line 1, column 3: `x` cannot start JSON text"),
        ];
        for (bytes, expected) in cases {
            let err = message(read(bytes, 1000).unwrap_err());
            assert!(err.contains(expected), "{expected}: {err}");
            assert!(err.starts_with("input: "), "{err}");
        }
    }

    #[test]
    fn the_error_says_what_the_input_should_be() {
        let mut options = LoadOptions::new();
        let mut words = |expected: Expected, bytes: &[u8]| {
            options.set_expected(expected);
            message(read_reader(bytes, "input", &options).unwrap_err())
        };
        let trajectory = words(Expected::TRAJECTORY, b"\0");
        assert!(
            trajectory.ends_with("this is binary data, not an ATIF trajectory"),
            "{trajectory}"
        );
        let script = words(Expected::object("a replay script"), b"x");
        assert!(
            script.ends_with("(a replay script is a JSON object, starting with `{`)"),
            "{script}"
        );
        let log = words(Expected::new("an agent log", "JSON or JSON Lines"), b"\x89PNG");
        assert!(log.ends_with("binary data, not an agent log"), "{log}");
    }

    #[test]
    fn the_block_scan_finds_the_first_bad_byte_wherever_it_is() {
        let bad_bytes = (0..=255u8).filter(|&byte| never_in_json(byte));
        let expected: Vec<u8> = (0..0x20).filter(|byte| ![9, 10, 13].contains(byte)).collect();
        let expected = [expected, vec![0xC0, 0xC1], (0xF5..=0xFF).collect()].concat();
        assert_eq!(bad_bytes.collect::<Vec<_>>(), expected);
        let text = b"{\"a\": \"caf\xC3\xA9\"}\r\n\t".repeat(30);
        assert_eq!(first_never_in_json(&text), None);
        for at in [0, 1, 63, 64, 65, 127, 128, 200, text.len() - 1] {
            for bad in [0x00, 0x1F, 0xC0, 0xFF] {
                let mut broken = text.clone();
                broken[at] = bad;
                broken[text.len() - 1] = 0x01;
                assert_eq!(first_never_in_json(&broken), Some(at), "{bad:#x} at {at}");
            }
        }
    }

    #[test]
    fn an_endless_binary_stream_fails_within_the_first_chunk() {
        // An endless reader: if the check did not stop it, this test would never end.
        let err = read_reader(io::repeat(0), "zeros", &LoadOptions::new()).unwrap_err();
        assert!(message(err).contains("byte 0x00"));
        let err = read(&[b'{'; 3 * CHUNK], 2 * CHUNK as u64).unwrap_err();
        assert!(matches!(err, Error::TooLarge { .. }), "a stream stops at the limit: {err}");
    }

    #[test]
    fn past_the_limit_is_too_large() {
        let err = read(br#"{"schema_version": "ATIF-v1.8"}"#, 10).unwrap_err();
        assert_eq!(message(err), "input is larger than the input limit of 10 bytes");
    }

    #[test]
    fn only_trajectories_are_accepted() {
        let cases = [
            (r#"{"hello": "world"}"#, "input: /schema_version: missing"),
            (r#"{"schema_version": "ATIF-v1.8"}"#, "input: /steps: missing"),
            (r#"{"schema_version": 1, "steps": []}"#, "found a number"),
            (r#"{"schema_version": "ATIF-v1.8", "steps": {}}"#, "found an object"),
            (r#"[]"#, "input: (root): the root is an array"),
            (
                r#"{"schema_version": "ATIF-v1.8", "steps": [], "steps": []}"#,
                "/steps: this key repeats",
            ),
            (
                r#"{"schema_version": "ATIF-v1.8", "steps": [{"step_id": 1180591620717411303424}]}"#,
                "input: /steps/0/step_id: an integer outside",
            ),
        ];
        for (text, expected) in cases {
            let err = message(parse_trajectory(text.as_bytes(), "input").unwrap_err());
            assert!(err.contains(expected), "{expected}: {err}");
        }
        let ok = parse_trajectory(br#"{"schema_version": "ATIF-v1.8", "steps": []}"#, "input");
        assert!(ok.is_ok());
    }

    /// What [`parse_trajectory`] says of `bytes`, and what [`check_trajectory_bytes`] says.
    fn both(bytes: &[u8]) -> (String, String) {
        let outcome = |result: Result<()>| match result {
            Ok(()) => "ok".to_owned(),
            Err(err) => format!("{err:?}"),
        };
        (
            outcome(parse_trajectory(bytes, "input").map(drop)),
            outcome(check_trajectory_bytes(bytes, "input")),
        )
    }

    #[test]
    fn the_check_without_the_tree_says_what_the_parse_says() {
        let cases: [&[u8]; 26] = [
            br#"{"hello": "world"}"#,
            br#"{"schema_version": "ATIF-v1.8"}"#,
            br#"{"schema_version": 1, "steps": []}"#,
            br#"{"schema_version": null, "steps": []}"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": {}}"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": "x"}"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": false}"#,
            br#"{"steps": [], "schema_version": ["ATIF-v1.8"]}"#,
            br#"[]"#,
            br#"42"#,
            br#""ATIF-v1.8""#,
            br#"null"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": [], "steps": []}"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": [{"a": {"b": 1, "b": 2}, "a": 3}]}"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": [{"step_id": 1180591620717411303424}]}"#,
            br#"{"schema_version": 1, "steps": [], "x": -9223372036854775809}"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": [], "m": 1e21}"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": [], "m": NaN}"#,
            b"\xEF\xBB\xBF{\"schema_version\": \"ATIF-v1.8\", \"steps\": []}",
            b"\xFF\xFE{\0}\0",
            b"{\"a\": \"\xff\"}",
            br#"{"schema_version": "ATIF-v1.8", "steps": [1, 2,]}"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": []} {}"#,
            br#"{"schema_version": "ATIF-v1.8", "steps": ["#,
            b" \n\t",
            br#"{"a": "\ud800"}"#,
        ];
        for bytes in cases {
            let (parsed, checked) = both(bytes);
            assert_eq!(parsed, checked, "{}", String::from_utf8_lossy(bytes));
        }
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        let (parsed, checked) = both(deep.as_bytes());
        assert!(parsed.contains("nested deeper than 128"), "{parsed}");
        assert_eq!(parsed, checked);
        let (parsed, checked) = both(br#"{"schema_version": "ATIF-v1.8", "steps": [], "m": 1e21}"#);
        assert_eq!((parsed.as_str(), checked.as_str()), ("ok", "ok"));
    }
}
