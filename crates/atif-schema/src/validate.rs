//! Validation: every rule of ATIF v1.0–v1.8, every finding reported with a rule id, a severity,
//! a JSON Pointer and a message (see `docs/validation.md` for the rule catalogue).
//!
//! The validator walks the `serde_json::Value` itself rather than deserialising into the typed
//! models, so cross-field rules (step sequence, call joins, subagent ids) still run when some
//! field elsewhere is broken, and nothing stops at the first error.

mod media;
mod parse;
mod rules;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::{Error, Result, SchemaVersion};

/// Which reference the verdict follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// The default: JSON as RFC 8259 defines it and ATIF as written, without Python's lax
    /// coercions (`"7"` is not an integer, `2.0` is not an integer, `"yes"` is not a boolean,
    /// `NaN` is not a number, duplicate keys are errors), a `schema_version` is required, and a
    /// subagent ref must resolve.
    #[default]
    Strict,
    /// The verdict of Harbor 0.26's `TrajectoryValidator` (the official reference): its lax
    /// coercions and defaults are accepted (and reported as warnings), so a producer can ask
    /// "will the Harbor tools accept this file?".
    Harbor,
}

impl Profile {
    /// The profile's name on the command line: `strict` or `harbor`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Strict => "strict",
            Profile::Harbor => "harbor",
        }
    }

    /// The severity of a finding about something that Harbor accepts: an error in the strict
    /// profile, a warning in the harbor one.
    pub(crate) fn lax_severity(self) -> Severity {
        match self {
            Profile::Strict => Severity::Error,
            Profile::Harbor => Severity::Warning,
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Profile {
    type Err = Error;

    fn from_str(name: &str) -> Result<Profile> {
        match name {
            "strict" => Ok(Profile::Strict),
            "harbor" => Ok(Profile::Harbor),
            other => Err(Error::UnknownProfile { name: other.to_owned() }),
        }
    }
}

/// How to validate. The default is [`Profile::Strict`] with no media folder, so validation
/// never touches the file system.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    profile: Profile,
    media_folder: Option<PathBuf>,
}

impl ValidateOptions {
    /// Options with the given profile.
    pub fn with_profile(profile: Profile) -> ValidateOptions {
        ValidateOptions { profile, media_folder: None }
    }

    /// Sets the profile (default [`Profile::Strict`]).
    pub fn set_profile(&mut self, profile: Profile) {
        self.profile = profile;
    }

    /// The profile.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Sets the folder the trajectory file is in (default `None`).
    ///
    /// With a folder, the [`Rule::MediaFile`] rule checks that every local image or audio file
    /// that a top-level step's `message` or result `content` names exists, relative paths
    /// resolved against the folder, as Harbor's validator does when it is given a file: an
    /// error in the harbor profile, a warning in the strict one. Without one, validation never
    /// touches the file system.
    pub fn set_media_folder(&mut self, folder: Option<PathBuf>) {
        self.media_folder = folder;
    }

    /// The folder media paths are resolved against, when media files are checked.
    pub fn media_folder(&self) -> Option<&Path> {
        self.media_folder.as_deref()
    }
}

/// How bad a finding is: an error makes the document invalid, a warning does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    /// The document is invalid.
    Error,
    /// The document is valid, but this is worth knowing.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! rules {
    ($($(#[doc = $doc:literal])* $variant:ident => $id:literal,)*) => {
        /// The rule a finding comes from; its [`id`](Rule::id) is stable and kebab-case.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Rule {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Rule {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// The stable id, e.g. `call-join`.
            pub fn id(self) -> &'static str {
                match self {
                    $(Rule::$variant => $id,)*
                }
            }
        }
    };
}

