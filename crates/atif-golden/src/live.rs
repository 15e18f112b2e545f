//! Live checks in tests: a test runs its agent N times against the live model, hands each run
//! to a [`LiveEnvelope`], and the envelope golden of their behaviour is checked or written.

use std::fmt;
use std::path::{Path, PathBuf};

use atif_envelope::{Conclusion, Envelope, Run, ToolOrder, Verdict, VerdictOptions, compare};
use atif_fs::is_ci;
use atif_normalize::MatchOptions;
use serde::Serialize;

use crate::{Error, MODE_ENV, Mode, Result, Settings};

/// The environment variable that allows live runs on CI, where they are refused otherwise:
/// live runs call the model and cost money. `ATIF_LIVE=1` allows them.
pub const LIVE_ENV: &str = "ATIF_LIVE";

/// An envelope golden that a test fills run by run: the behaviour of N live runs of an agent,
/// checked against the committed envelope (or written as it, in update mode).
///
/// ```no_run
/// # fn run_agent() -> serde_json::Value { serde_json::Value::Null }
/// # fn main() -> atif_golden::Result<()> {
/// let mut live = atif_golden::live_envelope!(runs: 20)?;
/// live.set_max_cost_tokens(Some(200_000));
/// while live.wants_more() {
///     let trajectory = run_agent();
///     live.add(&trajectory, None)?;
/// }
/// live.finish()?;
/// # Ok(())
/// # }
/// ```
///
/// The mode is the golden check's ([`Mode`], from `ATIF_GOLDEN` and `CI`): `update` writes the
/// envelope of these runs, atomically; `check` and `review` compare them with it and fail with
/// [`Error::EnvelopeChanged`] when the verdict is `changed` (no pending file is left: an
/// envelope is re-recorded, never patched). A missing envelope fails outside update mode.
#[derive(Debug, Clone)]
pub struct LiveEnvelope {
    path: PathBuf,
    runs: u32,
    max_cost_tokens: Option<u64>,
    order: ToolOrder,
    verdict_options: VerdictOptions,
    settings: Settings,
    update_command: String,
    collected: Vec<Run>,
    tokens: u64,
}

/// What [`LiveEnvelope::finish`] did when nothing failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LiveOutcome {
    /// Update mode wrote the envelope of the runs.
    Written {
        /// The envelope golden.
        path: PathBuf,
        /// How many runs it holds.
        runs: u64,
        /// How many tool-call variants they took.
        variants: usize,
    },
    /// The runs were compared with the envelope: `no-clear-change` or `inconclusive`.
    Checked {
        /// The envelope golden.
        path: PathBuf,
        /// The verdict, with every field's test.
        verdict: Box<Verdict>,
    },
}

impl fmt::Display for LiveOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiveOutcome::Written { path, runs, variants } => write!(
                f,
                "wrote envelope golden {} ({runs} runs, {variants} tool-call variant(s))",
                path.display()
            ),
            LiveOutcome::Checked { path, verdict } => {
                write!(f, "envelope golden {}: {verdict}", path.display())
            }
        }
    }
}

impl LiveEnvelope {
    /// A live check of `runs` runs against the envelope golden at `path`, with the settings'
    /// normalisation options and mode. [`live_envelope!`](crate::live_envelope) names the file
    /// after the test instead.
    ///
    /// # Errors
    /// [`Error::LiveRefused`] on CI (`CI` set) unless `ATIF_LIVE=1` or
    /// [`Settings::set_live`] allows it; [`Error::UnknownMode`] for a bad `ATIF_GOLDEN`.
    pub fn new(path: impl Into<PathBuf>, runs: u32, settings: &Settings) -> Result<LiveEnvelope> {
        let ci = std::env::var("CI").ok();
        let live = std::env::var(LIVE_ENV).ok();
        refuse_live(settings.live(), ci.as_deref(), live.as_deref())?;
        let path = path.into();
        let update_command = match settings.update_command() {
            Some(command) => command.to_owned(),
            None => format!("{MODE_ENV}=update cargo test"),
        };
        Ok(LiveEnvelope {
            path,
            runs,
            max_cost_tokens: None,
            order: order_of(settings),
            verdict_options: VerdictOptions::default(),
            settings: settings.clone(),
            update_command,
            collected: Vec::new(),
            tokens: 0,
        })
    }

    /// Stops asking for runs once those added used this many tokens (prompt and completion);
    /// the verdict is then `inconclusive` if they were too few. `None` (the default): no cap.
    pub fn set_max_cost_tokens(&mut self, tokens: Option<u64>) -> &mut LiveEnvelope {
        self.max_cost_tokens = tokens;
        self
    }

    /// How update mode groups the runs' tool calls into variants; a check uses the order the
    /// envelope was written with. The default is the sequence mode of the settings' match
    /// options ([`Settings::set_match_options`], or `sequence` in the project file), else
    /// `exact`.
    pub fn set_order(&mut self, order: ToolOrder) -> &mut LiveEnvelope {
        self.order = order;
        self
    }

    /// How the verdict decides (α, seed, the shift a conclusive check must see).
    pub fn set_verdict_options(&mut self, options: VerdictOptions) -> &mut LiveEnvelope {
        self.verdict_options = options;
        self
    }

    /// Sets the command a failure names to re-record the envelope.
    pub fn set_update_command(&mut self, command: &str) -> &mut LiveEnvelope {
        command.clone_into(&mut self.update_command);
        self
    }

    /// The envelope golden's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many runs have been added.
    pub fn runs(&self) -> usize {
        self.collected.len()
    }

