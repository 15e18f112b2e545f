//! [`Scanner`]: finds credentials in text and JSON and replaces each with `<redacted:KIND>`.

use std::fmt::Write as _;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use aho_corasick::{AhoCorasick, packed};
use regex::{Regex, RegexSet};
use serde_json::Value;

use crate::patterns::{
    ASSIGNMENT_PATTERN, DEFAULT_PATTERNS, HINT_PREFIXES, HINT_WORDS, SCHEME_PATTERN, STANDALONE,
    is_not_a_credential, is_secret_name, kind_for_name,
};
use crate::{Error, Redactions, Result};

/// What every marker starts with: `<redacted:`.
pub const MARKER_PREFIX: &str = "<redacted:";

/// The kind of secrets matched by patterns added with [`Scanner::add_user_pattern`].
pub const CUSTOM_KIND: &str = "custom";

/// The marker that replaces a secret of `kind`: `<redacted:openai-key>`.
///
/// Markers are stable, so a rerun of the same agent compares equal, and no default pattern
/// matches one, so redacting twice gives what redacting once gave.
pub fn marker(kind: &str) -> String {
    format!("{MARKER_PREFIX}{kind}>")
}

/// A set of secret patterns (the defaults, plus the user's) and the name rules.
///
/// A scanner redacts, in this order: each pattern's matches (the default credential shapes of
/// [`DEFAULT_PATTERNS`](crate::DEFAULT_PATTERNS), then user patterns), then the value after
/// any `NAME=` or `NAME: ` in text whose name says secret ([`is_secret_name`]), up to its end
/// (`api_key=abc123 next=word` keeps `next=word`). In JSON it also redacts the whole scalar
/// value of an object key whose name says secret, and secrets used as object keys. It searches
/// a `data:<media type>;base64,<payload>` string up to its payload only, when the payload is
/// nothing but base64 to the end of the string: an inline image is left whole.
///
/// Build it once and reuse it: construction compiles the regexes. Clones share the compiled
/// regexes and the search state they build up as they run (the default scanner is one shared
/// value), so a fresh `Scanner::default()` per import does not start cold.
#[derive(Debug, Clone)]
pub struct Scanner {
    patterns: Arc<[Pattern]>,
    /// The words every default pattern and secret name holds, and the user patterns: a
    /// string none of them matches is left alone without running the patterns one by one.
    any: Arc<Prefilter>,
}

/// The search every string goes through first: the hint literals with one SIMD literal
/// searcher (Teddy, through `aho-corasick`, without the regex engine's set machinery around
/// it), then any user pattern.
#[derive(Debug)]
struct Prefilter {
    hints: Hints,
    users: Option<RegexSet>,
}

/// The hint literals' searcher: the packed SIMD one where this CPU has it.
#[derive(Debug)]
enum Hints {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl Prefilter {
    fn is_match(&self, text: &str) -> bool {
        let hinted = match &self.hints {
            Hints::Packed(searcher) => searcher.find(text).is_some(),
            Hints::Automaton(automaton) => automaton.is_match(text),
        };
        hinted || self.users.as_ref().is_some_and(|users| users.is_match(text))
    }
}

#[derive(Debug, Clone)]
struct Pattern {
    kind: String,
    regex: Regex,
    /// The index of the `secret` group, when only it is replaced.
    secret_group: Option<usize>,
    /// Whether a match counts only with no key or base64 character right beside it.
    standalone: bool,
}

impl Default for Scanner {
    fn default() -> Scanner {
        Scanner::clone(defaults())
    }
}

impl PartialEq for Scanner {
    fn eq(&self, other: &Scanner) -> bool {
        self.patterns.len() == other.patterns.len()
            && self
                .patterns
                .iter()
                .zip(other.patterns.iter())
                .all(|(a, b)| a.kind == b.kind && a.regex.as_str() == b.regex.as_str())
    }
}

impl Eq for Scanner {}

impl Scanner {
    /// The default scanner: every credential shape of
    /// [`DEFAULT_PATTERNS`](crate::DEFAULT_PATTERNS) and the name rules.
    pub fn new() -> Scanner {
        Scanner::default()
    }

