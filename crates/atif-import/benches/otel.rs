//! Importing an OpenTelemetry trace against its floor, a serde_json parse of the same text.
//!
//! Input: one OTLP/JSON export request of 100,000 spans, generated here: an agent span, model
//! calls with GenAI-conventions messages (each repeating a short history, as real spans do) and
//! a tool span after each call. The claim in `docs/performance.md`: `import` costs at most twice
//! `parse`. Before criterion starts, the bench prints the ratio of the best of 8 interleaved runs.
#![allow(clippy::unwrap_used, missing_docs, reason = "a benchmark")]
#![allow(clippy::print_stderr, reason = "the benchmark reports the interleaved ratio")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use atif_import::{ImportOptions, import};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

const SPANS: usize = 100_000;

fn attribute(key: &str, value: &str) -> Value {
    json!({ "key": key, "value": { "stringValue": value } })
}

fn trace() -> Vec<u8> {
    let mut spans = vec![json!({
        "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "a0", "name": "invoke_agent bench",
        "startTimeUnixNano": "1700000000000000000",
        "attributes": [attribute("gen_ai.operation.name", "invoke_agent"), attribute("gen_ai.agent.name", "bench")],
    })];
    for call in 0..(SPANS - 1) / 2 {
        let input = json!([
            {"role": "user", "parts": [{"type": "text", "content": "List the files."}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": format!("c{}", call.saturating_sub(1)), "name": "bash", "arguments": "{\"command\":\"ls\"}"}]},
            {"role": "user", "parts": [{"type": "tool_call_response", "id": format!("c{}", call.saturating_sub(1)), "result": "a.txt"}]},
        ]);
        let output = json!([{"role": "assistant", "parts": [{"type": "tool_call", "id": format!("c{call}"), "name": "bash", "arguments": "{\"command\":\"ls\"}"}]}]);
        let start = (1_700_000_000_000_000_000_u64 + call as u64 * 2_000_000).to_string();
        spans.push(json!({
            "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": format!("m{call}"), "parentSpanId": "a0",
            "name": "chat m", "startTimeUnixNano": start,
            "attributes": [
                attribute("gen_ai.operation.name", "chat"),
                attribute("gen_ai.input.messages", &input.to_string()),
                attribute("gen_ai.output.messages", &output.to_string()),
                { "key": "gen_ai.usage.input_tokens", "value": { "intValue": "120" } },
            ],
        }));
        spans.push(json!({
            "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": format!("t{call}"), "parentSpanId": "a0",
            "name": "execute_tool bash", "startTimeUnixNano": start,
            "attributes": [
                attribute("gen_ai.operation.name", "execute_tool"), attribute("gen_ai.tool.name", "bash"),
                attribute("gen_ai.tool.call.id", &format!("c{call}")), attribute("gen_ai.tool.call.result", "a.txt"),
            ],
        }));
    }
    let request = json!({ "resourceSpans": [{ "scopeSpans": [{ "scope": { "name": "bench" }, "spans": spans }] }] });
    request.to_string().into_bytes()
}

fn bench(c: &mut Criterion) {
    let bytes = trace();
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
