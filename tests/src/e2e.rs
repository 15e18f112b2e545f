//! Where the end-to-end tests find the pinned agent CLIs and the Python venv that
//! `cargo xtask e2e-setup` installs, and what they do when those are absent.
//!
//! A test asks for what it needs and returns early when told to skip:
//!
//! ```no_run
//! let Some(claude) = tests::e2e::agent_cli("claude") else { return };
//! let Some(python) = tests::e2e::python() else { return };
//! # let _ = (claude, python);
//! ```
//!
//! Absent, the helper prints `skipped: … run `cargo xtask e2e-setup`` on stderr and returns
//! `None`, so a checkout without the cache stays green; with `ATIF_E2E_REQUIRED=1` (set by
//! `.ci/run`, which runs the setup first) absence fails the test instead.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The command that fills the cache.
pub const SETUP_COMMAND: &str = "cargo xtask e2e-setup";

/// The cache folder: `$ATIF_E2E_CACHE`, or `target/e2e-cache` in the workspace.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("ATIF_E2E_CACHE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root().join("target").join("e2e-cache"),
    }
}

/// Whether absence is a failure: `ATIF_E2E_REQUIRED` is set to anything but empty, `0` or
/// `false`.
pub fn required() -> bool {
    atif_test_support::env_flag("ATIF_E2E_REQUIRED")
}

/// The executable of a pinned agent CLI (`claude`, `codex`, `gemini`, `opencode`, `pi`), or
/// `None` after a skip notice when it is not installed.
///
/// # Panics
///
/// When it is not installed and [`required`] is true.
pub fn agent_cli(bin: &str) -> Option<PathBuf> {
    present(
        cache_dir().join("node_modules").join(".bin").join(bin),
        &format!("the agent CLI `{bin}`"),
    )
}

/// A file or folder that `cargo xtask e2e-setup` puts in the cache, by its path relative to the
/// cache (e.g. `opencode-config`), or `None` after a skip notice when it is not there.
///
/// # Panics
///
/// When it is not there and [`required`] is true.
pub fn cached(relative: &str, what: &str) -> Option<PathBuf> {
    present(cache_dir().join(relative), what)
}

/// The Python interpreter of the cache's venv (with the pinned SDKs and pytest), or `None`
/// after a skip notice when it is not installed.
///
/// # Panics
///
/// When it is not installed and [`required`] is true.
pub fn python() -> Option<PathBuf> {
    let venv = cache_dir().join("venv");
    let python = if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    };
    let stamp = venv.join(".atif-requirements.txt");
    // The stamp is written once every pinned package is installed; a venv without it is half
    // set up.
    let python = present(python, "the Python venv with the pinned SDKs")?;
    match stamp.exists() {
        true => Some(python),
        false => absent(&stamp, "the Python venv's pinned packages"),
    }
}

/// `PATH` with the cache's `node_modules/.bin` in front, for agents that start other CLIs.
pub fn path_with_cache() -> OsString {
    let bin = cache_dir().join("node_modules").join(".bin");
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&rest));
    std::env::join_paths(paths).unwrap_or(rest)
}

// The one copy of these lives in atif-test-support; the end-to-end tests reach it from here.
pub use atif_test_support::{atif_binary, describe};

/// The folder of the committed end-to-end assets (`tests/e2e`: pins, Python agents).
pub fn assets_dir() -> PathBuf {
    workspace_root().join("tests").join("e2e")
}

/// Headless Chromium, for the tests of the HTML pages: Debian's `/usr/bin/chromium`, which
/// `cargo xtask e2e-setup` installs (`ATIF_CHROMIUM` names another), or `None` after a skip
/// notice when it is not installed.
///
/// # Panics
///
/// When it is not installed and [`required`] is true.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("ATIF_CHROMIUM")
        .filter(|path| !path.is_empty())
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    present(path, "headless Chromium")
}

fn present(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() { Some(path) } else { absent(&path, what) }
}

/// Fails when the cache is required; otherwise prints the skip notice.
fn absent(path: &Path, what: &str) -> Option<PathBuf> {
    let notice = format!("{what} is not installed (no {}); run `{SETUP_COMMAND}`", path.display());
    assert!(!required(), "ATIF_E2E_REQUIRED is set but {notice}");
    #[allow(clippy::print_stderr, reason = "the skip notice is for the person running the tests")]
    {
        eprintln!("skipped: {notice}");
    }
    None
}

fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}
