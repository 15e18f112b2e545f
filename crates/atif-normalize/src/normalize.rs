//! The entry points of normalisation: [`normalize`] and its variants over a
//! `serde_json::Value`, and [`normalize_json`] straight from JSON text. All of them redact
//! secrets first, then apply the one contract of `contract.rs`.

use atif_secrets::Report;
use serde_json::Value;

use crate::borrowed_tree::{Node, may_hold_secret};
use crate::contract::normalize_tree;
use crate::tree::{Object, Tree};
use crate::{Error, NormalizeOptions, Result};

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
    normalize_with_report(doc, options).map(|(normalized, _)| normalized)
}

/// Like [`normalize_owned`], and also says which secrets the options' scanner replaced by
/// `<redacted:KIND>` markers, and where: JSON Pointers into `doc` as given.
///
/// Secrets are redacted first, before anything else moves, so subagents holding different
/// secrets still sort the same way and the pointers name places in the input.
///
/// # Errors
/// As [`normalize`].
pub fn normalize_with_report(
    mut doc: Value,
    options: &NormalizeOptions,
) -> Result<(Value, Report)> {
    let report = match options.secret_scanner() {
        Some(scanner) => scanner.redact_value(&mut doc),
        None => Report::new(),
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
/// [`normalize_with_report`] does.
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
) -> Result<Report> {
    JsonDocument::parse(json)?.normalize_to(options, writer)
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
}

impl<'a> JsonDocument<'a> {
    /// Reads `json`, which must be strict JSON as [`normalize_json`] says. Strings borrow from
    /// `json`.
    ///
    /// # Errors
    /// [`Error::InvalidJson`] with line and column.
    pub fn parse(json: &'a [u8]) -> Result<JsonDocument<'a>> {
        Ok(JsonDocument { root: Node::parse(json)? })
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
    ) -> Result<Report> {
        let root = self.root;
        // A document that may hold a secret goes through the scanner, which works on a
        // `Value`; the others (almost all of them) stay borrowed and stream.
        if options.secret_scanner().is_some_and(|scanner| may_hold_secret(&root, scanner)) {
            let (normalized, report) = normalize_with_report(root.into_value(), options)?;
            write(&normalized, &mut writer)?;
            return Ok(report);
        }
        write(&normalize_tree(root, options)?, &mut writer)?;
        Ok(Report::new())
    }
}

fn write(
    normalized: &impl crate::canonical::WriteCanonical,
    writer: &mut dyn std::io::Write,
) -> Result<()> {
    crate::canonical::stream(normalized, writer).map_err(|source| Error::Write { source })
}
