//! Request normalisation for matching: what changes from run to run (dates, ids, the working
//! directory, secrets) is masked, so a replay matches a recording made elsewhere and earlier.

use std::sync::OnceLock;

use atif_normalize::support::RunDirs;
use atif_secrets::Scanner;
use regex::{Captures, Regex};
use serde_json::{Map, Value};

use crate::{Error, Result};

/// Values masked by default wherever they appear in a string, as one alternation so a large
/// request is scanned once. Each alternative is a named group; its name is the placeholder.
/// UUIDs and hex ids need no word boundary in front, so that prefixed ids (`msg_<uuid>`,
/// `fc_<hex>`) are masked too: `_` is a word character. `epoch` is a Unix time in
/// milliseconds (13 digits, 2001 to 2286), such as Codex's `turn_started_at_unix_ms`.
const BUILT_IN_MASKS: &str = concat!(
    // ASCII classes and word boundaries keep the pattern inside the regex engine's fast DFA.
    "(?-u)",
    r"(?P<uuid>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)",
    r"|(?P<datetime>\b[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?\b)",
    r"|(?P<date>\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* [0-9]{1,2}(?:,? [0-9]{4})?\b)",
    r"|(?P<time>\b[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?\b)",
    r"|(?P<hex>[0-9a-fA-F]{16,}\b)",
    r"|(?P<epoch>\b1[0-9]{12}\b)",
);

/// Keys whose string values identify a run, a session or a user rather than what was asked:
/// masked whole at the top of a request and inside its `metadata`.
const ID_KEYS: &[&str] = &[
    "user",
    "user_id",
    "session_id",
    "request_id",
    "conversation_id",
    "prompt_cache_key",
    "safety_identifier",
];

/// What a request is normalised with: secret patterns, the run's directories, user masks.
#[derive(Debug, Clone)]
pub(crate) struct Normalizer {
    /// The run's directories, placed and filled by atif-normalize's rule, the one that
    /// normalising a trajectory follows.
    dirs: RunDirs,
    user_masks: Vec<Regex>,
    /// Built once: a scanner compiles its patterns, and each compiled pattern keeps the lazy
    /// DFA states it has built, so a request is scanned by warm automata.
    scanner: Scanner,
}

impl Normalizer {
    /// A normaliser for a run in `cwd` with home `home`, with the user's extra `masks`.
    pub(crate) fn new(
        cwd: Option<String>,
        home: Option<String>,
        masks: &[String],
    ) -> Result<Normalizer> {
        let user_masks = masks
            .iter()
            .map(|pattern| {
                Regex::new(pattern)
                    .map_err(|source| Error::Mask { pattern: pattern.clone(), source })
            })
            .collect::<Result<_>>()?;
        let dirs = RunDirs::new(cwd.as_deref(), home.as_deref());
        Ok(Normalizer { dirs, user_masks, scanner: Scanner::new() })
    }

    /// Replaces the run's working and home directories with `<cwd>` and `<home>` in every
    /// string of `value`, and a folder named after the working directory (Claude Code's project
    /// folder) with `<cwd-slug>`, as normalising a trajectory does (`atif_normalize`'s rule).
    pub(crate) fn insert_placeholders(&self, value: &mut Value) {
        if self.dirs.is_empty() {
            return;
        }
        map_strings(value, &mut |text| self.dirs.place(text));
    }

    /// `text` (a line of JSON) with the directories replaced by their placeholders, as
    /// [`Normalizer::insert_placeholders`] does in each of its strings.
    pub(crate) fn place_dirs_in(&self, text: &str) -> String {
        self.dirs.place(text).unwrap_or_else(|| text.to_owned())
    }

    /// Writes this run's directories where a recorded reply says `<cwd>`, `<cwd-slug>` or
    /// `<home>`; whether anything changed.
    pub(crate) fn fill_placeholders(&self, value: &mut Value) -> bool {
        let mut changed = false;
        map_strings(value, &mut |text| {
            let filled = self.fill_placeholders_str(text);
            changed |= filled.is_some();
            filled
        });
        changed
    }