    /// Adds a pattern whose matches are redacted as `<redacted:KIND>`, after the default ones.
    /// A group named `secret` limits the redaction to that group.
    ///
    /// # Errors
    /// [`Error::InvalidKind`] when `kind` is not lower-case letters, digits and `-`;
    /// [`Error::InvalidPattern`] when `pattern` is not a regex; [`Error::EmptyMatch`] when it
    /// matches the empty string.
    pub fn add_pattern(&mut self, kind: &str, pattern: &str) -> Result<&mut Scanner> {
        let valid_kind = !kind.is_empty()
            && kind.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !valid_kind {
            return Err(Error::InvalidKind { kind: kind.to_owned() });
        }
        let regex = Regex::new(pattern)
            .map_err(|source| Error::InvalidPattern { pattern: pattern.to_owned(), source })?;
        if regex.is_match("") {
            return Err(Error::EmptyMatch { pattern: pattern.to_owned() });
        }
        let mut patterns = self.patterns.to_vec();
        patterns.push(Pattern::new(kind, regex));
        self.any = Arc::new(any_set(&patterns));
        self.patterns = patterns.into();
        Ok(self)
    }

    /// Adds a user pattern (`--secret-pattern`), redacted as `<redacted:custom>`.
    ///
    /// # Errors
    /// As [`Scanner::add_pattern`].
    pub fn add_user_pattern(&mut self, pattern: &str) -> Result<&mut Scanner> {
        self.add_pattern(CUSTOM_KIND, pattern)
    }

    /// The kinds and regexes of every pattern, defaults first.
    pub fn patterns(&self) -> impl Iterator<Item = (&str, &str)> {
        self.patterns.iter().map(|pattern| (pattern.kind.as_str(), pattern.regex.as_str()))
    }

    /// `text` with every secret replaced by its marker, or `None` when it holds none.
    ///
    /// ```
    /// let scanner = atif_secrets::Scanner::new();
    /// let text = "api_key=abc123 next=word";
    /// assert_eq!(scanner.redact_text(text).as_deref(), Some("api_key=<redacted:api-key> next=word"));
    /// assert_eq!(scanner.redact_text("nothing here"), None);
    /// ```
    pub fn redact_text(&self, text: &str) -> Option<String> {
        self.redact_text_kinds(text, &mut |_| {})
    }

    /// Replaces every secret in `value` in place (object keys and strings at every depth, and
    /// the scalar value of a key whose name says secret) and reports what it replaced where.
    pub fn redact_value(&self, value: &mut Value) -> Redactions {
        let mut redactor = self.redactor();
        redactor.redact_value(value, "");
        redactor.into_redactions()
    }

    /// A [`Redactor`]: [`Scanner::redact_value`] over several values, or several parts of one
    /// document, sharing what it learns about object keys from one to the next.
    pub fn redactor(&self) -> Redactor<'_> {
        Redactor {
            scanner: self,
            keys: Vec::new(),
            facts: Vec::new(),
            redactions: Redactions::default(),
        }
    }

    /// Whether `text`, as a string or as an object key, may make [`Scanner::redact_value`]
    /// change something: it holds a secret, or it is a name that says secret (whose value
    /// would be replaced). `false` is exact: callers use it to skip the full walk over
    /// documents without secrets. Ordinary text costs one literal search.
    pub fn may_hold_secret(&self, text: &str) -> bool {
        is_secret_name(text) || self.redact_text(text).is_some()
    }

