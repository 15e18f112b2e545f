//! Running the real agent CLIs (Claude Code, Codex, Gemini CLI, OpenCode, pi) against a local
//! model server, each in a fresh working directory and HOME, with only what each CLI's own
//! documentation asks users to set for a local server: the base URL and a key, and the
//! provider settings file of Codex, Gemini CLI, OpenCode and pi. No switch that users would
//! not set (nonessential traffic, telemetry, updates, model fetching, plugins) is turned off,
//! so the tests meet the probes and side requests users' runs make.
//!
//! ```no_run
//! use tests::agents::{Agent, Sandbox};
//!
//! # fn main() -> std::io::Result<()> {
//! let provider = atif_fake_provider::FakeProvider::start(Default::default()).expect("starts");
//! let dir = tempfile::tempdir()?;
//! let Some(program) = Agent::Codex.program() else { return Ok(()) }; // skipped: not installed
//! let sandbox = Sandbox::new(Agent::Codex, dir.path(), provider.url())?;
//! let run = sandbox.run(sandbox.command(&program, "Run the command"))?;
//! assert!(run.status.success(), "{}", run.stderr);
//! assert!(run.stdout.contains("atif-e2e-42"));
//! assert_eq!(sandbox.session_files().len(), 1);
//! # Ok(())
//! # }
//! ```
//!
//! To run an agent under `atif record` or `atif replay`, put [`Sandbox::argv`] after `--` and
//! give the `atif` command [`Sandbox::env`] and [`Sandbox::cwd`]; for agents configured by file
//! (Codex, OpenCode, pi), make the sandbox with the URL the proxy will listen on
//! (`--listen`).

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::e2e;

/// How long an agent may run before it is killed (a hung agent, not a slow one).
const AGENT_TIMEOUT: Duration = Duration::from_secs(300);

/// The path, on the sandbox's model server, that every sandbox names as npm's registry
/// (`npm_config_registry`): an agent that would install a package at run time asks the test's
/// server instead of the network, and the test sees it in the server's requests (see
/// [`asks_npm_registry`]).
pub const NPM_REGISTRY_PATH: &str = "/npm-registry/";

/// The cache's folder of the packages OpenCode wants in its config folder (installed by
/// `cargo xtask e2e-setup`; see [`Sandbox::new`]).
const OPENCODE_CONFIG: &str = "opencode-config";

/// Whether a request path on the model server was meant for npm's registry.
pub fn asks_npm_registry(path: &str) -> bool {
    path.starts_with(NPM_REGISTRY_PATH)
}

/// One of the agent CLIs that `cargo xtask e2e-setup` installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Claude Code (Anthropic Messages, streaming, `POST /v1/messages?beta=true`).
    ClaudeCode,
    /// Codex (OpenAI Responses, streaming; configured by `~/.codex/config.toml`).
    Codex,
    /// Gemini CLI (`:streamGenerateContent?alt=sse`).
    GeminiCli,
    /// OpenCode (Chat Completions through `@ai-sdk/openai-compatible`).
    OpenCode,
    /// pi (Chat Completions).
    Pi,
}

impl Agent {
    /// All five, in a fixed order.
    pub const ALL: [Agent; 5] =
        [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli, Agent::OpenCode, Agent::Pi];

    /// A short name for messages and folder names, e.g. `claude-code`.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
            Agent::OpenCode => "opencode",
            Agent::Pi => "pi",
        }
    }

    /// The executable's name in `node_modules/.bin`.
    pub fn bin(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini",
            Agent::OpenCode => "opencode",
            Agent::Pi => "pi",
        }
    }

    /// The name of its shell tool, as the agent offers it to the model.
    pub fn shell_tool(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Bash",
            Agent::Codex => "exec_command",
            Agent::GeminiCli => "run_shell_command",
            Agent::OpenCode | Agent::Pi => "bash",
        }
    }

    /// The installed executable, or `None` after a skip notice (see [`e2e::agent_cli`]).
    /// For OpenCode, the packages of its config folder must be in the cache too.
    ///
    /// # Panics
    ///
    /// When it is not installed and `ATIF_E2E_REQUIRED` is set.
    pub fn program(self) -> Option<PathBuf> {
        let program = e2e::agent_cli(self.bin())?;
        if self == Agent::OpenCode {
            let lock = format!("{OPENCODE_CONFIG}/package-lock.json");
            e2e::cached(&lock, "OpenCode's config packages")?;
        }
        Some(program)
    }
}

/// A fresh working directory and HOME for one agent run, with the agent configured for a
/// model server at a base URL (`http://127.0.0.1:PORT`, without `/v1`).
#[derive(Debug, Clone)]
pub struct Sandbox {
    agent: Agent,
    root: PathBuf,
    cwd: PathBuf,
    home: PathBuf,
    base_url: String,
}