    /// `text` with `<cwd>`, `<cwd-slug>` and `<home>` replaced by this run's directories, if it
    /// holds any.
    pub(crate) fn fill_placeholders_str(&self, text: &str) -> Option<String> {
        self.dirs.fill(text)
    }

    /// The form of a request that matching compares: secrets redacted, directories replaced,
    /// run, session and user ids, dates, times, UUIDs, long hex ids and user masks masked.
    /// `path_and_query` contributes its query, which a Gemini stream (`alt=sse`) needs.
    pub(crate) fn normalize(&self, path_and_query: &str, request: &Value) -> Value {
        let mut body = request.clone();
        // The same redaction a script gets when it is saved (atif-replay uses this scanner's
        // defaults), so a request holding a key matches its redacted recording.
        self.scanner.redact_value(&mut body);
        mask_id_keys(&mut body);
        if let Some(metadata) = body.get_mut("metadata") {
            mask_id_keys(metadata);
        }
        // Directories, then the masks, in one pass over the strings.
        map_strings(&mut body, &mut |text| {
            let placed = self.dirs.place(text);
            let current = placed.as_deref().unwrap_or(text);
            self.mask_str(current).or(placed)
        });
        let query = path_and_query.split_once('?').map(|(_, query)| query.to_owned());
        let mut normalized = Map::new();
        if let Some(query) = query {
            normalized.insert("query".to_owned(), Value::String(query));
        }
        normalized.insert("body".to_owned(), body);
        Value::Object(normalized)
    }

    fn mask_str(&self, text: &str) -> Option<String> {
        let mut out: Option<String> = None;
        let built_in = built_in_masks();
        if built_in.is_match(text) {
            let replaced = built_in.replace_all(text, |caps: &Captures<'_>| {
                let name = ["uuid", "datetime", "date", "time", "hex", "epoch"]
                    .into_iter()
                    .find(|name| caps.name(name).is_some())
                    .unwrap_or("masked");
                format!("<{name}>")
            });
            out = Some(replaced.into_owned());
        }
        for mask in &self.user_masks {
            let current = out.as_deref().unwrap_or(text);
            if mask.is_match(current) {
                out = Some(mask.replace_all(current, "<masked>").into_owned());
            }
        }
        out
    }
}

fn built_in_masks() -> &'static Regex {
    static MASKS: OnceLock<Regex> = OnceLock::new();
    MASKS.get_or_init(|| {
        #[allow(clippy::expect_used, reason = "a constant pattern, compiled by every test")]
        Regex::new(BUILT_IN_MASKS).expect("the built-in masks are a valid regex")
    })
}

fn mask_id_keys(value: &mut Value) {
    if let Value::Object(map) = value {
        for (key, item) in map.iter_mut() {
            if ID_KEYS.contains(&key.as_str()) && item.is_string() {
                *item = Value::String("<id>".to_owned());
            }
        }
    }
}

