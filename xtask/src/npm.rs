//! The npm sets of the end-to-end tests: their pins (`tests/e2e/<set>.txt`), the committed
//! `package.json` and `package-lock.json` that hold each set's whole resolved tree
//! (`tests/e2e/npm/<set>/`), installing a set from its lock with `npm ci`, and
//! `cargo xtask e2e-lock`, which writes both files again from the pins.
//!
//! The pins name the top-level packages only; without the lock every transitive dependency
//! would float, so two machines could test against different trees, and a fresh machine would
//! depend on whatever the registry published in the last hour.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::e2e::{LOCK_COMMAND, remove_dir_if_present};
use crate::run;

/// One npm set: its pins, its committed lock, and the cache's folder it is installed into.
#[derive(Debug)]
pub(crate) struct NpmSet {
    /// The set's name: its pins are `tests/e2e/<name>.txt`, its lock `tests/e2e/npm/<name>/`.
    pub(crate) name: &'static str,
    /// The cache's folder (an npm prefix) the set is installed into; empty for the cache itself.
    pub(crate) prefix: &'static str,
    /// What the set is, for messages.
    pub(crate) what: &'static str,
    /// Whether `npm ci` runs the packages' install scripts.
    pub(crate) scripts: bool,
}

/// Every npm set, in the order `cargo xtask e2e-setup` installs them.
pub(crate) const SETS: [NpmSet; 4] = [
    // The agent CLIs and MCP reference servers, in `$ATIF_E2E_CACHE/node_modules`.
    NpmSet { name: "agent-clis", prefix: "", what: "agent CLIs", scripts: true },
    // The TypeScript package's test runners and SDKs.
    NpmSet {
        name: "typescript",
        prefix: "typescript",
        what: "TypeScript test packages",
        scripts: true,
    },
    // The Vercel AI SDK 7 and the OpenTelemetry JS SDK: `ai` 7 beside the TypeScript set's 5.
    NpmSet {
        name: "otel-js",
        prefix: "otel-js",
        what: "Vercel AI SDK tracing packages",
        scripts: true,
    },
    // What each OpenCode sandbox gets as its config folder's packages. On every start OpenCode
    // installs `@opencode-ai/plugin`, at its own version, into each config folder it reads
    // (`~/.config/opencode`), from the npm registry, unless the folder already holds it: a
    // `node_modules` folder, and a `package-lock.json` naming every dependency of
    // `package.json`. The tests copy this folder's `package.json` and `package-lock.json` into
    // the sandbox and link its `node_modules`, so OpenCode never asks the registry at test
    // time. Installed as OpenCode installs it, without install scripts.
    NpmSet {
        name: "opencode-config",
        prefix: "opencode-config",
        what: "OpenCode config packages",
        scripts: false,
    },
];

/// The folder of the cache where a set's new tree is installed before it replaces the old one,
/// so that a failed `npm ci` leaves the installed tree as it was.
const STAGING: &str = ".npm-staging";

impl NpmSet {
    /// The pins file, relative to the project root.
    pub(crate) fn pins_path(&self) -> String {
        format!("tests/e2e/{}.txt", self.name)
    }

    /// The folder of the committed `package.json` and `package-lock.json`, relative to the root.
    fn lock_dir(&self) -> String {
        format!("tests/e2e/npm/{}", self.name)
    }

    /// The `package.json` of the set: the pins as exact dependencies, sorted by name as npm
    /// writes them.
    fn manifest(&self, pins: &[Pin]) -> String {
        let mut sorted: Vec<&Pin> = pins.iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let dependencies: serde_json::Map<String, serde_json::Value> =
            sorted.iter().map(|pin| (pin.name.clone(), pin.version.clone().into())).collect();
        let manifest = serde_json::json!({
            "name": format!("atif-e2e-{}", self.name),
            "private": true,
            "description": format!(
                "Written from {} by `{LOCK_COMMAND}`: edit the pins there, then run it",
                self.pins_path()
            ),
            "dependencies": dependencies,
        });
        // A `Value` of strings, booleans and objects always serializes.
        let text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
        format!("{text}\n")
    }
}

/// One pinned npm package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pin {
    pub(crate) name: String,
    pub(crate) version: String,
}