    /// [`Scanner::may_hold_secret`] for a string as JSON text writes it between its quotes,
    /// when its only escapes are the two-character ones (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`,
    /// `\t`): `decode` gives the string's value, and runs only when the text holds a hint of a
    /// secret, so ordinary text is searched once and never copied. `false` is as exact as
    /// [`Scanner::may_hold_secret`]'s.
    ///
    /// ```
    /// let scanner = atif_secrets::Scanner::new();
    /// let decode = |text: &str| text.replace("\\n", "\n");
    /// assert!(!scanner.may_hold_secret_escaped(r"line one\nline two", decode));
    /// assert!(scanner.may_hold_secret_escaped(r"key:\nsk-proj-abcdefghijklmnopqrstuvwxyz0123", decode));
    /// ```
    ///
    /// Not public API: the hook of `atif-normalize`'s parser, hidden from the docs and free to
    /// change in any release.
    #[doc(hidden)]
    pub fn may_hold_secret_escaped(
        &self,
        escaped: &str,
        decode: impl FnOnce(&str) -> String,
    ) -> bool {
        let user_patterns = self.patterns.len() > DEFAULT_PATTERNS.len();
        // A base64 payload is never escaped, so the escaped text is a data URI with the same
        // payload exactly when the value is one, and only the part before it is searched.
        if user_patterns || self.any.is_match(scanned_part(escaped).0) {
            return self.may_hold_secret(&decode(escaped));
        }
        // Every hint and every secret name's ending is made of characters that JSON writes as
        // they are, never escaped, so where the value holds one, the escaped text holds it
        // too: without a hint there, the value holds no secret, and it may still be a name.
        is_secret_name(escaped)
    }

    /// What [`Scanner::redact_value`] would replace in `value`, without changing it.
    ///
    /// Only an object whose keys hold or name a secret is copied to be redacted; strings are
    /// searched where they are, so a document of large texts (a recorded 200 MB prompt) is
    /// never copied to be scanned.
    pub fn scan_value(&self, value: &Value) -> Redactions {
        let mut redactor = self.redactor();
        redactor.scan(value, &mut String::new());
        redactor.into_redactions()
    }

    /// What `key` holds (a secret, by the patterns) and says (a secret value, by its name).
    fn key_facts(&self, key: &str) -> KeyFacts {
        KeyFacts {
            holds_secret: self.any.is_match(key)
                && self.redact_text_kinds(key, &mut |_| {}).is_some(),
            secret_name: is_secret_name(key),
        }
    }

    /// The core of [`Scanner::redact_text`]: `found` is called with the kind of each secret.
    fn redact_text_kinds(&self, text: &str, found: &mut dyn FnMut(&str)) -> Option<String> {
        let (text, payload) = scanned_part(text);
        if !self.any.is_match(text) {
            return None;
        }
        let mut current: Option<String> = None;
        for pattern in self.patterns.iter() {
            // A pattern that needs the character before or after a secret consumes it, so a
            // second secret right after the first is found on the next pass.
            for _ in 0..64 {
                let now = current.as_deref().unwrap_or(text);
                match pattern.redact_once(now, found) {
                    Some(next) => current = Some(next),
                    None => break,
                }
            }
        }
        let now = current.as_deref().unwrap_or(text);
        if let Some(next) = redact_assignments(now, found) {
            current = Some(next);
        }
        current.map(|mut redacted| {
            redacted.push_str(payload);
            redacted
        })
    }
}

/// `text` split into the part the patterns search and a payload they leave alone: the base64
/// payload of a `data:<media type>;base64,<payload>` string, when every character of it, to
/// the end of the string, is of the base64 alphabet (`A`–`Z`, `a`–`z`, `0`–`9`, `+`, `/`,
/// `=`). A pattern can match such a payload only by chance (an inline image of 100 kB holds
/// `key` or `AKIA` somewhere), and a redaction there would corrupt the image; a secret encoded
/// in base64 is not something the patterns find anyway. Any other text is searched whole.
fn scanned_part(text: &str) -> (&str, &str) {
    let Some(rest) = text.strip_prefix("data:") else { return (text, "") };
    let Some(comma) = rest.find(',') else { return (text, "") };
    let start = "data:".len() + comma + 1;
    if !rest[..comma].ends_with(";base64") || !is_base64(&text.as_bytes()[start..]) {
        return (text, "");
    }
    text.split_at(start)
}

