//! The match-mode flags of `atif diff`: how loosely a run must do what its golden does.

use std::process::ExitCode;

use anyhow::Context;
use atif_normalize::{
    ArgumentMatch, Band, MatchOptions, MatchOutcome, NormalizeOptions, SequenceMatch, match_runs,
};
use atif_view::ViewOptions;

use atif_golden::GoldenConfig;

use crate::flags::Format;
use crate::input::display_name;
use crate::output;
use crate::status::invalid;

/// The match-mode flags; with any of them, the run is judged by `atif_normalize::match_runs`
/// instead of by its Shape deltas.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct MatchArgs {
    /// Judge the tool sequence by this mode: `exact`, `in-order` (the golden's calls in that
    /// order, others between them), `any-order`, `subset` (every actual call is the golden's)
    /// or `superset` (every golden call is there). Fewer turns never pass.
    #[arg(long, value_name = "MODE", value_parser = parse_sequence)]
    pub(crate) sequence: Option<SequenceMatch>,
    /// Compare arguments by this mode: `exact`, `ignore`, `subset`, `superset`, or
    /// `paths:/a,/b` (only these JSON Pointers).
    #[arg(long, value_name = "MODE", value_parser = parse_arguments)]
    pub(crate) arguments: Option<ArgumentMatch>,
    /// Compare one tool's arguments by its own mode: `TOOL=MODE`; repeatable.
    #[arg(long = "arguments-for", value_name = "TOOL=MODE")]
    pub(crate) arguments_for: Vec<String>,
    /// Numbers in arguments within this absolute difference are equal.
    #[arg(long, value_name = "F")]
    pub(crate) number_tolerance: Option<f64>,
    /// The band of the step count: `N` (absolute) or `P%` (relative).
    #[arg(long, value_name = "BAND", value_parser = parse_band)]
    pub(crate) step_band: Option<Band>,
    /// The band of the LLM calls: `N` or `P%`.
    #[arg(long, value_name = "BAND", value_parser = parse_band)]
    pub(crate) llm_calls_band: Option<Band>,
    /// The band of the prompt and completion tokens: `N` or `P%`.
    #[arg(long, value_name = "BAND", value_parser = parse_band)]
    pub(crate) token_band: Option<Band>,
}

impl MatchArgs {
    /// Whether any match-mode flag was given, or the project file sets a mode for the golden.
    pub(crate) fn is_set(&self, config: &GoldenConfig) -> bool {
        config.sequence().is_some()
            || config.arguments().is_some()
            || self.sequence.is_some()
            || self.arguments.is_some()
            || !self.arguments_for.is_empty()
            || self.number_tolerance.is_some()
            || self.step_band.is_some()
            || self.llm_calls_band.is_some()
            || self.token_band.is_some()
    }

    /// The modes in force, as a user names them (`sequence any-order`): the flags given, else
    /// the project file's keys; the defaults (exact, no band) are left out.
    fn describe(&self, config: &GoldenConfig) -> Vec<String> {
        let mut modes = Vec::new();
        if let Some(sequence) = self.sequence.or(config.sequence()) {
            modes.push(format!("sequence {}", sequence.as_str()));
        }
        if let Some(arguments) = self.arguments.as_ref().or(config.arguments()) {
            modes.push(format!("arguments {}", argument_name(arguments)));
        }
        modes.extend(self.arguments_for.iter().map(|spec| format!("arguments for {spec}")));
        if let Some(tolerance) = self.number_tolerance {
            modes.push(format!("number tolerance {tolerance}"));
        }
        for (name, band) in [
            ("step band", self.step_band),
            ("LLM calls band", self.llm_calls_band),
            ("token band", self.token_band),
        ] {
            let Some(band) = band else { continue };
            match band.absolute {
                0 => modes.push(format!("{name} {}%", band.relative * 100.0)),
                absolute => modes.push(format!("{name} {absolute}")),
            }
        }
        modes
    }