rules! {
    /// The bytes are not one JSON document (syntax, encoding, byte-order mark, empty, too deep).
    Json => "json",
    /// An object repeats a key (Python keeps the last silently).
    DuplicateKey => "duplicate-key",
    /// A `NaN`, `Infinity` or `-Infinity` literal, which JSON does not have.
    NonFiniteNumber => "non-finite-number",
    /// An integer outside -2^63 … 2^64-1, which JSON readers keep only as a rounded float.
    IntegerRange => "integer-range",
    /// The root is not a JSON object.
    RootObject => "root-object",
    /// A key that the object's ATIF type does not define.
    UnknownField => "unknown-field",
    /// A required field is missing or `null`.
    Required => "required",
    /// A value of the wrong JSON type.
    Type => "type",
    /// `schema_version` is missing or not one of `ATIF-v1.0` … `ATIF-v1.8`.
    SchemaVersion => "schema-version",
    /// `steps` is empty.
    EmptySteps => "empty-steps",
    /// `step_id`s are not 1, 2, 3… in array order.
    StepSequence => "step-sequence",
    /// A string outside its fixed set (`source`, content part `type`).
    Enum => "enum",
    /// A field only agent steps may have, on a user or system step.
    AgentOnlyField => "agent-only-field",
    /// An agent step with `llm_call_count: 0` has `metrics` or `reasoning_content`.
    LlmCallZero => "llm-call-zero",
    /// A number below its minimum (`llm_call_count`, `total_steps`, `duration_sec`).
    Range => "range",
    /// A `source_call_id` that is not a `tool_call_id` of the same step.
    CallJoin => "call-join",
    /// A timestamp that Python's `datetime.fromisoformat` rejects.
    Timestamp => "timestamp",
    /// A content part with the wrong fields for its type.
    ContentPart => "content-part",
    /// An image or audio `media_type` outside the allowed values.
    MediaType => "media-type",
    /// An embedded subagent without a `trajectory_id`, or with one already used in its array.
    SubagentId => "subagent-id",
    /// A subagent ref with neither `trajectory_id` nor `trajectory_path`.
    SubagentRef => "subagent-ref",
    /// A subagent ref whose `trajectory_id` names no embedded subagent and that has no
    /// `trajectory_path`.
    SubagentResolve => "subagent-resolve",
    /// Embedded subagents nested too deep to check.
    Depth => "depth",
    /// The label is older than a feature the document uses (or lacks a field the label requires).
    VersionFeature => "version-feature",
    /// A `final_metrics` total differs from the sum of the step metrics, unexplained by `notes`.
    FinalMetricsSum => "final-metrics-sum",
    /// `final_metrics.total_steps` differs from the number of steps.
    TotalSteps => "total-steps",
    /// Two tool calls of one step share a `tool_call_id`.
    DuplicateToolCallId => "duplicate-tool-call-id",
    /// `cached_tokens` exceeds `prompt_tokens`.
    CachedTokens => "cached-tokens",
    /// A token id or logprob array whose length differs from its token count.
    TokenCount => "token-count",
    /// A local image or audio file named by a content part does not exist (checked only when
    /// [`ValidateOptions::set_media_folder`] gives the trajectory's folder).
    MediaFile => "media-file",
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// One problem found in a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The rule that found it.
    pub rule: Rule,
    /// Error (invalid) or warning (valid, worth knowing).
    pub severity: Severity,
    /// JSON Pointer of the offending value (`""` is the root), e.g.
    /// `/steps/2/observation/results/0/source_call_id`.
    pub pointer: String,
    /// What was expected and what was found.
    pub message: String,
}

impl Finding {
    /// A finding (findings are made by the validator; this is for tests and tools).
    pub fn new(
        rule: Rule,
        severity: Severity,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding { rule, severity, pointer: pointer.into(), message: message.into() }
    }
}

impl fmt::Display for Finding {
    /// `error[call-join] /steps/3/observation/results/0/source_call_id: …` (no pointer for the root).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.severity, self.rule)?;
        if !self.pointer.is_empty() {
            // Keys may hold control characters; escape them so a finding stays on one line.
            f.write_str(" ")?;
            for c in self.pointer.chars() {
                if c.is_control() {
                    write!(f, "{}", c.escape_default())?;
                } else {
                    write!(f, "{c}")?;
                }
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// The outcome of validating one document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Validation {
    /// The declared version (`None` when missing or not a known label; the harbor profile reads
    /// a missing label as `ATIF-v1.8`).
    pub version: Option<SchemaVersion>,
    /// The number of top-level steps, when `steps` is an array.
    pub n_steps: Option<usize>,
    /// Every finding, errors and warnings, in document order.
    pub findings: Vec<Finding>,
}

impl Validation {
    /// The report of an input that is not JSON at all: one [`Rule::Json`] error at the root
    /// (for input that the bounded reader stopped before it was read whole, such as binary
    /// data).
    pub fn not_json(message: impl Into<String>) -> Validation {
        let finding = Finding::new(Rule::Json, Severity::Error, "", message);
        Validation { version: None, n_steps: None, findings: vec![finding] }
    }

    /// True when no finding is an error.
    pub fn is_valid(&self) -> bool {
        self.errors().next().is_none()
    }

    /// The findings that make the document invalid.
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|finding| finding.severity == Severity::Error)
    }

    /// The findings that do not.
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|finding| finding.severity == Severity::Warning)
    }
}

/// Reads `bytes` as one strict JSON document (RFC 8259).
///
/// Unlike `serde_json::from_slice`, this rejects duplicate keys (with the pointer of the second)
/// and a leading byte-order mark, and names the Python habit behind `NaN`/`Infinity`. Nesting is
/// limited to 128 levels, so hostile input cannot overflow the stack.
///
/// # Errors
///
/// [`Error::Json`] with line and column for malformed JSON (empty input, invalid UTF-8, a
/// byte-order mark, `NaN`, trailing characters, nesting deeper than 128) and with the pointer
/// for a duplicate key or an integer outside -2^63 … 2^64-1 (which would be read as a rounded
/// float).
pub fn parse_json(bytes: &[u8]) -> Result<Value> {
    let parsed = parse::read(bytes, false).map_err(|err| Error::Json {
        pointer: None,
        line: err.line,
        column: err.column,
        message: err.message,
    })?;
    if parsed.bom {
        return Err(Error::Json {
            pointer: None,
            line: Some(1),
            column: Some(1),
            message: BOM_MESSAGE.to_owned(),
        });
    }
    if let Some(pointer) = parsed.duplicates.into_iter().next() {
        let message =
            format!("{}: {}", display_pointer(&pointer), duplicate_message(Profile::Strict));
        return Err(Error::Json { pointer: Some(pointer), line: None, column: None, message });
    }
    if let Some(pointer) = parsed.big_integers.into_iter().next() {
        let message = format!("{}: {}", display_pointer(&pointer), INTEGER_RANGE_MESSAGE);
        return Err(Error::Json { pointer: Some(pointer), line: None, column: None, message });
    }
    Ok(parsed.value)
}