/// What an agent run left: its exit status, what it printed, and its session files.
#[derive(Debug)]
pub struct AgentRun {
    /// The exit status (killed after five minutes if it hung).
    pub status: ExitStatus,
    /// Its standard output (stream-json events for most agents).
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// The session files it wrote under HOME (see [`Sandbox::session_files`]).
    pub session_files: Vec<PathBuf>,
}

impl Sandbox {
    /// Creates `root/cwd`, `root/home` and `root/tmp` and writes the agent's configuration files
    /// for a model server at `base_url`.
    ///
    /// OpenCode's config folder also gets the packages OpenCode would otherwise install there
    /// from npm's registry on every start: `package.json` and `package-lock.json` copied from
    /// the cache's `opencode-config` folder, and its `node_modules` linked.
    ///
    /// # Errors
    ///
    /// When a folder or file cannot be written, or OpenCode's packages are not in the cache.
    pub fn new(agent: Agent, root: &Path, base_url: &str) -> io::Result<Sandbox> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let cwd = root.join("cwd");
        let home = root.join("home");
        std::fs::create_dir_all(&cwd)?;
        std::fs::create_dir_all(&home)?;
        std::fs::create_dir_all(root.join("tmp"))?;
        let sandbox = Sandbox { agent, root: root.to_path_buf(), cwd, home, base_url };
        for (path, text) in sandbox.config_files() {
            let path = sandbox.home.join(path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        if agent == Agent::OpenCode {
            sandbox.install_opencode_packages()?;
        }
        Ok(sandbox)
    }

    /// The agent this sandbox is for.
    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// The working directory the agent runs in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The HOME the agent runs with.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The configuration files written under HOME: relative path and content.
    pub fn config_files(&self) -> Vec<(&'static str, String)> {
        let url = &self.base_url;
        match self.agent {
            Agent::ClaudeCode => Vec::new(),
            Agent::Codex => vec![(
                ".codex/config.toml",
                format!(
                    "model = \"gpt-fake\"\nmodel_provider = \"local\"\n\n[model_providers.local]\n\
                     name = \"local\"\nbase_url = \"{url}/v1\"\nenv_key = \"OPENAI_API_KEY\"\n\
                     wire_api = \"responses\"\nsupports_websockets = false\n"
                ),
            )],
            Agent::GeminiCli => vec![(
                ".gemini/settings.json",
                r#"{"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}}}"#
                    .to_owned(),
            )],
            Agent::OpenCode => vec![(
                ".config/opencode/opencode.json",
                format!(
                    r#"{{"model":"local/fake-model","permission":{{"bash":"allow","edit":"allow"}},"provider":{{"local":{{"npm":"@ai-sdk/openai-compatible","options":{{"baseURL":"{url}/v1","apiKey":"atif-fake-key"}},"models":{{"fake-model":{{"tool_call":true}}}}}}}}}}"#
                ),
            )],
            Agent::Pi => vec![(
                ".pi/agent/models.json",
                format!(
                    r#"{{"providers":{{"local":{{"baseUrl":"{url}/v1","api":"openai-completions","apiKey":"atif-fake-key","compat":{{"supportsDeveloperRole":false,"supportsReasoningEffort":false}},"models":[{{"id":"fake-model"}}]}}}}}}"#
                ),
            )],
        }
    }

    /// Puts the cache's `opencode-config` packages into OpenCode's config folder. OpenCode checks
    /// only that `node_modules` exists and that the lock file names what `package.json` asks
    /// for, so the folder is shared through a link rather than copied (64 MB a run).
    fn install_opencode_packages(&self) -> io::Result<()> {
        let from = e2e::cache_dir().join(OPENCODE_CONFIG);
        let to = self.home.join(".config").join("opencode");
        std::fs::create_dir_all(&to)?;
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(from.join(file), to.join(file)).map_err(|err| {
                let setup = e2e::SETUP_COMMAND;
                let from = from.join(file);
                io::Error::new(err.kind(), format!("{}: {err}; run `{setup}`", from.display()))
            })?;
        }
        link_dir(&from.join("node_modules"), &to.join("node_modules"))
    }

    /// The agent's command line for a prompt: `program` followed by its arguments for a
    /// non-interactive run with JSON output and its shell tool allowed.
    pub fn argv(&self, program: &Path, prompt: &str) -> Vec<OsString> {
        let args: &[&str] = match self.agent {
            Agent::ClaudeCode => &[
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--verbose",
                "--allowedTools",
                "Bash",
            ],
            Agent::Codex => &[
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "danger-full-access",
                prompt,
            ],
            Agent::GeminiCli => &[
                "-m",
                "gemini-2.5-flash",
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--yolo",
            ],
            Agent::OpenCode => &["run", "--format", "json", prompt],
            Agent::Pi => &["--model", "local/fake-model", "-p", "--mode", "json", prompt],
        };
        let mut argv = vec![program.as_os_str().to_owned()];
        argv.extend(args.iter().map(OsString::from));
        argv
    }

