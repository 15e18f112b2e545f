//! `cargo xtask fuzz`: builds the libFuzzer targets of `fuzz/` on the stable toolchain and runs
//! each for a fixed time, seeded with our fixtures and the shared corpus (read in place, never
//! copied).
//!
//! libFuzzer needs no nightly compiler: the coverage instrumentation it feeds on is LLVM's
//! `sancov-module` pass, which stable `rustc` runs when asked through `-C passes` and
//! `-C llvm-args`, and `libfuzzer-sys` compiles libFuzzer itself with the C++ compiler. So
//! this builds the fuzz crate with the flags `cargo fuzz build --sanitizer none` would pass
//! (without a sanitizer, which is what needs nightly) and runs the binaries directly;
//! neither cargo-fuzz nor a nightly toolchain is needed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

use crate::project_root;

/// The targets, and the folders (relative to the project root) whose files seed each. The
/// shared corpus (`$ATIF_CORPUS`, else `../shared/corpus`) is added to every target.
const TARGETS: &[(&str, &[&str])] = &[
    (
        "trajectory",
        &[
            "crates/atif-schema/tests/fixtures",
            "crates/atif-normalize/tests/fixtures",
            "tests/fixtures",
        ],
    ),
    (
        "normalize",
        &[
            "crates/atif-normalize/tests/fixtures",
            "crates/atif-import/tests/goldens",
            "tests/fixtures",
        ],
    ),
    ("script", &["tests/scripts"]),
    ("import", &["crates/atif-import/tests/fixtures"]),
    ("secrets", &["crates/atif-secrets/tests", "crates/atif-import/tests/fixtures"]),
];

/// The default time per target, in seconds: what `.ci/run` spends on each.
const DEFAULT_SECONDS: u64 = 15;

/// Inputs longer than this are cut when read: a few seeds are megabytes, and fuzzing is about
/// many small mutations.
const MAX_LEN: usize = 256 * 1024;

/// One input running longer than this, in seconds, is a failure (a hang) with its artifact.
const INPUT_TIMEOUT_SECONDS: u64 = 30;

/// The instrumentation of `cargo fuzz build --sanitizer none` (cargo-fuzz's `project.rs`):
/// inline 8-bit edge counters with their PC table for coverage, comparison tracing so
/// libFuzzer learns the constants the code compares against, stack depth, no branch folding
/// (each branch keeps its own counter), dead code linked so every counter is there, and
/// `cfg(fuzzing)` for code that wants to know.
const RUSTFLAGS: &[&str] = &[
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "-Cllvm-args=-sanitizer-coverage-stack-depth",
    "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
    "-Clink-dead-code",
    "--cfg",
    "fuzzing",
];

