//! Secret redaction: the credential shapes scripts must never contain, and the walk that
//! replaces them before anything reaches disk.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::{Error, Result};

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The credential shapes redacted by default, as `(name, regex)`.
///
/// Order matters: Anthropic keys (`sk-ant-…`) are matched before the OpenAI shape (`sk-…`).
pub const DEFAULT_SECRET_PATTERNS: &[(&str, &str)] = &[
    ("anthropic api key", r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    ("openai api key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
    ("aws access key id", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    ("github token", r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("bearer token", r"(?i)bearer\s+[A-Za-z0-9\-._~+/]{8,}=*"),
];

/// Object keys whose values are always redacted, whatever they hold (compared lower-cased,
/// with `-` read as `_`).
const SECRET_KEYS: &[&str] = &[
    "api_key",
    "apikey",
    "authorization",
    "proxy_authorization",
    "x_api_key",
    "access_token",
    "refresh_token",
    "secret_key",
    "client_secret",
    "aws_secret_access_key",
    "aws_session_token",
    "private_key",
    "password",
];

/// `api_key=…`, `"authorization": "…"` and the like inside text (a tool result holding a
/// config file, a prompt quoting an environment): the value is redacted, the key kept. An
/// authorization scheme word (`Basic`, `Token`, …) is redacted with the credential after it.
const KEY_VALUE_PATTERN: &str = r#"(?i)((?:api[_-]?key|x[_-]api[_-]key|authorization|access[_-]token|refresh[_-]token|secret[_-]key|client[_-]secret|aws_secret_access_key|aws_session_token|private[_-]key|password)["']?\s*[:=]\s*["']?)((?:(?:bearer|basic|token|digest)\s+)?[^\["'\s,;}]{6,}(?:[ ][^\["'\s,;}]{6,})?)"#;

/// A set of secret patterns: the defaults plus the user's.
#[derive(Debug, Clone)]
pub(crate) struct Redactor {
    patterns: Vec<(String, Regex)>,
    key_value: Regex,
}

impl Redactor {
    /// The default patterns followed by `user_patterns`.
    pub(crate) fn new(user_patterns: &[String]) -> Result<Self> {
        let mut patterns = defaults().clone();
        for pattern in user_patterns {
            let regex = Regex::new(pattern)
                .map_err(|source| Error::Pattern { pattern: pattern.clone(), source })?;
            patterns.push((pattern.clone(), regex));
        }
        Ok(Redactor { patterns, key_value: key_value().clone() })
    }

    /// Replaces every secret in `value`: in object keys and strings at every depth, and the
    /// whole value of a scalar under a secret key (`api_key`, `authorization`, …).
    pub(crate) fn redact_value(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                if let Some(redacted) = self.redact_str(text) {
                    *text = redacted;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.redact_value(item)),
            Value::Object(map) => {
                // A key can hold a secret too (a header map keyed by token, say): rebuild the
                // map when one does, so the refusal check before saving has nothing to find.
                if map.keys().any(|key| self.redact_str(key).is_some()) {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(key, item)| (self.redact_str(&key).unwrap_or(key), item))
                        .collect();
                }
                for (key, item) in map.iter_mut() {
                    // Only scalar values are credentials: an object under `password` is, for
                    // instance, the JSON Schema of a tool's `password` parameter, and stays.
                    let is_scalar =
                        matches!(item, Value::String(_) | Value::Number(_) | Value::Bool(_));
                    if is_scalar && is_secret_key(key) {
                        *item = Value::String(REDACTED.to_owned());
                    } else {
                        self.redact_value(item);
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// `text` with every secret replaced, or `None` when it held none.
    pub(crate) fn redact_str(&self, text: &str) -> Option<String> {
        let mut current = std::borrow::Cow::Borrowed(text);
        if self.key_value.is_match(&current) {
            let replaced = self.key_value.replace_all(&current, |caps: &regex::Captures<'_>| {
                let (key, value) = (&caps[1], &caps[2]);
                if is_type_annotation(value) {
                    format!("{key}{value}")
                } else {
                    format!("{key}{REDACTED}")
                }
            });
            if replaced != current {
                current = std::borrow::Cow::Owned(replaced.into_owned());
            }
        }
        for (_, regex) in &self.patterns {
            if regex.is_match(&current) {
                let replaced = regex.replace_all(&current, REDACTED).into_owned();
                current = std::borrow::Cow::Owned(replaced);
            }
        }
        match current {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(text) => Some(text),
        }
    }

    /// The first pattern (and byte offset) that still matches `text`.
    pub(crate) fn first_match(&self, text: &str) -> Option<(String, usize)> {
        self.patterns
            .iter()
            .filter_map(|(name, regex)| regex.find(text).map(|found| (name.clone(), found.start())))
            .min_by_key(|(_, offset)| *offset)
    }

    /// The first pattern that still matches a key or string of `value`, and the JSON Pointer
    /// of where it matches, in document order.
    pub(crate) fn first_match_in(&self, value: &Value) -> Option<(String, String)> {
        self.first_match_at(value, &mut String::new())
    }

    fn first_match_at(&self, value: &Value, pointer: &mut String) -> Option<(String, String)> {
        match value {
            Value::String(text) => {
                self.first_match(text).map(|(pattern, _)| (pattern, pointer.clone()))
            }
            Value::Array(items) => items.iter().enumerate().find_map(|(idx, item)| {
                let len = pointer.len();
                pointer.push_str(&format!("/{idx}"));
                let found = self.first_match_at(item, pointer);
                pointer.truncate(len);
                found
            }),
            Value::Object(map) => map.iter().find_map(|(key, item)| {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                let found = match self.first_match(key) {
                    Some((pattern, _)) => Some((pattern, pointer.clone())),
                    None => self.first_match_at(item, pointer),
                };
                pointer.truncate(len);
                found
            }),
            Value::Null | Value::Bool(_) | Value::Number(_) => None,
        }
    }
}

/// Whether the value after `password:` (or another secret key) in text is a type in code
/// (`password: string)`, `api_key: Optional`, `token: Option<String>`) rather than a
/// credential: code an agent reads or writes must replay as it was.
fn is_type_annotation(value: &str) -> bool {
    const TYPE_NAMES: &[&str] = &[
        "string",
        "String",
        "str",
        "number",
        "int",
        "integer",
        "bool",
        "boolean",
        "bytes",
        "any",
        "unknown",
        "undefined",
        "null",
        "None",
        "Optional",
        "Option",
        "SecretStr",
        "Secret",
    ];
    let name_len = value.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(value.len());
    let (name, rest) = value.split_at(name_len);
    TYPE_NAMES.contains(&name)
        && (rest.starts_with('<') || rest.chars().all(|c| matches!(c, ')' | '>' | ']' | '|' | '?')))
}

fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace('-', "_");
    SECRET_KEYS.contains(&key.as_str())
}

fn defaults() -> &'static Vec<(String, Regex)> {
    static DEFAULTS: OnceLock<Vec<(String, Regex)>> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        DEFAULT_SECRET_PATTERNS
            .iter()
            .map(|(name, pattern)| {
                let regex = Regex::new(pattern).expect(
                    "the default secret patterns are valid regexes because a test compiles them",
                );
                ((*name).to_owned(), regex)
            })
            .collect()
    })
}

fn key_value() -> &'static Regex {
    static KEY_VALUE: OnceLock<Regex> = OnceLock::new();
    KEY_VALUE.get_or_init(|| {
        Regex::new(KEY_VALUE_PATTERN)
            .expect("the key-value secret pattern is a valid regex because a test compiles it")
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(input: &str, expected: &str) {
        let redactor = Redactor::new(&[]).unwrap();
        let actual = redactor.redact_str(input).unwrap_or_else(|| input.to_owned());
        assert_eq!(actual, expected, "input: {input}");
        assert_eq!(redactor.first_match(&actual), None, "{actual}");
    }

    #[test]
    fn every_default_credential_shape_is_redacted() {
        check("key sk-ant-api03-abcdefghijklmnop end", "key [REDACTED] end");
        check("key sk-proj-abcdefghijklmnopqrstuv end", "key [REDACTED] end");
        check("key sk-abcdefghijklmnopqrstuv end", "key [REDACTED] end");
        check("AKIAIOSFODNN7EXAMPLE", "[REDACTED]");
        check("ghp_abcdefghijklmnopqrstuvwxyz0123", "[REDACTED]");
        check("Authorization: Bearer eyJhbGciOi.abc.def", "Authorization: [REDACTED]");
        check("curl -H 'bearer abcdefghij'", "curl -H '[REDACTED]'");
        check("api_key=hunter2hunter2 next", "api_key=[REDACTED] next");
        check(r#"{"api_key": "plainvalue123"}"#, r#"{"api_key": "[REDACTED]"}"#);
        check("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: [REDACTED]");
        check("authorization=Token abcdef123456 rest", "authorization=[REDACTED] rest");
        check(
            "client_secret=abcdef123456; refresh_token: zzzzzzzzzz",
            "client_secret=[REDACTED]; refresh_token: [REDACTED]",
        );
        check("OPENAI_API_KEY=notaskshapevalue123", "OPENAI_API_KEY=[REDACTED]");
        check("api_key: [REDACTED]", "api_key: [REDACTED]");
        check("nothing secret here", "nothing secret here");
    }

    #[test]
    fn a_type_in_code_after_a_secret_key_is_not_a_secret() {
        check(
            "login: (username: string, password: string) => Promise<void>;",
            "login: (username: string, password: string) => Promise<void>;",
        );
        check("def f(api_key: Optional[str] = None):", "def f(api_key: Optional[str] = None):");
        check("struct C { password: Option<String>, }", "struct C { password: Option<String>, }");
        check("password: string!23", "password: [REDACTED]");
        check("password: strings3cret", "password: [REDACTED]");
    }

    #[test]
    fn a_secret_used_as_an_object_key_is_redacted() {
        let redactor = Redactor::new(&[]).unwrap();
        let mut value = json!({"tokens": {"ghp_abcdefghijklmnopqrstuvwxyz0123": "owner"}});
        redactor.redact_value(&mut value);
        assert_eq!(value, json!({"tokens": {"[REDACTED]": "owner"}}));
    }

    #[test]
    fn secret_keys_are_redacted_whatever_their_value() {
        let redactor = Redactor::new(&[]).unwrap();
        let mut value = json!({"headers": {"Authorization": "xyz", "X-Api-Key": 42}, "keep": "me"});
        redactor.redact_value(&mut value);
        assert_eq!(
            value,
            json!({"headers": {"Authorization": "[REDACTED]", "X-Api-Key": "[REDACTED]"}, "keep": "me"})
        );
    }

    #[test]
    fn a_tool_schema_describing_a_secret_parameter_is_kept() {
        let redactor = Redactor::new(&[]).unwrap();
        let schema =
            json!({"properties": {"password": {"type": "string"}, "api_key": {"type": "string"}}});
        let mut value = schema.clone();
        redactor.redact_value(&mut value);
        assert_eq!(value, schema);
    }

    #[test]
    fn user_patterns_are_applied_and_invalid_ones_are_errors() {
        let redactor = Redactor::new(&["corp-[0-9]{4}".to_owned()]).unwrap();
        assert_eq!(redactor.redact_str("id corp-1234").as_deref(), Some("id [REDACTED]"));
        let err = Redactor::new(&["(".to_owned()]).unwrap_err();
        assert_eq!(err.to_string(), "invalid secret pattern `(`");
        let source = std::error::Error::source(&err).map(ToString::to_string).unwrap_or_default();
        assert!(source.contains("unclosed group"), "{source}");
    }
}