impl Pin {
    pub(crate) fn spec(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// Installs `set` into its prefix of `cache` from its committed lock with `npm ci`, unless the
/// prefix already holds that lock's tree.
///
/// The new tree is installed beside the cache's and moved into place once `npm ci` succeeded,
/// so a failure (a registry outage, a network error) leaves the installed tree as it was.
pub(crate) fn install(root: &Path, cache: &Path, set: &NpmSet) -> anyhow::Result<()> {
    let pins = read_pins(root, set)?;
    let committed = Committed::read(root, set)?;
    committed.check(set, &pins)?;
    let prefix = if set.prefix.is_empty() { cache.to_path_buf() } else { cache.join(set.prefix) };
    finish_interrupted_swap(&prefix)?;
    if installed(&prefix, &committed.lock, &pins) {
        println!(
            "e2e-setup: {} {} already installed in {}",
            pins.len(),
            set.what,
            prefix.display()
        );
        return Ok(());
    }
    println!(
        "e2e-setup: installing the {} of {} (npm ci) into {}",
        set.what,
        set.lock_dir(),
        prefix.display()
    );
    let staging = cache.join(STAGING).join(set.name);
    remove_dir_if_present(&staging)?;
    std::fs::create_dir_all(&staging)
        .with_context(|| format!("cannot create {}", staging.display()))?;
    committed.write_into(&staging)?;
    let mut npm_ci = Command::new("npm");
    npm_ci.args(["ci", "--no-audit", "--no-fund"]);
    if !set.scripts {
        npm_ci.arg("--ignore-scripts");
    }
    run(npm_ci.arg("--prefix").arg(&staging).current_dir(&staging)).with_context(|| {
        format!(
            "npm ci of {} into {} failed (the {} need npm, with Node.js 20 or later, on PATH)",
            set.lock_dir(),
            staging.display(),
            set.what
        )
    })?;
    if let Some(pin) = stale_packages(&staging, &pins).first() {
        bail!("npm ci finished but {} is not installed in {}", pin.spec(), staging.display());
    }
    swap_into(&staging, &prefix)?;
    // The lock is written last: it is the stamp that says the tree in place is the lock's.
    committed.write_into(&prefix)?;
    remove_dir_if_present(&staging)?;
    // The staging folder's parent goes too once no other set's staging is in it.
    let _ = std::fs::remove_dir(cache.join(STAGING));
    Ok(())
}

/// Writes the `package.json` of `set` from its pins and its `package-lock.json` with
/// `npm install --package-lock-only` (`cargo xtask e2e-lock`).
///
/// Starting from the committed lock, npm keeps every resolution the pins still allow, so a
/// changed pin moves only its own part of the tree; `fresh` resolves every package anew.
pub(crate) fn lock_set(root: &Path, set: &NpmSet, fresh: bool) -> anyhow::Result<()> {
    let pins = read_pins(root, set)?;
    let work = crate::target_dir(root)?.join("e2e-lock").join(set.name);
    remove_dir_if_present(&work)?;
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let lock_dir = root.join(set.lock_dir());
    let committed_lock = lock_dir.join("package-lock.json");
    if !fresh && committed_lock.exists() {
        std::fs::copy(&committed_lock, work.join("package-lock.json"))
            .with_context(|| format!("cannot copy {}", committed_lock.display()))?;
    }
    let manifest = set.manifest(&pins);
    write(&work.join("package.json"), &manifest)?;
    println!("e2e-lock: resolving {} ({} pins) with npm", set.pins_path(), pins.len());
    run(Command::new("npm")
        .args(["install", "--package-lock-only", "--no-audit", "--no-fund", "--ignore-scripts"])
        // Registry-agnostic: `npm ci` fetches each package from the registry it is configured
        // with and checks it against the lock's integrity, and the lock reads the same whatever
        // registry (or mirror) wrote it.
        .arg("--omit-lockfile-registry-resolved")
        .arg("--prefix")
        .arg(&work)
        .current_dir(&work))
    .context("npm (Node.js 20 or later) is needed to lock the npm sets")?;
    let lock_path = work.join("package-lock.json");
    let lock = std::fs::read_to_string(&lock_path)
        .with_context(|| format!("npm wrote no {}", lock_path.display()))?;
    let lock = complete_platform_packages(&lock)
        .with_context(|| format!("in the lock npm wrote for {}", set.pins_path()))?;
    let written = Committed { manifest, lock };
    written.check(set, &pins)?;
    std::fs::create_dir_all(&lock_dir)
        .with_context(|| format!("cannot create {}", lock_dir.display()))?;
    written.write_into(&lock_dir)?;
    println!(
        "e2e-lock: wrote {}/package.json and package-lock.json ({} packages)",
        set.lock_dir(),
        lock_entries(&written.lock).unwrap_or(0)
    );
    remove_dir_if_present(&work)
}

/// A set's committed `package.json` and `package-lock.json`, as text.
#[derive(Debug)]
pub(crate) struct Committed {
    manifest: String,
    lock: String,
}

impl Committed {
    pub(crate) fn read(root: &Path, set: &NpmSet) -> anyhow::Result<Committed> {
        let dir = root.join(set.lock_dir());
        let read = |file: &str| {
            let path = dir.join(file);
            std::fs::read_to_string(&path).with_context(|| {
                format!("cannot read {}; `{LOCK_COMMAND} {}` writes it", path.display(), set.name)
            })
        };
        Ok(Committed { manifest: read("package.json")?, lock: read("package-lock.json")? })
    }

    /// Fails unless `package.json` is what the pins make and the lock's root asks for exactly
    /// the pins, each resolved at its version: a pin edited without relocking fails here.
    pub(crate) fn check(&self, set: &NpmSet, pins: &[Pin]) -> anyhow::Result<()> {
        let relock = format!("run `{LOCK_COMMAND} {}`", set.name);
        if self.manifest != set.manifest(pins) {
            bail!(
                "{}/package.json is not what the pins of {} make; {relock}",
                set.lock_dir(),
                set.pins_path()
            );
        }
        let lock_path = format!("{}/package-lock.json", set.lock_dir());
        lock_matches(&self.lock, pins)
            .with_context(|| format!("{lock_path} does not match {}; {relock}", set.pins_path()))
    }

    fn write_into(&self, dir: &Path) -> anyhow::Result<()> {
        write(&dir.join("package.json"), &self.manifest)?;
        write(&dir.join("package-lock.json"), &self.lock)
    }
}

/// Fails, naming the first difference, unless the root of `lock` (a `package-lock.json` of
/// version 2 or 3) depends on exactly `pins` and resolves each at its version.
fn lock_matches(lock: &str, pins: &[Pin]) -> anyhow::Result<()> {
    let lock: serde_json::Value =
        serde_json::from_str(lock).context("expected a package-lock.json, got invalid JSON")?;
    let Some(packages) = lock.get("packages").and_then(serde_json::Value::as_object) else {
        bail!("expected `packages` (lockfileVersion 2 or 3), found none");
    };
    let root_deps: BTreeMap<&str, &str> = packages
        .get("")
        .and_then(|root| root.get("dependencies"))
        .and_then(serde_json::Value::as_object)
        .map(|deps| {
            deps.iter().map(|(name, v)| (name.as_str(), v.as_str().unwrap_or(""))).collect()
        })
        .unwrap_or_default();
    let pinned: BTreeMap<&str, &str> =
        pins.iter().map(|pin| (pin.name.as_str(), pin.version.as_str())).collect();
    for (name, version) in &pinned {
        match root_deps.get(name) {
            None => bail!("`packages[\"\"].dependencies` lacks the pin {name}@{version}"),
            Some(locked) if locked != version => {
                bail!(
                    "`packages[\"\"].dependencies` asks for {name}@{locked}, the pin is {version}"
                )
            }
            Some(_) => {}
        }
        let key = format!("node_modules/{name}");
        let resolved = packages.get(&key).and_then(|entry| entry.get("version"));
        if resolved.and_then(serde_json::Value::as_str) != Some(version) {
            bail!("`packages[\"{key}\"].version` is {resolved:?}, the pin is {version}");
        }
    }
    if let Some(extra) = root_deps.keys().find(|name| !pinned.contains_key(*name)) {
        bail!("`packages[\"\"].dependencies` asks for {extra}, which is not pinned");
    }
    // `npm ci` refuses a lock that leaves out a dependency of a package it locks, even an
    // optional one of another platform.
    for (path, entry) in packages {
        for field in ["dependencies", "optionalDependencies"] {
            let Some(deps) = entry.get(field).and_then(serde_json::Value::as_object) else {
                continue;
            };
            if let Some(name) = deps.keys().find(|name| !resolves(packages, path, name)) {
                bail!("`packages[\"{path}\"].{field}` asks for {name}, which the lock leaves out");
            }
        }
    }
    Ok(())
}

/// Adds to `lock` the platform packages that npm left out because the registry did not return
/// them, and returns the lock as text.
///
/// A package such as `opencode-ai` lists one optional dependency per platform
/// (`opencode-darwin-arm64`, `opencode-linux-x64`, …); `npm ci` refuses a lock without each of
/// them, but a registry mirror may hold only the ones its users fetched, and npm then locks
/// none of the others. Each such package is locked at its exact version as an optional package
/// of the platform its name says (`os`, `cpu`, `libc`), without an integrity: `npm ci` skips it
/// on every other platform, and on its own fetches it by name and version, with no integrity
/// to check it against (so the lock holds these few by version only).
/// An unresolved dependency whose name names no platform fails, naming it.
fn complete_platform_packages(lock: &str) -> anyhow::Result<String> {
    let mut lock: serde_json::Value =
        serde_json::from_str(lock).context("expected a package-lock.json, got invalid JSON")?;
    let Some(packages) = lock.get_mut("packages").and_then(serde_json::Value::as_object_mut) else {
        bail!("expected `packages` (lockfileVersion 2 or 3), found none");
    };
    let mut added = Vec::new();
    for (path, entry) in packages.iter() {
        let Some(optional) = entry.get("optionalDependencies").and_then(|d| d.as_object()) else {
            continue;
        };
        for (name, spec) in optional {
            if resolves(packages, path, name) {
                continue;
            }
            let spec = spec.as_str().unwrap_or_default();
            let platform = platform_of(name)
                .filter(|_| !spec.is_empty() && parse_pins(&format!("x@{spec}")).is_ok());
            let Some((os, cpu, libc)) = platform else {
                bail!(
                    "`packages[\"{path}\"]` needs the optional {name}@{spec}, which npm did not \
                     lock (not in the registry?), and it is no platform package at an exact version"
                );
            };
            let mut locked = serde_json::json!({
                "version": spec, "optional": true, "os": [os], "cpu": [cpu],
            });
            if let Some(libc) = libc {
                locked["libc"] = serde_json::json!([libc]);
            }
            println!(
                "e2e-lock: npm locked no {name}@{spec} (is it in the registry?); locking it as \
                 optional, for {os} {cpu}{} only, without an integrity",
                libc.map(|libc| format!(" {libc}")).unwrap_or_default()
            );
            added.push((format!("node_modules/{name}"), locked));
        }
    }
    packages.extend(added);
    packages.sort_keys();
    let text = serde_json::to_string_pretty(&lock).context("cannot write the lock")?;
    Ok(format!("{text}\n"))
}

/// Whether `name`, asked for by the package at `path`, is in `packages` where Node.js would find
/// it: in `path`'s own `node_modules` or in that of a folder above it.
fn resolves(packages: &serde_json::Map<String, serde_json::Value>, path: &str, name: &str) -> bool {
    let mut folder = path;
    loop {
        let candidate = match folder {
            "" => format!("node_modules/{name}"),
            _ => format!("{folder}/node_modules/{name}"),
        };
        if packages.contains_key(&candidate) {
            return true;
        }
        if folder.is_empty() {
            return false;
        }
        folder = folder.rsplit_once("/node_modules/").map_or("", |(parent, _)| parent);
    }
}

/// The `os`, `cpu` and `libc` (npm's values) that a platform package's name says, as in
/// `opencode-linux-x64-baseline-musl` or `@esbuild/win32-arm64`, or `None`.
fn platform_of(name: &str) -> Option<(&'static str, &'static str, Option<&'static str>)> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let words: Vec<&str> = base.split('-').collect();
    let os_idx = words
        .iter()
        .position(|word| matches!(*word, "darwin" | "linux" | "win32" | "windows" | "freebsd"))?;
    let os = match words[os_idx] {
        "darwin" => "darwin",
        "linux" => "linux",
        "freebsd" => "freebsd",
        _ => "win32",
    };
    let cpu = match *words.get(os_idx + 1)? {
        "x64" => "x64",
        "arm64" => "arm64",
        "arm" => "arm",
        "ia32" => "ia32",
        _ => return None,
    };
    let libc = words[os_idx + 2..].iter().find_map(|word| match *word {
        "musl" => Some("musl"),
        "gnu" => Some("glibc"),
        _ => None,
    });
    Some((os, cpu, libc))
}

/// How many packages a lock resolves (its root left out), or `None` when it is not a lock.
fn lock_entries(lock: &str) -> Option<usize> {
    let lock: serde_json::Value = serde_json::from_str(lock).ok()?;
    Some(lock.get("packages")?.as_object()?.len().saturating_sub(1))
}

/// Whether `prefix` holds the tree of `lock`: its copy of the lock is the same, npm's record
/// of the installed tree (`node_modules/.package-lock.json`) is there, and so is each pin.
fn installed(prefix: &Path, lock: &str, pins: &[Pin]) -> bool {
    let copy = std::fs::read_to_string(prefix.join("package-lock.json")).ok();
    copy.as_deref() == Some(lock)
        && node_modules(prefix).join(".package-lock.json").exists()
        && stale_packages(prefix, pins).is_empty()
}

/// Where [`swap_into`] keeps the tree of `prefix` while the new one moves in.
fn set_aside(prefix: &Path) -> PathBuf {
    prefix.join("node_modules.old")
}

/// Moves the tree `npm ci` installed in `staging` to `prefix/node_modules`, the tree there (if
/// any) set aside beside it meanwhile, put back if the move fails, and removed once it
/// succeeded. A swap killed half way is finished by [`finish_interrupted_swap`].
fn swap_into(staging: &Path, prefix: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(prefix)
        .with_context(|| format!("cannot create {}", prefix.display()))?;
    let new = node_modules(staging);
    let current = node_modules(prefix);
    let old = set_aside(prefix);
    let had_tree = current.exists();
    if had_tree {
        std::fs::rename(&current, &old)
            .with_context(|| format!("cannot move {} aside", current.display()))?;
    }
    if let Err(err) = std::fs::rename(&new, &current) {
        let why = format!("cannot move {} into place", new.display());
        if had_tree {
            if let Err(back) = std::fs::rename(&old, &current) {
                bail!(
                    "{why} ({err}), nor put the old tree back from {} ({back}); the next \
                     e2e-setup does",
                    old.display()
                );
            }
        }
        return Err(err).context(why);
    }
    remove_dir_if_present(&old)
}

/// Finishes a swap of `prefix` that was stopped half way: a tree set aside with none in place
/// goes back; one set aside beside the new tree goes.
fn finish_interrupted_swap(prefix: &Path) -> anyhow::Result<()> {
    let (current, old) = (node_modules(prefix), set_aside(prefix));
    if !old.exists() {
        return Ok(());
    }
    if current.exists() {
        return remove_dir_if_present(&old);
    }
    std::fs::rename(&old, &current)
        .with_context(|| format!("cannot put {} back in place", old.display()))
}

/// Reads the `name@version` pins of `set`.
pub(crate) fn read_pins(root: &Path, set: &NpmSet) -> anyhow::Result<Vec<Pin>> {
    let path = root.join(set.pins_path());
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    parse_pins(&text).with_context(|| format!("in {}", path.display()))
}

/// Reads `name@version` lines (scoped names such as `@scope/name@1.2.3` included), skipping
/// blank lines and `#` comments.
pub(crate) fn parse_pins(text: &str) -> anyhow::Result<Vec<Pin>> {
    let mut pins = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let pin = line.rsplit_once('@').filter(|(name, version)| {
            !name.is_empty()
                && !version.is_empty()
                && version.chars().all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c))
        });
        let Some((name, version)) = pin else {
            bail!("line {}: expected `name@exact-version`, got `{line}`", idx + 1);
        };
        pins.push(Pin { name: name.to_owned(), version: version.to_owned() });
    }
    Ok(pins)
}