/// Whether every byte of `bytes` is of the base64 alphabet. An image is 100 kB or more: whole
/// chunks are checked without an early exit, which the compiler turns into vector code.
fn is_base64(bytes: &[u8]) -> bool {
    let byte_ok = |byte: u8| {
        // `| 0x20` folds upper-case letters onto lower-case ones and nothing else onto them.
        let letter = (byte | 0x20).wrapping_sub(b'a') < 26;
        let digit = byte.wrapping_sub(b'0') < 10;
        letter | digit | (byte == b'+') | (byte == b'/') | (byte == b'=')
    };
    bytes.chunks(64).all(|chunk| chunk.iter().fold(true, |ok, &byte| ok & byte_ok(byte)))
}

/// Redacts values as [`Scanner::redact_value`] does, one after the other, remembering what it
/// learnt about object keys: a trajectory redacted step by step (each step while it is still in
/// the cache) costs no more key checks than one walk over the whole document.
///
/// ```
/// use serde_json::json;
///
/// let scanner = atif_secrets::Scanner::new();
/// let mut redactor = scanner.redactor();
/// let mut steps = [json!({"message": "hi"}), json!({"env": {"GITHUB_TOKEN": "abc123xyz"}})];
/// for (idx, step) in steps.iter_mut().enumerate() {
///     redactor.redact_value(step, &format!("/steps/{idx}"));
/// }
/// assert_eq!(steps[1], json!({"env": {"GITHUB_TOKEN": "<redacted:token>"}}));
/// assert_eq!(redactor.into_redactions().pointers(), ["/steps/1/env/GITHUB_TOKEN"]);
/// ```
#[derive(Debug)]
pub struct Redactor<'s> {
    scanner: &'s Scanner,
    /// The facts about keys met so far, in [`KEY_SLOTS`] slots chosen by a hash of the key:
    /// a trajectory repeats the same few dozen keys (`prompt_tokens`, `tool_call_id`) on every
    /// step, and some of them, with `token` in their name, pass the literal search and then
    /// cost every pattern. A key whose slots all hold others is checked again and takes its
    /// first slot, so memory stays bounded and no choice of keys costs more than checking each
    /// one.
    keys: Vec<Option<(Box<str>, KeyFacts)>>,
    /// The facts of the keys of the objects from the root to the value being walked.
    facts: Vec<KeyFacts>,
    redactions: Redactions,
}

