//! `ReplayClient`: serves a script's replies offline and fails loudly when the agent asks for
//! more, fewer or different calls than were recorded.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::Value;

use crate::record::lock;
use crate::script::{RecordedCall, Script, canonical_request, fingerprint_with, read_script};
use crate::secrets::Redactor;
use crate::{ChunkStream, Error, LlmClient, LlmError, LlmRequest, LlmResponse, Result, Role};

/// What a replay does when a request differs from the one recorded: by [`ReplayClient`] in
/// process, and by the record/replay server (`atif-proxy`, `atif replay --drift`) for a request
/// that matches no recorded exchange while unused ones of its endpoint remain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum DriftPolicy {
    /// Serve the reply without comparing requests.
    Off,
    /// Serve the reply, keep the drift in [`ReplayClient::drifts`] and print it to standard
    /// error.
    Warn,
    /// Fail the call with [`Error::RequestDrift`]. The default.
    #[default]
    Strict,
}

/// How a [`ReplayClient`] replays. A plain value with documented defaults.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplayOptions {
    drift: DriftPolicy,
    secret_patterns: Vec<String>,
    record_command: Option<String>,
}

impl ReplayOptions {
    /// What to do when a request drifted from the recording. Default: [`DriftPolicy::Strict`].
    pub fn drift(&self) -> DriftPolicy {
        self.drift
    }

    /// Sets [`drift`](ReplayOptions::drift).
    pub fn set_drift(&mut self, policy: DriftPolicy) {
        self.drift = policy;
    }

    /// Secret patterns redacted before fingerprinting a request: give the same ones the
    /// recording was made with. Default: none (the default credential shapes always apply).
    pub fn secret_patterns(&self) -> &[String] {
        &self.secret_patterns
    }

    /// Adds a secret pattern.
    pub fn add_secret_pattern(&mut self, pattern: impl Into<String>) {
        self.secret_patterns.push(pattern.into());
    }

    /// The command that re-records the script, which every regression error of the replay ends
    /// with (`to re-record the script: ...`). Default: none; a
    /// [`ScriptClient`](crate::ScriptClient) sets `ATIF_RECORD=1 cargo test -p CRATE TEST`.
    pub fn record_command(&self) -> Option<&str> {
        self.record_command.as_deref()
    }

    /// Sets [`record_command`](ReplayOptions::record_command).
    pub fn set_record_command(&mut self, command: Option<String>) {
        self.record_command = command;
    }
}

/// A request that differed from its recording (kept in [`DriftPolicy::Warn`] mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// 1-based number of the call that drifted.
    pub call: usize,
    /// 1-based number of the recorded reply served for it.
    pub reply: usize,
    /// What changed, one line per difference (or a sentence when only fingerprints were stored).
    pub changes: String,
}

/// Serves the replies of a recorded [`Script`] in place of a real model.
///
/// Replies are served in recorded order. When calls are made concurrently (subagents) and
/// arrive in another order, a request whose fingerprint matches a later unused recording gets
/// that recording's reply, so completion order does not matter; otherwise the next unused reply
/// is compared with the request according to [`DriftPolicy`].
///
/// [`model`](LlmClient::model) reports the recorded model, so a replayed trajectory carries the
/// same `model_name` as the recorded one.
#[derive(Debug)]
pub struct ReplayClient {
    path: PathBuf,
    script: Script,
    options: ReplayOptions,
    redactor: Redactor,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    used: Vec<bool>,
    requests: usize,
    drifts: Vec<Drift>,
    /// The first call that failed with a request drift, if any.
    stopped_at: Option<usize>,
    /// How many calls the agent had made when its run failed, if [`capture`](crate::capture)
    /// said it did.
    failed_after: Option<usize>,
}

