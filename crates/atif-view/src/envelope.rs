//! The page of an envelope verdict: the golden's runs beside the new runs, as bar charts of the
//! tool-call variants, each tool's rate, the crash and pass rates and the count distributions,
//! with the fields that moved highlighted.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use atif_envelope::{Conclusion, Envelope, FieldVerdict, Verdict};
use serde_json::Value;

use crate::html::{close_page, escape_into, open_page};
use crate::options::ViewOptions;

/// The most bins of a count field's histogram.
const MAX_BINS: u64 = 10;
/// The fields whose samples the envelope keeps, drawn as histograms.
const COUNT_FIELDS: [&str; 4] = ["step_count", "llm_calls", "prompt_tokens", "completion_tokens"];

/// Renders an envelope verdict as one self-contained HTML page: `golden` (the envelope golden)
/// beside `actual` (the envelope of the new runs, built with the golden's order), as bar charts
/// of what `verdict` (from `atif_envelope::compare`) tested, each field that moved highlighted
/// with its effect and adjusted p-value.
///
/// The page names no run: runs are labelled by their paths, which stay out of what is shared.
/// `options.title()` defaults to "atif envelope".
pub fn render_envelope(
    golden: &Envelope,
    actual: &Envelope,
    verdict: &Verdict,
    options: &ViewOptions,
) -> String {
    let title = options.title().map_or_else(|| "atif envelope".to_owned(), str::to_owned);
    let mut out = String::with_capacity(8192);
    open_page(&mut out, &title, "envelope");
    out.push_str("<header>\n<h1>");
    escape_into(&mut out, &title);
    out.push_str("</h1>\n");
    header(&mut out, verdict);
    out.push_str(
        "<p class=\"legend\"><svg class=\"key\" viewBox=\"0 0 10 10\" aria-hidden=\"true\">\
         <rect class=\"bg\" width=\"10\" height=\"10\"/></svg> golden \
         <svg class=\"key\" viewBox=\"0 0 10 10\" aria-hidden=\"true\">\
         <rect class=\"ba\" width=\"10\" height=\"10\"/></svg> new runs</p>\n</header>\n<main>\n",
    );
    let field = |name: &str| verdict.fields.iter().find(|f| f.field == name);
    let (n_golden, n_actual) = (verdict.golden_runs, verdict.runs);
    if let Some(sequence) = field("tool_sequence") {
        out.push_str("<h2>Tool-call variants</h2>\n");
        variants(&mut out, sequence, (n_golden, n_actual));
    }
    out.push_str("<h2>Rates</h2>\n<table class=\"bars\">\n");
    let rates = verdict.fields.iter().filter(|f| {
        f.field.starts_with("tool_runs.") || f.field == "crash_rate" || f.field == "pass_rate"
    });
    for rate in rates {
        let (g, a) = (fraction(&rate.golden), fraction(&rate.actual));
        let label = rate
            .field
            .strip_prefix("tool_runs.")
            .map_or_else(|| rate.field.replace('_', " "), |tool| format!("runs calling {tool}"));
        bar_row(
            &mut out,
            &label,
            (g, a),
            &format!("{} → {}", text(&rate.golden), text(&rate.actual)),
            Some(rate),
        );
    }
    out.push_str("</table>\n<h2>Counts</h2>\n");
    for name in COUNT_FIELDS {
        let samples = (golden.samples(name).unwrap_or(&[]), actual.samples(name).unwrap_or(&[]));
        histogram(&mut out, name, samples, field(name));
    }
    out.push_str("</main>\n");
    close_page(&mut out);
    out
}

/// The verdict, the run counts, and each field that moved with its effect.
fn header(out: &mut String, verdict: &Verdict) {
    let class = match verdict.verdict {
        Conclusion::Changed => "changed",
        Conclusion::NoClearChange => "same",
        _ => "inconclusive",
    };
    let _ = writeln!(
        out,
        "<p>{} golden runs ⟷ {} new runs (order {}, α {}): \
         <span class=\"verdict {class}\">{}</span></p>",
        verdict.golden_runs,
        verdict.runs,
        verdict.order.as_str(),
        verdict.alpha,
        verdict.verdict.as_str()
    );
    let moved: Vec<&FieldVerdict> =
        verdict.fields.iter().filter(|f| f.verdict == Conclusion::Changed).collect();
    if moved.is_empty() {
        return;
    }
    out.push_str("<table class=\"deltas\"><tr><th>field that moved</th><th>what moved</th><th>p (Holm)</th></tr>\n");
    for field in moved {
        out.push_str("<tr class=\"moved\"><th>");
        escape_into(out, &field.field);
        out.push_str("</th><td>");
        escape_into(out, &field.effect);
        let _ = writeln!(out, "</td><td>{:.2e}</td></tr>", field.p_holm);
    }
    out.push_str("</table>\n");
}

