//! Benchmark of the failure report on a long run: two normalised 1,500-step trajectories of
//! about 15 MB that differ by one inserted step, compared (Shapes, deltas) and reported
//! (explanation and the first changed places of the unified diff), against normalising one.
//!
//! The `documents` group does the same from the two runs' JSON text, as `atif check` and
//! `atif diff` do: both read on the fast path into `NormalizedDocument`s, hashed on two threads
//! while the other side is read or explained, compared and reported; against `normalize_json`
//! of one run, what `atif normalize` does.
#![allow(clippy::unwrap_used, reason = "a benchmark fails loudly")]
#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

use std::hint::black_box;

use atif_normalize::{
    DiffOptions, JsonDocument, NormalizeOptions, NormalizedDocument, ReportOptions, compare, diff,
    normalize_json, normalize_owned, report, shape, support,
};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

/// A run of `n_steps` agent steps of about 10 KB each; `insert_at` adds one more there.
fn long_run(n_steps: usize, insert_at: Option<usize>) -> Value {
    const TOOLS: [&str; 4] = ["read_file", "grep", "run_tests", "write_file"];
    let mut bodies: Vec<(&str, String)> =
        (0..n_steps).map(|idx| (TOOLS[idx % TOOLS.len()], format!("step body {idx} "))).collect();
    if let Some(at) = insert_at {
        bodies.insert(at - 1, ("inserted_probe_tool", "probe ".to_owned()));
    }
    let steps: Vec<Value> = bodies
        .iter()
        .enumerate()
        .map(|(idx, (tool, body))| {
            let call = format!("toolu_{idx:08}");
            json!({
                "step_id": idx + 1,
                "source": "agent",
                "timestamp": "2026-01-01T00:00:00Z",
                "message": body.repeat(40),
                "tool_calls": [{"tool_call_id": call, "function_name": tool, "arguments": {"path": body}}],
                "observation": {"results": [{"source_call_id": call, "content": body.repeat(600)}]},
                "metrics": {"prompt_tokens": 1000, "completion_tokens": 50},
            })
        })
        .collect();
    json!({"schema_version": "ATIF-v1.8", "agent": {"name": "demo", "version": "1"}, "steps": steps})
}

fn benches(c: &mut Criterion) {
    let options = NormalizeOptions::default();
    let golden = normalize_owned(long_run(1_500, None), &options).unwrap();
    let actual = normalize_owned(long_run(1_500, Some(701)), &options).unwrap();
    let mut group = c.benchmark_group("report_15MB_one_inserted_step");
    group.sample_size(10);
    group.bench_function("normalize_one_run", |b| {
        b.iter_batched(
            || long_run(1_500, Some(701)),
            |run| normalize_owned(black_box(run), &options).unwrap(),
            BatchSize::LargeInput,
        );
    });
    group.bench_function("shapes_and_deltas", |b| {
        b.iter(|| diff(&shape(black_box(&golden)), &shape(&actual), &DiffOptions::default()));
    });
    let deltas = diff(&shape(&golden), &shape(&actual), &DiffOptions::default());
    group.bench_function("report", |b| {
        b.iter(|| report(black_box(&golden), &actual, &deltas, &ReportOptions::default()));
    });
    group.finish();

    let golden_text = serde_json::to_vec(&long_run(1_500, None)).unwrap();
    let actual_text = serde_json::to_vec(&long_run(1_500, Some(701))).unwrap();
    let mut group = c.benchmark_group("documents_15MB_one_inserted_step");
    group.sample_size(10);
    group.bench_function("normalize_json_one_run", |b| {
        b.iter(|| normalize_json(black_box(&actual_text), &options, std::io::sink()).unwrap());
    });
    group.bench_function("read_compare_and_report", |b| {
        b.iter(|| {
            let (golden, actual) = support::join(
                || read(black_box(&golden_text), &options),
                || read(&actual_text, &options),
            );
            compare(&golden, &actual, &DiffOptions::default()).report(&ReportOptions::default())
        });
    });
    group.finish();
}

/// `text` read on the fast path and normalised.
fn read<'a>(text: &'a [u8], options: &NormalizeOptions) -> NormalizedDocument<'a> {
    JsonDocument::parse(text).unwrap().normalize(options).unwrap().0
}

criterion_group!(report_benches, benches);
criterion_main!(report_benches);