impl ReplayClient {
    /// Replays the script at `path` with the default options (strict request checking).
    ///
    /// # Errors
    ///
    /// As for [`read_script`](crate::read_script).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        ReplayClient::from_file_with(path, ReplayOptions::default())
    }

    /// Replays the script at `path` with `options`.
    ///
    /// # Errors
    ///
    /// As for [`read_script`](crate::read_script), and [`Error::Pattern`] for an invalid
    /// secret pattern.
    pub fn from_file_with(path: impl AsRef<Path>, options: ReplayOptions) -> Result<Self> {
        let path = path.as_ref();
        let script = read_script(path)?;
        ReplayClient::new(script, path.to_owned(), options)
    }

    /// Replays a script held in memory.
    ///
    /// # Errors
    ///
    /// [`Error::Pattern`] for an invalid secret pattern.
    pub fn from_script(script: Script, options: ReplayOptions) -> Result<Self> {
        ReplayClient::new(script, PathBuf::from("<memory>"), options)
    }

    /// Replays `script`, naming it `path` in messages.
    pub(crate) fn with_path(script: Script, path: PathBuf, options: ReplayOptions) -> Result<Self> {
        ReplayClient::new(script, path, options)
    }

    fn new(script: Script, path: PathBuf, options: ReplayOptions) -> Result<Self> {
        let redactor = Redactor::new(&options.secret_patterns)?;
        let state = State {
            used: vec![false; script.calls.len()],
            requests: 0,
            drifts: Vec::new(),
            stopped_at: None,
            failed_after: None,
        };
        Ok(ReplayClient { path, script, options, redactor, state: Mutex::new(state) })
    }

    /// The script being replayed.
    pub fn script(&self) -> &Script {
        &self.script
    }

    /// How many model calls the agent made so far.
    pub fn calls(&self) -> usize {
        lock(&self.state).requests
    }

    /// The drifts seen so far in [`DriftPolicy::Warn`] mode.
    pub fn drifts(&self) -> Vec<Drift> {
        lock(&self.state).drifts.clone()
    }

    /// Checks that every recorded reply was requested.
    ///
    /// # Errors
    ///
    /// [`Error::UnusedReplies`] naming how many replies were never requested: the agent made
    /// fewer calls than when the script was recorded. When the replay already failed with a
    /// request drift, or [`capture`](crate::capture) reported that the agent's run failed, the
    /// message blames that failure rather than fewer model calls.
    pub fn finish(&self) -> Result<()> {
        let state = lock(&self.state);
        let unused = state.used.iter().filter(|used| !**used).count();
        match state.used.iter().position(|used| !*used) {
            None => Ok(()),
            Some(first) => Err(Error::UnusedReplies {
                path: self.path.clone(),
                unused,
                recorded: state.used.len(),
                first_unused: first + 1,
                stopped_at: state.stopped_at,
                agent_failed_after: state.failed_after,
                record_command: self.options.record_command.clone(),
            }),
        }
    }

    /// Picks the recorded call for `request`, enforcing the exhaustion and drift rules.
    fn select(&self, request: &LlmRequest) -> Result<(usize, &RecordedCall)> {
        let fingerprint = fingerprint_with(request, &self.redactor);
        let mut state = lock(&self.state);
        state.requests += 1;
        let call = state.requests;
        let recorded = self.script.calls.len();
        let Some(next_unused) = state.used.iter().position(|used| !*used) else {
            return Err(Error::ScriptExhausted {
                requested: call,
                recorded,
                request_summary: summarize_request(request),
                record_command: self.options.record_command.clone(),
            });
        };
        let matching = (next_unused..recorded).find(|idx| {
            !state.used[*idx]
                && self.script.calls[*idx].request_sha256.as_deref() == Some(&fingerprint)
        });
        let idx = match matching {
            Some(idx) => idx,
            // An entry written by hand has no fingerprint: it answers whatever comes next.
            None if self.script.calls[next_unused].request_sha256.is_none() => next_unused,
            None => {
                let recorded_call = &self.script.calls[next_unused];
                state.used[next_unused] = true;
                match self.options.drift {
                    DriftPolicy::Off => {}
                    DriftPolicy::Warn => {
                        let drift = Drift {
                            call,
                            reply: next_unused + 1,
                            changes: self.explain_drift(recorded_call, next_unused + 1, request),
                        };
                        warn(&self.path, &drift);
                        state.drifts.push(drift);
                    }
                    DriftPolicy::Strict => {
                        state.stopped_at.get_or_insert(call);
                        return Err(Error::RequestDrift {
                            call,
                            reply: next_unused + 1,
                            expected: recorded_call.request_sha256.clone().unwrap_or_default(),
                            actual: fingerprint,
                            changes: self.explain_drift(recorded_call, next_unused + 1, request),
                            record_command: self.options.record_command.clone(),
                        });
                    }
                }
                next_unused
            }
        };
        state.used[idx] = true;
        Ok((idx, &self.script.calls[idx]))
    }

    fn explain_drift(&self, recorded: &RecordedCall, reply: usize, request: &LlmRequest) -> String {
        let Some(recorded_request) = &recorded.request else {
            return "the script holds only request fingerprints; record with full requests \
                    (RecordOptions::set_store_requests(true)) to see what changed"
                .to_owned();
        };
        // A stored request that no longer hashes to its fingerprint was edited after
        // recording (or is replayed with other secret patterns): its diff would mislead.
        let tampered = recorded.request_sha256.as_deref()
            != Some(&fingerprint_with(recorded_request, &self.redactor));
        let mut text = String::new();
        if tampered {
            let _ = writeln!(
                text,
                "the stored request of reply #{reply} does not hash to its request_sha256: the \
                 script was edited by hand, or is replayed with other secret patterns than it was \
                 recorded with; re-record it"
            );
        }
        let mut old = canonical_request(recorded_request);
        let mut new = canonical_request(request);
        self.redactor.redact_value(&mut old);
        self.redactor.redact_value(&mut new);
        let mut changes = Vec::new();
        diff_values("", &old, &new, &mut changes);
        if changes.is_empty() {
            text.push_str("the stored request and this one are the same");
            return text;
        }
        let total = changes.len();
        text.push_str("what changed (recorded -> now):");
        for change in changes.iter().take(MAX_CHANGES) {
            let _ = write!(text, "\n  {change}");
        }
        if total > MAX_CHANGES {
            let _ = write!(text, "\n  … and {} more", total - MAX_CHANGES);
        }
        text
    }
}

