//! The replay tape: the script's exchanges, which of them were used, and the matching rule
//! (first unused exchange of the same endpoint with an equal normalised request).

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use atif_replay::HttpExchange;
use serde_json::Value;
use similar::TextDiff;

use crate::normalize::{Normalizer, render_for_diff};
use crate::protocol::model_of;
use crate::{DriftPolicy, UnusedExchange};

/// How many lines of a drift diff are shown.
const DIFF_LINES: usize = 60;
/// How many characters of one diff line are shown.
const LINE_CHARS: usize = 240;

#[derive(Debug)]
struct Entry {
    exchange: HttpExchange,
    normalized: Value,
    /// A hash of `normalized`, so a request is compared in full only with its likely equals.
    hash: u64,
    used: bool,
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
    /// A tape over `exchanges`, their requests normalised with `normalizer`.
    pub(crate) fn new(exchanges: Vec<HttpExchange>, normalizer: &Normalizer) -> Tape {
        let entries = exchanges
            .into_iter()
            .map(|exchange| {
                let normalized = normalizer.normalize(&exchange.path, &exchange.request);
                let hash = hash_of(&normalized);
                Entry { exchange, normalized, hash, used: false }
            })
            .collect();
        Tape { entries, requests: HashMap::new() }
    }

    /// The exchange at `index`.
    pub(crate) fn exchange(&self, index: usize) -> &HttpExchange {
        &self.entries[index].exchange
    }

    /// How many exchanges the script holds.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Finds the reply for a request to `method path` whose normalised form is `normalized`,
    /// and marks it used.
    pub(crate) fn answer(
        &mut self,
        method: &str,
        path: &str,
        normalized: &Value,
        drift: DriftPolicy,
    ) -> Answer {
        let endpoint = format!("{method} {path}");
        let number = {
            let count = self.requests.entry(endpoint.clone()).or_insert(0);
            *count += 1;
            *count
        };
        let same_endpoint =
            |entry: &Entry| entry.exchange.method == method && entry.exchange.endpoint() == path;
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
        let message = format!(
            "request #{number} to {path} matches no unused recorded exchange; against the next \
             unused one of that endpoint (exchange #{}), the normalised request changed \
             (- recorded, + now):\n{diff}",
            nearest + 1
        );
        match drift {
            DriftPolicy::Strict => Answer::Fail(message),
            DriftPolicy::Warn => {
                self.entries[nearest].used = true;
                Answer::Serve { index: nearest, drift: Some(message) }
            }
        }
    }

    /// The exchanges never served, in script order.
    pub(crate) fn unused(&self) -> Vec<UnusedExchange> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| !entry.used)
            .map(|(idx, entry)| UnusedExchange {
                number: idx + 1,
                method: entry.exchange.method.clone(),
                path: entry.exchange.path.clone(),
                model: model_of(&entry.exchange.path, &entry.exchange.request),
            })
            .collect()
    }

    /// The models the script's requests asked for, in first-use order, without repeats.
    pub(crate) fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = Vec::new();
        for entry in &self.entries {
            if let Some(model) = model_of(&entry.exchange.path, &entry.exchange.request) {
                if !models.contains(&model) {
                    models.push(model);
                }
            }
        }
        models
    }
}

/// A hash of a JSON value that equal values share, whatever order their objects keep keys in.
fn hash_of(value: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    hash_into(value, &mut hasher);
    hasher.finish()
}

fn hash_into(value: &Value, hasher: &mut DefaultHasher) {
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
