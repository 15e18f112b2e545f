//! Runs one case of the import bench on one input a given number of times, for a profiler such
//! as callgrind, whose instruction counts do not depend on the machine's load.
//!
//! ```sh
//! cargo build --profile bench -p atif-import --example import_profile
//! valgrind --tool=callgrind target/release/examples/import_profile import synthetic:5000000 3
//! ```
//!
//! The case is `parse_lines`, `import` or `import_keep_secrets`, as in `benches/import.rs`, or
//! `parse_document`, the floor of `benches/otel.rs` (one JSON document); the input a log file,
//! `synthetic:BYTES` for the import bench's synthetic rollout, or `otel:SPANS` for the otel
//! bench's trace (`otel:100000` is the bench's own); the count
//! (default 1) how many times the case runs. Each import builds `ImportOptions::default()`, as
//! the bench does. What one run costs once everything is warm is the count of N runs minus the
//! count of one run, divided by N - 1 (that also takes off reading or generating the input).
#![allow(clippy::print_stderr, reason = "a command-line tool for profiling")]

use std::error::Error;
use std::hint::black_box;

use atif_import::{ImportOptions, import};

use crate::cases::{otel_trace, parse_document, parse_lines, synthetic_rollout};

#[path = "../benches/support/cases.rs"]
mod cases;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [case, input, rest @ ..] = args.as_slice() else {
        return Err("usage: import_profile parse_lines|parse_document|import|import_keep_secrets \
             FILE|synthetic:BYTES|otel:SPANS [N]"
            .into());
    };
    let runs: usize = match rest.first() {
        Some(count) => count.parse()?,
        None => 1,
    };
    let bytes = match (input.strip_prefix("synthetic:"), input.strip_prefix("otel:")) {
        (Some(size), _) => synthetic_rollout(size.parse()?),
        (_, Some(spans)) => otel_trace(spans.parse()?),
        _ => std::fs::read(input)?,
    };
    for _ in 0..runs {
        match case.as_str() {
            "parse_lines" => {
                black_box(parse_lines(black_box(&bytes)));
            }
            "parse_document" => {
                black_box(parse_document(black_box(&bytes)));
            }
            "import" => {
                black_box(import(black_box(&bytes), &ImportOptions::default())?);
            }
            "import_keep_secrets" => {
                let mut options = ImportOptions::default();
                options.set_secret_scanner(None);
                black_box(import(black_box(&bytes), &options)?);
            }
            other => return Err(format!("unknown case `{other}`").into()),
        }
    }
    eprintln!("{case}: {runs} run(s) on {} bytes", bytes.len());
    Ok(())
}
