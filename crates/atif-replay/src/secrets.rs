//! Secret redaction for scripts: a thin use of `atif-secrets`, the one scanner every layer
//! shares, with the user's patterns added.

use atif_secrets::{Redactions, Scanner};
use serde_json::Value;

use crate::Result;

/// The default scanner plus the user's patterns (redacted as `<redacted:custom>`).
#[derive(Debug, Clone)]
pub(crate) struct Redactor {
    scanner: Scanner,
}

impl Redactor {
    /// The default patterns followed by `user_patterns`.
    pub(crate) fn new(user_patterns: &[String]) -> Result<Self> {
        let mut scanner = Scanner::new();
        for pattern in user_patterns {
            scanner.add_user_pattern(pattern)?;
        }
        Ok(Redactor { scanner })
    }

    /// Replaces every secret in `value` (keys and strings at every depth, and the scalar value
    /// of a key whose name says secret) and reports what it replaced where.
    pub(crate) fn redact_value(&self, value: &mut Value) -> Redactions {
        self.scanner.redact_value(value)
    }

    /// The kind and JSON Pointer of the first secret left in `value`, in document order.
    pub(crate) fn first_match_in(&self, value: &Value) -> Option<(String, String)> {
        let report = self.scanner.scan_value(value);
        report.findings().first().map(|finding| (finding.kind.clone(), finding.pointer.clone()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn user_patterns_are_applied_and_invalid_ones_are_errors() {
        let redactor = Redactor::new(&["corp-[0-9]{4}".to_owned()]).unwrap();
        let mut value = json!({"id": "corp-1234", "key": "sk-ant-api03-abcdefghijklmnop"});
        let report = redactor.redact_value(&mut value);
        assert_eq!(value, json!({"id": "<redacted:custom>", "key": "<redacted:anthropic-key>"}));
        assert_eq!(report.len(), 2);
        assert_eq!(redactor.first_match_in(&value), None);
        let err = Redactor::new(&["(".to_owned()]).unwrap_err();
        assert_eq!(err.to_string(), "invalid secret pattern `(`");
        let source = std::error::Error::source(&err).map(ToString::to_string).unwrap_or_default();
        assert!(source.contains("unclosed group"), "{source}");
    }
}