impl ReplayClient {
    fn recorded_failure(&self, idx: usize, message: &str) -> Error {
        Error::RecordedFailure {
            call: idx + 1,
            message: message.to_owned(),
            record_command: self.options.record_command.clone(),
        }
    }
}

const MAX_CHANGES: usize = 12;

#[async_trait]
impl LlmClient for ReplayClient {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError> {
        let (idx, call) = self.select(&request)?;
        if let Some(message) = &call.error {
            return Err(self.recorded_failure(idx, message));
        }
        Ok(match (&call.response, &call.chunks) {
            (Some(response), _) => response.clone(),
            (None, Some(chunks)) => LlmResponse::from_chunks(chunks),
            (None, None) => LlmResponse::default(),
        })
    }

    fn model(&self) -> Option<&str> {
        self.script.model.as_deref()
    }

    fn run_failed(&self, _error: &LlmError) {
        let mut state = lock(&self.state);
        state.failed_after = Some(state.requests);
    }

    async fn complete_stream(&self, request: LlmRequest) -> Result<ChunkStream, LlmError> {
        let (idx, call) = self.select(&request)?;
        if let Some(message) = &call.error {
            return Err(self.recorded_failure(idx, message));
        }
        let chunks = match (&call.chunks, &call.response) {
            (Some(chunks), _) => chunks.clone(),
            (None, Some(response)) => response.to_chunks(),
            (None, None) => Vec::new(),
        };
        Ok(ChunkStream::from_chunks(chunks))
    }
}

#[allow(clippy::print_stderr, reason = "warn mode reports drift where the test output shows it")]
fn warn(path: &Path, drift: &Drift) {
    eprintln!(
        "warning: {}: request drift at call #{} (served recorded reply #{}):\n{}",
        path.display(),
        drift.call,
        drift.reply,
        drift.changes
    );
}

