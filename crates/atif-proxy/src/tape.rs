//! The replay tape: the script's exchanges, which of them were used, and the matching rule
//! (first unused exchange of the same endpoint with an equal normalised request).
//!
//! Everything a reply needs is computed once, when the script is loaded: its bytes on the
//! wire (the events in their framing, or the compact JSON body) with this run's directories
//! filled in, and the normalised request with its hash. The script's JSON trees are dropped
//! then, so serving a request copies no reply and parses nothing but the request.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use atif_wire::{HttpExchange, parse_sse};
use axum::body::Bytes;
use serde_json::Value;
use similar::TextDiff;

use crate::normalize::{Normalizer, render_for_diff};
use crate::protocol::{Endpoint, model_of};
use crate::{DriftPolicy, UnusedExchange};

/// How many lines of a drift diff are shown.
const DIFF_LINES: usize = 60;
/// How many characters of one diff line are shown.
const LINE_CHARS: usize = 240;

#[derive(Debug)]
struct Entry {
    method: String,
    path: String,
    model: Option<String>,
    normalized: Value,
    /// A hash of `normalized`, so a request is compared in full only with its likely equals.
    hash: u64,
    /// `GET /v1/models` or a probe (`HEAD /api/hello`): not a model call, served as often as
    /// it is asked and never owed.
    listing: Option<Endpoint>,
    used: bool,
    reply: Reply,
}

/// A recorded reply, ready to send, and what it was in the script.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The recorded HTTP status.
    pub(crate) status: u16,
    /// The content type to send.
    pub(crate) content_type: String,
    /// The body's bytes as sent, this run's directories in place of `<cwd>` and `<home>`.
    pub(crate) body: Body,
    /// Why the recorded reply was cut midway, when it was: a replay cuts it at the same place.
    pub(crate) cut: Option<String>,
    /// The reply as the script holds it (placeholders kept), for the traffic log.
    recorded: Recorded,
}

/// The bytes of a reply body.
#[derive(Debug)]
pub(crate) enum Body {
    /// A stream: its events in their recorded framing, one after the other. They go out in
    /// one write: a replay reproduces the events, not the provider's pauses between them, and
    /// one write costs the agent's SDK one read instead of a hundred.
    Events(Bytes),
    /// A JSON or text body.
    Whole(Bytes),
    /// No body.
    Empty,
}

/// A reply as the script holds it, kept as text (a JSON tree of a 50-event stream costs ten
/// times its text in memory) and read back only for the traffic log.
#[derive(Debug)]
struct Recorded {
    headers: std::collections::BTreeMap<String, String>,
    /// The compact JSON body.
    json: Option<Bytes>,
    text: Option<String>,
    /// The events in their wire framing, one after the other, which [`parse_sse`] reads back
    /// as the same events.
    events: Option<Bytes>,
    crlf: bool,
}

/// The script's exchanges and what a replay has used of them.
#[derive(Debug)]
pub(crate) struct Tape {
    entries: Vec<Entry>,
    /// Requests seen so far per endpoint (method and path without query).
    requests: HashMap<String, usize>,
}

/// What to do with a request.
#[derive(Debug)]
pub(crate) enum Answer {
    /// Serve this exchange; with a drift report when `--drift warn` served a non-matching one.
    Serve { index: usize, drift: Option<String> },
    /// Fail the request with this message.
    Fail(String),
}

impl Tape {
    /// A tape over `exchanges`, their requests normalised and their replies written out with
    /// `normalizer` (this run's directories).
    pub(crate) fn new(exchanges: Vec<HttpExchange>, normalizer: &Normalizer) -> Tape {
        let entries = exchanges
            .into_iter()
            .map(|exchange| {
                let normalized = normalizer.normalize(&exchange.path, &exchange.request);
                let hash = hash_of(&normalized);
                let model = model_of(&exchange.path, &exchange.request);
                let listing = Endpoint::of(&exchange.method, exchange.endpoint())
                    .filter(|endpoint| endpoint.is_repeatable());
                let method = exchange.method.clone();
                let path = exchange.path.clone();
                let reply = Reply::new(exchange, normalizer);
                Entry { method, path, model, normalized, hash, listing, used: false, reply }
            })
            .collect();
        Tape { entries, requests: HashMap::new() }
    }

    /// The reply of the exchange at `index`.
    pub(crate) fn reply(&self, index: usize) -> &Reply {
        &self.entries[index].reply
    }

    /// The exchange at `index` as the agent made it: `path` and `request` are what it sent
    /// (placeholders already in), the reply is the recorded one.
    pub(crate) fn exchange(&self, index: usize, path: String, request: Value) -> HttpExchange {
        let entry = &self.entries[index];
        let recorded = &entry.reply.recorded;
        let mut exchange = HttpExchange::new(&entry.method, path, request, entry.reply.status);
        exchange.headers = recorded.headers.clone();
        exchange.body = recorded.json.as_ref().and_then(|json| serde_json::from_slice(json).ok());
        exchange.text = recorded.text.clone();
        exchange.events = recorded.events.as_ref().map(|events| parse_sse(events));
        exchange.crlf = recorded.crlf;
        exchange.cut = entry.reply.cut.clone();
        exchange
    }