    /// The whole environment of a run (meant for `env_clear`): `PATH` with the cache's CLIs,
    /// `HOME`, a plain terminal, dummy API keys, the agent's base-URL variables, npm's
    /// registry on the model server ([`NPM_REGISTRY_PATH`]), and for OpenCode `TMPDIR` in the
    /// sandbox.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let url = &self.base_url;
        let mut env: Vec<(&str, String)> = vec![
            ("HOME", self.home.display().to_string()),
            ("LANG", "C.UTF-8".to_owned()),
            ("TERM", "dumb".to_owned()),
            ("NO_COLOR", "1".to_owned()),
            ("npm_config_registry", format!("{url}{NPM_REGISTRY_PATH}")),
        ];
        match self.agent {
            Agent::ClaudeCode => env.extend([
                ("ANTHROPIC_BASE_URL", url.clone()),
                ("ANTHROPIC_API_KEY", "atif-fake-key".to_owned()),
            ]),
            Agent::Codex => env.push(("OPENAI_API_KEY", "atif-fake-key".to_owned())),
            Agent::GeminiCli => env.extend([
                ("GOOGLE_GEMINI_BASE_URL", url.clone()),
                ("GEMINI_API_KEY", "atif-fake-key".to_owned()),
            ]),
            Agent::OpenCode => env.extend([
                // Each OpenCode process leaves a 5 MB native library it unpacked in the
                // temporary folder; this one goes with the sandbox.
                ("TMPDIR", self.root.join("tmp").display().to_string()),
            ]),
            Agent::Pi => {}
        }
        let mut env: Vec<(OsString, OsString)> = env
            .into_iter()
            .map(|(key, value)| (OsString::from(key), OsString::from(value)))
            .collect();
        env.push((OsString::from("PATH"), e2e::path_with_cache()));
        env
    }

    /// A command running the agent on a prompt: environment cleared and set to [`Self::env`],
    /// working directory [`Self::cwd`], no standard input.
    pub fn command(&self, program: &Path, prompt: &str) -> Command {
        let argv = self.argv(program, prompt);
        self.command_for(&argv)
    }

    /// A command running `argv` (for instance `atif record … -- <agent argv>`, or
    /// `opencode export ID`) in this sandbox, like [`Self::command`].
    pub fn command_for(&self, argv: &[OsString]) -> Command {
        let mut command = Command::new(argv.first().map_or_else(OsString::new, OsString::clone));
        command
            .args(argv.iter().skip(1))
            .env_clear()
            .envs(self.env())
            .current_dir(&self.cwd)
            .stdin(Stdio::null());
        command
    }

    /// Runs a command to its end (killing it after five minutes if it hangs), its output
    /// captured in files beside the sandbox, and returns what it left.
    ///
    /// # Errors
    ///
    /// When the command cannot be started or its output not read back.
    pub fn run(&self, mut command: Command) -> io::Result<AgentRun> {
        let stdout_path = self.root.join("stdout.txt");
        let stderr_path = self.root.join("stderr.txt");
        command.stdout(File::create(&stdout_path)?).stderr(File::create(&stderr_path)?);
        let mut child = command.spawn()?;
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if started.elapsed() > AGENT_TIMEOUT {
                child.kill()?;
                break child.wait()?;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Ok(AgentRun {
            status,
            stdout: std::fs::read_to_string(stdout_path)?,
            stderr: std::fs::read_to_string(stderr_path)?,
            session_files: self.session_files(),
        })
    }

    /// The session files the agent keeps under HOME, sorted: Claude Code's
    /// `.claude/projects/*/*.jsonl`, Codex's `.codex/sessions/**/rollout-*.jsonl`, Gemini CLI's
    /// `.gemini/tmp/*/chats/*`, OpenCode's `.local/share/opencode/opencode.db` (read it with
    /// `opencode export SESSION`), pi's `.pi/agent/sessions/*/*.jsonl`.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let (folder, keep): (&str, fn(&Path) -> bool) = match self.agent {
            Agent::ClaudeCode => (".claude/projects", |path| has_extension(path, "jsonl")),
            Agent::Codex => (".codex/sessions", |path| has_extension(path, "jsonl")),
            Agent::GeminiCli => (".gemini/tmp", |path| {
                path.parent().and_then(Path::file_name).is_some_and(|name| name == "chats")
            }),
            Agent::OpenCode => (".local/share/opencode", |path| {
                path.file_name().is_some_and(|name| name == "opencode.db")
            }),
            Agent::Pi => (".pi/agent/sessions", |path| has_extension(path, "jsonl")),
        };
        let mut files = Vec::new();
        walk(&self.home.join(folder), &mut files);
        files.retain(|path| keep(path));
        files.sort();
        files
    }
}

#[cfg(unix)]
fn link_dir(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
fn link_dir(target: &Path, link: &Path) -> io::Result<()> {
    std::os::windows::fs::symlink_dir(target, link)
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|found| found == extension)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}
