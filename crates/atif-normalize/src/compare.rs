//! One comparison of two normalised runs: their Shapes, the deltas between them and the
//! step-by-step explanation, ready to be reported.

use crate::normalize::NormalizedDocument;
use crate::shape::join;
use crate::{Delta, DiffOptions, ReportDiff, ReportOptions, Shape, StepChange};

/// Compares `actual` with `golden`: what every caller that judges a run does (`atif diff`,
/// `atif check`, a golden check in a test, the review of a pending file).
///
/// Two runs captured with different amounts of content (imported traces whose
/// `extra.capture.content` differ) never compare equal with content compared, and the report
/// says why. Compared on structure alone ([`DiffOptions::set_compare_content`] off), they are
/// compared on what both captured: every Shape field but `step_count`, `sources` and the hash,
/// since a trace without content has no system or user steps.
///
/// The content hashes are most of what the Shapes cost on a long run, so the golden's is
/// computed on a second thread while the steps are explained; a hash the documents already
/// know (see [`NormalizedDocument::content_hash`]) is not computed again.
///
/// ```
/// # fn main() -> atif_normalize::Result<()> {
/// use atif_normalize::{DiffOptions, JsonDocument, NormalizeOptions, ReportOptions, compare};
///
/// let options = NormalizeOptions::default();
/// let golden_json = br#"{"schema_version": "ATIF-v1.8", "steps": []}"#;
/// let actual_json =
///     br#"{"schema_version": "ATIF-v1.8", "steps": [{"step_id": 1, "source": "user"}]}"#;
/// let (golden, _) = JsonDocument::parse(golden_json)?.normalize(&options)?;
/// let (actual, _) = JsonDocument::parse(actual_json)?.normalize(&options)?;
/// let comparison = compare(&golden, &actual, &DiffOptions::default());
/// assert!(!comparison.is_same());
/// assert_eq!(comparison.actual_shape().step_count, 1);
/// assert!(comparison.report(&ReportOptions::new()).contains("step 1 (user) inserted"));
/// # Ok(())
/// # }
/// ```
pub fn compare<'r>(
    golden: &'r NormalizedDocument<'r>,
    actual: &'r NormalizedDocument<'r>,
    options: &DiffOptions,
) -> Comparison<'r> {
    let (golden_shape, (actual_shape, changes)) =
        join(|| golden.shape(), || (actual.shape(), golden.explain(actual)));
    let mut deltas = crate::diff(&golden_shape, &actual_shape, options);
    if !options.compare_content() && captured_differently(golden, actual) {
        // Structure only, across capture levels: a trace without content has no system or user
        // steps (they are message content), so the step list is not compared; the model calls,
        // the tool calls and their errors, the subagents, the models and the tokens are.
        deltas.retain(|delta| !matches!(delta.field.as_str(), "step_count" | "sources"));
    }
    Comparison { golden, actual, golden_shape, actual_shape, deltas, changes }
}

/// Whether both runs say how much content they were captured with (`extra.capture.content`),
/// and say different things.
fn captured_differently(golden: &NormalizedDocument<'_>, actual: &NormalizedDocument<'_>) -> bool {
    match (golden.capture_level(), actual.capture_level()) {
        (Some(golden), Some(actual)) => golden != actual,
        _ => false,
    }
}

/// What [`compare`] found: the two Shapes, their deltas (empty when the behaviour is the same)
/// and the steps that moved.
#[derive(Debug)]
pub struct Comparison<'r> {
    golden: &'r NormalizedDocument<'r>,
    actual: &'r NormalizedDocument<'r>,
    golden_shape: Shape,
    actual_shape: Shape,
    deltas: Vec<Delta>,
    changes: Vec<StepChange>,
}

impl Comparison<'_> {
    /// Whether the behaviour is the same: no Shape field moved under the diff options.
    pub fn is_same(&self) -> bool {
        self.deltas.is_empty()
    }

    /// The Shape fields that moved, most telling first.
    pub fn deltas(&self) -> &[Delta] {
        &self.deltas
    }

    /// The steps inserted, deleted or changed, in order (see [`explain`](crate::explain)).
    pub fn changes(&self) -> &[StepChange] {
        &self.changes
    }

    /// The golden's Shape.
    pub fn golden_shape(&self) -> &Shape {
        &self.golden_shape
    }

    /// The actual run's Shape.
    pub fn actual_shape(&self) -> &Shape {
        &self.actual_shape
    }

    /// The failure report (see [`report`](crate::report)): the deltas, what moved step by step,
    /// then the unified diff, cut to a screen unless `options` asks for it whole.
    pub fn report(&self, options: &ReportOptions) -> String {
        self.golden.report(self.actual, &self.deltas, &self.changes, options)
    }

    /// [`report`](Self::report) with the deltas shown as `deltas` says (the lines a caller
    /// already rendered, or translated).
    pub fn report_with<D: std::fmt::Display>(
        &self,
        deltas: &[D],
        options: &ReportOptions,
    ) -> String {
        self.golden.report(self.actual, deltas, &self.changes, options)
    }

    /// The unified diff the report shows: the first changed places, or all of the diff with
    /// [`ReportOptions::set_full`]; for a caller that lays the report out itself (`atif diff
    /// --format json`).
    pub fn report_diff(&self, options: &ReportOptions) -> ReportDiff {
        self.golden.report_diff(self.actual, &self.changes, options)
    }
}
