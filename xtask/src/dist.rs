//! `cargo xtask dist [--profile P] [--out DIR]`: the installable artefacts for this machine: a
//! binary tarball, the Python wheel, and the npm packages (the main package from `js/` and the
//! platform package with the `atif` binary inside).
//!
//! The wheel is built first, by maturin, which compiles the `atif` binary with the profile
//! asked for; the tarball and the npm platform package then take that same binary, so one
//! build serves the three. The npm packages follow esbuild's layout: the main package lists one
//! platform package per target in `optionalDependencies`, npm installs the one whose `os` and
//! `cpu` match, and nothing is downloaded by an install script.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use serde_json::json;

use crate::project_root;

/// What `cargo xtask dist` was asked for.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    /// Cargo's profile of the binary: `release` by default; `dev` reuses a debug build.
    profile: String,
    /// Where the artefacts go; `<target>/dist` by default.
    out: Option<PathBuf>,
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = parse_args(args)?;
    let root = project_root();
    let target = crate::target_dir(&root)?;
    let out = args.out.clone().unwrap_or_else(|| target.join("dist"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let out = out.canonicalize().with_context(|| format!("cannot resolve {}", out.display()))?;
    let version = workspace_version(&root)?;
    let host = host_triple()?;

    let wheel = build_wheel(&root, &args.profile, &out)?;
    let binary = target.join(profile_dir(&args.profile)).join(exe("atif"));
    if !binary.is_file() {
        bail!("maturin finished but {} is not there", binary.display());
    }
    let tarball = binary_tarball(&binary, &root, &out, &format!("atif-{version}-{host}"))?;
    let platform = npm_platform_package(&binary, &out, &version)?;
    let main = npm_pack(&root.join("js"), &out)?;
    for artefact in [&wheel, &tarball, &platform, &main] {
        println!("dist: wrote {}", artefact.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_args(args: &[String]) -> anyhow::Result<Args> {
    let mut parsed = Args { profile: "release".to_owned(), out: None };
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let mut value =
            |flag: &str| words.next().cloned().with_context(|| format!("{flag} takes a value"));
        match word.as_str() {
            "--profile" => parsed.profile = value("--profile")?,
            "--out" => parsed.out = Some(PathBuf::from(value("--out")?)),
            other => {
                bail!("usage: cargo xtask dist [--profile PROFILE] [--out DIR]; got `{other}`")
            }
        }
    }
    Ok(parsed)
}

/// The `version` of `[workspace.package]` in the root `Cargo.toml`.
fn workspace_version(root: &Path) -> anyhow::Result<String> {
    let path = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let manifest: toml::Table =
        toml::from_str(&text).with_context(|| format!("{} is not TOML", path.display()))?;
    manifest
        .get("workspace")
        .and_then(|workspace| workspace.get("package"))
        .and_then(|package| package.get("version"))
        .and_then(|version| version.as_str())
        .map(str::to_owned)
        .with_context(|| format!("{}: no [workspace.package] version", path.display()))
}

/// The host's target triple, from `rustc -vV`.
fn host_triple() -> anyhow::Result<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = Command::new(rustc).arg("-vV").output().context("cannot run `rustc -vV`")?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(|host| host.trim().to_owned())
        .context("`rustc -vV` names no host")
}

/// The folder under `target/` of a profile: `dev` builds into `debug`.
fn profile_dir(profile: &str) -> &str {
    match profile {
        "dev" | "test" => "debug",
        "bench" => "release",
        other => other,
    }
}

fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

/// `maturin build --profile P --out OUT` in `python/`; returns the wheel it wrote.
fn build_wheel(root: &Path, profile: &str, out: &Path) -> anyhow::Result<PathBuf> {
    let maturin = find_maturin(root);
    println!("dist: building the wheel with {} (profile {profile})", maturin.display());
    let status = Command::new(&maturin)
        .args(["build", "--profile", profile, "--out"])
        .arg(out)
        .current_dir(root.join("python"))
        .status()
        .with_context(|| {
            format!(
                "cannot run {}: install maturin (`pip install maturin`) or run `cargo xtask e2e-setup`",
                maturin.display()
            )
        })?;
    if !status.success() {
        bail!("`maturin build` failed ({status})");
    }
    // The wheel just written is the newest one in `out`.
    let newest = wheels_in(out)
        .into_iter()
        .max_by_key(|wheel| wheel.metadata().and_then(|meta| meta.modified()).ok());
    newest.with_context(|| format!("maturin wrote no wheel into {}", out.display()))
}

/// `maturin` on `PATH`, else the one of the end-to-end venv (`cargo xtask e2e-setup` pins it).
fn find_maturin(root: &Path) -> PathBuf {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths).map(|dir| dir.join(exe("maturin"))).find(|p| p.is_file())
    });
    if let Some(found) = on_path {
        return found;
    }
    let cache = crate::e2e::cache_dir(root);
    let bin = if cfg!(windows) { "Scripts" } else { "bin" };
    cache.join("venv").join(bin).join(exe("maturin"))
}