    /// The tokens the runs added so far used (prompt and completion).
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// Whether the test should run the agent once more: fewer runs than asked for were added,
    /// and the token cap, if any, is not reached.
    pub fn wants_more(&self) -> bool {
        let under_cap = self.max_cost_tokens.is_none_or(|cap| self.tokens < cap);
        self.collected.len() < self.runs as usize && under_cap
    }

    /// Adds one run: its trajectory (anything that serialises to an ATIF document) and, when
    /// the test judged it, whether it passed. Give every run an outcome, or none.
    ///
    /// # Errors
    /// [`Error::Serialize`] when the value is not JSON, [`Error::Envelope`] when it is not a
    /// trajectory.
    pub fn add<T: Serialize + ?Sized>(
        &mut self,
        trajectory: &T,
        passed: Option<bool>,
    ) -> Result<&mut LiveEnvelope> {
        let value =
            serde_json::to_value(trajectory).map_err(|source| Error::Serialize { source })?;
        let label = format!("run {}", self.collected.len() + 1);
        let options = self.settings.normalize_options();
        let mut run = Run::new(&label, value, options).map_err(|source| self.envelope(source))?;
        run.set_passed(passed);
        let shape = run.shape();
        // A provider that reports no usage leaves the cap unreached: the runs count 0 tokens.
        let used =
            shape.prompt_tokens.unwrap_or(0).saturating_add(shape.completion_tokens.unwrap_or(0));
        self.tokens = self.tokens.saturating_add(used);
        self.collected.push(run);
        Ok(self)
    }

    /// Checks the runs against the envelope golden, or writes their envelope in update mode.
    ///
    /// # Errors
    /// [`Error::EnvelopeChanged`] when the verdict is `changed`; [`Error::MissingGolden`] when
    /// there is no envelope outside update mode; [`Error::Envelope`] when no run was added,
    /// when some runs have an outcome and others not, or when the envelope is malformed;
    /// [`Error::Io`] when it cannot be read or written.
    pub fn finish(self) -> Result<LiveOutcome> {
        let mode = match self.settings.mode() {
            Some(mode) => mode,
            None => Mode::from_env()?,
        };
        if mode == Mode::Update {
            let envelope =
                Envelope::build(&self.collected, self.order).map_err(|e| self.envelope(e))?;
            crate::file::write_atomic(&self.path, envelope.to_json().as_bytes())?;
            let (runs, variants) = (envelope.runs(), envelope.variants().len());
            return Ok(LiveOutcome::Written { path: self.path, runs, variants });
        }
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                let command = self.update_command.clone();
                return Err(Error::MissingGolden { path: self.path, command, pending: None });
            }
            Err(err) => return Err(Error::io("read", &self.path, err)),
        };
        let golden = Envelope::from_json(&text).map_err(|e| self.envelope(e))?;
        let verdict = compare(&golden, &self.collected, &self.verdict_options)
            .map_err(|e| self.envelope(e))?;
        if verdict.verdict == Conclusion::Changed {
            let command = self.update_command;
            return Err(Error::EnvelopeChanged {
                path: self.path,
                verdict: Box::new(verdict),
                command,
            });
        }
        Ok(LiveOutcome::Checked { path: self.path, verdict: Box::new(verdict) })
    }

    fn envelope(&self, source: atif_envelope::Error) -> Error {
        Error::Envelope { path: self.path.clone(), source }
    }
}

/// The order the settings' sequence mode names (the five have the same names and meaning for
/// variants as for a check), else `exact`.
fn order_of(settings: &Settings) -> ToolOrder {
    let sequence = settings.match_options().map(MatchOptions::sequence);
    sequence.and_then(|mode| ToolOrder::from_name(mode.as_str())).unwrap_or_default()
}

/// Refuses live runs on CI unless asked: `allowed` (the settings' override) wins, then
/// `ATIF_LIVE=1` (`live`) allows them wherever `CI` (`ci`) is set.
pub(crate) fn refuse_live(
    allowed: Option<bool>,
    ci: Option<&str>,
    live: Option<&str>,
) -> Result<()> {
    let allowed = match allowed {
        Some(allowed) => allowed,
        None => !is_ci(ci) || live.map(str::trim) == Some("1"),
    };
    match allowed {
        true => Ok(()),
        false => Err(Error::LiveRefused { variable: LIVE_ENV }),
    }
}

/// The envelope golden's file name for an assertion in the function at `function_path`:
/// the golden's name with `.envelope.json` for `.json`.
pub(crate) fn envelope_file_name(function_path: &str, name: Option<&str>) -> String {
    let golden = crate::name::golden_file_name(function_path, name);
    let stem = golden.strip_suffix(".json").unwrap_or(&golden);
    format!("{stem}.envelope.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_runs_are_refused_on_ci_unless_atif_live_is_one_or_the_settings_allow_them() {
        let refused = |allowed, ci, live| refuse_live(allowed, ci, live).is_err();
        assert!(!refused(None, None, None));
        assert!(!refused(None, Some("false"), None));
        assert!(refused(None, Some("true"), None));
        assert!(refused(None, Some("1"), Some("0")));
        assert!(refused(None, Some("1"), Some("yes")));
        assert!(!refused(None, Some("1"), Some("1")));
        assert!(!refused(Some(true), Some("1"), None));
        assert!(refused(Some(false), None, Some("1")));
        let message = refuse_live(None, Some("1"), None).unwrap_err().to_string();
        assert!(message.contains("set ATIF_LIVE=1"), "{message}");
    }

    #[test]
    fn an_envelope_is_named_after_the_test_like_its_golden() {
        let path = "live::triage::f";
        assert_eq!(envelope_file_name(path, None), "live__triage.envelope.json");
        assert_eq!(envelope_file_name(path, Some("b")), "live__triage__b.envelope.json");
    }
}
