//! [`Redactions`]: how many secrets of each kind were redacted, and where, never what.

use std::collections::BTreeMap;
use std::fmt;

/// How many pointers a report line names before it says how many more there are.
const POINTERS_SHOWN: usize = 10;

/// One redacted secret: its kind and the JSON Pointer of the string or key that held it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Redaction {
    /// The kind, as in its marker (`openai-key`).
    pub kind: String,
    /// The JSON Pointer of the value (or, for a secret used as a key, of the redacted key).
    pub pointer: String,
}

/// What a redaction replaced: one [`Redaction`] per secret, in document order.
///
/// Its `Display` is the report line the CLI prints, which names kinds, counts and pointers,
/// never a secret:
///
/// ```
/// use serde_json::json;
///
/// let mut doc = json!({"steps": [{"message": "key sk-ant-api03-abcdefghijkl, db postgres://me:pw@db/x"}]});
/// let report = atif_secrets::Scanner::new().redact_value(&mut doc);
/// assert_eq!(
///     report.to_string(),
///     "redacted 2 secrets (1 anthropic-key, 1 url-password) at /steps/0/message"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redactions {
    findings: Vec<Redaction>,
}

impl Redactions {
    /// An empty report.
    pub fn new() -> Redactions {
        Redactions::default()
    }

    /// Records one secret of `kind` at `pointer`.
    pub fn push(&mut self, kind: impl Into<String>, pointer: impl Into<String>) {
        self.findings.push(Redaction { kind: kind.into(), pointer: pointer.into() });
    }

    /// Adds the findings of `other`, each pointer prefixed with `prefix` (`""` for none).
    pub fn extend(&mut self, prefix: &str, other: Redactions) {
        self.findings.extend(other.findings.into_iter().map(|finding| Redaction {
            kind: finding.kind,
            pointer: format!("{prefix}{}", finding.pointer),
        }));
    }

    /// Whether nothing was redacted.
    pub fn is_empty(&self) -> bool {
        self.findings.is_empty()
    }

    /// How many secrets were redacted.
    pub fn len(&self) -> usize {
        self.findings.len()
    }

    /// Every finding, in document order.
    pub fn findings(&self) -> &[Redaction] {
        &self.findings
    }

    /// How many secrets of each kind, by kind name.
    pub fn counts(&self) -> BTreeMap<&str, usize> {
        let mut counts = BTreeMap::new();
        for finding in &self.findings {
            *counts.entry(finding.kind.as_str()).or_insert(0) += 1;
        }
        counts
    }

    /// The distinct pointers, in document order.
    pub fn pointers(&self) -> Vec<&str> {
        let mut pointers: Vec<&str> = Vec::new();
        for finding in &self.findings {
            if !pointers.contains(&finding.pointer.as_str()) {
                pointers.push(&finding.pointer);
            }
        }
        pointers
    }
}

impl fmt::Display for Redactions {
    /// `redacted N secrets (2 openai-key, 1 password) at /a, /b`, or `no secrets redacted`;
    /// past ten pointers it says how many more there are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("no secrets redacted");
        }
        let noun = if self.len() == 1 { "secret" } else { "secrets" };
        let counts: Vec<String> =
            self.counts().iter().map(|(kind, count)| format!("{count} {kind}")).collect();
        write!(f, "redacted {} {noun} ({})", self.len(), counts.join(", "))?;
        let pointers = self.pointers();
        let shown: Vec<&str> = pointers
            .iter()
            .take(POINTERS_SHOWN)
            .map(|pointer| if pointer.is_empty() { "(root)" } else { pointer })
            .collect();
        write!(f, " at {}", shown.join(", "))?;
        if pointers.len() > POINTERS_SHOWN {
            write!(f, " and {} more", pointers.len() - POINTERS_SHOWN)?;
        }
        Ok(())
    }
}
