//! `cargo xtask e2e-setup`: installs the pinned agent CLIs and Python packages that the
//! end-to-end tests run, into one cache folder, skipping what is already there.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

use crate::project_root;

/// The pinned npm packages, `name@version` one a line (relative to the project root).
const AGENT_CLIS: &str = "tests/e2e/agent-clis.txt";

/// The pinned npm packages of the TypeScript package's tests (runners and SDKs), installed
/// into their own prefix, [`TYPESCRIPT_PREFIX`], apart from the agent CLIs.
const TYPESCRIPT_PINS: &str = "tests/e2e/typescript.txt";

/// The cache's folder (an npm prefix) of [`TYPESCRIPT_PINS`].
const TYPESCRIPT_PREFIX: &str = "typescript";

/// Where Debian's `chromium` package puts the browser the page tests drive.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The pinned npm packages of the Vercel AI SDK's OpenTelemetry test (docs/otel.md), installed
/// into their own prefix, [`OTEL_JS_PREFIX`]: they need `ai` 7, the TypeScript pins `ai` 5.
const OTEL_JS_PINS: &str = "tests/e2e/otel-js.txt";

/// The cache's folder (an npm prefix) of [`OTEL_JS_PINS`].
const OTEL_JS_PREFIX: &str = "otel-js";

/// The pinned Python packages (relative to the project root).
const REQUIREMENTS: &str = "tests/e2e/requirements.txt";

/// The agent frameworks whose OpenTelemetry traces `atif import` reads (docs/otel.md), at exact
/// versions, for the venv `$ATIF_E2E_CACHE/otel-venv`.
const OTEL_REQUIREMENTS: &str = "tests/e2e/otel-requirements.txt";

/// Google ADK (docs/otel.md), at exact versions, for the venv `$ATIF_E2E_CACHE/adk-venv`: it
/// requires an older OpenTelemetry SDK than the frameworks of [`OTEL_REQUIREMENTS`].
const ADK_REQUIREMENTS: &str = "tests/e2e/adk-requirements.txt";

/// Written in the venv once the requirements are installed: a copy of the requirements file.
const REQUIREMENTS_STAMP: &str = ".atif-requirements.txt";

/// The cache's folder that each OpenCode sandbox gets as its config folder's packages.
///
/// On every start OpenCode installs `@opencode-ai/plugin`, at its own version, into each config
/// folder it reads (`~/.config/opencode`), from the npm registry, unless the folder already
/// holds it: a `node_modules` folder, and a `package-lock.json` naming every dependency of
/// `package.json`. The tests copy this folder's `package.json` and `package-lock.json` into the
/// sandbox and link its `node_modules`, so OpenCode never asks the registry at test time.
const OPENCODE_CONFIG: &str = "opencode-config";

/// The package OpenCode installs into its config folder, at the version of `opencode-ai`.
const OPENCODE_PLUGIN: &str = "@opencode-ai/plugin";