    /// How many exchanges the script holds.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The recorded reply of `endpoint` (a model listing or a probe) for `path_and_query`, if
    /// the script holds one: the one with the same query, else the first. It is served as
    /// often as asked.
    pub(crate) fn listing(&self, endpoint: Endpoint, path_and_query: &str) -> Option<usize> {
        let listings =
            || self.entries.iter().enumerate().filter(|(_, entry)| entry.listing == Some(endpoint));
        listings()
            .find(|(_, entry)| entry.path == path_and_query)
            .or_else(|| listings().next())
            .map(|(index, _)| index)
    }

    /// Finds the reply for a request to `method path` whose normalised form is `normalized`,
    /// and marks it used. A drift message gets, after its first line, what `explain` says of
    /// the recorded normalised form against this one.
    pub(crate) fn answer(
        &mut self,
        method: &str,
        path: &str,
        normalized: &Value,
        drift: DriftPolicy,
        explain: &dyn Fn(&Value) -> Option<String>,
    ) -> Answer {
        let number = {
            let count = self.requests.entry(format!("{method} {path}")).or_insert(0);
            *count += 1;
            *count
        };
        let same_endpoint = |entry: &Entry| {
            entry.method == method
                && entry.path.split_once('?').map_or(entry.path.as_str(), |(path, _)| path) == path
        };
        let hash = hash_of(normalized);
        if let Some(index) = self.entries.iter().position(|entry| {
            !entry.used
                && entry.hash == hash
                && same_endpoint(entry)
                && entry.normalized == *normalized
        }) {
            self.entries[index].used = true;
            return Answer::Serve { index, drift: None };
        }
        let Some(nearest) =
            self.entries.iter().position(|entry| !entry.used && same_endpoint(entry))
        else {
            let recorded = self.entries.iter().filter(|entry| same_endpoint(entry)).count();
            return Answer::Fail(format!(
                "the agent made request #{number} to {path}, but the script recorded {recorded}. \
                 The agent is making more model calls than when it was recorded: that is the \
                 regression; re-record if intended"
            ));
        };
        let diff = diff(&self.entries[nearest].normalized, normalized, nearest + 1, number);
        let explained = explain(&self.entries[nearest].normalized)
            .map(|lines| format!("{lines}\n"))
            .unwrap_or_default();
        let message = format!(
            "request #{number} to {path} matches no unused recorded exchange; against the next \
             unused one of that endpoint (exchange #{}), the normalised request changed \
             (- recorded, + now):\n{explained}{diff}",
            nearest + 1
        );
        match drift {
            DriftPolicy::Off => {
                self.entries[nearest].used = true;
                Answer::Serve { index: nearest, drift: None }
            }
            DriftPolicy::Warn => {
                self.entries[nearest].used = true;
                Answer::Serve { index: nearest, drift: Some(message) }
            }
            // Strict, and any policy this server does not know yet.
            _ => Answer::Fail(message),
        }
    }

    /// The exchanges never served, in script order; model listings are never owed.
    pub(crate) fn unused(&self) -> Vec<UnusedExchange> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| !entry.used && entry.listing.is_none())
            .map(|(idx, entry)| UnusedExchange {
                number: idx + 1,
                method: entry.method.clone(),
                path: entry.path.clone(),
                model: entry.model.clone(),
            })
            .collect()
    }

    /// The models the script's requests asked for, in first-use order, without repeats.
    pub(crate) fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = Vec::new();
        for model in self.entries.iter().filter_map(|entry| entry.model.as_ref()) {
            if !models.contains(model) {
                models.push(model.clone());
            }
        }
        models
    }
}

impl Reply {
    /// The reply of `exchange` ready to send, with this run's directories filled in.
    fn new(exchange: HttpExchange, normalizer: &Normalizer) -> Reply {
        let default_type = match (&exchange.events, &exchange.body) {
            (Some(_), _) => "text/event-stream",
            (None, Some(_)) => "application/json",
            (None, None) => "text/plain; charset=utf-8",
        };
        let content_type = exchange.content_type().unwrap_or(default_type).to_owned();
        let line_end = if exchange.crlf { "\r\n" } else { "\n" };
        let HttpExchange { status, headers, body, text, events, crlf, cut, .. } = exchange;
        let mut recorded = Recorded { headers, json: None, text: None, events: None, crlf };
        let body = if let Some(events) = events {
            let mut kept = String::new();
            let mut sent = String::new();
            let mut filled = false;
            for mut event in events {
                let wire = event.to_wire_with(line_end);
                if normalizer.fill_placeholders(&mut event.data) {
                    filled = true;
                    sent.push_str(&event.to_wire_with(line_end));
                } else {
                    sent.push_str(&wire);
                }
                kept.push_str(&wire);
            }
            let kept = Bytes::from(kept);
            // Most replies name no directory: then the bytes sent are the bytes kept.
            let sent = if filled { Bytes::from(sent) } else { kept.clone() };
            recorded.events = Some(kept);
            Body::Events(sent)
        } else if let Some(mut json) = body {
            let kept = Bytes::from(json.to_string());
            let sent = match normalizer.fill_placeholders(&mut json) {
                true => Bytes::from(json.to_string()),
                false => kept.clone(),
            };
            recorded.json = Some(kept);
            Body::Whole(sent)
        } else if let Some(text) = text {
            let sent = normalizer.fill_placeholders_str(&text).unwrap_or_else(|| text.clone());
            recorded.text = Some(text);
            Body::Whole(Bytes::from(sent))
        } else {
            Body::Empty
        };
        Reply { status, content_type, body, cut, recorded }
    }

