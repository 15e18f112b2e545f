//! What an import learns while a format module reads records: where a record is ([`At`]), the
//! counters and warnings ([`Stats`]), the strict flag ([`Context`]), and the one description
//! of a record's shape ([`Member`]) that every format checks its records against.

use std::collections::BTreeMap;

use atif_schema::support::json_kind;
use serde_json::Value;

use crate::format::Format;
use crate::lines::{Layout, Records};
use crate::{Error, Result};

/// What an import met on its way: record counts, skipped records, warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    records: usize,
    ignored: BTreeMap<String, usize>,
    skipped: BTreeMap<String, usize>,
    malformed: BTreeMap<String, usize>,
    dropped: BTreeMap<String, usize>,
    warnings: Vec<String>,
    truncated_line: Option<usize>,
}

impl Stats {
    /// How many records (non-blank lines that parsed) the log holds.
    pub fn records(&self) -> usize {
        self.records
    }

    /// Records of known types that carry no conversation content (bookkeeping such as
    /// `file-history-snapshot`, or Codex UI events that duplicate response items), by type.
    pub fn ignored(&self) -> &BTreeMap<String, usize> {
        &self.ignored
    }

    /// Records of unknown types that were skipped, by type (`--strict` makes them errors).
    pub fn skipped(&self) -> &BTreeMap<String, usize> {
        &self.skipped
    }

    /// Records of known types left out of the trajectory, by the reason why (for example a pi
    /// entry on an abandoned branch of the session tree).
    pub fn dropped(&self) -> &BTreeMap<String, usize> {
        &self.dropped
    }

    /// Records (or content blocks) of known types that were skipped because they do not have
    /// the shape their format gives them, and lines of a JSON Lines log that are not JSON
    /// objects, by the reason why (`--strict` makes them errors). Each also has a warning
    /// naming its line, or its JSON Pointer in a log written as one JSON document.
    pub fn malformed(&self) -> &BTreeMap<String, usize> {
        &self.malformed
    }

    /// The total number of skipped records: unknown and malformed ones.
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum::<usize>() + self.malformed.values().sum::<usize>()
    }

    /// Problems that did not stop the import, each naming its line.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The line number of a final line cut short, when the log was truncated.
    pub fn truncated_line(&self) -> Option<usize> {
        self.truncated_line
    }

    /// Adds the counts of a sub-import (a subagent file) to these.
    pub(crate) fn absorb(&mut self, other: Stats, file: &str) {
        self.records += other.records;
        for (k, v) in other.ignored {
            *self.ignored.entry(k).or_insert(0) += v;
        }
        for (k, v) in other.skipped {
            *self.skipped.entry(k).or_insert(0) += v;
        }
        for (k, v) in other.dropped {
            *self.dropped.entry(k).or_insert(0) += v;
        }
        for (k, v) in other.malformed {
            *self.malformed.entry(k).or_insert(0) += v;
        }
        self.warnings.extend(other.warnings.into_iter().map(|w| format!("{file}: {w}")));
    }

    pub(crate) fn set_records(&mut self, records: usize) {
        self.records = records;
    }

    /// Records a problem that concerns a whole file rather than one line.
    pub(crate) fn warn_file(&mut self, message: String) {
        self.warnings.push(message);
    }
}

/// What a member of a record must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A JSON object.
    Object,
    /// A JSON array.
    List,
    /// A string.
    Str,
    /// Message content: a string, or a list of parts.
    Content,
    /// A number.
    Number,
}

impl Kind {
    fn matches(self, value: &Value) -> bool {
        match self {
            Kind::Object => value.is_object(),
            Kind::List => value.is_array(),
            Kind::Str => value.is_string(),
            Kind::Content => value.is_string() || value.is_array(),
            Kind::Number => value.is_number(),
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Kind::Object => "an object",
            Kind::List => "a list",
            Kind::Str => "a string",
            Kind::Content => "text or a list of parts",
            Kind::Number => "a number",
        }
    }
}

/// A member a record of a known type has (or may have), at a dotted path of keys
/// (`message.content`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Member {
    path: &'static str,
    kind: Kind,
    required: bool,
}

/// A member the record must have, holding `kind`.
pub(crate) const fn required(path: &'static str, kind: Kind) -> Member {
    Member { path, kind, required: true }
}

/// A member the record may leave out (or set to `null`), holding `kind` when it is there.
pub(crate) const fn optional(path: &'static str, kind: Kind) -> Member {
    Member { path, kind, required: false }
}

/// Why `value`, a `what` (`assistant record`, `tool part`), does not have `members`, if it does
/// not: `assistant record whose `message` is a string, expected an object`, `tool part without
/// `callID``. A value that is not an object at all is named as such. Reading a record of the
/// wrong shape anyway would invent an empty step or drop what the record holds, so the caller
/// skips it (or fails in strict mode) with this reason.
pub(crate) fn shape_error(
    what: &dyn std::fmt::Display,
    value: &Value,
    members: &[Member],
) -> Option<String> {
    if !value.is_object() {
        return Some(format!("{what} that is {}, expected an object", json_kind(value)));
    }
    members.iter().find_map(|member| {
        let found = member.path.split('.').try_fold(value, |value, key| value.get(key));
        match found {
            None | Some(Value::Null) if !member.required => None,
            None => Some(format!("{what} without `{}`", member.path)),
            Some(found) if member.kind.matches(found) => None,
            Some(found) => Some(format!(
                "{what} whose `{}` is {}, expected {}",
                member.path,
                json_kind(found),
                member.kind.expected()
            )),
        }
    })
}