pub(crate) fn setup(args: &[String]) -> anyhow::Result<ExitCode> {
    if let Some(arg) = args.first() {
        bail!("e2e-setup takes no arguments, got `{arg}`");
    }
    let root = project_root();
    let cache = cache_dir(&root);
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create {}", cache.display()))?;

    let pins_path = root.join(AGENT_CLIS);
    let pins_text = std::fs::read_to_string(&pins_path)
        .with_context(|| format!("cannot read {}", pins_path.display()))?;
    let pins = parse_pins(&pins_text).with_context(|| format!("in {}", pins_path.display()))?;
    let stale = stale_packages(&cache, &pins);
    if stale.is_empty() {
        println!(
            "e2e-setup: {} agent CLIs already installed in {}",
            pins.len(),
            node_modules(&cache).display()
        );
    } else {
        let names: Vec<String> = stale.iter().map(|pin| pin.spec()).collect();
        println!("e2e-setup: installing {}", names.join(" "));
        let specs: Vec<String> = pins.iter().map(Pin::spec).collect();
        run(Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--save-exact", "--prefix"])
            .arg(&cache)
            .args(&specs))
        .context("npm (Node.js 20 or later) is needed for the agent CLIs")?;
        let still = stale_packages(&cache, &pins);
        if let Some(pin) = still.first() {
            bail!(
                "npm finished but {} is not installed in {}",
                pin.spec(),
                node_modules(&cache).display()
            );
        }
    }

    if let Some(opencode) = pins.iter().find(|pin| pin.name == "opencode-ai") {
        install_opencode_config(&cache, &opencode.version)?;
    }

    install_pins(
        &root.join(TYPESCRIPT_PINS),
        &cache.join(TYPESCRIPT_PREFIX),
        "TypeScript test packages",
    )?;
    install_pins(
        &root.join(OTEL_JS_PINS),
        &cache.join(OTEL_JS_PREFIX),
        "Vercel AI SDK tracing packages",
    )?;

    let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    install_venv(&root, &cache, &base, REQUIREMENTS, "venv", "the Python SDK tests")?;
    // A venv of its own: the agent frameworks pin their own versions of the SDKs above.
    install_venv(
        &root,
        &cache,
        &base,
        OTEL_REQUIREMENTS,
        "otel-venv",
        "the agent framework tests",
    )?;
    install_venv(&root, &cache, &base, ADK_REQUIREMENTS, "adk-venv", "the Google ADK tests")?;
    crate::real_model::install(&root, &cache, &base)?;
    install_chromium()?;
    println!("e2e-setup: ready; tests find the cache at {}", cache.display());
    Ok(ExitCode::SUCCESS)
}

/// Creates the venv `cache/<name>` with the interpreter `base` and installs the pinned packages
/// of `requirements` (relative to the root) into it, unless its stamp says they are there.
fn install_venv(
    root: &Path,
    cache: &Path,
    base: &str,
    requirements: &str,
    name: &str,
    what: &str,
) -> anyhow::Result<()> {
    let requirements_path = root.join(requirements);
    let pins = std::fs::read_to_string(&requirements_path)
        .with_context(|| format!("cannot read {}", requirements_path.display()))?;
    let venv = cache.join(name);
    let python = venv_python(&venv);
    if !python.exists() {
        println!("e2e-setup: creating the Python venv {}", venv.display());
        run(Command::new(base).args(["-m", "venv"]).arg(&venv))
            .with_context(|| format!("`{base} -m venv` is needed for {what}"))?;
    }
    let stamp = venv.join(REQUIREMENTS_STAMP);
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(pins.as_str()) {
        println!("e2e-setup: Python packages already installed in {}", venv.display());
        return Ok(());
    }
    println!("e2e-setup: installing {requirements} into {}", venv.display());
    run(Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r"])
        .arg(&requirements_path))?;
    std::fs::write(&stamp, &pins).with_context(|| format!("cannot write {}", stamp.display()))
}

/// Installs the `name@version` pins of `pins_path` into the npm prefix `prefix`, unless every one
/// is there at its version.
fn install_pins(pins_path: &Path, prefix: &Path, what: &str) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(pins_path)
        .with_context(|| format!("cannot read {}", pins_path.display()))?;
    let pins = parse_pins(&text).with_context(|| format!("in {}", pins_path.display()))?;
    if stale_packages(prefix, &pins).is_empty() {
        println!("e2e-setup: {} {what} already installed in {}", pins.len(), prefix.display());
        return Ok(());
    }
    println!(
        "e2e-setup: installing the {what} of {} into {}",
        pins_path.display(),
        prefix.display()
    );
    std::fs::create_dir_all(prefix)
        .with_context(|| format!("cannot create {}", prefix.display()))?;
    let specs: Vec<String> = pins.iter().map(Pin::spec).collect();
    run(Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--save-exact", "--prefix"])
        .arg(prefix)
        .args(&specs))
    .with_context(|| format!("npm (Node.js 20 or later) is needed for the {what}"))?;
    if let Some(pin) = stale_packages(prefix, &pins).first() {
        bail!(
            "npm finished but {} is not installed in {}",
            pin.spec(),
            node_modules(prefix).display()
        );
    }
    Ok(())
}