impl Redactor<'_> {
    /// Redacts `value` in place as [`Scanner::redact_value`] does; the findings' JSON Pointers
    /// start with `pointer`, where `value` sits in its document (`""` for the root).
    pub fn redact_value(&mut self, value: &mut Value, pointer: &str) {
        let mut walk = Walk { redactor: self, prefix: pointer, path: Vec::new() };
        walk.value(value);
    }

    /// Reports what [`Redactor::redact_value`] would replace in `value`, at `pointer`, in the
    /// same order, copying only the objects whose keys hold or name a secret.
    fn scan(&mut self, value: &Value, pointer: &mut String) {
        match value {
            Value::String(text) => {
                let mut kinds = Vec::new();
                let found = self
                    .scanner
                    .redact_text_kinds(text, &mut |kind| kinds.push(kind.to_owned()))
                    .is_some();
                if found {
                    for kind in kinds {
                        self.redactions.push(kind, pointer.clone());
                    }
                }
            }
            Value::Array(items) => {
                for (idx, item) in items.iter().enumerate() {
                    let len = pointer.len();
                    let _ = write!(pointer, "/{idx}");
                    self.scan(item, pointer);
                    pointer.truncate(len);
                }
            }
            Value::Object(map) => {
                let redacts_here = map.iter().any(|(key, item)| {
                    let facts = self.key_facts(key);
                    facts.holds_secret || (facts.secret_name && is_secret_scalar(item))
                });
                if redacts_here {
                    // Its keys change, or its scalars: the walk that redacts says how.
                    let mut copy = value.clone();
                    self.redact_value(&mut copy, pointer);
                    return;
                }
                for (key, item) in map {
                    let len = pointer.len();
                    push_key(pointer, key);
                    self.scan(item, pointer);
                    pointer.truncate(len);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// What was redacted, in the order it was found.
    pub fn into_redactions(self) -> Redactions {
        self.redactions
    }

    /// [`Scanner::may_hold_secret`] for an object key, remembered like every key this
    /// redactor meets: for a caller that only asks whether a document needs redacting.
    ///
    /// ```
    /// let scanner = atif_secrets::Scanner::new();
    /// let mut redactor = scanner.redactor();
    /// assert!(!redactor.may_hold_secret_key("prompt_tokens"));
    /// assert!(redactor.may_hold_secret_key("GITHUB_TOKEN"));
    /// ```
    ///
    /// Not public API: the hook of `atif-normalize`'s parser, hidden from the docs and free to
    /// change in any release.
    #[doc(hidden)]
    pub fn may_hold_secret_key(&mut self, key: &str) -> bool {
        let facts = self.key_facts(key);
        facts.holds_secret || facts.secret_name
    }

    /// What `key` holds and says, remembered for the next time it occurs.
    fn key_facts(&mut self, key: &str) -> KeyFacts {
        if key.len() > MAX_REMEMBERED_KEY_LEN {
            return self.scanner.key_facts(key);
        }
        if self.keys.is_empty() {
            self.keys.resize(KEY_SLOTS, None);
        }
        // Up to `KEY_PROBES` slots from the key's own, so that two frequent keys that hash alike
        // both stay.
        let home = slot_of(key);
        let mut free = None;
        for probe in 0..KEY_PROBES {
            let idx = (home + probe) % KEY_SLOTS;
            match &self.keys[idx] {
                Some((known, facts)) if **known == *key => return *facts,
                Some(_) => {}
                None => {
                    free.get_or_insert(idx);
                }
            }
        }
        let facts = self.scanner.key_facts(key);
        self.keys[free.unwrap_or(home)] = Some((key.into(), facts));
        facts
    }
}

/// One walk of a [`Redactor`] over a value: where it is in the value.
struct Walk<'r, 's, 'v> {
    redactor: &'r mut Redactor<'s>,
    /// The pointer of the walked value in its document.
    prefix: &'r str,
    /// The keys and indexes from the walked value to the value being walked; the JSON Pointer
    /// is written from them only for a finding, not for every value.
    path: Vec<Segment<'v>>,
}

/// A step of the path from the root to a value.
#[derive(Debug, Clone, Copy)]
enum Segment<'v> {
    Key(&'v str),
    Index(usize),
}

/// What the walk needs to know about an object key.
#[derive(Debug, Clone, Copy)]
struct KeyFacts {
    /// Whether redacting the key as text would change it (it holds a secret).
    holds_secret: bool,
    /// Whether the key says its scalar value is a secret ([`is_secret_name`]).
    secret_name: bool,
}

/// How many keys a [`Redactor`] remembers at most.
const KEY_SLOTS: usize = 512;

/// How many slots a key may take, from the one its hash picks.
const KEY_PROBES: usize = 4;

/// Keys longer than this are checked each time rather than remembered.
const MAX_REMEMBERED_KEY_LEN: usize = 64;

impl<'v> Walk<'_, '_, 'v> {
    fn value(&mut self, value: &'v mut Value) {
        match value {
            Value::String(text) => {
                let mut kinds = Vec::new();
                if let Some(redacted) = self
                    .redactor
                    .scanner
                    .redact_text_kinds(text, &mut |kind| kinds.push(kind.to_owned()))
                {
                    *text = redacted;
                    for kind in kinds {
                        self.redactor.redactions.push(kind, self.pointer(None));
                    }
                }
            }
            Value::Array(items) => {
                for (idx, item) in items.iter_mut().enumerate() {
                    self.path.push(Segment::Index(idx));
                    self.value(item);
                    self.path.pop();
                }
            }
            Value::Object(map) => {
                // The facts of this map's keys sit above `base` in the shared stack while its
                // values are walked: one look-up per key.
                let base = self.redactor.facts.len();
                for key in map.keys() {
                    let facts = self.redactor.key_facts(key);
                    self.redactor.facts.push(facts);
                }
                // A key can hold a secret too (a header map keyed by token, say): rebuild the
                // map when one does.
                if self.redactor.facts[base..].iter().any(|facts| facts.holds_secret) {
                    let mut rebuilt = serde_json::Map::with_capacity(map.len());
                    for (key, item) in std::mem::take(map) {
                        let mut kinds = Vec::new();
                        let key = match self
                            .redactor
                            .scanner
                            .redact_text_kinds(&key, &mut |kind| kinds.push(kind.to_owned()))
                        {
                            Some(redacted) => {
                                for kind in kinds {
                                    self.redactor
                                        .redactions
                                        .push(kind, self.pointer(Some(&redacted)));
                                }
                                redacted
                            }
                            None => key,
                        };
                        rebuilt.insert(key, item);
                    }
                    *map = rebuilt;
                    // Redacted keys are other keys, and two may have become one.
                    self.redactor.facts.truncate(base);
                    for key in map.keys() {
                        let facts = self.redactor.key_facts(key);
                        self.redactor.facts.push(facts);
                    }
                }
                for (idx, (key, item)) in map.iter_mut().enumerate() {
                    self.path.push(Segment::Key(key));
                    if self.redactor.facts[base + idx].secret_name && is_secret_scalar(item) {
                        let kind = kind_for_name(key);
                        *item = Value::String(marker(kind));
                        self.redactor.redactions.push(kind.to_owned(), self.pointer(None));
                    } else {
                        self.value(item);
                    }
                    self.path.pop();
                }
                self.redactor.facts.truncate(base);
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// The JSON Pointer of the value being walked, or of its child `key`.
    fn pointer(&self, key: Option<&str>) -> String {
        let mut pointer = self.prefix.to_owned();
        for segment in &self.path {
            match segment {
                Segment::Key(key) => push_key(&mut pointer, key),
                // Writing to a `String` cannot fail.
                Segment::Index(idx) => {
                    let _ = write!(pointer, "/{idx}");
                }
            }
        }
        if let Some(key) = key {
            push_key(&mut pointer, key);
        }
        pointer
    }
}

impl Pattern {
    fn new(kind: &str, regex: Regex) -> Pattern {
        let secret_group = regex.capture_names().position(|name| name == Some("secret"));
        let standalone = STANDALONE.contains(&kind);
        Pattern { kind: kind.to_owned(), regex, secret_group, standalone }
    }

    /// One pass of this pattern over `text`, or `None` when it replaced nothing.
    fn redact_once(&self, text: &str, found: &mut dyn FnMut(&str)) -> Option<String> {
        if !self.regex.is_match(text) {
            return None;
        }
        let protected = markers(text);
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for caps in self.regex.captures_iter(text) {
            let Some(secret) =
                self.secret_group.and_then(|idx| caps.get(idx)).or_else(|| caps.get(0))
            else {
                continue;
            };
            if secret.is_empty()
                || overlaps(&protected, secret.range())
                || (self.standalone && !stands_alone(text, secret.range()))
            {
                continue;
            }
            out.push_str(&text[last..secret.start()]);
            out.push_str(&marker(&self.kind));
            last = secret.end();
            found(&self.kind);
        }
        if last == 0 {
            return None;
        }
        out.push_str(&text[last..]);
        Some(out)
    }
}

/// Replaces the value after each `NAME=` / `NAME: ` whose name says secret, up to its end.
fn redact_assignments(text: &str, found: &mut dyn FnMut(&str)) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    for caps in assignment().captures_iter(text) {
        let (Some(whole), Some(name), Some(separator)) = (caps.get(0), caps.get(1), caps.get(2))
        else {
            continue;
        };
        if whole.start() < last || !is_secret_name(name.as_str()) {
            continue;
        }
        let rest = &text[whole.end()..];
        // `==`, `=>` and `::` are code, not an assignment.
        let code = match separator.as_str() {
            "=" => rest.starts_with(['=', '>']),
            _ => rest.starts_with(':'),
        };
        if code {
            continue;
        }
        let scheme = scheme().find(rest).map_or(0, |found| found.end());
        let Some(value) = value_range(&rest[scheme..]) else {
            continue;
        };
        let start = whole.end() + scheme + value.start;
        let end = whole.end() + scheme + value.end;
        if is_not_a_credential(&text[start..end], &text[end..]) {
            continue;
        }
        let kind = kind_for_name(name.as_str());
        out.push_str(&text[last..start]);
        out.push_str(&marker(kind));
        last = end;
        found(kind);
    }
    if last == 0 {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

/// Where the value at the start of `rest` lies: inside its quotes when quoted (`\"` counts as
/// a quote, for JSON inside text), else up to the first space, quote or separator.
fn value_range(rest: &str) -> Option<Range<usize>> {
    for quote in ["\\\"", "\"", "'", "`"] {
        if let Some(inner) = rest.strip_prefix(quote) {
            let len = inner.find(quote).or_else(|| inner.find('\n')).unwrap_or(inner.len());
            return Some(quote.len()..quote.len() + len);
        }
    }
    let len = rest
        .find(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '"' | '\'' | '`' | ',' | ';' | '&' | ')' | ']' | '}' | '<' | '>' | '\\'
                )
        })
        .unwrap_or(rest.len());
    (len > 0).then_some(0..len)
}

/// Whether a value under a secret key is a credential to replace: a number, or a string that
/// [`is_not_a_credential`] does not excuse (an empty string reveals nothing).
fn is_secret_scalar(value: &Value) -> bool {
    match value {
        Value::Number(_) => true,
        Value::String(text) => !is_not_a_credential(text, ""),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => false,
    }
}

/// The byte ranges of the markers already in `text`, which no pattern may touch again.
fn markers(text: &str) -> Vec<Range<usize>> {
    if !text.contains(MARKER_PREFIX) {
        return Vec::new();
    }
    static MARKER: OnceLock<Regex> = OnceLock::new();
    let regex = MARKER.get_or_init(|| {
        Regex::new(r"<redacted:[a-z0-9\-]+>").expect("the marker regex is valid (a test uses it)")
    });
    regex.find_iter(text).map(|found| found.range()).collect()
}

/// Whether the characters right before and after `range` could not be part of a key or of
/// base64 data.
fn stands_alone(text: &str, range: Range<usize>) -> bool {
    // `=` pads base64 at its end only, so it joins a match that it follows, not one it precedes
    // (`AWS=AKIA…`).
    let joins = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '_' | '-');
    !text[..range.start].chars().next_back().is_some_and(joins)
        && !text[range.end..].chars().next().is_some_and(|c| joins(c) || c == '=')
}

fn overlaps(protected: &[Range<usize>], range: Range<usize>) -> bool {
    protected.iter().any(|marker| marker.start < range.end && range.start < marker.end)
}

fn push_key(pointer: &mut String, key: &str) {
    pointer.push('/');
    // Escaped as it is copied, without a temporary string per key.
    for c in key.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

fn any_set(patterns: &[Pattern]) -> Prefilter {
    let users: Vec<&str> = patterns
        .iter()
        .skip(DEFAULT_PATTERNS.len())
        .map(|pattern| pattern.regex.as_str())
        .collect();
    let users = (!users.is_empty()).then(|| {
        RegexSet::new(users).expect("each pattern compiled on its own, so the set compiles too")
    });
    let literals = hint_literals();
    let hints = match packed::Config::new().builder().extend(&literals).build() {
        Some(searcher) => Hints::Packed(searcher),
        None => {
            Hints::Automaton(AhoCorasick::new(&literals).expect("a few dozen short literals build"))
        }
    };
    Prefilter { hints, users }
}

/// [`HINT_PREFIXES`] as they are and [`HINT_WORDS`] lower-case, upper-case and capitalised.
fn hint_literals() -> Vec<String> {
    let mut words: Vec<String> = HINT_PREFIXES.iter().map(|prefix| prefix.to_string()).collect();
    for word in HINT_WORDS {
        let mut chars = word.chars();
        let capitalised: String =
            chars.next().map(|first| first.to_ascii_uppercase()).into_iter().chain(chars).collect();
        for form in [word.to_ascii_lowercase(), word.to_ascii_uppercase(), capitalised] {
            if !words.contains(&form) {
                words.push(form);
            }
        }
    }
    words
}

fn defaults() -> &'static Scanner {
    static DEFAULTS: OnceLock<Scanner> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        let patterns: Vec<Pattern> = DEFAULT_PATTERNS
            .iter()
            .map(|(kind, source)| {
                let regex = Regex::new(source)
                    .expect("the default patterns are valid regexes (a test compiles each)");
                Pattern::new(kind, regex)
            })
            .collect();
        let any = any_set(&patterns);
        Scanner { patterns: patterns.into(), any: Arc::new(any) }
    })
}

fn assignment() -> &'static Regex {
    static ASSIGNMENT: OnceLock<Regex> = OnceLock::new();
    ASSIGNMENT.get_or_init(|| {
        Regex::new(ASSIGNMENT_PATTERN).expect("the assignment pattern is valid (a test uses it)")
    })
}