fn wheels_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .collect()
}

/// `OUT/NAME.tar.gz`, holding `NAME/atif` and the README.
fn binary_tarball(binary: &Path, root: &Path, out: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let staging = fresh_dir(&out.join(name))?;
    copy(binary, &staging.join(exe("atif")))?;
    copy(&root.join("README.md"), &staging.join("README.md"))?;
    let tarball = out.join(format!("{name}.tar.gz"));
    crate::run(Command::new("tar").arg("-czf").arg(&tarball).arg("-C").arg(out).arg(name))?;
    std::fs::remove_dir_all(&staging)
        .with_context(|| format!("cannot remove {}", staging.display()))?;
    Ok(tarball)
}

/// The npm platform package of this machine, `@atif/cli-OS-CPU`, packed into `out`.
fn npm_platform_package(binary: &Path, out: &Path, version: &str) -> anyhow::Result<PathBuf> {
    let (os, cpu) = npm_platform()?;
    let staging = fresh_dir(&out.join("npm").join(format!("cli-{os}-{cpu}")))?;
    std::fs::create_dir_all(staging.join("bin"))?;
    copy(binary, &staging.join("bin").join(exe("atif")))?;
    let manifest = json!({
        "name": format!("@atif/cli-{os}-{cpu}"),
        "version": version,
        "description": format!("The atif binary for {os} on {cpu}; installed by the `atif` package"),
        "license": "MIT OR Apache-2.0",
        "repository": {"type": "git", "url": "https://github.com/atif-rs/atif"},
        "os": [os],
        "cpu": [cpu],
        "files": ["bin"],
        "preferUnplugged": true,
    });
    let text = serde_json::to_string_pretty(&manifest)? + "\n";
    std::fs::write(staging.join("package.json"), text)?;
    std::fs::write(
        staging.join("README.md"),
        format!("The `atif` binary for {os}-{cpu}. Install the `atif` package, which picks it.\n"),
    )?;
    npm_pack(&staging, out)
}

/// npm's names of this machine's operating system and processor.
fn npm_platform() -> anyhow::Result<(&'static str, &'static str)> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        "windows" => "win32",
        other => bail!("no npm platform package for the operating system {other}"),
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => bail!("no npm platform package for the processor {other}"),
    };
    Ok((os, cpu))
}

/// `npm pack DIR --pack-destination OUT`; returns the tarball it wrote.
fn npm_pack(dir: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    let output = Command::new("npm")
        .args(["pack", "--json", "--pack-destination"])
        .arg(out)
        .current_dir(dir)
        .output()
        .context("cannot run `npm` (Node.js 20 or later), which packs the npm packages")?;
    if !output.status.success() {
        bail!(
            "`npm pack` in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let packed: serde_json::Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("`npm pack --json` in {} printed no JSON", dir.display()))?;
    match packed[0]["filename"].as_str() {
        Some(name) => Ok(out.join(name)),
        None => bail!("`npm pack --json` in {} named no file", dir.display()),
    }
}

fn fresh_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir.to_path_buf())
}

fn copy(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::copy(from, to)
        .map(drop)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn args(words: &[&str]) -> anyhow::Result<Args> {
        parse_args(&words.iter().map(|word| (*word).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn the_profile_defaults_to_release_and_takes_dev() {
        assert_eq!(args(&[]).unwrap(), Args { profile: "release".to_owned(), out: None });
        let dev = args(&["--profile", "dev", "--out", "x"]).unwrap();
        assert_eq!(dev, Args { profile: "dev".to_owned(), out: Some(PathBuf::from("x")) });
        assert_eq!(profile_dir(&dev.profile), "debug");
    }

    #[test]
    fn unknown_arguments_and_missing_values_are_refused() {
        assert!(
            args(&["--frobnicate"]).unwrap_err().to_string().contains("usage: cargo xtask dist")
        );
        assert_eq!(args(&["--profile"]).unwrap_err().to_string(), "--profile takes a value");
    }

    #[test]
    fn the_workspace_version_is_read_from_the_root_manifest() {
        let version = workspace_version(&project_root()).unwrap();
        assert!(version.split('.').count() == 3, "{version}");
    }
}
