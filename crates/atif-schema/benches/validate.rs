//! Benchmark of validation against plain parsing on a realistic 15 MB trajectory.
//!
//! The claim checked here: validating (our reader with duplicate-key detection, plus every rule)
//! costs at most 1.5x parsing the same bytes into a `serde_json::Value`.
//! The trajectory comes from `../shared/tools/gen_traj.py` (or `$ATIF_GEN_TRAJ`) when python3
//! and the script are there, else from a small generator of the same shape written here.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]
#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]
#![allow(clippy::print_stderr, reason = "the benchmark reports the interleaved ratio")]

use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use atif_schema::{Profile, ValidateOptions, parse_json, validate, validate_bytes};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

fn benches(c: &mut Criterion) {
    let bytes = trajectory();
    let strict = ValidateOptions::default();
    let harbor = ValidateOptions::with_profile(Profile::Harbor);
    let report = validate_bytes(&bytes, &strict);
    assert!(report.is_valid(), "the generated trajectory must be valid: {:?}", report.findings);
    let document: Value = serde_json::from_slice(&bytes).unwrap();
    interleaved_ratio(&bytes, &strict);

    let mut group = c.benchmark_group("validate_15MB");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("serde_json_from_slice_value", |b| {
        b.iter(|| serde_json::from_slice::<Value>(black_box(&bytes)).unwrap());
    });
    group.bench_function("parse_json", |b| b.iter(|| parse_json(black_box(&bytes)).unwrap()));
    group.bench_function("validate_bytes_strict", |b| {
        b.iter(|| validate_bytes(black_box(&bytes), &strict));
    });
    group.bench_function("validate_bytes_harbor", |b| {
        b.iter(|| validate_bytes(black_box(&bytes), &harbor));
    });
    group.bench_function("validate_value_only", |b| {
        b.iter(|| validate(black_box(&document), &strict))
    });
    group.finish();
}

/// Times parsing and validating alternately and prints the ratio of the fastest runs: on a
/// machine shared with other work, load shifts between criterion's groups, but rarely within
/// one pair of runs, so this ratio is steadier than the quotient of two criterion figures.
fn interleaved_ratio(bytes: &[u8], options: &ValidateOptions) {
    let mut parse_best = Duration::MAX;
    let mut validate_best = Duration::MAX;
    for _ in 0..30 {
        let start = Instant::now();
        black_box(serde_json::from_slice::<Value>(black_box(bytes)).unwrap());
        parse_best = parse_best.min(start.elapsed());
        let start = Instant::now();
        black_box(validate_bytes(black_box(bytes), options));
        validate_best = validate_best.min(start.elapsed());
    }
    eprintln!(
        "interleaved, best of 30 on {} bytes: serde_json parse {:.2} ms, validate_bytes {:.2} ms, \
         ratio {:.2}",
        bytes.len(),
        parse_best.as_secs_f64() * 1e3,
        validate_best.as_secs_f64() * 1e3,
        validate_best.as_secs_f64() / parse_best.as_secs_f64()
    );
}

/// About 15 MB: 1500 steps with 6000-byte observations and 5 embedded subagents.
fn trajectory() -> Vec<u8> {
    let script = std::env::var_os("ATIF_GEN_TRAJ").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tools/gen_traj.py")
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("15MB.json");
    let generated = script.is_file()
        && Command::new("python3")
            .arg(&script)
            .args(["--steps", "1500", "--obs-bytes", "6000", "--subagents", "5"])
            .stdout(std::fs::File::create(&path).unwrap())
            .status()
            .is_ok_and(|status| status.success());
    if generated {
        return std::fs::read(&path).unwrap();
    }
    serde_json::to_vec_pretty(&fallback(1500, 6000, 5)).unwrap()
}

/// A trajectory of the same shape as gen_traj.py's, for machines without python3.
fn fallback(n_steps: usize, obs_bytes: usize, n_subagents: usize) -> Value {
    let text: String = "the agent reads a file then greps for symbols and runs the tests é中\n"
        .chars()
        .cycle()
        .take(obs_bytes)
        .collect();
    let steps = |count: usize, prefix: &str| -> Vec<Value> {
        (0..count)
            .map(|idx| {
                let step_id = idx + 1;
                if idx % 2 == 0 {
                    return json!({
                        "step_id": step_id,
                        "source": "user",
                        "message": format!("{prefix} turn {idx}: {text}"),
                        "timestamp": "2026-03-01T09:00:00Z"
                    });
                }
                let call_id = format!("call_{prefix}_{idx}");
                json!({
                    "step_id": step_id,
                    "source": "agent",
                    "timestamp": "2026-03-01T09:00:01.5+00:00",
                    "model_name": "model-large",
                    "message": text,
                    "reasoning_content": "the previous attempt failed",
                    "tool_calls": [{"tool_call_id": call_id, "function_name": "read_file",
                        "arguments": {"path": format!("src/module_{idx}.py")}}],
                    "observation": {"results": [{"source_call_id": call_id, "content": text}]},
                    "metrics": {"prompt_tokens": 1000 + idx, "completion_tokens": 50, "cached_tokens": 900, "cost_usd": 0.0012}
                })
            })
            .collect()
    };
    let subagents: Vec<Value> = (0..n_subagents)
        .map(|idx| {
            json!({"schema_version": "ATIF-v1.7", "trajectory_id": format!("sub-{idx}"),
                "agent": {"name": "helper", "version": "1"}, "steps": steps(20, &format!("sub{idx}"))})
        })
        .collect();
    json!({
        "schema_version": "ATIF-v1.7",
        "session_id": "bench",
        "agent": {"name": "bench-agent", "version": "1.0", "model_name": "model-large"},
        "steps": steps(n_steps, "main"),
        "subagent_trajectories": subagents
    })
}

criterion_group!(validate_benches, benches);
criterion_main!(validate_benches);