/// Calls `f` on every string value (not object keys) and replaces the string when it returns
/// a new one.
fn map_strings(value: &mut Value, f: &mut impl FnMut(&str) -> Option<String>) {
    match value {
        Value::String(text) => {
            if let Some(replaced) = f(text) {
                *text = replaced;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| map_strings(item, f)),
        Value::Object(map) => map.values_mut().for_each(|item| map_strings(item, f)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `value` as pretty JSON with object keys sorted and the newlines inside strings shown as
/// line breaks, for a readable line diff.
pub(crate) fn render_for_diff(value: &Value) -> String {
    let text = serde_json::to_string_pretty(&sorted(value)).unwrap_or_default();
    text.replace("\\n", "\\n\n")
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries.into_iter().map(|(key, item)| (key.clone(), sorted(item))).collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        scalar => scalar.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn normalizer() -> Normalizer {
        Normalizer::new(
            Some("/home/ann/project".to_owned()),
            Some("/home/ann".to_owned()),
            &["build-[0-9]+".to_owned()],
        )
        .unwrap()
    }

    #[test]
    fn what_changes_between_runs_is_masked() {
        let request = json!({
            "model": "m",
            "user": "user-42",
            "metadata": {"user_id": "user_abc_account__session_x"},
            "messages": [{"role": "user", "content":
                "Today is 2026-12-01T22:53:52Z (Tue Dec 1 2026, 22:53:52). Run \
                 0f8fad5b-d9cb-469f-a165-70867728950e in /home/ann/project/src, see /home/ann/.rc, \
                 commit 3f2a9c0d1e4b5a6978695a4b3c2d1e0f, build-1234; keep /home/ann/projects"}],
        });
        let normalized = normalizer().normalize("/v1/messages?beta=true", &request);
        assert_eq!(
            normalized,
            json!({
                "query": "beta=true",
                "body": {
                    "model": "m",
                    "user": "<id>",
                    "metadata": {"user_id": "<id>"},
                    "messages": [{"role": "user", "content":
                        "Today is <datetime> (<date>, <time>). Run <uuid> in <cwd>/src, see \
                         <home>/.rc, commit <hex>, <masked>; keep <home>/projects"}],
                }
            })
        );
    }

    #[test]
    fn secrets_are_redacted_before_comparing() {
        let a = json!({"messages": [{"content": "key sk-ant-api03-AAAAAAAAAAAAAAAAAAAA"}]});
        let b = json!({"messages": [{"content": "key sk-ant-api03-BBBBBBBBBBBBBBBBBBBB"}]});
        let normalizer = normalizer();
        assert_eq!(
            normalizer.normalize("/v1/messages", &a),
            normalizer.normalize("/v1/messages", &b)
        );
    }

    #[test]
    fn placeholders_go_back_to_this_runs_directories() {
        let recorded = Normalizer::new(Some("/tmp/rec".into()), Some("/root".into()), &[]).unwrap();
        let mut reply = json!({"args": {"path": "/tmp/rec/file.txt", "other": "/tmp/record"}});
        recorded.insert_placeholders(&mut reply);
        assert_eq!(reply, json!({"args": {"path": "<cwd>/file.txt", "other": "/tmp/record"}}));
        let replay = Normalizer::new(Some("/srv/ci".into()), None, &[]).unwrap();
        replay.fill_placeholders(&mut reply);
        assert_eq!(reply, json!({"args": {"path": "/srv/ci/file.txt", "other": "/tmp/record"}}));
    }

    #[test]
    fn prefixed_ids_epoch_milliseconds_and_the_cwd_slug_are_masked() {
        let request = json!({"input": [
            {"id": "msg_01a23405-ca0b-7c23-a2fb-9410fafb8614", "call": "fc_3f2a9c0d1e4b5a6978695a4b"},
            {"metadata": "{\"turn_started_at_unix_ms\":1796167027807,\"tokens\":1234}"},
            {"text": "memory at /home/ann/.claude/projects/-home-ann-project/memory/"},
        ]});
        let normalized = normalizer().normalize("/v1/responses", &request);
        assert_eq!(
            normalized["body"],
            json!({"input": [
                {"id": "msg_<uuid>", "call": "fc_<hex>"},
                {"metadata": "{\"turn_started_at_unix_ms\":<epoch>,\"tokens\":1234}"},
                {"text": "memory at <home>/.claude/projects/<cwd-slug>/memory/"},
            ]})
        );
        let mut reply = json!("see <cwd-slug>");
        Normalizer::new(Some("/srv/ci".into()), None, &[]).unwrap().fill_placeholders(&mut reply);
        assert_eq!(reply, json!("see -srv-ci"));
    }

    #[test]
    fn an_invalid_mask_is_named() {
        let err = Normalizer::new(None, None, &["(".to_owned()]).unwrap_err();
        assert_eq!(err.to_string(), "invalid mask `(`");
    }
}
