//! `cargo xtask fuzz`: runs the cargo-fuzz targets of `fuzz/` for a fixed time each, seeded
//! with our fixtures and the shared corpus (read in place, never copied).

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

/// The default time per target, in seconds: what `.ci/run` spends.
const DEFAULT_SECONDS: u64 = 20;

/// Inputs longer than this are cut when read: a few seeds are megabytes, and fuzzing is about
/// many small mutations.
const MAX_LEN: usize = 256 * 1024;

pub(crate) fn run(args: &[String]) -> anyhow::Result<ExitCode> {
    let mut seconds = DEFAULT_SECONDS;
    let mut wanted: Vec<&str> = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = rest.next().context("--seconds needs a number")?;
                seconds = value
                    .parse()
                    .with_context(|| format!("--seconds: expected whole seconds, got `{value}`"))?;
            }
            name if TARGETS.iter().any(|(target, _)| *target == name) => wanted.push(name),
            other => bail!(
                "fuzz: unknown argument `{other}`; expected --seconds N or a target ({})",
                TARGETS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    let root = project_root();
    if !fuzz_available(&root) {
        let message = "fuzz: skipped: cargo-fuzz on a nightly toolchain is needed \
                       (`rustup toolchain install nightly`, `cargo install cargo-fuzz`)";
        if std::env::var("ATIF_FUZZ_REQUIRED").is_ok_and(|value| value == "1") {
            bail!("{message}, and ATIF_FUZZ_REQUIRED=1");
        }
        println!("{message}");
        return Ok(ExitCode::SUCCESS);
    }
    // One build of every target first, so that each run's time is spent fuzzing.
    let status = fuzz_command(&root)
        .args(["build", "--sanitizer", "none", "--release"])
        .status()
        .context("cannot run cargo fuzz build")?;
    if !status.success() {
        bail!("cargo fuzz build failed");
    }
    for (target, seeds) in TARGETS {
        if !wanted.is_empty() && !wanted.contains(target) {
            continue;
        }
        // libFuzzer writes new inputs into its first folder only; the seed folders after it
        // are read, never written.
        let scratch = root.join("target/fuzz-corpus").join(target);
        std::fs::create_dir_all(&scratch)
            .with_context(|| format!("cannot create {}", scratch.display()))?;
        let mut folders = vec![scratch];
        folders.extend(seeds.iter().map(|seed| root.join(seed)).filter(|path| path.is_dir()));
        folders.extend(corpus(&root));
        println!("== fuzz {target} for {seconds} s, seeded from {} folders", folders.len() - 1);
        let status = fuzz_command(&root)
            .args(["run", "--sanitizer", "none", "--release", target])
            .args(&folders)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-max_len={MAX_LEN}"))
            .arg("-rss_limit_mb=2048")
            .arg("-print_final_stats=1")
            .status()
            .with_context(|| format!("cannot run cargo fuzz run {target}"))?;
        if !status.success() {
            bail!("fuzz target {target} failed; the input is under fuzz/artifacts/{target}/");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `cargo +nightly fuzz` run from the project root (it finds `fuzz/` there).
fn fuzz_command(root: &Path) -> Command {
    let mut command = Command::new("cargo");
    command.arg("+nightly").arg("fuzz").current_dir(root);
    // The workspace's cargo sets these for xtask; the nightly cargo must pick its own.
    for var in ["CARGO", "RUSTC", "RUSTDOC", "RUSTUP_TOOLCHAIN", "CARGO_TARGET_DIR"] {
        command.env_remove(var);
    }
    command
}

fn fuzz_available(root: &Path) -> bool {
    fuzz_command(root).arg("--version").output().is_ok_and(|output| output.status.success())
}

/// The shared corpus of real trajectories and logs, when it is there.
fn corpus(root: &Path) -> Option<PathBuf> {
    let dir = match std::env::var_os("ATIF_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => root.join("../shared/corpus"),
    };
    dir.is_dir().then_some(dir)
}
