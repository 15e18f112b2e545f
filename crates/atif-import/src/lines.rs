//! Reading a JSON Lines log one record at a time, with line numbers and a tolerated truncated
//! tail.
//!
//! Records are parsed as they are consumed and dropped once imported, so a 50 MB log never
//! holds all its parsed lines at once; only the first records are kept ahead for detection.
//!
//! A line that is not a JSON object is skipped and remembered (the import counts it with its
//! reason and warns naming the line), or in strict mode ends iteration with an error.

use std::collections::VecDeque;

use atif_schema::support::json_kind;
use serde_json::Value;

use crate::{Error, Result};

/// How many records detection (`format::detect_records`) looks at before giving up: what a
/// reader keeps ahead while the format is not yet known.
pub(crate) const DETECT_RECORDS: usize = 60;

/// One parsed line of a log.
#[derive(Debug)]
pub(crate) struct Record {
    /// 1-based line number in the input.
    pub(crate) line: usize,
    /// The parsed object.
    pub(crate) value: Value,
}

/// The next record of a log as [`Records::next_fast`] gives it: read from its line by the
/// caller's fast reader, or parsed into a [`Record`] when that reader passed the line on.
#[derive(Debug)]
pub(crate) enum Fast<T> {
    /// What the fast reader made of the record on `line`.
    Read { line: usize, item: T },
    /// A record the fast reader passed on (or one read ahead for detection).
    Record(Record),
}

/// How a log is laid out, which decides how a place in it is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// JSON Lines: a record is named by its line.
    Lines,
    /// One JSON array of records: a record is named by its JSON Pointer, `/N` for the
    /// record numbered N + 1.
    Array,
    /// One JSON object: the log is one record, and a place in it is named by its JSON Pointer.
    Object,
}

/// A line of a JSON Lines log, after its first record, that is not a JSON object: skipped
/// outside strict mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadLine {
    /// 1-based line number.
    pub(crate) line: usize,
    /// Why, as counted (`line that is not JSON`).
    pub(crate) reason: &'static str,
    /// What the parser found, for the warning.
    pub(crate) detail: String,
}

/// The records of a log, parsed on demand, with the first ones read ahead for detection.
///
/// A final line without a line end that fails to parse, after at least one good record, is
/// taken as a write cut short: iteration stops there and [`Records::truncated_line`] names it.
/// Any other line that is not a JSON object is skipped and kept in [`Records::bad_lines`], or
/// in strict mode ends iteration with an error.
#[derive(Debug)]
pub(crate) struct Records<'a> {
    ahead: VecDeque<Record>,
    rest: &'a [u8],
    line_no: usize,
    n_records: usize,
    truncated_line: Option<usize>,
    failed: bool,
    strict: bool,
    layout: Layout,
    bad_lines: Vec<BadLine>,
    /// The error of a bad line met while reading ahead, returned once the records before it
    /// are consumed.
    pending_error: Option<Error>,
}

