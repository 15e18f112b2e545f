//! The entry points of normalisation: [`normalize`] and its variants over a
//! `serde_json::Value`, and [`normalize_json`] straight from JSON text. All of them redact
//! secrets first, then apply the one contract of `contract.rs`.

use std::sync::OnceLock;

use atif_secrets::{Redactions, Scanner};

use serde_json::Value;

use crate::borrowed_tree::{Node, may_hold_secret};
use crate::contract::normalize_tree;
use crate::tree::{Object, Tree};
use crate::view::View;
use crate::{Error, NormalizeOptions, ReportDiff, ReportOptions, Result, Shape, StepChange};

/// Normalises a trajectory so that two runs of the same behaviour give the same document.
///
/// The default contract, applied to the root and, recursively, to every embedded subagent:
/// `null` members and the volatile keys (`session_id`, `timestamp`, `generation_id`,
/// `cost_usd`, `total_cost_usd`, the root's `trajectory_id`) are removed outside tool-call
/// `arguments`; every `0x` address of 6 to 16 hex digits in a string becomes `0xADDR`; tool-call
/// ids become `call_1`, `call_2`, … with the join to observation results intact; subagents are
/// sorted by content and renamed `subagent_1`, … with their refs rewritten; empty `extra`
/// objects are dropped. `schema_version` and model names are never touched. Before all that,
/// every secret the options' scanner finds (by default: API keys, tokens, passwords, private
/// keys; see `atif-secrets`) becomes a `<redacted:KIND>` marker, tool arguments included.
/// Normalising twice gives the same document as normalising once.
/// See `docs/normalization.md` for the full contract.
///
/// # Errors
/// [`Error::NotATrajectory`] when the root, or an element of some `subagent_trajectories`, is
/// not a JSON object.
pub fn normalize(doc: &Value, options: &NormalizeOptions) -> Result<Value> {
    normalize_owned(doc.clone(), options)
}

/// Like [`normalize`], but takes the document by value and rewrites it in place, so strings
/// that do not change are never copied.
///
/// # Errors
/// [`Error::NotATrajectory`] when the root, or an element of some `subagent_trajectories`, is
/// not a JSON object.
pub fn normalize_owned(doc: Value, options: &NormalizeOptions) -> Result<Value> {
    normalize_with_redactions(doc, options).map(|(normalized, _)| normalized)
}

/// Like [`normalize_owned`], and also says which secrets the options' scanner replaced by
/// `<redacted:KIND>` markers, and where: JSON Pointers into `doc` as given.
///
/// Secrets are redacted first, before anything else moves, so subagents holding different
/// secrets still sort the same way and the pointers name places in the input.
///
/// # Errors
/// As [`normalize`].
pub fn normalize_with_redactions(
    mut doc: Value,
    options: &NormalizeOptions,
) -> Result<(Value, Redactions)> {
    let report = match options.secret_scanner() {
        Some(scanner) => scanner.redact_value(&mut doc),
        None => Redactions::new(),
    };
    Ok((normalize_tree(doc, options)?, report))
}

/// Normalises the trajectory written as JSON in `json` and writes its canonical text to
/// `writer`: the same bytes as [`normalize`] then [`write_canonical`](crate::write_canonical),
/// several times faster and in a fraction of the memory, because unchanged strings are copied
/// from the input as they are.
///
/// The JSON must be strict: a byte-order mark, a duplicate key, `NaN`, an integer outside
/// -2^63 … 2^64-1 or nesting deeper than 127 levels is an error (the JSON that
/// `atif_schema::parse_json` accepts, and no other). A document that may hold a secret the
/// options' scanner replaces takes the general path through a `serde_json::Value` (same
/// result, ordinary speed). It returns which secrets were replaced, and where, as
/// [`normalize_with_redactions`] does.
///
/// # Errors
/// [`Error::InvalidJson`] with line and column when `json` is not strict JSON,
/// [`Error::NotATrajectory`] as for [`normalize`], and [`Error::Write`] when `writer` fails.
///
/// ```
/// # fn main() -> atif_normalize::Result<()> {
/// let json = br#"{"schema_version": "ATIF-v1.8", "session_id": "s-1", "steps": []}"#;
/// let mut out = Vec::new();
/// atif_normalize::normalize_json(json, &atif_normalize::NormalizeOptions::default(), &mut out)?;
/// assert_eq!(out, b"{\n  \"schema_version\": \"ATIF-v1.8\",\n  \"steps\": []\n}\n");
/// # Ok(())
/// # }
/// ```
pub fn normalize_json<W: std::io::Write>(
    json: &[u8],
    options: &NormalizeOptions,
    writer: W,
) -> Result<Redactions> {
    JsonDocument::parse_for(json, options)?.normalize_to(options, writer)
}