    /// The options: the flags, else the project file's keys, else exact.
    fn to_options(&self, config: &GoldenConfig) -> anyhow::Result<MatchOptions> {
        let mut options = MatchOptions::default();
        options.set_sequence(self.sequence.or(config.sequence()).unwrap_or_default());
        let arguments = self.arguments.clone().or_else(|| config.arguments().cloned());
        options.set_arguments(arguments.unwrap_or_default());
        for spec in &self.arguments_for {
            let (tool, mode) = spec
                .split_once('=')
                .with_context(|| format!("--arguments-for: expected TOOL=MODE, got `{spec}`"))?;
            let mode =
                parse_arguments(mode).map_err(|err| anyhow::anyhow!("--arguments-for: {err}"))?;
            options.set_tool_arguments(tool, mode);
        }
        options.set_number_tolerance(self.number_tolerance.unwrap_or(0.0));
        let band = |band: Option<Band>| band.unwrap_or_default();
        options.set_bands(band(self.step_band), band(self.llm_calls_band), band(self.token_band));
        Ok(options)
    }
}

/// What the match modes found, and the modes as the user named them.
#[derive(Debug)]
pub(crate) struct Judged {
    pub(crate) outcome: MatchOutcome,
    pub(crate) modes: Vec<String>,
}

impl Judged {
    /// Exit 0 when the run passes, 1 when not.
    pub(crate) fn exit_code(&self) -> ExitCode {
        if self.outcome.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) }
    }

    /// The options of a page that shows this verdict.
    pub(crate) fn view(&self) -> ViewOptions {
        let mut view = ViewOptions::new();
        view.set_match_modes(self.modes.clone(), self.outcome.clone());
        view
    }
}

/// Judges `actual` against `golden` (JSON text of trajectories) by the match modes and prints
/// the outcome; an input that is not a trajectory is an error (exit 1).
pub(crate) fn judge(
    (golden, golden_name): (&[u8], &str),
    (actual, actual_name): (&[u8], &str),
    normalize: &NormalizeOptions,
    (args, config): (&MatchArgs, &GoldenConfig),
    format: Format,
) -> anyhow::Result<Judged> {
    let read = |bytes: &[u8], name: &str| -> anyhow::Result<serde_json::Value> {
        let value = atif_schema::parse_trajectory(bytes, display_name(name))?;
        atif_normalize::normalize(&value, normalize).map_err(invalid)
    };
    let (golden, actual) = (read(golden, golden_name)?, read(actual, actual_name)?);
    let options = args.to_options(config)?;
    let outcome = match_runs(&golden, &actual, &options);
    match format {
        Format::Json => output::out(|out| {
            let value = serde_json::json!({
                "passed": outcome.passed(),
                "sequence": options.sequence().as_str(),
                "failures": outcome.failures,
                "allowed": outcome.allowed,
            });
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        })?,
        _ => output::out(|out| write!(out, "{outcome}"))?,
    }
    Ok(Judged { outcome, modes: args.describe(config) })
}

/// An argument mode as `--arguments` takes it.
fn argument_name(mode: &ArgumentMatch) -> String {
    match mode {
        ArgumentMatch::Exact => "exact".to_owned(),
        ArgumentMatch::Ignore => "ignore".to_owned(),
        ArgumentMatch::Subset => "subset".to_owned(),
        ArgumentMatch::Superset => "superset".to_owned(),
        ArgumentMatch::Paths(paths) => format!("paths:{}", paths.join(",")),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn parse_sequence(text: &str) -> Result<SequenceMatch, String> {
    SequenceMatch::from_name(text).ok_or_else(|| {
        format!("expected exact, in-order, any-order, subset or superset, got `{text}`")
    })
}

fn parse_arguments(text: &str) -> Result<ArgumentMatch, String> {
    ArgumentMatch::from_name(text).ok_or_else(|| {
        format!("expected exact, ignore, subset, superset or paths:/a,/b, got `{text}`")
    })
}

fn parse_band(text: &str) -> Result<Band, String> {
    let invalid =
        || format!("expected a count such as 2 or a percentage such as 10%, got `{text}`");
    match text.strip_suffix('%') {
        Some(percent) => match percent.parse::<f64>() {
            Ok(p) if p.is_finite() && p >= 0.0 => Ok(Band { absolute: 0, relative: p / 100.0 }),
            _ => Err(invalid()),
        },
        None => text
            .parse::<u64>()
            .map(|absolute| Band { absolute, relative: 0.0 })
            .map_err(|_| invalid()),
    }
}