    /// The recorded reply headers other than the content type, to send again.
    pub(crate) fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.recorded
            .headers
            .iter()
            .filter(|(name, _)| name.as_str() != "content-type")
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }
}

/// A hash of a JSON value that equal values share, whatever order their objects keep keys in.
fn hash_of(value: &Value) -> u64 {
    let mut hasher = WordHasher::default();
    hash_into(value, &mut hasher);
    hasher.finish()
}

fn hash_into(value: &Value, hasher: &mut WordHasher) {
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(flag) => (1u8, flag).hash(hasher),
        Value::Number(number) => (2u8, number.to_string()).hash(hasher),
        Value::String(text) => (3u8, text).hash(hasher),
        Value::Array(items) => {
            (4u8, items.len()).hash(hasher);
            items.iter().for_each(|item| hash_into(item, hasher));
        }
        Value::Object(map) => {
            (5u8, map.len()).hash(hasher);
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for key in keys {
                key.hash(hasher);
                hash_into(&map[key], hasher);
            }
        }
    }
}

/// A fast hash that reads eight bytes per step (the multiply-and-rotate of rustc's FxHash).
/// It only narrows down the exchanges a request is compared with in full, so it needs to be
/// quick, not collision-resistant: SipHash cost a tenth of a 200 KB request's instructions.
#[derive(Debug, Default)]
struct WordHasher(u64);

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        // The length keeps `ab` + `c` apart from `a` + `bc` in the last word.
        self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A short unified diff of two normalised requests.
fn diff(recorded: &Value, now: &Value, exchange: usize, request: usize) -> String {
    let old = render_for_diff(recorded);
    let new = render_for_diff(now);
    let text = TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(2)
        .header(&format!("exchange #{exchange} (recorded)"), &format!("request #{request} (now)"))
        .to_string();
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| match line.char_indices().nth(LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line.to_owned(),
        })
        .collect();
    if lines.len() > DIFF_LINES {
        let more = lines.len() - DIFF_LINES;
        lines.truncate(DIFF_LINES);
        lines.push(format!("… ({more} more lines)"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use atif_wire::SseEvent;
    use serde_json::json;

    use super::*;

    #[test]
    fn equal_requests_hash_alike_whatever_their_key_order_and_different_ones_apart() {
        let a = json!({"model": "m", "messages": [{"role": "user", "content": "abcdefghij"}]});
        let b: Value = serde_json::from_str(
            r#"{"messages": [{"content": "abcdefghij", "role": "user"}], "model": "m"}"#,
        )
        .unwrap();
        assert_eq!(hash_of(&a), hash_of(&b));
        for other in [
            json!({"model": "m", "messages": [{"role": "user", "content": "abcdefghik"}]}),
            json!({"model": "m", "messages": [{"role": "user", "content": "abcdefghij "}]}),
            json!({"model": "m", "messages": [{"role": "user", "content": ["abcdefghij"]}]}),
            json!({"model": "n", "messages": [{"role": "user", "content": "abcdefghij"}]}),
        ] {
            assert_ne!(hash_of(&a), hash_of(&other), "{other}");
        }
    }

    #[test]
    fn a_recorded_reply_reads_back_as_the_script_held_it() {
        let mut events = vec![
            SseEvent::new(Some("delta"), json!({"path": "<cwd>/a.txt", "n": 1.5})),
            SseEvent::from_text(None, "line 1\nline 2"),
            SseEvent::from_text(None, "[DONE]"),
        ];
        events[1].id = Some("7".to_owned());
        let mut exchange = HttpExchange::new("POST", "/v1/responses", json!({"input": "x"}), 200)
            .with_events(events);
        exchange.crlf = true;
        exchange.cut = Some("the upstream cut the reply off".to_owned());
        let normalizer = Normalizer::new(Some("/srv/ci".into()), None, &[]).unwrap();
        let tape = Tape::new(vec![exchange.clone()], &normalizer);
        let Body::Events(sent) = &tape.reply(0).body else { panic!("not a stream") };
        assert_eq!(
            sent,
            "event: delta\r\ndata: {\"n\":1.5,\"path\":\"/srv/ci/a.txt\"}\r\n\r\n\
             id: 7\r\ndata: line 1\r\ndata: line 2\r\n\r\ndata: [DONE]\r\n\r\n"
                .as_bytes()
        );
        let logged = tape.exchange(0, "/v1/responses".to_owned(), json!({"input": "x"}));
        assert_eq!(logged, exchange);
    }
}