/// Installs [`OPENCODE_PLUGIN`] at OpenCode's version into the cache's [`OPENCODE_CONFIG`]
/// folder, as OpenCode itself would (exact version, no install scripts), unless it is there.
fn install_opencode_config(cache: &Path, version: &str) -> anyhow::Result<()> {
    let folder = cache.join(OPENCODE_CONFIG);
    let pin = Pin { name: OPENCODE_PLUGIN.to_owned(), version: version.to_owned() };
    let stale = || {
        !folder.join("package-lock.json").exists()
            || !stale_packages(&folder, std::slice::from_ref(&pin)).is_empty()
    };
    if !stale() {
        println!("e2e-setup: OpenCode's config packages already installed in {}", folder.display());
        return Ok(());
    }
    println!("e2e-setup: installing {} into {}", pin.spec(), folder.display());
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    run(Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--save-exact", "--ignore-scripts"])
        .arg("--prefix")
        .arg(&folder)
        .arg(pin.spec()))
    .context("npm (Node.js 20 or later) is needed for OpenCode's config packages")?;
    if stale() {
        bail!("npm finished but {} is not installed in {}", pin.spec(), folder.display());
    }
    Ok(())
}

/// `$ATIF_E2E_CACHE`, or `target/e2e-cache` in the project.
fn cache_dir(root: &Path) -> PathBuf {
    match std::env::var_os("ATIF_E2E_CACHE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => root.join("target").join("e2e-cache"),
    }
}

fn node_modules(cache: &Path) -> PathBuf {
    cache.join("node_modules")
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// One pinned npm package.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pin {
    name: String,
    version: String,
}

impl Pin {
    fn spec(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// Reads `name@version` lines (scoped names such as `@scope/name@1.2.3` included), skipping
/// blank lines and `#` comments.
fn parse_pins(text: &str) -> anyhow::Result<Vec<Pin>> {
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
fn stale_packages(prefix: &Path, pins: &[Pin]) -> Vec<Pin> {
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

/// Installs headless Chromium from the distribution (`apt-get install chromium`, Debian's
/// package) for the browser tests of the HTML pages, unless it is already there. It is a
/// system package, not a pinned one: the tests need a current browser, not a version of it.
fn install_chromium() -> anyhow::Result<()> {
    if Path::new(CHROMIUM).exists() {
        println!("e2e-setup: Chromium already installed at {CHROMIUM}");
        return Ok(());
    }
    println!("e2e-setup: installing Chromium with apt-get (Debian's `chromium`)");
    run(Command::new("apt-get").arg("update").arg("-qq"))
        .context("apt-get (Debian or Ubuntu, as root) is needed to install Chromium")?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends", "chromium"])
        .env("DEBIAN_FRONTEND", "noninteractive"))
    .context("cannot install Chromium with apt-get")
}

/// Runs `command`, failing with its name when it cannot start or exits non-zero.
pub(crate) fn run(command: &mut Command) -> anyhow::Result<()> {
    let program = command.get_program().to_string_lossy().into_owned();
    let status = command.status().with_context(|| format!("cannot run `{program}`"))?;
    if !status.success() {
        bail!("`{program}` failed ({status})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn pin(name: &str, version: &str) -> Pin {
        Pin { name: name.to_owned(), version: version.to_owned() }
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
        let text = std::fs::read_to_string(project_root().join(AGENT_CLIS)).unwrap();
        // Five agent CLIs and three MCP reference servers.
        assert_eq!(parse_pins(&text).unwrap().len(), 8);
    }

    #[test]
    fn the_committed_typescript_pins_parse() {
        let text = std::fs::read_to_string(project_root().join(TYPESCRIPT_PINS)).unwrap();
        let pins = parse_pins(&text).unwrap();
        assert!(pins.iter().any(|pin| pin.name == "vitest"), "{pins:?}");
        assert!(pins.iter().any(|pin| pin.name == "jest"), "{pins:?}");
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
}