impl<'a> Records<'a> {
    /// Opens `bytes` and reads the first records ahead; `strict` makes a line that is not a
    /// JSON object an error rather than a skipped line.
    ///
    /// # Errors
    /// [`Error::Empty`] when there is no record at all; the error of the first line when it is
    /// not a record (of the whole text, with its line, when the first line opens an object it
    /// does not close and the text is read as one document), or in strict mode of a bad line
    /// among the first.
    pub(crate) fn open(bytes: &'a [u8], strict: bool) -> Result<Records<'a>> {
        let rest = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        if let Some(records) = Records::array(rest)? {
            return Ok(records);
        }
        let mut records = Records {
            ahead: VecDeque::new(),
            rest,
            line_no: 0,
            n_records: 0,
            truncated_line: None,
            failed: false,
            strict,
            layout: Layout::Lines,
            bad_lines: Vec::new(),
            pending_error: None,
        };
        while records.ahead.len() < DETECT_RECORDS {
            match records.parse_next() {
                Some(Ok(record)) => records.ahead.push_back(record),
                // A bad line after the first records (strict mode) is met in file order, after
                // the records before it: a malformed record among those is reported first.
                Some(Err(error)) if !records.ahead.is_empty() => {
                    records.pending_error = Some(error);
                    break;
                }
                // A first line that opens an object but is not a whole one: the log is one object
                // over many lines. The first line is parsed once, as a record, rather than
                // checked first and then parsed again (a trace exported on one line is the
                // whole file).
                Some(Err(_)) if first_byte(rest) == Some(b'{') => return Records::object(rest),
                Some(Err(error)) => return Err(error),
                None => break,
            }
        }
        if records.ahead.is_empty() {
            return Err(Error::Empty);
        }
        Ok(records)
    }

    /// The records of a log written as one JSON array of records (`claude -p --output-format
    /// json --verbose`), numbered from 1 in array order. `None` when `bytes` is not an array of
    /// objects, which the line reader then reads (and names what is wrong).
    fn array(bytes: &'a [u8]) -> Result<Option<Records<'a>>> {
        if first_byte(bytes) != Some(b'[') {
            return Ok(None);
        }
        match serde_json::from_slice::<Vec<Value>>(bytes) {
            Ok(values) if values.iter().all(Value::is_object) => {
                Records::document(values, Layout::Array).map(Some)
            }
            // An array cut short cannot be read line by line either.
            Err(error) if error.is_eof() => Err(document_error(error)),
            _ => Ok(None),
        }
    }

    /// The record of a log written as one object over several lines (a Gemini CLI
    /// `chats/*.json` session, `opencode export`).
    fn object(bytes: &'a [u8]) -> Result<Records<'a>> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(value) => Records::document(vec![value], Layout::Object),
            Err(error) => Err(document_error(error)),
        }
    }

    fn document(values: Vec<Value>, layout: Layout) -> Result<Records<'a>> {
        let ahead: VecDeque<Record> = values
            .into_iter()
            .enumerate()
            .map(|(idx, value)| Record { line: idx + 1, value })
            .collect();
        if ahead.is_empty() {
            return Err(Error::Empty);
        }
        Ok(Records {
            n_records: ahead.len(),
            ahead,
            rest: &[],
            line_no: 0,
            truncated_line: None,
            failed: false,
            strict: true,
            layout,
            bad_lines: Vec::new(),
            pending_error: None,
        })
    }

    /// The records read ahead (at most the first [`DETECT_RECORDS`]) not yet consumed.
    pub(crate) fn ahead(&self) -> impl Iterator<Item = &Record> + Clone {
        self.ahead.iter()
    }

    /// How many records have been parsed so far (all of them once iteration ended).
    pub(crate) fn n_records(&self) -> usize {
        self.n_records
    }

    /// The 1-based number of a final line cut short, once iteration reached it.
    pub(crate) fn truncated_line(&self) -> Option<usize> {
        self.truncated_line
    }