fn scheme() -> &'static Regex {
    static SCHEME: OnceLock<Regex> = OnceLock::new();
    SCHEME.get_or_init(|| {
        Regex::new(SCHEME_PATTERN).expect("the scheme pattern is valid (a test uses it)")
    })
}

/// The [`Redactor`] slot of `key`: FNV-1a over its bytes (keys are short, and a collision only
/// costs a check).
fn slot_of(key: &str) -> usize {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in key.bytes() {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    hash as usize % KEY_SLOTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packed_searcher_and_its_fallback_agree() {
        let literals = hint_literals();
        let packed = Prefilter { hints: any_set(&[]).hints, users: None };
        if !matches!(packed.hints, Hints::Packed(_)) {
            eprintln!("skipping the comparison: this CPU has no packed SIMD searcher");
            return;
        }
        let automaton = AhoCorasick::new(&literals).unwrap();
        let fallback = Prefilter { hints: Hints::Automaton(automaton), users: None };
        let mut texts: Vec<String> = vec![String::new(), "a".into(), "plain words".into()];
        for literal in &literals {
            texts.push(literal.clone());
            texts.push(format!("x{literal}"));
            texts.push(format!("{} {literal} tail", "long prefix ".repeat(8)));
            texts.push(literal[..literal.len() - 1].to_owned());
        }
        for text in &texts {
            assert_eq!(packed.is_match(text), fallback.is_match(text), "{text:?}");
        }
        assert!(texts.iter().any(|text| !packed.is_match(text)));
    }

    #[test]
    fn the_base64_check_accepts_exactly_the_base64_alphabet() {
        for byte in 0..=u8::MAX {
            let expected = byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=');
            let mut run = vec![b'A'; 150];
            run[100] = byte;
            assert_eq!(is_base64(&run), expected, "byte {byte}");
            assert_eq!(is_base64(&[byte]), expected, "byte {byte}");
        }
        assert!(is_base64(b""));
    }

    #[test]
    fn hints_are_made_of_characters_json_never_escapes() {
        for literal in hint_literals() {
            assert!(
                literal.chars().all(|c| c >= ' ' && c != '"' && c != '\\'),
                "{literal:?} holds a character that JSON text may escape"
            );
        }
    }
}
