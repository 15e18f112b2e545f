//! How an import reads a log: [`ImportOptions`].

use atif_schema::{Expected, LoadOptions};
use atif_secrets::Scanner;

use crate::format::Format;

/// What the bounded loader says a log should be, in an error about bytes that cannot be one.
const AGENT_LOG: Expected =
    Expected::new("an agent log", "JSON or JSON Lines, starting with `{` or `[`");

/// How [`import`](crate::import()) reads a log.
///
/// The default detects the format from the content and skips unknown record types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    pub(crate) format: Option<Format>,
    pub(crate) strict: bool,
    pub(crate) cwd: Option<String>,
    pub(crate) home: Option<String>,
    pub(crate) run: Option<usize>,
    pub(crate) secrets: Option<Scanner>,
    pub(crate) load: LoadOptions,
}

impl Default for ImportOptions {
    fn default() -> ImportOptions {
        ImportOptions {
            format: None,
            strict: false,
            cwd: None,
            home: None,
            run: None,
            secrets: Some(Scanner::default()),
            load: *LoadOptions::new().set_expected(AGENT_LOG),
        }
    }
}

impl ImportOptions {
    /// The default options: detect the format, not strict, secrets redacted.
    pub fn new() -> ImportOptions {
        ImportOptions::default()
    }

    /// Forces a format (`None`, the default, detects it from the first records).
    pub fn set_format(&mut self, format: Option<Format>) -> &mut ImportOptions {
        self.format = format;
        self
    }

    /// The forced format, if any.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Makes an unknown record type, a record without the shape its format gives it, or a line
    /// that is not a JSON object an error instead of a skipped, counted record (default
    /// `false`).
    pub fn set_strict(&mut self, strict: bool) -> &mut ImportOptions {
        self.strict = strict;
        self
    }

    /// Whether unknown and malformed records are errors.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// The run's working directory, recorded as `extra.cwd` in place of the one the log
    /// names (default: the log's own, if it names one).
    pub fn set_cwd(&mut self, cwd: Option<&str>) -> &mut ImportOptions {
        self.cwd = cwd.map(str::to_owned);
        self
    }

    /// The working directory given with [`set_cwd`](ImportOptions::set_cwd).
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// The run's home folder, recorded as `extra.home` (default: the one the log reveals, in a
    /// path to the agent's own folder such as `~/.codex/skills`, or the folder a session file
    /// was read from).
    pub fn set_home(&mut self, home: Option<&str>) -> &mut ImportOptions {
        self.home = home.map(str::to_owned);
        self
    }

    /// Picks the `run`-th run (from 1) of a log that holds several (Claude Code stream-json
    /// captured from several `claude -p` calls into one file). The default, `None`, imports a
    /// log of one run and refuses a log of several with [`Error::SeveralRuns`](crate::Error::SeveralRuns).
    pub fn set_run(&mut self, run: Option<usize>) -> &mut ImportOptions {
        self.run = run;
        self
    }

    /// The run asked for with [`set_run`](ImportOptions::set_run).
    pub fn run(&self) -> Option<usize> {
        self.run
    }

    /// The home folder given with [`set_home`](ImportOptions::set_home).
    pub fn home(&self) -> Option<&str> {
        self.home.as_deref()
    }

    /// Sets the scanner whose secrets become `<redacted:KIND>` markers in the trajectory
    /// (default: the default [`Scanner`]); `None` keeps them, for a local investigation only.
    pub fn set_secret_scanner(&mut self, scanner: Option<Scanner>) -> &mut ImportOptions {
        self.secrets = scanner;
        self
    }

    /// Sets the most bytes [`import_path`](crate::import_path) reads from one file (default
    /// [`atif_schema::DEFAULT_MAX_INPUT_BYTES`], 4 GiB); a larger file is [`Error::Load`](crate::Error::Load).
    /// Files are read through atif-schema's bounded reader, which also stops at the first byte
    /// of binary data, so `/dev/zero` or an image fails at once.
    pub fn set_max_input_bytes(&mut self, max_bytes: u64) -> &mut ImportOptions {
        self.load.set_max_bytes(max_bytes);
        self
    }

    /// The most bytes read from one file.
    pub fn max_input_bytes(&self) -> u64 {
        self.load.max_bytes()
    }

    /// How a log is read: the size limit, and what the loader's errors say a log should be
    /// (JSON or JSON Lines). A caller that reads the bytes itself, such as standard input,
    /// reads them with these.
    pub fn load_options(&self) -> &LoadOptions {
        &self.load
    }

    /// The secret scanner, or `None` when secrets are kept.
    pub fn secret_scanner(&self) -> Option<&Scanner> {
        self.secrets.as_ref()
    }
}
