//! The error type of this crate.

use std::path::PathBuf;

/// Everything that can stop an import.
///
/// Problems that do not stop it (an unknown record type outside strict mode, a tool result
/// whose call is missing) are reported as warnings in [`Stats`](crate::Stats) instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input holds no record at all (empty, or only blank lines).
    #[error("the log is empty: expected one JSON object per line")]
    Empty,
    /// A line that is not JSON, and not a final line cut short by a killed writer.
    ///
    /// The message carries serde_json's reason with the column inside the line, and the
    /// parser's error is not also exposed as [`source`](std::error::Error::source): each line is
    /// parsed on its own, so serde_json's own text would say "line 1" for every line.
    #[error("line {line} is not JSON: {}", json_reason(error))]
    NotJson {
        /// 1-based line number.
        line: usize,
        /// What serde_json found (its line and column count from the start of this line).
        error: serde_json::Error,
    },
    /// A line that is JSON but not an object.
    #[error("line {line} is not a log record: expected a JSON object, found {found}")]
    NotAnObject {
        /// 1-based line number.
        line: usize,
        /// The kind of JSON value found (`array`, `string`, ...).
        found: &'static str,
    },
    /// `--format auto` found no record that any known format recognises.
    #[error(
        "unrecognised log: none of the first {scanned} records looks like a known format (known: {known})"
    )]
    Unrecognized {
        /// How many records were looked at.
        scanned: usize,
        /// The known format names, comma-separated.
        known: String,
    },
    /// A format was forced but none of the first 60 records belongs to it.
    #[error("no {format} records in the log{}", detected.map(|d| format!(" (it looks like {d})")).unwrap_or_default())]
    WrongFormat {
        /// The format asked for.
        format: &'static str,
        /// The format detection would have chosen, when any.
        detected: Option<&'static str>,
    },
    /// Strict mode met a record type the importer does not know.
    #[error("line {line}: unknown {format} record type `{record_type}` (strict mode)")]
    UnknownRecord {
        /// 1-based line number.
        line: usize,
        /// The format being imported.
        format: &'static str,
        /// The record's type, as `type` or `type/subtype`.
        record_type: String,
    },
    /// Strict mode met a record of a known type that does not have the shape its format
    /// gives it (an assistant `message` that is a string, user content that is a number, a
    /// missing required field), or a line of a JSON Lines log that is not a JSON object.
    #[error("{}: malformed {format} record: {reason} (strict mode)", location(*line, pointer.as_deref()))]
    MalformedRecord {
        /// 1-based line number of the record in a JSON Lines log; `None` in a log written as
        /// one JSON document, where [`pointer`](Error::MalformedRecord::pointer) says where.
        line: Option<usize>,
        /// The JSON Pointer of the malformed value: into the document for a log written as
        /// one JSON document, into the line's record for a record nested in a line.
        pointer: Option<String>,
        /// The format being imported.
        format: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A log written by a version of its format newer than this importer knows.
    #[error(
        "line {line}: {format} version {version} is newer than this importer knows (up to {known}); upgrade atif"
    )]
    TooNew {
        /// 1-based line number.
        line: usize,
        /// The format being imported.
        format: &'static str,
        /// The version the log names.
        version: String,
        /// The newest version known.
        known: String,
    },
    /// `--latest` found no session file.
    #[error("no latest {agent} session: {reason}")]
    NoLatest {
        /// The agent asked for.
        agent: String,
        /// Why, naming where it looked.
        reason: String,
    },
    /// An inline media part that cannot be written out.
    #[error("media at {pointer}: {reason}")]
    Media {
        /// The JSON Pointer of the part's path.
        pointer: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A log holding several runs, and no run picked.
    #[error(
        "the log holds {count} runs (output of several runs in one file): pick one with `--run N` (1 to {count}), or write each to its own file with `--split DIR`"
    )]
    SeveralRuns {
        /// How many runs the log holds.
        count: usize,
    },
    /// A run number beyond the runs the log holds.
    #[error("there is no run {run}: the log holds {count} run(s)")]
    NoSuchRun {
        /// The run asked for (from 1).
        run: usize,
        /// How many runs the log holds.
        count: usize,
    },
    /// A format name that is not one of the known ones.
    #[error("unknown log format `{name}` (known: {known})")]
    UnknownFormat {
        /// The name asked for.
        name: String,
        /// The known format names, comma-separated.
        known: String,
    },
    /// A file or folder could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A log file that atif-schema's bounded reader refused: larger than
    /// [`max_input_bytes`](crate::ImportOptions::max_input_bytes), or binary data (a byte
    /// that JSON text never holds, or a first byte that cannot start JSON).
    #[error("cannot load {}", path.display())]
    Load {
        /// The file.
        path: PathBuf,
        /// What the reader found: [`atif_schema::Error::TooLarge`] or
        /// [`atif_schema::Error::NotTrajectory`], naming the limit or the line and column.
        #[source]
        source: Box<atif_schema::Error>,
    },
    /// The log file given to [`import_path`](crate::import_path) could not be imported.
    #[error("{}", path.display())]
    Log {
        /// The log file.
        path: PathBuf,
        /// What went wrong in it.
        #[source]
        source: Box<Error>,
    },
    /// A subagent file of a Claude Code session could not be imported.
    #[error("subagent file {}", path.display())]
    Subagent {
        /// The subagent file.
        path: PathBuf,
        /// What went wrong in it.
        #[source]
        source: Box<Error>,
    },
    /// A gzip-compressed input that is broken, or inflates past the input limit.
    #[error("cannot decompress the gzip input")]
    Compressed {
        /// What the decompressor found, or the limit passed.
        #[source]
        source: std::io::Error,
    },
    /// Binary input that is not an OTLP protobuf export request (or protobuf without the
    /// `protobuf` feature).
    #[error("protobuf input: {reason}")]
    Protobuf {
        /// Where and why decoding failed.
        reason: String,
    },
    /// A folder given to [`import_path`](crate::import_path) holds no session file.
    #[error("{}: expected a log file, or a Claude Code project folder holding one session `.jsonl`, found {found}", path.display())]
    NoSession {
        /// The folder.
        path: PathBuf,
        /// What was found instead.
        found: String,
    },
}

/// What serde_json found, with the position inside the line (each line is parsed on its own,
/// so serde_json's own "line 1" would mislead).
fn json_reason(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(idx) if error.column() > 0 => {
            format!("{} at column {}", &text[..idx], error.column())
        }
        Some(idx) => text[..idx].to_owned(),
        None => text,
    }
}

/// Where a malformed record is: `line 3`, `line 3 at /$set/messages/1`, or `at /messages/2`
/// in a log written as one JSON document.
pub(crate) fn location(line: Option<usize>, pointer: Option<&str>) -> String {
    match (line, pointer) {
        (Some(line), None) => format!("line {line}"),
        (Some(line), Some(pointer)) => format!("line {line} at {pointer}"),
        (None, Some(pointer)) => format!("at {pointer}"),
        (None, None) => "the log".to_owned(),
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
