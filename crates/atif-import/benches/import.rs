//! Import cost against its floor: reading and parsing the log's lines as JSON.
//!
//! Input: the largest Claude Code / Codex sample of the shared corpus (`$ATIF_CORPUS` or
//! `<workspace>/../shared/corpus`), else a synthetic Codex rollout of similar size generated
//! here. The claim in `docs/performance.md`: `import` costs at most twice `parse_lines`;
//! `import_keep_secrets` leaves out the secret scan, to show what the conversion costs alone.
#![allow(clippy::unwrap_used, clippy::print_stderr, missing_docs, reason = "a benchmark")]

use std::hint::black_box;
use std::path::PathBuf;

use atif_import::{ImportOptions, import};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use crate::cases::{parse_lines, synthetic_rollout};

#[path = "support/cases.rs"]
mod cases;

fn corpus_root() -> PathBuf {
    match std::env::var_os("ATIF_CORPUS") {
        Some(root) => PathBuf::from(root),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    }
}

/// The largest `claude-code-*` / `codex-*` sample, or a synthetic rollout of 350 kB; a
/// synthetic rollout of `ATIF_IMPORT_BENCH_BYTES` bytes when that is set (100000000 for the
/// 100 MB figure of `docs/performance.md`).
fn input() -> (String, Vec<u8>) {
    if let Some(size) = std::env::var("ATIF_IMPORT_BENCH_BYTES").ok().and_then(|s| s.parse().ok()) {
        return (format!("synthetic rollout of {size} bytes"), synthetic_rollout(size));
    }
    let logs = corpus_root().join("logs");
    let mut best: Option<(u64, PathBuf)> = None;
    for dir in std::fs::read_dir(&logs).into_iter().flatten().flatten() {
        let name = dir.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("claude-code-") || name.starts_with("codex-")) {
            continue;
        }
        for file in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            let path = file.path();
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            if path.extension().is_some_and(|e| e == "jsonl")
                && best.as_ref().is_none_or(|(l, _)| len > *l)
            {
                best = Some((len, path));
            }
        }
    }
    if let Some((_, path)) = best {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        return (name, std::fs::read(path).unwrap());
    }
    eprintln!("corpus not found at {}: benchmarking a synthetic rollout", logs.display());
    (String::from("synthetic rollout"), synthetic_rollout(350_000))
}

fn bench(c: &mut Criterion) {
    let (name, bytes) = input();
    eprintln!("input: {name}, {} bytes", bytes.len());
    let mut group = c.benchmark_group("import");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("parse_lines", |b| b.iter(|| parse_lines(black_box(&bytes))));
    group.bench_function("import", |b| {
        b.iter(|| import(black_box(&bytes), &ImportOptions::default()).unwrap())
    });
    // The same without the secret scan over the whole trajectory (`--keep-secrets`): what the
    // conversion itself costs.
    let mut keep_secrets = ImportOptions::default();
    keep_secrets.set_secret_scanner(None);
    group.bench_function("import_keep_secrets", |b| {
        b.iter(|| import(black_box(&bytes), &keep_secrets).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