/// The pins whose package is missing from `prefix/node_modules` or installed at another version.
pub(crate) fn stale_packages(prefix: &Path, pins: &[Pin]) -> Vec<Pin> {
    pins.iter()
        .filter(|pin| {
            let manifest = node_modules(prefix).join(&pin.name).join("package.json");
            let installed = std::fs::read_to_string(manifest)
                .ok()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                .and_then(|manifest| {
                    manifest.get("version").and_then(|v| v.as_str()).map(str::to_owned)
                });
            installed.as_deref() != Some(pin.version.as_str())
        })
        .cloned()
        .collect()
}

pub(crate) fn node_modules(prefix: &Path) -> PathBuf {
    prefix.join("node_modules")
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;
    use crate::project_root;

    fn pin(name: &str, version: &str) -> Pin {
        Pin { name: name.to_owned(), version: version.to_owned() }
    }

    fn typescript() -> &'static NpmSet {
        SETS.iter().find(|set| set.name == "typescript").unwrap()
    }

    /// A lock whose root asks for `deps` and resolves each at `resolved` (name, version).
    fn lock_json(deps: &[(&str, &str)], resolved: &[(&str, &str)]) -> String {
        let mut packages = serde_json::Map::new();
        let root_deps: serde_json::Map<String, serde_json::Value> =
            deps.iter().map(|(n, v)| ((*n).to_owned(), (*v).into())).collect();
        packages.insert("".into(), serde_json::json!({ "dependencies": root_deps }));
        for (name, version) in resolved {
            packages
                .insert(format!("node_modules/{name}"), serde_json::json!({ "version": version }));
        }
        serde_json::json!({ "lockfileVersion": 3, "packages": packages }).to_string()
    }

    /// A package tarball `name-version.tgz` made by `npm pack` in `dir`, as `file:` URL.
    fn packed(dir: &Path, name: &str, version: &str) -> String {
        let source = dir.join(format!("{name}-{version}"));
        std::fs::create_dir_all(&source).unwrap();
        let manifest = format!(r#"{{"name":"{name}","version":"{version}"}}"#);
        std::fs::write(source.join("package.json"), manifest).unwrap();
        run(Command::new("npm")
            .args(["pack", "--silent", "--pack-destination"])
            .arg(dir)
            .current_dir(&source))
        .unwrap();
        format!("file:{}", dir.join(format!("{name}-{version}.tgz")).display())
    }

    /// A set of one pin whose lock resolves it from `resolved`, committed under `root`.
    fn commit_probe(root: &Path, set: &NpmSet, version: &str, resolved: &str) {
        let pins = [pin("atif-probe", version)];
        std::fs::create_dir_all(root.join("tests/e2e/npm/probe")).unwrap();
        std::fs::write(root.join(set.pins_path()), format!("atif-probe@{version}\n")).unwrap();
        let mut lock: serde_json::Value = serde_json::from_str(&lock_json(
            &[("atif-probe", version)],
            &[("atif-probe", version)],
        ))
        .unwrap();
        lock["packages"]["node_modules/atif-probe"]["resolved"] = resolved.into();
        let committed = Committed { manifest: set.manifest(&pins), lock: lock.to_string() };
        committed.write_into(&root.join(set.lock_dir())).unwrap();
    }

    #[test]
    fn a_set_installs_from_its_lock_once_and_a_failed_npm_ci_leaves_the_tree_in_place() {
        // Real npm, offline: the lock resolves the package from a local tarball.
        if Command::new("npm").arg("--version").output().is_err() {
            // As the end-to-end tests do (`tests::e2e`): `.ci/run` sets ATIF_E2E_REQUIRED.
            let required = std::env::var("ATIF_E2E_REQUIRED")
                .is_ok_and(|value| !matches!(value.as_str(), "" | "0" | "false"));
            assert!(!required, "ATIF_E2E_REQUIRED is set but npm is not installed");
            eprintln!("skipped: npm (Node.js 20 or later) is not installed");
            return;
        }
        const PROBE: NpmSet =
            NpmSet { name: "probe", prefix: "probe", what: "probe packages", scripts: false };
        let dir = tempfile::tempdir().unwrap();
        let (root, cache) = (dir.path().join("root"), dir.path().join("cache"));
        let prefix = cache.join("probe");
        let installed_version = || {
            let manifest = node_modules(&prefix).join("atif-probe").join("package.json");
            let manifest: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(manifest).unwrap()).unwrap();
            manifest["version"].as_str().unwrap().to_owned()
        };
        let marker = node_modules(&prefix).join("marker");

        commit_probe(&root, &PROBE, "1.0.0", &packed(dir.path(), "atif-probe", "1.0.0"));
        install(&root, &cache, &PROBE).unwrap();
        assert_eq!(installed_version(), "1.0.0");
        assert!(!cache.join(STAGING).exists(), "the staging folder is cleaned up");
        // The same lock again: nothing is installed, so a file npm ci would remove stays.
        std::fs::write(&marker, "").unwrap();
        install(&root, &cache, &PROBE).unwrap();
        assert!(marker.exists());

        // A relock npm cannot install fails and leaves the installed tree as it was.
        commit_probe(&root, &PROBE, "1.0.1", "file:/nonexistent/atif-probe-1.0.1.tgz");
        let err = format!("{:#}", install(&root, &cache, &PROBE).unwrap_err());
        assert!(err.contains("`npm` failed"), "{err}");
        assert_eq!(installed_version(), "1.0.0");
        assert!(marker.exists());

        // A relock npm can install replaces the tree.
        commit_probe(&root, &PROBE, "1.0.1", &packed(dir.path(), "atif-probe", "1.0.1"));
        install(&root, &cache, &PROBE).unwrap();
        assert_eq!(installed_version(), "1.0.1");
        assert!(!marker.exists());
        let lock = std::fs::read_to_string(root.join("tests/e2e/npm/probe/package-lock.json"));
        assert_eq!(std::fs::read_to_string(prefix.join("package-lock.json")).ok(), lock.ok());
    }

    #[test]
    fn pins_are_read_with_scopes_and_comments() {
        let pins = parse_pins("# comment\n\n@openai/codex@0.169.0\nopencode-ai@1.18.33\n").unwrap();
        assert_eq!(pins, [pin("@openai/codex", "0.169.0"), pin("opencode-ai", "1.18.33")]);
    }

    #[test]
    fn a_pin_without_an_exact_version_is_refused_with_its_line() {
        for bad in ["opencode-ai", "opencode-ai@^1.2", "@scope/name", "x@latest tag"] {
            let err = parse_pins(&format!("# c\n{bad}\n")).unwrap_err().to_string();
            assert_eq!(err, format!("line 2: expected `name@exact-version`, got `{bad}`"));
        }
    }

    #[test]
    fn the_committed_pins_parse() {
        let root = project_root();
        let agent_clis = read_pins(&root, &SETS[0]).unwrap();
        // Five agent CLIs and three MCP reference servers.
        assert_eq!(agent_clis.len(), 8);
        let typescript = read_pins(&root, typescript()).unwrap();
        assert!(typescript.iter().any(|pin| pin.name == "vitest"), "{typescript:?}");
        assert!(typescript.iter().any(|pin| pin.name == "jest"), "{typescript:?}");
    }

    #[test]
    fn opencode_s_config_packages_are_at_opencode_s_version() {
        // OpenCode installs its plugin at its own version unless it is there: another version
        // would send it to the registry on every start.
        let root = project_root();
        let set = |name: &str| SETS.iter().find(|set| set.name == name).unwrap();
        let agent_clis = read_pins(&root, set("agent-clis")).unwrap();
        let opencode = agent_clis.iter().find(|pin| pin.name == "opencode-ai").unwrap();
        let config = read_pins(&root, set("opencode-config")).unwrap();
        assert_eq!(config, [pin("@opencode-ai/plugin", &opencode.version)]);
    }

    #[test]
    fn every_committed_lock_resolves_exactly_its_pins() {
        let root = project_root();
        for set in &SETS {
            let pins = read_pins(&root, set).unwrap();
            let committed = Committed::read(&root, set).unwrap();
            committed.check(set, &pins).unwrap();
            // The whole tree is there, not the pins alone.
            assert!(lock_entries(&committed.lock).unwrap() > pins.len(), "{}", set.name);
        }
    }

    #[test]
    fn a_pin_edited_without_relocking_fails_naming_the_lock_and_the_command() {
        let set = typescript();
        let pins = [pin("jest", "30.5.2"), pin("vitest", "3.2.7")];
        let lock_text = lock_json(
            &[("jest", "30.5.2"), ("vitest", "3.2.7")],
            &[("jest", "30.5.2"), ("vitest", "3.2.7")],
        );
        let committed = Committed { manifest: set.manifest(&pins), lock: lock_text };
        committed.check(set, &pins).unwrap();

        let edited = [pin("jest", "30.6.0"), pin("vitest", "3.2.7")];
        let err = format!("{:#}", committed.check(set, &edited).unwrap_err());
        assert_eq!(
            err,
            "tests/e2e/npm/typescript/package.json is not what the pins of \
             tests/e2e/typescript.txt make; run `cargo xtask e2e-lock typescript`"
        );
        let relocked_manifest_only = Committed { manifest: set.manifest(&edited), ..committed };
        let err = format!("{:#}", relocked_manifest_only.check(set, &edited).unwrap_err());
        assert_eq!(
            err,
            "tests/e2e/npm/typescript/package-lock.json does not match \
             tests/e2e/typescript.txt; run `cargo xtask e2e-lock typescript`: \
             `packages[\"\"].dependencies` asks for jest@30.5.2, the pin is 30.6.0"
        );
    }

    #[test]
    fn a_lock_with_a_missing_extra_or_unresolved_pin_is_refused() {
        let pins = [pin("a", "1.0.0"), pin("b", "2.0.0")];
        let check = |deps: &[(&str, &str)], resolved: &[(&str, &str)]| {
            lock_matches(&lock_json(deps, resolved), &pins).map_err(|err| err.to_string())
        };
        let both = [("a", "1.0.0"), ("b", "2.0.0")];
        assert_eq!(check(&both, &both), Ok(()));
        assert_eq!(
            check(&both[..1], &both),
            Err("`packages[\"\"].dependencies` lacks the pin b@2.0.0".to_owned())
        );
        assert_eq!(
            check(&[("a", "1.0.0"), ("b", "2.0.0"), ("c", "3.0.0")], &both),
            Err("`packages[\"\"].dependencies` asks for c, which is not pinned".to_owned())
        );
        assert_eq!(
            check(&both, &[("a", "1.0.0"), ("b", "2.0.1")]),
            Err("`packages[\"node_modules/b\"].version` is Some(String(\"2.0.1\")), the pin is 2.0.0"
                .to_owned())
        );
        let mut unresolved: serde_json::Value =
            serde_json::from_str(&lock_json(&both, &both)).unwrap();
        unresolved["packages"]["node_modules/a"]["optionalDependencies"] =
            serde_json::json!({ "a-darwin-arm64": "1.0.0" });
        let err = lock_matches(&unresolved.to_string(), &pins).unwrap_err().to_string();
        assert_eq!(
            err,
            "`packages[\"node_modules/a\"].optionalDependencies` asks for a-darwin-arm64, which \
             the lock leaves out"
        );
        let err = lock_matches("{\"lockfileVersion\": 1}", &pins).unwrap_err().to_string();
        assert_eq!(err, "expected `packages` (lockfileVersion 2 or 3), found none");
    }

    #[test]
    fn a_swap_sets_the_old_tree_aside_beside_the_new_one_and_an_interrupted_one_is_finished() {
        let dir = tempfile::tempdir().unwrap();
        let (staging, prefix) = (dir.path().join("staging"), dir.path().join("prefix"));
        let tree = |at: &Path, marker: &str| {
            std::fs::create_dir_all(node_modules(at)).unwrap();
            std::fs::write(node_modules(at).join("marker"), marker).unwrap();
        };
        let marker = |at: &Path| std::fs::read_to_string(at.join("marker")).ok();
        tree(&prefix, "old");
        tree(&staging, "new");
        swap_into(&staging, &prefix).unwrap();
        assert_eq!(marker(&node_modules(&prefix)).as_deref(), Some("new"));
        assert!(!set_aside(&prefix).exists(), "the old tree goes once the new one is in place");

        // Killed after the old tree was set aside, before the new one moved in: it goes back,
        // outside the staging folder that the next install empties.
        std::fs::rename(node_modules(&prefix), set_aside(&prefix)).unwrap();
        remove_dir_if_present(&staging).unwrap();
        finish_interrupted_swap(&prefix).unwrap();
        assert_eq!(marker(&node_modules(&prefix)).as_deref(), Some("new"));
        // Killed after the new tree moved in: the one set aside goes.
        std::fs::create_dir_all(set_aside(&prefix)).unwrap();
        finish_interrupted_swap(&prefix).unwrap();
        assert!(!set_aside(&prefix).exists());
        assert_eq!(marker(&node_modules(&prefix)).as_deref(), Some("new"));
    }

    #[test]
    fn a_prefix_is_installed_only_with_the_same_lock_and_every_pin_in_place() {
        let prefix = tempfile::tempdir().unwrap();
        let pins = [pin("a", "1.0.0")];
        let lock_text = lock_json(&[("a", "1.0.0")], &[("a", "1.0.0")]);
        let package = node_modules(prefix.path()).join("a");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(package.join("package.json"), r#"{"name":"a","version":"1.0.0"}"#).unwrap();
        std::fs::write(node_modules(prefix.path()).join(".package-lock.json"), "{}").unwrap();
        // No copy of the lock yet: a tree from before the locks, or a half-finished install.
        assert!(!installed(prefix.path(), &lock_text, &pins));
        std::fs::write(prefix.path().join("package-lock.json"), &lock_text).unwrap();
        assert!(installed(prefix.path(), &lock_text, &pins));
        // A relock that moved a transitive dependency changes the lock, not the pins.
        let relocked =
            lock_json(&[("a", "1.0.0")], &[("a", "1.0.0"), ("a/node_modules/b", "2.0.0")]);
        assert!(!installed(prefix.path(), &relocked, &pins));
        // A pin removed from the tree by hand.
        std::fs::remove_dir_all(&package).unwrap();
        assert!(!installed(prefix.path(), &lock_text, &pins));
    }

    #[test]
    fn packages_missing_or_at_another_version_are_stale() {
        let cache = tempfile::tempdir().unwrap();
        let install = |name: &str, version: &str| {
            let dir = node_modules(cache.path()).join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("package.json"),
                format!(r#"{{"name":"{name}","version":"{version}"}}"#),
            )
            .unwrap();
        };
        install("@openai/codex", "0.169.0");
        install("opencode-ai", "1.0.0");
        let pins = [
            pin("@openai/codex", "0.169.0"),
            pin("opencode-ai", "1.18.33"),
            pin("absent", "1.0.0"),
        ];
        assert_eq!(
            stale_packages(cache.path(), &pins),
            [pin("opencode-ai", "1.18.33"), pin("absent", "1.0.0")]
        );
        install("opencode-ai", "1.18.33");
        install("absent", "1.0.0");
        assert!(stale_packages(cache.path(), &pins).is_empty());
    }

    #[test]
    fn platform_packages_the_registry_lacks_are_locked_for_their_platform_only() {
        let mut lock: serde_json::Value =
            serde_json::from_str(&lock_json(&[("tool", "1.0.0")], &[("tool", "1.0.0")])).unwrap();
        lock["packages"]["node_modules/tool"]["optionalDependencies"] = serde_json::json!({
            "tool-linux-x64": "1.0.0", "tool-linux-arm64-musl": "1.0.0", "tool-windows-x64": "1.0.0",
        });
        lock["packages"]["node_modules/tool-linux-x64"] = serde_json::json!({ "version": "1.0.0" });
        let completed = complete_platform_packages(&lock.to_string()).unwrap();
        let pins = [pin("tool", "1.0.0")];
        // Before, npm ci would refuse it; after, every optional dependency is locked.
        assert!(lock_matches(&lock.to_string(), &pins).is_err());
        lock_matches(&completed, &pins).unwrap();
        let completed: serde_json::Value = serde_json::from_str(&completed).unwrap();
        assert_eq!(
            completed["packages"]["node_modules/tool-linux-arm64-musl"],
            serde_json::json!({
                "version": "1.0.0", "optional": true, "os": ["linux"], "cpu": ["arm64"],
                "libc": ["musl"],
            })
        );
        assert_eq!(
            completed["packages"]["node_modules/tool-windows-x64"],
            serde_json::json!({ "version": "1.0.0", "optional": true, "os": ["win32"], "cpu": ["x64"] })
        );
        // The package npm did lock stays as npm wrote it.
        assert_eq!(
            completed["packages"]["node_modules/tool-linux-x64"],
            lock["packages"]["node_modules/tool-linux-x64"]
        );
    }

    #[test]
    fn an_unlocked_dependency_that_is_no_platform_package_fails_naming_it() {
        let mut lock: serde_json::Value =
            serde_json::from_str(&lock_json(&[("tool", "1.0.0")], &[("tool", "1.0.0")])).unwrap();
        lock["packages"]["node_modules/tool"]["optionalDependencies"] =
            serde_json::json!({ "fsevents": "2.3.3", "tool-linux-x64": "^1.0.0" });
        let err = complete_platform_packages(&lock.to_string()).unwrap_err().to_string();
        assert!(err.starts_with("`packages[\"node_modules/tool\"]` needs the optional fsevents@2.3.3, which npm did not lock"), "{err}");
        lock["packages"]["node_modules/fsevents"] = serde_json::json!({ "version": "2.3.3" });
        let err = complete_platform_packages(&lock.to_string()).unwrap_err().to_string();
        assert!(
            err.contains("the optional tool-linux-x64@^1.0.0, which npm did not lock"),
            "{err}"
        );
    }

    #[test]
    fn a_dependency_resolves_in_its_own_node_modules_or_one_above() {
        let packages = serde_json::json!({
            "": {}, "node_modules/a": {}, "node_modules/b/node_modules/c": {}, "node_modules/b": {},
        });
        let packages = packages.as_object().unwrap();
        assert!(resolves(packages, "", "a"));
        assert!(resolves(packages, "node_modules/b", "c"));
        assert!(resolves(packages, "node_modules/b/node_modules/c", "a"));
        assert!(!resolves(packages, "node_modules/a", "c"));
        assert!(!resolves(packages, "", "c"));
    }

    #[test]
    fn platform_names_are_read_as_npm_spells_platforms() {
        assert_eq!(platform_of("@esbuild/darwin-arm64"), Some(("darwin", "arm64", None)));
        assert_eq!(platform_of("opencode-windows-x64-baseline"), Some(("win32", "x64", None)));
        assert_eq!(
            platform_of("@rollup/rollup-linux-x64-gnu"),
            Some(("linux", "x64", Some("glibc")))
        );
        assert_eq!(
            platform_of("opencode-linux-x64-baseline-musl"),
            Some(("linux", "x64", Some("musl")))
        );
        assert_eq!(platform_of("fsevents"), None);
        assert_eq!(platform_of("linux-tools"), None);
    }
}