/// Where a record, or a value inside one, is in the log: its line (its number in a log
/// written as one JSON document), and the JSON Pointer of the value inside the record (empty
/// for the record itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct At {
    line: usize,
    pointer: String,
}

impl At {
    /// The value at `pointer` inside the record of `line`.
    pub(crate) fn inside(line: usize, pointer: String) -> At {
        At { line, pointer }
    }

    /// The value at `pointer` inside this one.
    pub(crate) fn child(&self, pointer: &str) -> At {
        At { line: self.line, pointer: format!("{}{pointer}", self.pointer) }
    }

    /// The line of the record.
    pub(crate) fn line(&self) -> usize {
        self.line
    }
}

impl From<usize> for At {
    fn from(line: usize) -> At {
        At { line, pointer: String::new() }
    }
}

/// How many skipped lines get a warning of their own; the rest are counted in one.
const MAX_BAD_LINE_WARNINGS: usize = 100;

/// What a format module needs while it reads records: the strict flag and the statistics.
#[derive(Debug)]
pub(crate) struct Context {
    format: Format,
    strict: bool,
    layout: Layout,
    pub(crate) stats: Stats,
}

impl Context {
    pub(crate) fn new(format: Format, strict: bool, layout: Layout) -> Context {
        Context { format, strict, layout, stats: Stats::default() }
    }

    /// Ends the import of `records`: counts the records and the lines skipped because they
    /// are not JSON objects, and warns about a final line cut short. Returns whether the log
    /// was cut short (the run is then marked crashed).
    pub(crate) fn close(&mut self, records: &mut Records<'_>) -> bool {
        self.stats.set_records(records.n_records());
        let bad_lines = records.take_bad_lines();
        for (idx, bad) in bad_lines.iter().enumerate() {
            *self.stats.malformed.entry(bad.reason.to_owned()).or_insert(0) += 1;
            if idx < MAX_BAD_LINE_WARNINGS {
                self.warn(bad.line, &format!("skipped: {}: {}", bad.reason, bad.detail));
            }
        }
        if let Some(more) = bad_lines.len().checked_sub(MAX_BAD_LINE_WARNINGS).filter(|n| *n > 0) {
            self.stats.warnings.push(format!("{more} more lines skipped as above"));
        }
        self.stats.truncated_line = records.truncated_line();
        if let Some(line) = records.truncated_line() {
            self.warn(
                line,
                "the last line is cut short (the run was killed mid-write); imported everything before it",
            );
        }
        records.truncated_line().is_some()
    }

    /// Counts a record of a known type that carries nothing to import.
    pub(crate) fn ignore(&mut self, record_type: &str) {
        match self.stats.ignored.get_mut(record_type) {
            Some(count) => *count += 1,
            None => {
                self.stats.ignored.insert(record_type.to_owned(), 1);
            }
        }
    }

    /// Counts a record of an unknown type, or fails in strict mode.
    pub(crate) fn unknown(&mut self, line: usize, record_type: &str) -> Result<()> {
        if self.strict {
            return Err(Error::UnknownRecord {
                line,
                format: self.format.name(),
                record_type: record_type.to_owned(),
            });
        }
        *self.stats.skipped.entry(record_type.to_owned()).or_insert(0) += 1;
        Ok(())
    }

    /// Counts `n` records left out of the trajectory for `reason`.
    pub(crate) fn skip(&mut self, reason: &str, n: usize) {
        *self.stats.dropped.entry(reason.to_owned()).or_insert(0) += n;
    }

    /// The name of the format being imported.
    pub(crate) fn format_name(&self) -> &'static str {
        self.format.name()
    }

    /// Whether `value` (the record at `at`, or a value inside it) has the members its format
    /// gives it (see [`shape_error`]). One without them is [`malformed`](Context::malformed):
    /// skipped and counted, or an error in strict mode.
    pub(crate) fn has_shape(
        &mut self,
        at: impl Into<At>,
        what: impl std::fmt::Display,
        value: &Value,
        members: &[Member],
    ) -> Result<bool> {
        match shape_error(&what, value, members) {
            None => Ok(true),
            Some(reason) => {
                self.malformed(at, &reason)?;
                Ok(false)
            }
        }
    }

    /// Skips a malformed record or block, counted with its reason and a warning naming where
    /// it is, or fails in strict mode. Nothing of it reaches the trajectory either way.
    pub(crate) fn malformed(&mut self, at: impl Into<At>, reason: &str) -> Result<()> {
        let (line, pointer) = self.locate(at.into());
        if self.strict {
            return Err(Error::MalformedRecord {
                line,
                pointer,
                format: self.format.name(),
                reason: reason.to_owned(),
            });
        }
        *self.stats.malformed.entry(reason.to_owned()).or_insert(0) += 1;
        let location = crate::error::location(line, pointer.as_deref());
        self.stats.warnings.push(format!("{location}: skipped: {reason}"));
        Ok(())
    }

    /// The line (JSON Lines) or the JSON Pointer (a log that is one JSON document) that names
    /// `at` in messages.
    fn locate(&self, at: At) -> (Option<usize>, Option<String>) {
        let pointer = Some(at.pointer).filter(|p| !p.is_empty());
        match self.layout {
            Layout::Lines => (Some(at.line), pointer),
            Layout::Array => {
                let index = at.line.saturating_sub(1);
                (None, Some(format!("/{index}{}", pointer.unwrap_or_default())))
            }
            Layout::Object => (None, pointer),
        }
    }

    /// Records a problem that does not stop the import.
    pub(crate) fn warn(&mut self, line: usize, message: &str) {
        self.stats.warnings.push(format!("line {line}: {message}"));
    }
}