/// One bar per tool-call variant and side: the share of the side's runs that made it.
fn variants(out: &mut String, sequence: &FieldVerdict, (n_golden, n_actual): (u64, u64)) {
    let counts = |table: &Value| -> BTreeMap<String, u64> {
        let entries = table.as_object().into_iter().flatten();
        entries.map(|(key, count)| (key.clone(), count.as_u64().unwrap_or(0))).collect()
    };
    let (golden, actual) = (counts(&sequence.golden), counts(&sequence.actual));
    let mut keys: Vec<&String> = golden.keys().chain(actual.keys()).collect();
    keys.sort();
    keys.dedup();
    // The most frequent variants first, over both sides.
    keys.sort_by_key(|key| {
        std::cmp::Reverse(golden.get(*key).unwrap_or(&0) + actual.get(*key).unwrap_or(&0))
    });
    let moved = (sequence.verdict == Conclusion::Changed).then_some(sequence);
    let _ = writeln!(
        out,
        "<table class=\"bars variants{}\">",
        if moved.is_some() { " moved" } else { "" }
    );
    for key in keys {
        let (g, a) = (*golden.get(key).unwrap_or(&0), *actual.get(key).unwrap_or(&0));
        let shares = (share(g, n_golden), share(a, n_actual));
        let label = if key.is_empty() { "(no tool calls)" } else { key.as_str() };
        bar_row(out, label, shares, &format!("{g}/{n_golden} → {a}/{n_actual}"), None);
    }
    out.push_str("</table>\n");
    if let Some(field) = moved {
        out.push_str("<p class=\"moved\">");
        escape_into(out, &field.effect);
        out.push_str("</p>\n");
    }
}

/// A count field's samples as a histogram of up to [`MAX_BINS`] equal bins over both sides'
/// range, each bin a bar per side (the share of its runs).
fn histogram(
    out: &mut String,
    name: &str,
    (golden, actual): (&[u64], &[u64]),
    field: Option<&FieldVerdict>,
) {
    let moved = field.is_some_and(|f| f.verdict == Conclusion::Changed);
    let _ = write!(out, "<h3 class=\"{}\">", if moved { "moved" } else { "same" });
    escape_into(out, &name.replace('_', " "));
    if let Some(field) = field {
        out.push_str(" <span class=\"effect\">");
        escape_into(out, &field.effect);
        out.push_str("</span>");
    }
    out.push_str("</h3>\n");
    let all = golden.iter().chain(actual);
    let (Some(low), Some(high)) = (all.clone().min().copied(), all.max().copied()) else {
        out.push_str("<p class=\"note\">no runs</p>\n");
        return;
    };
    let span = high - low + 1;
    let width = span.div_ceil(MAX_BINS.min(span));
    let _ = writeln!(out, "<table class=\"bars histogram\" data-field=\"{name}\">");
    let mut start = low;
    while start <= high {
        let end = start.saturating_add(width - 1).min(high);
        let within =
            |samples: &[u64]| samples.iter().filter(|&&v| v >= start && v <= end).count() as u64;
        let (g, a) = (within(golden), within(actual));
        let label = if start == end { start.to_string() } else { format!("{start}–{end}") };
        let shares = (share(g, golden.len() as u64), share(a, actual.len() as u64));
        bar_row(out, &label, shares, &format!("{g} → {a} runs"), None);
        start = end.saturating_add(1);
        if end == u64::MAX {
            break;
        }
    }
    out.push_str("</table>\n");
}

/// One row of a bar chart: its label, the golden's bar over the new runs' (SVG rectangles, whose
/// widths are attributes the page's policy allows), and the numbers. `field` highlights a row
/// that moved and says how.
fn bar_row(
    out: &mut String,
    label: &str,
    (golden, actual): (f64, f64),
    numbers: &str,
    field: Option<&FieldVerdict>,
) {
    let moved = field.is_some_and(|f| f.verdict == Conclusion::Changed);
    out.push_str(if moved { "<tr class=\"moved\"><th>" } else { "<tr><th>" });
    escape_into(out, label);
    let _ = write!(
        out,
        "</th><td><svg class=\"bar\" viewBox=\"0 0 100 12\" preserveAspectRatio=\"none\" aria-hidden=\"true\">\
         <rect class=\"bg\" width=\"{:.1}\" height=\"5\"/><rect class=\"ba\" y=\"6\" width=\"{:.1}\" height=\"5\"/></svg></td><td>",
        golden * 100.0,
        actual * 100.0
    );
    escape_into(out, numbers);
    if let Some(field) = field.filter(|_| moved) {
        let _ = write!(out, " <b>moved</b> (p {:.2e})", field.p_holm);
    }
    out.push_str("</td></tr>\n");
}

/// `count` of `total`, as a share between 0 and 1 (0 of nothing is 0).
fn share(count: u64, total: u64) -> f64 {
    if total == 0 { 0.0 } else { count as f64 / total as f64 }
}

/// A rate as the verdict writes it, `"3/10"`, as a share.
fn fraction(value: &Value) -> f64 {
    let parts = value.as_str().and_then(|text| text.split_once('/'));
    let parsed = parts.and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)));
    parsed.map_or(0.0, |(count, total)| share(count, total))
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