/// JSON text read for [`normalize_json`] and not yet normalised: for a caller that looks at
/// the root's members before it goes on, without reading the text twice. `atif normalize` asks
/// `atif-schema` whether these kinds make a trajectory's form, then writes.
///
/// ```
/// # fn main() -> atif_normalize::Result<()> {
/// use atif_normalize::{JsonDocument, NormalizeOptions};
///
/// let document = JsonDocument::parse(br#"{"schema_version": "ATIF-v1.8", "steps": []}"#)?;
/// assert_eq!(document.kind(), "an object");
/// assert_eq!(document.member_kind("steps"), Some("an array"));
/// assert_eq!(document.member_kind("agent"), None);
/// let mut out = Vec::new();
/// document.normalize_to(&NormalizeOptions::default(), &mut out)?;
/// assert!(out.starts_with(b"{\n  \"schema_version\""));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct JsonDocument<'a> {
    root: Node<'a>,
    /// The scanner [`JsonDocument::parse_for`] asked as it read, and its answer: whether a key
    /// or string may hold a secret.
    probed: Option<(Scanner, bool)>,
}

impl<'a> JsonDocument<'a> {
    /// Reads `json`, which must be strict JSON as [`normalize_json`] says. Strings borrow from
    /// `json`.
    ///
    /// # Errors
    /// [`Error::InvalidJson`] with line and column.
    pub fn parse(json: &'a [u8]) -> Result<JsonDocument<'a>> {
        Ok(JsonDocument { root: crate::strict_parser::parse(json, None)?.0, probed: None })
    }

    /// [`JsonDocument::parse`] for a document to be normalised with `options`: the options'
    /// secret scanner is asked about each key and string as it is read, while its text is
    /// still in the cache, rather than in a walk over the whole tree before normalising.
    ///
    /// # Errors
    /// As [`JsonDocument::parse`].
    pub fn parse_for(json: &'a [u8], options: &NormalizeOptions) -> Result<JsonDocument<'a>> {
        let scanner = options.secret_scanner();
        let (root, found) = crate::strict_parser::parse(json, scanner)?;
        Ok(JsonDocument { root, probed: scanner.map(|scanner| (scanner.clone(), found)) })
    }

    /// The kind of the root, as error messages name kinds: `null`, `a boolean`, `a number`,
    /// `a string`, `an array` or `an object`.
    pub fn kind(&self) -> &'static str {
        self.root.kind().name()
    }

    /// The kind of the root's member `key`, named as [`JsonDocument::kind`] names it; `None`
    /// when the root is not an object or has no such member.
    pub fn member_kind(&self, key: &str) -> Option<&'static str> {
        self.root
            .as_object()
            .and_then(|members| members.get(key))
            .map(|member| member.kind().name())
    }

    /// Normalises the document and writes its canonical text to `writer`, as
    /// [`normalize_json`] does.
    ///
    /// # Errors
    /// As [`normalize_json`], less [`Error::InvalidJson`].
    pub fn normalize_to<W: std::io::Write>(
        self,
        options: &NormalizeOptions,
        mut writer: W,
    ) -> Result<Redactions> {
        let (normalized, report) = self.normalize(options)?;
        normalized.write_canonical(&mut writer).map_err(|source| Error::Write { source })?;
        Ok(report)
    }

    /// Normalises the document and keeps it, still borrowing from the text, for a caller that
    /// compares its canonical text with a golden's before it needs a `Value` (if ever). Also
    /// says which secrets were replaced, as [`normalize_with_redactions`] does.
    ///
    /// # Errors
    /// [`Error::NotATrajectory`] as for [`normalize`].
    pub fn normalize(
        self,
        options: &NormalizeOptions,
    ) -> Result<(NormalizedDocument<'a>, Redactions)> {
        let JsonDocument { root, probed } = self;
        // A document that may hold a secret goes through the scanner, which works on a
        // `Value`; the others (almost all of them) stay borrowed. The parser may have asked
        // this scanner already.
        let may_hold = match (options.secret_scanner(), probed) {
            (None, _) => false,
            (Some(scanner), Some((asked, found))) if asked == *scanner => found,
            (Some(scanner), _) => may_hold_secret(&root, scanner),
        };
        if may_hold {
            let (normalized, report) = normalize_with_redactions(root.into_value(), options)?;
            return Ok((NormalizedDocument::new(Node::from_value(normalized)), report));
        }
        Ok((NormalizedDocument::new(normalize_tree(root, options)?), Redactions::new()))
    }
}