/// What a request carried, for the exhaustion message: its last message and the tool results
/// it sends back.
pub(crate) fn summarize_request(request: &LlmRequest) -> String {
    let mut text = String::from("The extra request carried");
    match request.last_message() {
        Some(message) => {
            let _ = write!(
                text,
                " as its last message ({}): {}",
                message.role,
                quote(&message.content)
            );
        }
        None => text.push_str(" no messages"),
    }
    let last_assistant =
        request.messages.iter().rposition(|message| message.role == Role::Assistant);
    let results: Vec<String> = request.messages[last_assistant.map_or(0, |idx| idx + 1)..]
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| {
            format!(
                "{} = {}",
                message.tool_call_id.as_deref().unwrap_or("?"),
                quote(&message.content)
            )
        })
        .collect();
    if !results.is_empty() {
        let _ = write!(text, "; tool results: {}", results.join(", "));
    }
    text
}

fn quote(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// Appends one line per difference between `old` and `new`, each naming its JSON Pointer.
fn diff_values(pointer: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(old_map), Value::Object(new_map)) => {
            for (key, old_item) in old_map {
                let child = format!("{pointer}/{}", escape(key));
                match new_map.get(key) {
                    Some(new_item) => diff_values(&child, old_item, new_item, out),
                    None => out.push(format!("{child}: removed (was {})", short(old_item))),
                }
            }
            for (key, new_item) in new_map {
                if !old_map.contains_key(key) {
                    out.push(format!("{pointer}/{}: added {}", escape(key), short(new_item)));
                }
            }
        }
        (Value::Array(old_items), Value::Array(new_items)) => {
            for (idx, pair) in old_items.iter().zip(new_items).enumerate() {
                diff_values(&format!("{pointer}/{idx}"), pair.0, pair.1, out);
            }
            for (idx, item) in old_items.iter().enumerate().skip(new_items.len()) {
                out.push(format!("{pointer}/{idx}: removed (was {})", short(item)));
            }
            for (idx, item) in new_items.iter().enumerate().skip(old_items.len()) {
                out.push(format!("{pointer}/{idx}: added {}", short(item)));
            }
        }
        _ if old == new => {}
        (Value::String(old_text), Value::String(new_text)) => {
            let (old_text, new_text) = around_change(old_text, new_text);
            out.push(format!("{}: {old_text} -> {new_text}", display_pointer(pointer)));
        }
        _ => out.push(format!("{}: {} -> {}", display_pointer(pointer), short(old), short(new))),
    }
}

/// Two changed strings, quoted, each starting a little before the first difference, so a long
/// prompt that changed at its end shows the change rather than its unchanged start.
fn around_change(old: &str, new: &str) -> (String, String) {
    const CONTEXT: usize = 24;
    const MAX: usize = 160;
    let common = old.chars().zip(new.chars()).take_while(|(a, b)| a == b).count();
    let skip = common.saturating_sub(CONTEXT);
    let show = |text: &str| {
        let tail: String = text.chars().skip(skip).collect();
        let quoted = match tail.char_indices().nth(MAX) {
            Some((cut, _)) => format!("{:?}…", &tail[..cut]),
            None => format!("{tail:?}"),
        };
        // `quoted` starts with the opening quote; the ellipsis goes inside it.
        if skip > 0 { format!("\"…{}", &quoted[1..]) } else { quoted }
    };
    (show(old), show(new))
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "(root)" } else { pointer }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn short(value: &Value) -> String {
    const MAX: usize = 120;
    let text = value.to_string();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_long_changed_string_is_shown_from_just_before_the_change() {
        let old = format!("{} old ending", "x".repeat(100));
        let new = format!("{} new ending", "x".repeat(100));
        let (old, new) = around_change(&old, &new);
        assert_eq!(old, format!("\"…{} old ending\"", "x".repeat(23)));
        assert_eq!(new, format!("\"…{} new ending\"", "x".repeat(23)));
    }

    #[test]
    fn value_diff_names_each_changed_pointer() {
        let mut out = Vec::new();
        diff_values(
            "",
            &json!({"messages": [{"content": "a"}], "tools": 1}),
            &json!({"messages": [{"content": "b"}, {"content": "c"}], "model": "m"}),
            &mut out,
        );
        assert_eq!(
            out,
            vec![
                "/messages/0/content: \"a\" -> \"b\"",
                "/messages/1: added {\"content\":\"c\"}",
                "/tools: removed (was 1)",
                "/model: added \"m\"",
            ]
        );
    }
}
