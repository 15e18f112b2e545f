//! The script file: a versioned JSON record of a model's replies, read and written without a
//! runtime (the CLI uses these functions directly).

use std::path::Path;

use atif_schema::{Expected, LoadOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::secrets::Redactor;
use crate::{Chunk, Error, HttpExchange, LlmRequest, LlmResponse, McpMessage, Result};

/// The value of a script's `format` field.
pub const SCRIPT_FORMAT: &str = "atif-replay-script";

/// The newest script format version, which this crate reads with every older one.
///
/// Version 2 added [`Script::exchanges`] and [`Script::recording`]; a version 1 script reads
/// as a version 2 script without them. Version 3 added the comment lines and `retry:` field of
/// a streamed reply's blocks ([`SseEvent::comments`](crate::SseEvent::comments),
/// [`SseEvent::retry`](crate::SseEvent::retry)). [`write_script`] writes the oldest version that
/// holds the script (3 only when a reply kept such lines), so an older build of atif refuses
/// a script it cannot read with [`Error::UnsupportedVersion`] instead of an unknown field, and
/// reads every other one. Version 4 added the MCP messages ([`Script::mcp`]), written only by
/// a script that holds some.
pub const SCRIPT_VERSION: u32 = 4;

/// The oldest script format version this crate reads.
pub const OLDEST_SCRIPT_VERSION: u32 = 1;

/// A recorded conversation with a model: what it replied to each call, in call order.
///
/// This is the on-disk format, documented in `docs/replay.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Always [`SCRIPT_FORMAT`].
    pub format: String,
    /// [`SCRIPT_VERSION`]: scripts this crate writes carry it, and an older script read is
    /// upgraded to it in memory.
    pub version: u32,
    /// The model the replies came from (the recorded client's [`model`](crate::LlmClient::model)).
    #[serde(default)]
    pub model: Option<String>,
    /// One entry per model call through an [`LlmClient`](crate::LlmClient), in the order the
    /// calls were made (`[]` in a script of HTTP exchanges).
    pub calls: Vec<RecordedCall>,
    /// What an HTTP recording replaced and masked (`atif record`), if this is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<Recording>,
    /// The HTTP exchanges recorded by `atif record`, in the order their replies completed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exchanges: Vec<HttpExchange>,
    /// The MCP messages recorded by `atif mcp` between the agent and its MCP servers, in the
    /// order the relays saw them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<McpMessage>,
}

impl Script {
    /// An empty script for `model`.
    pub fn new(model: Option<String>) -> Self {
        Script {
            format: SCRIPT_FORMAT.to_owned(),
            version: SCRIPT_VERSION,
            model,
            calls: Vec::new(),
            recording: None,
            exchanges: Vec::new(),
            mcp: Vec::new(),
        }
    }
}

/// What a recording replaced and masked, so a replay can do the same.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    /// The recording's working directory, as scripts written before atif stopped saving it
    /// held it: an absolute path (a user name, often) has no place in a committed file.
    /// [`write_script`](crate::write_script) never writes it; the exchanges say `<cwd>` where
    /// the directory was, and a replay writes its own working directory there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The recording's home directory, as older scripts held it; never written, as `cwd`
    /// (the exchanges say `<home>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// The user's `--mask` patterns: regexes whose matches are ignored when requests are
    /// compared (a replay adds its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub masks: Vec<String>,
}

/// One recorded model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedCall {
    /// Hex SHA-256 of the request's canonical form (see [`request_fingerprint`]). Absent in
    /// an entry written by hand, without a live model: that call then replays without a
    /// drift check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sha256: Option<String>,
    /// The full request, when the recording kept it (so drift can be explained).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<LlmRequest>,
    /// The reply (assembled from its chunks when it was streamed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<LlmResponse>,
    /// The chunks, in order, when the reply was streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<Vec<Chunk>>,
    /// The error text, when the call failed while recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Hex SHA-256 of `request`'s canonical form: compact JSON with object keys sorted, after the
