//! OpenTelemetry traces of agent frameworks (OTLP/JSON; gzip and protobuf are turned into it
//! before, in `crate::binary`): one trajectory per trace that holds an agent run.
//!
//! The spans of every record are read first (a trace's spans can be spread over many lines of
//! the Collector file exporter, in the order they ended), grouped by trace, then each trace is
//! walked as a tree from its roots (`build.rs`).

mod build;
mod dialect;
mod otlp;
mod pending;

use std::collections::BTreeMap;

use crate::Result;
use crate::context::Context;
use crate::draft::Trajectory;
use crate::lines::Records;

use otlp::is_otlp;

/// The agent name of a trace that names no agent span.
pub(crate) const AGENT_NAME: &str = "otel";

/// How deep the span tree is walked; deeper spans (a hostile or broken parent chain) are
/// skipped and counted.
pub(crate) const MAX_DEPTH: usize = 256;

/// Imports the traces of `records` that hold an agent run (a model call), in the order their
/// first span appears.
pub(crate) fn import_runs(records: &mut Records<'_>, ctx: &mut Context) -> Result<Vec<Trajectory>> {
    let mut spans = Vec::new();
    let mut logs = Vec::new();
    for record in records.by_ref() {
        let record = record?;
        if !is_otlp(&record.value) {
            ctx.unknown(record.line, "record without resourceSpans or resourceLogs")?;
            continue;
        }
        otlp::read_request(record.value, record.line, ctx, &mut spans, &mut logs)?;
    }
    // Log records carry content as events of the span they name.
    if !logs.is_empty() {
        let mut by_span: BTreeMap<String, Vec<otlp::Event>> = BTreeMap::new();
        for (span_id, event) in logs {
            by_span.entry(span_id).or_default().push(event);
        }
        for span in &mut spans {
            if let Some(events) = by_span.remove(&span.span_id) {
                span.events.extend(events);
            }
        }
        let orphans: usize = by_span.values().map(Vec::len).sum();
        if orphans > 0 {
            ctx.skip("log record of a span not in the file", orphans);
        }
    }
    let mut order: Vec<String> = Vec::new();
    let mut traces: BTreeMap<String, Vec<otlp::Span>> = BTreeMap::new();
    for span in spans {
        if !traces.contains_key(&span.trace_id) {
            order.push(span.trace_id.clone());
        }
        traces.entry(span.trace_id.clone()).or_default().push(span);
    }
    let mut runs = Vec::new();
    for trace_id in order {
        let spans = traces.remove(&trace_id).unwrap_or_default();
        let has_run = spans.iter().any(|s| dialect::kind(s) == dialect::Kind::Model);
        if !has_run {
            ctx.skip("trace without a model call", 1);
            continue;
        }
        runs.push(build::trajectory(spans, ctx));
    }
    if runs.is_empty() {
        ctx.stats.warn_file("no trace holds a model call: the trajectory is empty".to_owned());
        runs.push(Trajectory::new(AGENT_NAME));
    }
    Ok(runs)
}