    /// How the log is laid out.
    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }

    /// Takes the lines skipped so far because they are not JSON objects.
    pub(crate) fn take_bad_lines(&mut self) -> Vec<BadLine> {
        std::mem::take(&mut self.bad_lines)
    }

    /// The next record: read ahead, then `read` over the line's text, then parsed into a
    /// [`Record`] when `read` gives `None`.
    ///
    /// `read` is a format's reader of its most frequent records into borrowed, typed values,
    /// which skip what the import drops instead of building a `Value` of it. It must give
    /// `Some` only for a line that is a JSON object which parses as JSON (as
    /// `serde_json::Value` would); every other line, and every record it does not take whole,
    /// it passes on, so errors, skips and their line numbers stay those of the `Value` path.
    pub(crate) fn next_fast<T>(
        &mut self,
        read: &mut impl FnMut(&'a str) -> Option<T>,
    ) -> Option<Result<Fast<T>>> {
        if let Some(record) = self.ahead.pop_front() {
            return Some(Ok(Fast::Record(record)));
        }
        if let Some(error) = self.pending_error.take() {
            return Some(Err(error));
        }
        self.parse_next_with(Some(read))
    }

    fn parse_next(&mut self) -> Option<Result<Record>> {
        let none = None::<&mut fn(&'a str) -> Option<std::convert::Infallible>>;
        match self.parse_next_with(none)? {
            Ok(Fast::Record(record)) => Some(Ok(record)),
            Ok(Fast::Read { item, .. }) => match item {},
            Err(error) => Some(Err(error)),
        }
    }

    fn parse_next_with<T>(
        &mut self,
        mut read: Option<&mut impl FnMut(&'a str) -> Option<T>>,
    ) -> Option<Result<Fast<T>>> {
        while !self.failed && !self.rest.is_empty() {
            self.line_no += 1;
            let (line, has_end) = match memchr::memchr(b'\n', self.rest) {
                Some(end) => {
                    let line = &self.rest[..end];
                    self.rest = &self.rest[end + 1..];
                    (line, true)
                }
                None => (std::mem::take(&mut self.rest), false),
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line_no = self.line_no;
            if let Some(read) = read.as_mut() {
                if let Some(item) = std::str::from_utf8(line).ok().and_then(&mut **read) {
                    self.n_records += 1;
                    return Some(Ok(Fast::Read { line: line_no, item }));
                }
            }
            let error = match serde_json::from_slice::<Value>(line) {
                Ok(value @ Value::Object(_)) => {
                    self.n_records += 1;
                    return Some(Ok(Fast::Record(Record { line: line_no, value })));
                }
                Ok(other) => Error::NotAnObject { line: line_no, found: json_kind(&other) },
                Err(_) if !has_end && self.n_records > 0 => {
                    self.truncated_line = Some(line_no);
                    return None;
                }
                Err(error) => Error::NotJson { line: line_no, error },
            };
            // Input whose first line is not a record is not a log at all (binary data, some
            // other text): it fails there, without reading the rest.
            if self.strict || self.n_records == 0 {
                self.failed = true;
                return Some(Err(error));
            }
            let reason = match &error {
                Error::NotAnObject { .. } => "line that is JSON but not an object",
                _ => "line that is not JSON",
            };
            let detail = error.to_string();
            let detail = detail.split_once(": ").map_or(detail.as_str(), |(_, d)| d).to_owned();
            self.bad_lines.push(BadLine { line: line_no, reason, detail });
        }
        None
    }
}

/// The first byte of `bytes` that is not white space.
fn first_byte(bytes: &[u8]) -> Option<u8> {
    bytes.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// The error for a JSON document that does not parse, naming its line.
fn document_error(error: serde_json::Error) -> Error {
    Error::NotJson { line: error.line().max(1), error }
}

impl Iterator for Records<'_> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        match self.ahead.pop_front() {
            Some(record) => Some(Ok(record)),
            None => match self.pending_error.take() {
                Some(error) => Some(Err(error)),
                None => self.parse_next(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line numbers of the records, and of a truncated final line, in strict mode.
    fn read_all(bytes: &[u8]) -> Result<(Vec<usize>, Option<usize>)> {
        let mut records = Records::open(bytes, true)?;
        let lines = records.by_ref().map(|r| r.map(|r| r.line)).collect::<Result<Vec<_>>>()?;
        Ok((lines, records.truncated_line()))
    }

    #[test]
    fn outside_strict_mode_a_bad_line_after_the_first_record_is_skipped_and_kept_with_its_reason() {
        let mut log = "{\"a\":1}\nnot json\n[1]\n".to_owned();
        log.push_str(&"{\"a\":1}\n".repeat(DETECT_RECORDS + 5));
        log.push_str("{\"b\": }\n{\"c\":3}\n");
        let mut records = Records::open(log.as_bytes(), false).unwrap();
        let lines: Vec<usize> = records.by_ref().map(|r| r.unwrap().line).collect();
        assert_eq!(lines.len(), DETECT_RECORDS + 7);
        assert_eq!(lines[..2], [1, 4]);
        let bad: Vec<(usize, &str, String)> =
            records.take_bad_lines().into_iter().map(|b| (b.line, b.reason, b.detail)).collect();
        assert_eq!(
            bad,
            [
                (2, "line that is not JSON", "expected ident at column 2".to_owned()),
                (
                    3,
                    "line that is JSON but not an object",
                    "expected a JSON object, found an array".to_owned()
                ),
                (
                    DETECT_RECORDS + 9,
                    "line that is not JSON",
                    "expected value at column 7".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn outside_strict_mode_a_first_line_that_is_not_a_record_is_still_an_error() {
        let err = Records::open(b"not json\n{\"a\":1}\n", false).unwrap_err();
        assert!(matches!(err, Error::NotJson { line: 1, .. }), "{err}");
        let err = Records::open(b"\x00\x01\x02binary", false).unwrap_err();
        assert!(matches!(err, Error::NotJson { line: 1, .. }), "{err}");
    }

    #[test]
    fn the_fast_reader_sees_lines_after_the_read_ahead_and_passes_others_on_with_their_numbers() {
        let mut log = "{\"a\":1}\n".repeat(DETECT_RECORDS);
        log.push_str("{\"fast\":1}\n\nnot json\n{\"b\":2}\n{\"fast\":2}\n");
        let mut records = Records::open(log.as_bytes(), false).unwrap();
        let mut read = |line: &str| line.starts_with("{\"fast\"").then_some(line.len());
        let mut seen = Vec::new();
        while let Some(next) = records.next_fast(&mut read) {
            seen.push(match next.unwrap() {
                Fast::Read { line, item } => (line, Some(item)),
                Fast::Record(record) => (record.line, None),
            });
        }
        let ahead: Vec<(usize, Option<usize>)> = (1..=DETECT_RECORDS).map(|n| (n, None)).collect();
        assert_eq!(seen[..DETECT_RECORDS], ahead);
        let n = DETECT_RECORDS;
        assert_eq!(seen[n..], [(n + 1, Some(10)), (n + 4, None), (n + 5, Some(10))]);
        assert_eq!(records.n_records(), n + 3);
        let bad: Vec<usize> = records.take_bad_lines().iter().map(|bad| bad.line).collect();
        assert_eq!(bad, [n + 3]);
    }

    #[test]
    fn blank_lines_are_skipped_and_numbers_kept() {
        assert_eq!(read_all(b"{\"a\":1}\n\n  \n{\"b\":2}\n").unwrap(), (vec![1, 4], None));
    }

    #[test]
    fn a_cut_final_line_is_tolerated_after_good_records() {
        assert_eq!(read_all(b"{\"a\":1}\n{\"b\":").unwrap(), (vec![1], Some(2)));
    }

    #[test]
    fn a_bad_middle_line_names_its_number_even_past_the_read_ahead() {
        let err = read_all(b"{\"a\":1}\nnot json\n{\"b\":2}\n").unwrap_err();
        assert!(err.to_string().starts_with("line 2 is not JSON"), "{err}");
        let mut log = "{\"a\":1}\n".repeat(DETECT_RECORDS + 5);
        log.push_str("nope\n");
        let err = read_all(log.as_bytes()).unwrap_err();
        assert!(matches!(err, Error::NotJson { line, .. } if line == DETECT_RECORDS + 6), "{err}");
    }

    #[test]
    fn a_bad_line_names_the_column_inside_the_line_not_serde_json_s_line_1() {
        let err = read_all(b"{\"a\":1}\n{\"b\": }\n").unwrap_err();
        assert_eq!(err.to_string(), "line 2 is not JSON: expected value at column 7");
        // The reason is in the message (with the column inside the line), so it is not also
        // the source: an error reporter shows it once.
        assert!(std::error::Error::source(&err).is_none());
    }

    #[test]
    fn a_bad_only_line_is_an_error_not_a_truncation() {
        let err = read_all(b"\x00\x01\x02binary").unwrap_err();
        assert!(err.to_string().starts_with("line 1 is not JSON"), "{err}");
    }

    #[test]
    fn a_bad_final_line_with_a_line_end_is_an_error() {
        let err = read_all(b"{\"a\":1}\n{\"b\":\n").unwrap_err();
        assert!(err.to_string().starts_with("line 2 is not JSON"), "{err}");
    }

    #[test]
    fn empty_input_and_non_objects_are_errors() {
        assert!(matches!(read_all(b""), Err(Error::Empty)));
        assert!(matches!(read_all(b"\n \n"), Err(Error::Empty)));
        assert!(matches!(read_all(b"\xEF\xBB\xBF"), Err(Error::Empty)));
        let err = Records::open(b"[1,2]\n", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1 is not a log record: expected a JSON object, found an array"
        );
    }
}
