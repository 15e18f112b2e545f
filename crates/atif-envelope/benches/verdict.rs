//! Benchmark of the verdict on long runs: 50 runs of 1,000 steps each (about 1 MB of JSON each)
//! checked against an envelope of 50 such runs, from the runs' JSON values (normalising and
//! reducing each, then every test), and the comparison alone on runs already reduced.
#![allow(clippy::unwrap_used, reason = "a benchmark fails loudly")]
#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

use std::hint::black_box;

use atif_envelope::{Envelope, Run, ToolOrder, VerdictOptions, compare};
use atif_normalize::NormalizeOptions;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const TOOLS: [&str; 4] = ["read_file", "grep", "run_tests", "write_file"];

/// Run `seed` of 1,000 agent steps of about 1 KB each; every seventh run swaps two calls and
/// token counts vary with the seed, so the runs make several variants.
fn long_run(seed: usize) -> Value {
    let steps: Vec<Value> = (0..1_000)
        .map(|idx| {
            let tool = match (seed % 7 == 0, idx) {
                (true, 10) => TOOLS[3],
                (true, 11) => TOOLS[2],
                _ => TOOLS[idx % TOOLS.len()],
            };
            let call = format!("toolu_{seed:04}_{idx:06}");
            let body = format!("step {idx} of run {seed} ");
            json!({
                "step_id": idx + 1,
                "source": "agent",
                "timestamp": "2026-12-03T00:00:00Z",
                "message": body.repeat(4),
                "tool_calls": [{"tool_call_id": call, "function_name": tool, "arguments": {"path": body}}],
                "observation": {"results": [{"source_call_id": call, "content": body.repeat(30)}]},
                "metrics": {"prompt_tokens": 1_000 + seed % 13, "completion_tokens": 50 + idx % 3},
            })
        })
        .collect();
    json!({
        "schema_version": "ATIF-v1.8",
        "session_id": format!("session-{seed}"),
        "agent": {"name": "demo", "version": "1", "model_name": "m-1"},
        "steps": steps,
    })
}

fn runs(trajectories: Vec<Value>, options: &NormalizeOptions) -> Vec<Run> {
    let label = |idx: usize| format!("run {}", idx + 1);
    let owned = trajectories.into_iter().enumerate();
    owned.map(|(i, t)| Run::new(&label(i), t, options).unwrap()).collect()
}

/// The job the first benchmark times, as one function that `valgrind --tool=callgrind
/// --toggle-collect='*check_from_trajectories*'` can count the instructions of.
#[inline(never)]
fn check_from_trajectories(
    golden: &Envelope,
    trajectories: Vec<Value>,
    options: &NormalizeOptions,
    verdict_options: &VerdictOptions,
) -> atif_envelope::Verdict {
    let runs = runs(trajectories, options);
    compare(golden, &runs, verdict_options).unwrap()
}

fn benches(c: &mut Criterion) {
    let options = NormalizeOptions::default();
    let golden_runs: Vec<Value> = (0..50).map(long_run).collect();
    let golden = Envelope::build(&runs(golden_runs, &options), ToolOrder::Exact).unwrap();
    let new_runs: Vec<Value> = (50..100).map(long_run).collect();
    let reduced = runs(new_runs.clone(), &options);
    let verdict_options = VerdictOptions::default();

    let mut group = c.benchmark_group("verdict_50_runs_of_1000_steps");
    group.sample_size(10);
    group.bench_function("check_from_trajectories", |b| {
        b.iter_batched(
            || new_runs.clone(),
            |trajectories| {
                check_from_trajectories(
                    &golden,
                    black_box(trajectories),
                    &options,
                    &verdict_options,
                )
            },
            BatchSize::LargeInput,
        );
    });
    group.bench_function("compare_reduced_runs", |b| {
        b.iter(|| compare(black_box(&golden), black_box(&reduced), &verdict_options).unwrap());
    });
    group.finish();
}

criterion_group!(verdict, benches);
criterion_main!(verdict);
