//! The HTML page of a comparison, for `atif diff --html` and `atif check --html`: both runs
//! normalised with the command's own settings, compared as the text report compares them.

use std::path::Path;

use atif_normalize::{DiffOptions, NormalizeOptions};
use atif_view::ViewOptions;

use crate::cmd::normalize::normalized_document;
use crate::output::write_atomically;

/// One side of a comparison: its bytes and the name the page gives it.
pub(crate) struct Side<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) name: &'a str,
}

/// Writes the side-by-side page of `golden` and `actual` to `path`, atomically.
pub(crate) fn write_diff_page(
    path: &Path,
    golden: &Side<'_>,
    actual: &Side<'_>,
    (normalize, compare): (&NormalizeOptions, &DiffOptions),
    view: &ViewOptions,
) -> anyhow::Result<()> {
    let page = diff_page(golden, actual, (normalize, compare), view)?;
    write_atomically(path, |out| out.write_all(page.as_bytes()))
}

/// The page of [`write_diff_page`], as text.
/// `view` carries what else the page shows, such as the match modes the check judged by.
pub(crate) fn diff_page(
    golden: &Side<'_>,
    actual: &Side<'_>,
    (normalize, compare): (&NormalizeOptions, &DiffOptions),
    view: &ViewOptions,
) -> anyhow::Result<String> {
    let golden_doc = normalized_document(golden.bytes, golden.name, normalize)?;
    let actual_doc = normalized_document(actual.bytes, actual.name, normalize)?;
    let (deltas, changes) = {
        let comparison = atif_normalize::compare(&golden_doc, &actual_doc, compare);
        (comparison.deltas().to_vec(), comparison.changes().to_vec())
    };
    let (golden_run, actual_run) = (golden_doc.into_value(), actual_doc.into_value());
    let names = (golden.name, actual.name);
    Ok(atif_view::render_diff(&golden_run, &actual_run, &deltas, &changes, names, view)?)
}
