//! Importing an OpenTelemetry trace against its floor, a serde_json parse of the same text.
//!
//! Input: one OTLP/JSON export request of 100,000 spans (`support/cases.rs`, shared with the
//! `import_profile` example): an agent span, model calls with GenAI-conventions messages (each
//! repeating a short history, as real spans do) and a tool span after each call. The claim in `docs/performance.md`: `import` costs at most twice
//! `parse`. Before criterion starts, the bench prints the ratio of the best of 8 interleaved runs.
#![allow(clippy::unwrap_used, missing_docs, reason = "a benchmark")]
#![allow(clippy::print_stderr, reason = "the benchmark reports the interleaved ratio")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use atif_import::{ImportOptions, import};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;

use crate::cases::otel_trace;

#[path = "support/cases.rs"]
mod cases;

const SPANS: usize = 100_000;

fn bench(c: &mut Criterion) {
    let bytes = otel_trace(SPANS);
    interleaved_ratio(&bytes);
    let mut group = c.benchmark_group("otel");
    group.sample_size(10).throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("parse", |b| {
        b.iter(|| black_box(serde_json::from_slice::<Value>(black_box(&bytes)).unwrap()));
    });
    group.bench_function("import", |b| {
        b.iter(|| black_box(import(black_box(&bytes), &ImportOptions::default()).unwrap()));
    });
    group.finish();
}

/// The best of 8 alternating runs of each, which a load shift between criterion's groups (a
/// shared machine) does not skew.
fn interleaved_ratio(bytes: &[u8]) {
    let (mut parse_best, mut import_best) = (Duration::MAX, Duration::MAX);
    for _ in 0..8 {
        let start = Instant::now();
        black_box(serde_json::from_slice::<Value>(black_box(bytes)).unwrap());
        parse_best = parse_best.min(start.elapsed());
        let start = Instant::now();
        black_box(import(black_box(bytes), &ImportOptions::default()).unwrap());
        import_best = import_best.min(start.elapsed());
    }
    eprintln!(
        "interleaved, best of 8 on {} bytes ({SPANS} spans): serde_json parse {:.0} ms, import {:.0} ms, ratio {:.2}",
        bytes.len(),
        parse_best.as_secs_f64() * 1e3,
        import_best.as_secs_f64() * 1e3,
        import_best.as_secs_f64() / parse_best.as_secs_f64()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
