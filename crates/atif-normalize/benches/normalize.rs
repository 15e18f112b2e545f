//! Benchmarks of normalisation end to end (parse, normalise, canonical text, SHA-256) on
//! realistic trajectories of about 100 KB, 1 MB and 15 MB, by the fast path (`normalize_json`)
//! and by the general path (`serde_json::Value`), and of each stage of the general path on the
//! largest.
//!
//! Trajectories come from `../shared/tools/gen_traj.py` (or `$ATIF_GEN_TRAJ`) when python3 and
//! the script are there, else from a small generator of the same shape written here.
//! When python3 is there, the Python harness (`benches/harness.py`) is timed on the same 15 MB
//! file first, so the ratio comes from one run on one machine.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]
#![allow(clippy::print_stderr, reason = "the benchmark reports the Python figure")]
#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use atif_normalize::{NormalizeOptions, normalize_json, normalize_owned, to_canonical_string};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// (label, steps, observation bytes, subagents) for each size.
const SIZES: &[(&str, usize, usize, usize)] =
    &[("100KB", 10, 6000, 0), ("1MB", 150, 6000, 1), ("15MB", 1500, 6000, 5)];

/// The general path: serde_json parse, normalise the `Value`, canonical text, SHA-256.
fn value_path(bytes: &[u8]) -> String {
    let doc: Value = serde_json::from_slice(bytes).unwrap();
    let normalized = normalize_owned(doc, &NormalizeOptions::default()).unwrap();
    let text = to_canonical_string(&normalized);
    let digest = Sha256::digest(text.as_bytes());
    format!("{digest:x}")[..12].to_owned()
}

/// A writer that only hashes what it is given.
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The fast path `atif normalize` takes: `normalize_json` straight from the bytes, the
/// canonical text hashed block by block as it is written.
fn fast_path(bytes: &[u8]) -> String {
    fast_path_with(bytes, &NormalizeOptions::default())
}

/// The fast path without the secret scan (`--keep-secrets`): the same work as the Python
/// harness, which scans for no secrets.
fn fast_path_keep_secrets(bytes: &[u8]) -> String {
    let mut options = NormalizeOptions::default();
    options.set_secret_scanner(None);
    fast_path_with(bytes, &options)
}

fn fast_path_with(bytes: &[u8], options: &NormalizeOptions) -> String {
    let mut hasher = HashWriter(Sha256::new());
    normalize_json(bytes, options, &mut hasher).unwrap();
    format!("{:x}", hasher.0.finalize())[..12].to_owned()
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<(&str, Vec<u8>)> = SIZES
        .iter()
        .map(|&(label, steps, obs, subs)| (label, generate(dir.path(), label, steps, obs, subs)))
        .collect();
    let python_cpu = time_python_harness(dir.path());
    for (_, bytes) in &files {
        assert_eq!(fast_path(bytes), value_path(bytes), "the two paths must agree");
    }
    if let Some((_, big)) = files.last() {
        time_cpu(big, python_cpu);
    }

    for (name, path) in
        [("fast_path", fast_path as fn(&[u8]) -> String), ("value_path", value_path)]
    {
        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        for (label, bytes) in &files {
            group.throughput(Throughput::Bytes(bytes.len() as u64));
            group.bench_function(*label, |b| b.iter(|| path(black_box(bytes))));
        }
        group.finish();
    }

    let (_, big) = files.last().unwrap();
    let doc: Value = serde_json::from_slice(big).unwrap();
    let normalized = normalize_owned(doc.clone(), &NormalizeOptions::default()).unwrap();
    let text = to_canonical_string(&normalized);
    let mut group = c.benchmark_group("value_path_stages_15MB");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.bench_function("parse", |b| {
        b.iter(|| serde_json::from_slice::<Value>(black_box(big)).unwrap())
    });
    group.bench_function("normalize_owned", |b| {
        b.iter_batched(
            || doc.clone(),
            |doc| normalize_owned(doc, &NormalizeOptions::default()).unwrap(),
            BatchSize::LargeInput,
        );
    });
    group.bench_function("canonical_text", |b| {
        b.iter(|| to_canonical_string(black_box(&normalized)))
    });
    group.bench_function("serde_json_to_string_pretty", |b| {
        b.iter(|| serde_json::to_string_pretty(black_box(&normalized)).unwrap());
    });
    group.bench_function("sha256", |b| b.iter(|| Sha256::digest(black_box(text.as_bytes()))));
    group.finish();
}

/// Writes the trajectory of one size into `dir` and returns its bytes.
fn generate(dir: &Path, label: &str, steps: usize, obs: usize, subs: usize) -> Vec<u8> {
    let path = dir.join(format!("{label}.json"));
    let script = std::env::var_os("ATIF_GEN_TRAJ").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tools/gen_traj.py")
    });
    let generated = script.is_file()
        && Command::new("python3")
            .arg(&script)
            .args(["--steps", &steps.to_string(), "--obs-bytes", &obs.to_string()])
            .args(["--subagents", &subs.to_string()])
            .stdout(std::fs::File::create(&path).unwrap())
            .status()
            .is_ok_and(|status| status.success());
    if !generated {
        eprintln!(
            "gen_traj.py not available at {}: using the built-in generator",
            script.display()
        );
        std::fs::write(&path, serde_json::to_vec(&builtin_trajectory(steps, obs, subs)).unwrap())
            .unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    eprintln!("{label}: {} bytes", bytes.len());
    bytes
}

