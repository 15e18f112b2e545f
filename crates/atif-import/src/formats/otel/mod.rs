//! OpenTelemetry traces of agent frameworks (OTLP/JSON; gzip and protobuf are turned into it
//! before, in `crate::binary`): one trajectory per trace that holds an agent run.
//!
//! The spans of every record are read first (a trace's spans can be spread over many lines of
//! the Collector file exporter, in the order they ended), grouped by trace, then each trace is
//! walked as a tree from its roots (`build.rs`).
//!
//! A log of well-formed requests, one per line (what exporters write) or one over many lines,
//! is read by `fast.rs` straight into spans; any other goes through a `Value` of each record
//! (`otlp.rs`), which names what is wrong where.

mod build;
mod dialect;
mod fast;
mod otlp;
mod pending;

use std::collections::BTreeMap;
use std::fmt;

use crate::Result;
use crate::context::{Context, Stats};
use crate::draft::Trajectory;
use crate::format::Format;
use crate::lines::{Layout, Records};

use otlp::{Event, Span, is_otlp};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

/// The agent name of a trace that names no agent span.
pub(crate) const AGENT_NAME: &str = "otel";

/// How deep the span tree is walked; deeper spans (a hostile or broken parent chain) are
/// skipped and counted.
pub(crate) const MAX_DEPTH: usize = 256;

/// The spans of a log, the log records that carry content for them (by span id), and how many
/// records were read.
#[derive(Debug, PartialEq)]
pub(crate) struct Read {
    pub(crate) spans: Vec<Span>,
    pub(crate) logs: Vec<(String, Event)>,
    pub(crate) records: usize,
    pub(crate) layout: Layout,
}

/// Imports the traces of `records` that hold an agent run (a model call), in the order their
/// first span appears.
pub(crate) fn import_runs(records: &mut Records<'_>, ctx: &mut Context) -> Result<Vec<Trajectory>> {
    let read = read_records(records, ctx)?;
    Ok(runs(read, ctx))
}

/// Imports `bytes` through the fast reader (`fast.rs`) when it takes the log whole, with the
/// statistics of the import; `None` when it does not, and the log is read through `Records`.
pub(crate) fn import_fast(bytes: &[u8], strict: bool) -> Option<(Vec<Trajectory>, Stats)> {
    let read = fast::read(bytes)?;
    let mut ctx = Context::new(Format::Otel, strict, read.layout);
    ctx.stats.set_records(read.records);
    let runs = runs(read, &mut ctx);
    Some((runs, ctx.stats))
}

/// The spans and log records of every record, through a `Value` of each.
fn read_records(records: &mut Records<'_>, ctx: &mut Context) -> Result<Read> {
    let layout = records.layout();
    let mut read = Read { spans: Vec::new(), logs: Vec::new(), records: 0, layout };
    for record in records.by_ref() {
        let record = record?;
        if !is_otlp(&record.value) {
            ctx.unknown(record.line, "record without resourceSpans or resourceLogs")?;
            continue;
        }
        otlp::read_request(record.value, record.line, ctx, &mut read.spans, &mut read.logs)?;
    }
    read.records = records.n_records();
    Ok(read)
}

/// The runs of the traces read, each trace walked as a tree.
fn runs(read: Read, ctx: &mut Context) -> Vec<Trajectory> {
    let Read { mut spans, logs, .. } = read;
    // Log records carry content as events of the span they name.
    if !logs.is_empty() {
        let mut by_span: BTreeMap<String, Vec<Event>> = BTreeMap::new();
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
    let mut traces: BTreeMap<String, Vec<Span>> = BTreeMap::new();
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
    runs
}

/// `T` read from a JSON object only. A struct that serde derives also reads from an array, its
/// fields by position, where the `Value` paths, which ask an object for its keys, find none:
/// the readers straight from JSON text (`fast.rs`, the GenAI messages of `dialect.rs`) read
/// every struct through this, so such an array fails them and the `Value` path decides.
struct Obj<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Obj<T>, D::Error> {
        struct ObjectVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = Obj<T>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Obj)
            }
        }
        deserializer.deserialize_map(ObjectVisitor(std::marker::PhantomData))
    }
}