/// Validates a document given as bytes: reads it (leniently enough to report duplicate keys,
/// `NaN` and a byte-order mark as findings rather than giving up) and checks every rule.
///
/// Bytes that are not JSON at all give a report with one [`Rule::Json`] error. The file system
/// is read only when the options name a media folder ([`ValidateOptions::set_media_folder`]).
pub fn validate_bytes(bytes: &[u8], options: &ValidateOptions) -> Validation {
    let profile = options.profile();
    let parsed = match parse::read(bytes, true) {
        Ok(parsed) => parsed,
        Err(err) => {
            let finding = Finding::new(Rule::Json, Severity::Error, "", err.message);
            return Validation { version: None, n_steps: None, findings: vec![finding] };
        }
    };
    let mut findings = Vec::new();
    if parsed.bom {
        findings.push(Finding::new(Rule::Json, Severity::Error, "", BOM_MESSAGE));
    }
    let lax = profile.lax_severity();
    for pointer in parsed.duplicates {
        findings.push(Finding::new(Rule::DuplicateKey, lax, pointer, duplicate_message(profile)));
    }
    for (pointer, literal) in parsed.non_finite {
        let mut message = parse::non_finite_message(literal);
        if profile == Profile::Harbor {
            message.push_str("; Harbor accepts it where a float is expected");
        }
        findings.push(Finding::new(Rule::NonFiniteNumber, lax, pointer, message));
    }
    for pointer in parsed.big_integers {
        let mut message = INTEGER_RANGE_MESSAGE.to_owned();
        if profile == Profile::Harbor {
            message.push_str("; Python reads it exactly");
        }
        findings.push(Finding::new(Rule::IntegerRange, lax, pointer, message));
    }
    let omitted = [
        (Rule::DuplicateKey, parsed.omitted_duplicates, "duplicate keys"),
        (Rule::NonFiniteNumber, parsed.omitted_non_finite, "non-finite numbers"),
    ];
    for (rule, count, what) in omitted {
        if count > 0 {
            let message = format!(
                "… and {count} more {what}, not listed (only the first {} are)",
                parse::MAX_RECORDED
            );
            findings.push(Finding::new(rule, lax, "", message));
        }
    }
    let (version, n_steps) = rules::check(&parsed.value, profile, parsed.sentinel, &mut findings);
    if let Some(folder) = options.media_folder() {
        media::check(&parsed.value, folder, profile, &mut findings);
    }
    sort_by_pointer(&mut findings);
    Validation { version, n_steps, findings }
}

/// Validates an already parsed document and returns every finding.
///
/// A `serde_json::Value` cannot hold duplicate keys or `NaN`, so those rules only fire in
/// [`validate_bytes`]. The file system is read only when the options name a media folder.
pub fn validate(document: &Value, options: &ValidateOptions) -> Validation {
    let mut findings = Vec::new();
    let (version, n_steps) = rules::check(document, options.profile(), None, &mut findings);
    if let Some(folder) = options.media_folder() {
        media::check(document, folder, options.profile(), &mut findings);
    }
    sort_by_pointer(&mut findings);
    Validation { version, n_steps, findings }
}

const INTEGER_RANGE_MESSAGE: &str = "an integer outside -2^63 … 2^64-1: JSON readers outside \
     Python (serde_json, JavaScript) keep only a rounded float of it, and no ATIF count or id \
     is that large";

const BOM_MESSAGE: &str = "the file starts with a UTF-8 byte-order mark, which JSON forbids \
     (RFC 8259 §8.1) and Python's json module rejects; Windows tools such as PowerShell's \
     Out-File add one: save as UTF-8 without BOM";

fn duplicate_message(profile: Profile) -> String {
    let mut message =
        "this key repeats an earlier key of the same object; Python's json keeps the \
                       last value silently, so the earlier one is lost"
            .to_owned();
    if profile == Profile::Harbor {
        message.push_str(" (Harbor accepts it, using the last value)");
    }
    message
}

/// Puts findings in document order: by pointer, array indices compared as numbers, a value
/// before what it contains; findings at one pointer keep the order they were found in.
fn sort_by_pointer(findings: &mut [Finding]) {
    fn segments(pointer: &str) -> impl Iterator<Item = (Option<usize>, &str)> {
        pointer.split('/').skip(1).map(|segment| (segment.parse::<usize>().ok(), segment))
    }
    findings.sort_by(|a, b| segments(&a.pointer).cmp(segments(&b.pointer)));
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "(root)" } else { pointer }
}