/// A trajectory shaped like gen_traj.py's: agent steps with 0–3 tool calls, long observations,
/// volatile ids and timestamps, addresses in the system prompt, subagents.
fn builtin_trajectory(steps: usize, obs: usize, subs: usize) -> Value {
    let words = "the agent reads a file then greps for symbols and runs the tests é中\n";
    let text = |n: usize| {
        let repeated = words.repeat(n / words.len() + 1);
        // Cut at the character boundary at or before `n` bytes.
        let end = (0..=n).rev().find(|&end| repeated.is_char_boundary(end)).unwrap_or(0);
        repeated[..end].to_owned()
    };
    let make = |n_steps: usize, id: usize| {
        let mut all =
            vec![json!({"step_id": 1, "source": "system", "timestamp": "2026-01-01T00:00:00Z",
            "message": format!("helpers: <function read_file at 0x7f{id:010x}> {}", text(2000))})];
        for i in 0..n_steps {
            let calls: Vec<Value> = (0..i % 4)
                .map(|k| {
                    json!({"tool_call_id": format!("toolu_{id}_{i}_{k}"), "function_name": "grep",
                                "arguments": {"path": format!("src/mod_{k}.py"), "limit": k}})
                })
                .collect();
            let results: Vec<Value> = calls
                .iter()
                .map(|c| json!({"source_call_id": c["tool_call_id"], "content": text(obs / 2 + (i * 37) % (obs / 2))}))
                .collect();
            all.push(
                json!({"step_id": i + 2, "source": "agent", "timestamp": "2026-01-01T00:00:01Z",
                "model_name": "model-a", "message": text(200), "reasoning_content": text(300),
                "tool_calls": calls, "observation": {"results": results},
                "metrics": {"prompt_tokens": 1000 + i, "completion_tokens": 10, "cost_usd": 0.001},
                "extra": {"generation_id": format!("gen-{id}-{i}")}}),
            );
        }
        json!({"schema_version": "ATIF-v1.7", "session_id": format!("s-{id}"), "trajectory_id": format!("t-{id}"),
               "agent": {"name": "coder", "version": "1", "model_name": "model-a"}, "steps": all})
    };
    let mut root = make(steps, 0);
    root["subagent_trajectories"] = (1..=subs).map(|id| make(steps / 10, id)).collect();
    root
}

/// Times the Python harness on the 15 MB file, prints the best of five runs and returns the
/// best CPU time in seconds.
fn time_python_harness(dir: &Path) -> Option<f64> {
    let harness = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/harness.py");
    let output = Command::new("python3")
        .arg(&harness)
        .arg("--time")
        .arg(dir.join("15MB.json"))
        .arg("5")
        .output();
    match output {
        Ok(output) if output.status.success() => {
            let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
            eprintln!("python harness end to end, 15MB, best of 5: {text}");
            // "0.3100 s wall, 0.3050 s CPU"
            text.split(", ").nth(1)?.split(' ').next()?.parse().ok()
        }
        _ => {
            eprintln!("python3 not available: the Python harness was not timed");
            None
        }
    }
}

/// Times the fast path (with and without the secret scan) and the value path on `bytes`
/// alternately, 20 times each, and prints the best wall and on-CPU times of each and their
/// ratio to the Python harness's CPU time. On a machine shared with other work, the best on-CPU
/// time moves far less than criterion's wall times.
fn time_cpu(bytes: &[u8], python_cpu: Option<f64>) {
    type Path = fn(&[u8]) -> String;
    const PATHS: [(&str, Path); 3] = [
        ("fast_path", fast_path),
        ("fast_path, secrets kept", fast_path_keep_secrets),
        ("value_path", value_path),
    ];
    let mut best = [(f64::MAX, f64::MAX); PATHS.len()];
    for _ in 0..20 {
        for (idx, (_, path)) in PATHS.iter().enumerate() {
            let (wall, cpu) = (std::time::Instant::now(), thread_cpu_seconds());
            black_box(path(black_box(bytes)));
            let wall = wall.elapsed().as_secs_f64();
            best[idx].0 = best[idx].0.min(wall);
            if let (Some(end), Some(start)) = (thread_cpu_seconds(), cpu) {
                best[idx].1 = best[idx].1.min(end - start);
            }
        }
    }
    for ((name, _), (wall, cpu)) in PATHS.iter().zip(best) {
        let ratio = python_cpu.map_or(String::new(), |python| {
            format!(", Python CPU / this CPU = {:.1}", python / cpu)
        });
        eprintln!(
            "{name}, 15MB, best of 20 interleaved: {:.2} ms wall, {:.2} ms CPU{ratio}",
            wall * 1e3,
            cpu * 1e3
        );
    }
}

/// The time this thread has spent on a CPU, from Linux's `/proc/thread-self/schedstat`.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(nanos as f64 / 1e9)
}

criterion_group!(normalize_benches, benches);
criterion_main!(normalize_benches);