pub(crate) fn run(args: &[String]) -> anyhow::Result<ExitCode> {
    let (seconds, wanted) = parse_args(args)?;
    let root = project_root();
    let host = host_triple()?;
    let target_dir = target_dir(&root);
    let build_start = std::time::Instant::now();
    build(&root, &host, &target_dir)?;
    println!("fuzz targets built in {} s", build_start.elapsed().as_secs());
    let binaries = target_dir.join(&host).join("release");
    for (target, seeds) in TARGETS {
        if !wanted.is_empty() && !wanted.contains(target) {
            continue;
        }
        // libFuzzer writes new inputs into its first folder only; the seed folders after it
        // are read, never written.
        let scratch = target_dir.join("corpus").join(target);
        let artifacts = root.join("fuzz/artifacts").join(target);
        for dir in [&scratch, &artifacts] {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let mut folders = vec![scratch];
        folders.extend(seeds.iter().map(|seed| root.join(seed)).filter(|path| path.is_dir()));
        folders.extend(corpus(&root));
        println!("== fuzz {target} for {seconds} s, seeded from {} folders", folders.len() - 1);
        let before = files_in(&artifacts)?;
        let binary = binaries.join(target);
        let mut prefix = OsString::from("-artifact_prefix=");
        // The prefix is a path prefix: the trailing slash puts the files inside the folder.
        prefix.push(artifacts.join(""));
        let status = Command::new(&binary)
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-max_len={MAX_LEN}"))
            .arg(format!("-timeout={INPUT_TIMEOUT_SECONDS}"))
            .arg("-rss_limit_mb=2048")
            // Quiet but for the statistics at the end: CI logs want the outcome, not each new
            // input libFuzzer kept. A crash is reported whatever the verbosity.
            .args(["-verbosity=0", "-print_funcs=0", "-print_final_stats=1"])
            .arg(prefix)
            .args(&folders)
            .current_dir(&root)
            .status()
            .with_context(|| format!("cannot run {}", binary.display()))?;
        if !status.success() {
            let found: Vec<PathBuf> =
                files_in(&artifacts)?.into_iter().filter(|path| !before.contains(path)).collect();
            let binary = binary.display();
            match found.as_slice() {
                [] => bail!(
                    "fuzz target {target} failed ({status}) and saved no input under {}",
                    artifacts.display()
                ),
                [first, ..] => bail!(
                    "fuzz target {target} failed ({status}); the input: {}\n\
                     reproduce with: {binary} {}",
                    found
                        .iter()
                        .map(|path| path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    first.display()
                ),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `[--seconds N] [TARGET]...`: the seconds per target and the targets asked for (none: all).
fn parse_args(args: &[String]) -> anyhow::Result<(u64, Vec<&'static str>)> {
    let mut seconds = DEFAULT_SECONDS;
    let mut wanted = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = rest.next().context("--seconds needs a number")?;
                seconds = value
                    .parse()
                    .with_context(|| format!("--seconds: expected whole seconds, got `{value}`"))?;
            }
            name => match TARGETS.iter().find(|(target, _)| *target == name) {
                Some((target, _)) => wanted.push(*target),
                None => bail!(
                    "fuzz: unknown argument `{name}`; expected --seconds N or a target ({})",
                    TARGETS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
                ),
            },
        }
    }
    Ok((seconds, wanted))
}

/// `cargo build --release` of the fuzz crate with the instrumentation flags, for the host
/// named explicitly: with `--target`, cargo applies `RUSTFLAGS` to the fuzz targets and their
/// dependencies but not to build scripts and proc macros, which would fail to link without
/// libFuzzer's coverage callbacks.
fn build(root: &Path, host: &str, target_dir: &Path) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut rustflags = RUSTFLAGS.join(" ");
    if let Some(extra) = std::env::var("RUSTFLAGS").ok().filter(|extra| !extra.is_empty()) {
        rustflags.push(' ');
        rustflags.push_str(&extra);
    }
    let status = Command::new(cargo)
        .args(["build", "--release", "--locked", "--bins", "--manifest-path"])
        .arg(root.join("fuzz/Cargo.toml"))
        .args(["--target", host, "--target-dir"])
        .arg(target_dir)
        .env("RUSTFLAGS", rustflags)
        // Would take precedence over RUSTFLAGS.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .status()
        .context("cannot run cargo build for fuzz/")?;
    if !status.success() {
        bail!(
            "building the fuzz targets failed ({status}); if cargo said the lock file needs an \
             update (a library gained a dependency), run \
             `cargo metadata --format-version 1 --manifest-path fuzz/Cargo.toml > /dev/null` and \
             commit fuzz/Cargo.lock"
        );
    }
    Ok(())
}

/// The host's target triple, from `rustc -vV`.
fn host_triple() -> anyhow::Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("-vV").output().context("cannot run rustc -vV")?;
    let text = String::from_utf8_lossy(&output.stdout);
    let host = text.lines().find_map(|line| line.strip_prefix("host: "));
    host.map(|host| host.trim().to_owned()).context("rustc -vV printed no `host:` line")
}

/// The fuzz build's own target folder, beside the workspace's (`$CARGO_TARGET_DIR/fuzz`, else
/// `target/fuzz`): its flags differ from the workspace's, so sharing would rebuild both.
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("fuzz"),
        None => root.join("target/fuzz"),
    }
}

/// The files directly in `dir`.
fn files_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        files.push(entry.path());
    }
    Ok(files)
}

/// The shared corpus of real trajectories and logs, when it is there.
fn corpus(root: &Path) -> Option<PathBuf> {
    let dir = match std::env::var_os("ATIF_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => root.join("../shared/corpus"),
    };
    dir.is_dir().then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_targets_are_read_and_unknown_targets_named() {
        let args = |list: &[&str]| list.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>();
        let (seconds, wanted) = parse_args(&args(&["--seconds", "3", "import"])).unwrap();
        assert_eq!((seconds, wanted), (3, vec!["import"]));
        assert_eq!(parse_args(&[]).unwrap(), (DEFAULT_SECONDS, vec![]));
        let err = parse_args(&args(&["imports"])).unwrap_err().to_string();
        assert!(err.contains("unknown argument `imports`"), "{err}");
        assert!(err.contains("trajectory, normalize, script, import, secrets"), "{err}");
        let err = format!("{:#}", parse_args(&args(&["--seconds", "x"])).unwrap_err());
        assert!(err.contains("expected whole seconds, got `x`"), "{err}");
    }
}