/// default secret patterns (and `secret_patterns`) are redacted, so a replay with a different
/// key in a prompt still matches.
///
/// # Errors
///
/// [`Error::Pattern`] when a pattern is not a valid regex.
pub fn request_fingerprint(request: &LlmRequest, secret_patterns: &[String]) -> Result<String> {
    let redactor = Redactor::new(secret_patterns)?;
    Ok(fingerprint_with(request, &redactor))
}

pub(crate) fn fingerprint_with(request: &LlmRequest, redactor: &Redactor) -> String {
    let mut value = canonical_request(request);
    redactor.redact_value(&mut value);
    let mut text = String::new();
    write_sorted(&value, &mut text);
    hex(&Sha256::digest(text.as_bytes()))
}

/// Compact JSON with object keys sorted, whatever order the map keeps (serde_json's
/// `preserve_order` feature may be switched on by any crate in a build).
fn write_sorted(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (idx, (key, item)) in entries.into_iter().enumerate() {
                if idx > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_sorted(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (idx, item) in items.iter().enumerate() {
                if idx > 0 {
                    out.push(',');
                }
                write_sorted(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The request as a JSON value.
pub(crate) fn canonical_request(request: &LlmRequest) -> Value {
    // Serialising plain data with string keys cannot fail.
    serde_json::to_value(request).unwrap_or(Value::Null)
}

/// Reads and checks a script file through atif-schema's bounded reader, with its default limit
/// ([`atif_schema::DEFAULT_MAX_INPUT_BYTES`]): a larger file is refused before a byte is read, a
/// stream (a FIFO, `/dev/zero`) is stopped at the limit, and binary data fails at its first byte
/// that JSON text never holds.
///
/// # Errors
///
/// [`Error::Io`] when the file cannot be read, [`Error::Load`] when it is over the limit or
/// binary, [`Error::Parse`] (with line, column and JSON Pointer) when it is not JSON or not a
/// script, [`Error::Invalid`] (with a JSON Pointer) when `format` or `version` is not a
/// script's or a call is incomplete, [`Error::UnsupportedVersion`] for another format version.
pub fn read_script(path: &Path) -> Result<Script> {
    read_script_with(path, &LoadOptions::new())
}

/// [`read_script`] under `options`' limit (the record/replay server's own).
///
/// # Errors
///
/// As for [`read_script`].
pub fn read_script_with(path: &Path, options: &LoadOptions) -> Result<Script> {
    let mut options = *options;
    options.set_expected(Expected::object("a replay script"));
    let bytes = atif_schema::read_path(path, &options).map_err(|err| match err {
        atif_schema::Error::Read { source, .. } => {
            Error::Io { action: "read", path: path.to_owned(), source }
        }
        source => Error::Load { path: path.to_owned(), source: Box::new(source) },
    })?;
    parse_script(&bytes, path)
}

/// Parses script text; `path` is only used in error messages.
///
/// # Errors
///
/// As for [`read_script`], without [`Error::Io`].
pub fn parse_script(bytes: &[u8], path: &Path) -> Result<Script> {
    // Some editors start UTF-8 files with a byte-order mark; it carries nothing.
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|err| {
        let (line, column) = line_column(bytes, err.valid_up_to());
        Error::Parse {
            path: path.to_owned(),
            line,
            column,
            pointer: pointer_at(&bytes[..err.valid_up_to()]),
            message: "the file is not UTF-8 text".to_owned(),
        }
    })?;
    let value: Value = serde_json::from_str(text).map_err(|err| parse_error(path, text, &err))?;
    // Check what kind of file this is before the field-by-field reading, so a wrong version
    // says so instead of reporting the first field that changed.
    let Value::Object(root) = &value else {
        return Err(invalid(path, "", "expected a script object, found another JSON value"));
    };
    check_format_and_version(root, path)?;
    // The tree has said what it had to: free it before the script is built, so a large script
    // is never held twice.
    drop(value);
    let mut script: Script =
        serde_json::from_str(text).map_err(|err| parse_error(path, text, &err))?;
    for (idx, call) in script.calls.iter().enumerate() {
        check_call(call, idx, path)?;
    }
    for (idx, exchange) in script.exchanges.iter().enumerate() {
        check_exchange(exchange, idx, path)?;
    }
    for (idx, message) in script.mcp.iter().enumerate() {
        check_mcp_message(message, idx, path)?;
    }
    if let Some(recording) = &script.recording {
        for (idx, mask) in recording.masks.iter().enumerate() {
            if let Err(err) = regex::Regex::new(mask) {
                let message = format!("expected a regular expression: {err}");
                return Err(invalid(path, &format!("/recording/masks/{idx}"), &message));
            }
        }
    }
    // Every older version is a subset of this one.
    script.version = SCRIPT_VERSION;
    Ok(script)
}

/// Checks that `root` is a script's (`format`) of a version this build reads (`version`).
fn check_format_and_version(root: &Map<String, Value>, path: &Path) -> Result<()> {
    match root.get("format") {
        Some(Value::String(format)) if format == SCRIPT_FORMAT => {}
        Some(other) => {
            return Err(invalid(
                path,
                "/format",
                &format!("expected \"{SCRIPT_FORMAT}\", found {other}"),
            ));
        }
        None => {
            return Err(invalid(
                path,
                "",
                &format!(
                    "missing field `format`: expected \"{SCRIPT_FORMAT}\"; is this a replay script?"
                ),
            ));
        }
    }
    match root.get("version") {
        Some(Value::Number(n))
            if n.as_u64().is_some_and(|version| {
                (u64::from(OLDEST_SCRIPT_VERSION)..=u64::from(SCRIPT_VERSION)).contains(&version)
            }) => {}
        Some(Value::Number(other)) => {
            return Err(Error::UnsupportedVersion {
                path: path.to_owned(),
                found: other.to_string(),
                supported: SCRIPT_VERSION,
            });
        }
        Some(other) => {
            return Err(invalid(
                path,
                "/version",
                &format!(
                    "expected the format version as a number ({SCRIPT_VERSION}), found {other}"
                ),
            ));
        }
        None => return Err(invalid(path, "", "missing field `version`")),
    }
    Ok(())
}

fn check_exchange(exchange: &HttpExchange, idx: usize, path: &Path) -> Result<()> {
    let at = |field: &str| format!("/exchanges/{idx}{field}");
    if !exchange.path.starts_with('/') {
        let message = format!("expected a path starting with `/`, found \"{}\"", exchange.path);
        return Err(invalid(path, &at("/path"), &message));
    }
    if exchange.method.is_empty() || !exchange.method.bytes().all(|b| b.is_ascii_uppercase()) {
        let message = format!("expected an upper-case HTTP method, found \"{}\"", exchange.method);
        return Err(invalid(path, &at("/method"), &message));
    }
    if !(100..=599).contains(&exchange.status) {
        let message = format!("expected an HTTP status from 100 to 599, found {}", exchange.status);
        return Err(invalid(path, &at("/status"), &message));
    }
    let replies = [exchange.body.is_some(), exchange.text.is_some(), exchange.events.is_some()];
    if replies.into_iter().filter(|present| *present).count() > 1 {
        return Err(invalid(path, &at(""), "expected at most one of `body`, `text` or `events`"));
    }
    Ok(())
}

fn check_mcp_message(message: &McpMessage, idx: usize, path: &Path) -> Result<()> {
    if message.server.is_empty() {
        return Err(invalid(path, &format!("/mcp/{idx}/server"), "expected a server name"));
    }
    Ok(())
}

fn check_call(call: &RecordedCall, idx: usize, path: &Path) -> Result<()> {
    if let Some(sha) = &call.request_sha256 {
        let is_hex = sha.len() == 64
            && sha.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        if !is_hex {
            return Err(invalid(
                path,
                &format!("/calls/{idx}/request_sha256"),
                &format!("expected 64 lower-case hex digits, found \"{sha}\""),
            ));
        }
    }
    if call.response.is_none() && call.chunks.is_none() && call.error.is_none() {
        return Err(invalid(
            path,
            &format!("/calls/{idx}"),
            "expected one of `response`, `chunks` or `error`",
        ));
    }
    Ok(())
}

/// Redacts every secret in `script` (the default credential shapes and `secret_patterns`), and
/// drops the recording's absolute directories ([`Recording::cwd`], [`Recording::home`]).
///
/// # Errors
///
/// [`Error::Pattern`] when a pattern is not a valid regex.
pub fn redact_script(script: &Script, secret_patterns: &[String]) -> Result<Script> {
    let redactor = Redactor::new(secret_patterns)?;
    redact_with(script, &redactor, Path::new("<memory>"))
}

/// Redacts every secret in a JSON value in place (the default credential shapes and
/// `secret_patterns`), as [`write_script`] does before saving.
///
/// # Errors
///
/// [`Error::Pattern`] when a pattern is not a valid regex.
pub fn redact_json(value: &mut Value, secret_patterns: &[String]) -> Result<()> {
    Redactor::new(secret_patterns)?.redact_value(value);
    Ok(())
}

fn redact_with(script: &Script, redactor: &Redactor, path: &Path) -> Result<Script> {
    let mut value = serde_json::to_value(script)
        .map_err(|source| Error::Serialize { what: "script", source })?;
    redactor.redact_value(&mut value);
    let mut redacted = read_back(value, path)?;
    // The recorder's directories are placeholders in the exchanges; their absolute paths (a
    // user name, often) never go into a file meant to be committed.
    if let Some(recording) = &mut redacted.recording {
        recording.cwd = None;
        recording.home = None;
    }
    // The format tag and the fingerprints are ours, never secrets: a user pattern that happens
    // to match hex digits must not turn a script into one that cannot be read.
    redacted.format.clone_from(&script.format);
    for (call, original) in redacted.calls.iter_mut().zip(&script.calls) {
        call.request_sha256.clone_from(&original.request_sha256);
    }
    Ok(redacted)
}

/// A redacted script's tree read back as a script, which moves the strings rather than
/// copying them; the error names the pattern's likely fault, for the script at `path`.
fn read_back(value: Value, path: &Path) -> Result<Script> {
    serde_json::from_value(value).map_err(|err| {
        let message = format!(
            "redaction produced a value that is not a script ({err}): a secret pattern matched a \
             word of the format itself, such as a role; make the pattern more specific"
        );
        invalid(path, "", &message)
    })
}

/// Writes `script` to `path` atomically, after redacting secrets (the default credential shapes
/// and `secret_patterns`) and dropping the recording's absolute directories
/// ([`Recording::cwd`], [`Recording::home`]).
///
/// The text is written to a temporary file in the same folder and renamed over `path`, so a
/// reader sees the old file or the new one, never half of one.
///
/// # Errors
///
/// [`Error::SecretSurvived`] (and nothing written) when a pattern still matches a key or
/// string after redaction (the format tag and the fingerprints aside), [`Error::Pattern`] for
/// an invalid pattern, [`Error::Io`] when writing fails.
pub fn write_script(path: &Path, script: &Script, secret_patterns: &[String]) -> Result<()> {
    write_script_owned(path, script.clone(), secret_patterns)
}

/// [`write_script`] for a script the caller no longer needs: it is redacted as it is turned
/// into text, and the text goes straight into the file, so a large recording is held about
/// once while it is written: the exchanges' JSON bodies, the bulk of a recording, are moved
/// into the tree that is redacted and back, never copied, and the text is never whole in
/// memory.
///
/// # Errors
///
/// As for [`write_script`].
pub fn write_script_owned(path: &Path, script: Script, secret_patterns: &[String]) -> Result<()> {
    let redactor = Redactor::new(secret_patterns)?;
    let mut script = script;
    // The recorder's directories are placeholders in the exchanges; their absolute paths (a
    // user name, often) never go into a file meant to be committed.
    if let Some(recording) = &mut script.recording {
        recording.cwd = None;
        recording.home = None;
    }
    // The format tag and the fingerprints are ours, never secrets: they are set aside while
    // the rest is redacted and searched, so a user pattern that happens to match hex digits
    // cannot turn a script into one that cannot be read.
    let format = std::mem::take(&mut script.format);
    let fingerprints: Vec<Option<String>> =
        script.calls.iter_mut().map(|call| call.request_sha256.take()).collect();
    let bodies: Vec<(Value, Option<Value>)> = script
        .exchanges
        .iter_mut()
        .map(|exchange| (std::mem::take(&mut exchange.request), exchange.body.take()))
        .collect();
    let mut value = serde_json::to_value(&script)
        .map_err(|source| Error::Serialize { what: "script", source })?;
    drop(script);
    put_back_bodies(&mut value, bodies);
    redactor.redact_value(&mut value);
    if let Some((pattern, pointer)) = redactor.first_match_in(&value) {
        return Err(Error::SecretSurvived { path: path.to_owned(), pattern, pointer });
    }
    if let Some(root) = value.as_object_mut() {
        root.insert("format".to_owned(), Value::String(format));
        let calls = root.get_mut("calls").and_then(Value::as_array_mut);
        for (call, fingerprint) in calls.into_iter().flatten().zip(fingerprints) {
            if let (Some(call), Some(fingerprint)) = (call.as_object_mut(), fingerprint) {
                call.insert("request_sha256".to_owned(), Value::String(fingerprint));
            }
        }
    }
    let mut redacted = read_back(value, path)?;
    redacted.version = needed_version(&redacted);
    // Through `atif-fs`, the one place atif replaces files: atomically, through a symbolic
    // link to its target, keeping the permissions of the file it replaces.
    atif_fs::write_atomic_with(path, |out| {
        serde_json::to_writer_pretty(&mut *out, &redacted)?;
        out.write_all(b"\n")
    })
    .map(drop)
    .map_err(io_error)
}

/// Puts the exchanges' request and reply bodies that [`write_script_owned`] set aside back
/// into the script's tree, by moving them.
fn put_back_bodies(value: &mut Value, bodies: Vec<(Value, Option<Value>)>) {
    let exchanges = value.get_mut("exchanges").and_then(Value::as_array_mut);
    for (exchange, (request, body)) in exchanges.into_iter().flatten().zip(bodies) {
        if let Some(exchange) = exchange.as_object_mut() {
            exchange.insert("request".to_owned(), request);
            if let Some(body) = body {
                exchange.insert("body".to_owned(), body);
            }
        }
    }
}
/// The oldest format version that holds `script`: 4 with MCP messages, 3 when a streamed reply
/// kept comment lines or a `retry:` field, else 2.
fn needed_version(script: &Script) -> u32 {
    if !script.mcp.is_empty() {
        return 4;
    }
    let events = script.exchanges.iter().filter_map(|exchange| exchange.events.as_ref());
    let uses_v3 = events.flatten().any(|event| !event.comments.is_empty() || event.retry.is_some());
    if uses_v3 { 3 } else { 2 }
}

/// Reads the script at `path`, redacts it with the default patterns and `secret_patterns`, and
/// writes it back atomically. Returns whether anything changed (an unchanged file is not
/// rewritten).
///
/// # Errors
///
/// As for [`read_script`] and [`write_script`].
pub fn redact_file(path: &Path, secret_patterns: &[String]) -> Result<bool> {
    let script = read_script(path)?;
    let redactor = Redactor::new(secret_patterns)?;
    let redacted = redact_with(&script, &redactor, path)?;
    if redacted == script {
        return Ok(false);
    }
    write_script(path, &redacted, secret_patterns)?;
    Ok(true)
}

/// A failure of `atif-fs`, the one place atif replaces files, as this crate's error.
fn io_error(err: atif_fs::Error) -> Error {
    Error::Io { action: err.action, path: err.path, source: err.source }
}

fn parse_error(path: &Path, text: &str, err: &serde_json::Error) -> Error {
    let message = err.to_string();
    // serde_json appends " at line L column C"; the position is reported in its own fields.
    let message = match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_owned(),
        None => message,
    };
    let message = if err.is_eof() { format!("{message} (the file is truncated)") } else { message };
    let read = &text.as_bytes()[..byte_offset(text, err.line(), err.column())];
    Error::Parse {
        path: path.to_owned(),
        line: err.line(),
        column: err.column(),
        pointer: pointer_at(read),
        message,
    }
}

/// The byte offset just after 1-based `line` and byte `column`, as serde_json counts them.
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start = match line {
        0 | 1 => 0,
        _ => text.match_indices('\n').nth(line - 2).map_or(text.len(), |(idx, _)| idx + 1),
    };
    (line_start + column).min(text.len())
}

/// The JSON Pointer of the value the JSON text `read` stops inside: the key or index of every
/// object and array still open at its end. The text is JSON up to that point, or serde_json
/// would have stopped earlier, so a tolerant scan of brackets, commas, colons and strings is
/// enough.
fn pointer_at(read: &[u8]) -> String {
    enum Frame {
        Object { key: Option<String> },
        Array { index: usize, has_value: bool },
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut pos = 0;
    while pos < read.len() {
        let byte = read[pos];
        pos += 1;
        if let Some(Frame::Array { has_value, .. }) = stack.last_mut() {
            if !byte.is_ascii_whitespace() && byte != b']' && byte != b',' {
                *has_value = true;
            }
        }
        match byte {
            b'{' => stack.push(Frame::Object { key: None }),
            b'[' => stack.push(Frame::Array { index: 0, has_value: false }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { key }) => *key = None,
                Some(Frame::Array { index, has_value }) => {
                    *index += 1;
                    *has_value = false;
                }
                None => {}
            },
            b'"' => {
                let start = pos;
                while pos < read.len() && read[pos] != b'"' {
                    pos += if read[pos] == b'\\' { 2 } else { 1 };
                }
                let end = pos.min(read.len());
                pos = end + 1;
                if let Some(Frame::Object { key: key @ None }) = stack.last_mut() {
                    let raw = String::from_utf8_lossy(&read[start..end]);
                    // A key is JSON string text; decode its escapes when it is complete.
                    let decoded = serde_json::from_str::<String>(&format!("\"{raw}\""));
                    *key = Some(decoded.unwrap_or_else(|_| raw.into_owned()));
                }
            }
            _ => {}
        }
    }
    let mut pointer = String::new();
    for frame in &stack {
        match frame {
            Frame::Object { key: Some(key) } => {
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Frame::Array { index, has_value: true } => {
                pointer.push('/');
                pointer.push_str(&index.to_string());
            }
            Frame::Object { key: None } | Frame::Array { has_value: false, .. } => {}
        }
    }
    pointer
}

fn invalid(path: &Path, pointer: &str, message: &str) -> Error {
    Error::Invalid {
        path: path.to_owned(),
        pointer: pointer.to_owned(),
        message: message.to_owned(),
    }
}

fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
    (line, column)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn canonical_text_sorts_keys_at_every_depth() {
        let mut out = String::new();
        write_sorted(&json!({"b": [{"z": 1, "a": "x"}], "a": null}), &mut out);
        assert_eq!(out, r#"{"a":null,"b":[{"a":"x","z":1}]}"#);
    }

    #[test]
    fn the_pointer_of_a_position_follows_open_objects_and_arrays_only() {
        let check = |read: &str, expected: &str| assert_eq!(pointer_at(read.as_bytes()), expected);
        check("", "");
        check(r#"{"a": 1, "b""#, "/b");
        check(r#"{"a": [1, 2, {"c": "]}x", "d": ["#, "/a/2/d");
        check(r#"{"a\"}[": [1, {"b/c~": "x"#, "/a\"}[/1/b~1c~0");
        check(r#"{"a": {"done": true}, "b": [], "c": [ "#, "/c");
        check(r#"{"calls": [{"x": 1}]}"#, "");
    }

    #[test]
    fn the_fingerprint_of_a_request_is_stable() {
        // A change to this value changes every recorded script's fingerprints: it needs a new
        // script format version.
        let request = LlmRequest::new(vec![crate::Message::user("hi")]);
        let mut text = String::new();
        write_sorted(&canonical_request(&request), &mut text);
        assert_eq!(text, r#"{"messages":[{"content":"hi","role":"user"}]}"#);
        assert_eq!(
            request_fingerprint(&request, &[]).unwrap(),
            hex(&Sha256::digest(text.as_bytes()))
        );
    }
}