/// A normalised document from [`JsonDocument::normalize`], whose strings may still borrow from
/// the JSON text: what a golden check or `atif diff` works on, so that a run of a hundred
/// megabytes is never copied into a `serde_json::Value`. Two of them are compared by
/// [`compare`](crate::compare), which gives what the functions on `Value`s give
/// ([`diff`](crate::diff), [`explain`](crate::explain), [`report`](crate::report)), with the
/// same results.
///
/// ```
/// # fn main() -> atif_normalize::Result<()> {
/// use atif_normalize::{DiffOptions, JsonDocument, NormalizeOptions, ReportOptions, compare};
///
/// let options = NormalizeOptions::default();
/// let golden_json = br#"{"schema_version": "ATIF-v1.8", "session_id": "s-1", "steps": []}"#;
/// let (golden, _secrets) = JsonDocument::parse(golden_json)?.normalize(&options)?;
/// let text = "{\n  \"schema_version\": \"ATIF-v1.8\",\n  \"steps\": []\n}\n";
/// assert!(golden.is_canonical_text_of(text.as_bytes()));
/// assert_eq!(golden.to_canonical_string(), text);
///
/// let actual_json = br#"{"schema_version": "ATIF-v1.8", "steps": [{"step_id": 1, "source": "user"}]}"#;
/// let (actual, _) = JsonDocument::parse(actual_json)?.normalize(&options)?;
/// let comparison = compare(&golden, &actual, &DiffOptions::default());
/// assert!(comparison.report(&ReportOptions::new()).contains("step 1 (user) inserted"));
/// assert_eq!(golden.into_value(), serde_json::json!({"schema_version": "ATIF-v1.8", "steps": []}));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct NormalizedDocument<'a> {
    root: Node<'a>,
    /// The content hash, once computed: it reads every byte of the canonical text.
    hash: OnceLock<String>,
}

impl<'a> NormalizedDocument<'a> {
    fn new(root: Node<'a>) -> NormalizedDocument<'a> {
        NormalizedDocument { root, hash: OnceLock::new() }
    }
}

impl NormalizedDocument<'_> {
    /// Normalises `doc`, as [`normalize_with_redactions`] does, into a document of its own: for a
    /// run that was parsed already, to be compared with one read by [`JsonDocument`]. Its
    /// strings are moved, not copied.
    ///
    /// # Errors
    /// As [`normalize`].
    pub fn from_value(
        doc: Value,
        options: &NormalizeOptions,
    ) -> Result<(NormalizedDocument<'static>, Redactions)> {
        let (normalized, report) = normalize_with_redactions(doc, options)?;
        Ok((NormalizedDocument::new(Node::from_value(normalized)), report))
    }

    /// Whether `text` is exactly this document's canonical text, compared block by block as it
    /// is written (see [`is_canonical_text_of`](crate::is_canonical_text_of)).
    pub fn is_canonical_text_of(&self, text: &[u8]) -> bool {
        crate::canonical::is_canonical_text(&self.root, text)
    }

    /// Writes the canonical text to `writer`, in blocks (see
    /// [`write_canonical`](crate::write_canonical)).
    ///
    /// # Errors
    /// The first error `writer` returns.
    pub fn write_canonical<W: std::io::Write>(&self, mut writer: W) -> std::io::Result<()> {
        crate::canonical::stream(&self.root, &mut writer)
    }

    /// The canonical text (see [`to_canonical_string`](crate::to_canonical_string)).
    pub fn to_canonical_string(&self) -> String {
        crate::canonical::canonical_string(&self.root)
    }

    /// The content hash of the canonical text (see [`content_hash`](crate::content_hash)),
    /// computed once: a caller that has a thread to spare while it does something else may ask
    /// for it there, and [`shape`](Self::shape) and [`compare`](crate::compare) reuse it.
    pub fn content_hash(&self) -> String {
        self.hash.get_or_init(|| crate::canonical::hash_of(&self.root)).clone()
    }

    /// The Shape (see [`shape`](crate::shape)).
    pub fn shape(&self) -> Shape {
        crate::shape::shape_of(&self.root, self.content_hash())
    }

    /// The root's member `key` as a `serde_json::Value` (a copy: meant for small members such as
    /// `schema_version`).
    pub fn member(&self, key: &str) -> Option<Value> {
        self.root.get(key).map(View::to_value)
    }

    /// How much content the run was captured with: an imported trace's `extra.capture.content`
    /// (`full`, `partial`, `none`), or `None` for a run that does not say.
    pub(crate) fn capture_level(&self) -> Option<String> {
        self.root.str_at(&["extra", "capture", "content"]).map(std::borrow::Cow::into_owned)
    }

    /// How `actual` differs from this document, step by step (see [`explain`](crate::explain)).
    pub(crate) fn explain(&self, actual: &NormalizedDocument<'_>) -> Vec<StepChange> {
        crate::explain::explain_views(&self.root, &actual.root)
    }

    /// The failure report of how `actual` differs from this document (see
    /// [`report`](crate::report)), given the explanation `changes` of the same two documents;
    /// the deltas may come as the lines they display as.
    pub(crate) fn report<D: std::fmt::Display>(
        &self,
        actual: &NormalizedDocument<'_>,
        deltas: &[D],
        changes: &[StepChange],
        options: &ReportOptions,
    ) -> String {
        crate::report::report_views(&self.root, &actual.root, deltas, changes, options)
    }

    /// The unified diff of a report (see
    /// [`Comparison::report_diff`](crate::Comparison::report_diff)).
    pub(crate) fn report_diff(
        &self,
        actual: &NormalizedDocument<'_>,
        changes: &[StepChange],
        options: &ReportOptions,
    ) -> ReportDiff {
        crate::report::report_diff_views(&self.root, &actual.root, changes, options)
    }

    /// The document as a `serde_json::Value`: the same value [`normalize`] gives for the same
    /// text.
    pub fn into_value(self) -> Value {
        self.root.into_value()
    }
}
