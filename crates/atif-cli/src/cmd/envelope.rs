//! `atif envelope`: build an envelope golden from runs a user has, or compare runs with it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use atif_envelope::{Conclusion, Envelope, Run, ToolOrder, Verdict, VerdictOptions, compare};
use atif_normalize::NormalizeOptions;

use atif_view::ViewOptions;

use crate::flags::{Format, project_config};
use crate::input::{load_trajectory, this_command_as};
use crate::output;
use crate::output::write_atomically;
use crate::status::invalid;

/// Arguments of `atif envelope`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The envelope golden (canonical JSON, `envelope_version` 1; see docs/live.md).
    #[arg(value_name = "GOLDEN")]
    golden: PathBuf,
    /// The runs' trajectories: imported logs, a benchmark's output, `atif live --trajectories`.
    #[arg(value_name = "RUN", required = true)]
    runs: Vec<String>,
    /// Each run's outcome, in the order of the runs, comma-separated: `pass` or `fail`
    /// (`pass,fail,pass`); the envelope then holds the pass rate, and the verdict pass@k.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    outcomes: Vec<OutcomeArg>,
    #[command(flatten)]
    pub(crate) verdict: VerdictArgs,
}

/// How an envelope is built and a verdict reached: the flags `envelope` and `live` share.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct VerdictArgs {
    /// Write the envelope of these runs as the golden (atomically) instead of comparing.
    #[arg(long)]
    pub(crate) update: bool,
    /// How runs group into tool-call variants when the envelope is written, as the golden
    /// check's sequence modes: `exact` (the same calls in the same steps and order), `in-order`
    /// (the same sequence of calls; a new run with others between them counts as the longest
    /// variant it holds in order), `any-order` (the same multiset of calls), `subset` (a new
    /// run counts as the smallest variant holding all its calls) or `superset` (as the largest
    /// variant whose calls it all makes). Default: the `sequence` the project file (atif.toml)
    /// gives the golden, else `exact`. See docs/live.md.
    #[arg(long, value_name = "ORDER", value_parser = order_parser())]
    order: Option<ToolOrder>,
    /// The family-wise error rate: the chance of calling an unchanged agent `changed`.
    #[arg(long, default_value_t = 0.05, value_name = "ALPHA", value_parser = parse_alpha)]
    alpha: f64,
    /// The seed of the permutation test; the same runs and seed give the same verdict.
    #[arg(long, default_value_t = 0, value_name = "N")]
    seed: u64,
    /// Exit 1 when the verdict is `inconclusive` (too few runs to see a tool's rate move from
    /// 10% to 60%), not only when it is `changed`.
    #[arg(long)]
    require_conclusive: bool,
    /// Start from a named normalisation preset for logs of a known agent (default: the project
    /// file's, whose volatile keys and masks apply too).
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(atif_normalize::PRESETS))]
    preset: Option<String>,
    /// Also write the verdict as one self-contained HTML page to OUT: the golden's runs beside
    /// the new runs as bar charts, the fields that moved highlighted (see docs/live.md).
    #[arg(long, value_name = "OUT")]
    html: Option<PathBuf>,
    /// Output format: `text` (the verdict in one screen) or `json` (`verdict`, `runs`,
    /// `fields`, `pass_at_k`, `pass_hat_k`; see docs/live.md).
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OutcomeArg {
    Pass,
    Fail,
}

/// `--order`: the names `ToolOrder::as_str` gives, listed in `--help` and in the error for any
/// other.
fn order_parser() -> impl clap::builder::TypedValueParser<Value = ToolOrder> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(ToolOrder::ALL.map(ToolOrder::as_str))
        .map(|name| ToolOrder::from_name(&name).unwrap_or_default())
}

fn parse_alpha(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(alpha) if alpha > 0.0 && alpha < 1.0 => Ok(alpha),
        _ => Err(format!("expected a number between 0 and 1 (0.05 for 5%), got `{text}`")),
    }
}

/// How the runs of an envelope golden are read and grouped: the flags, else what the project
/// file (`atif.toml`) says about the golden.
pub(crate) struct Grouping {
    /// The runs' normalise options: the preset, then the project file's keys and masks.
    pub(crate) options: NormalizeOptions,
    /// How update mode groups the runs into variants.
    pub(crate) order: ToolOrder,
}

impl VerdictArgs {
    /// The grouping of the runs of the envelope golden at `golden`.
    pub(crate) fn grouping(&self, golden: &Path) -> anyhow::Result<Grouping> {
        let config = project_config(Some(&golden.to_string_lossy()))?;
        let preset = self.preset.as_deref().or(config.preset());
        let mut options = match preset {
            Some(name) => atif_normalize::preset(name)?,
            None => NormalizeOptions::default(),
        };
        config.add_to(&mut options)?;
        let project_order = config.sequence().and_then(|mode| ToolOrder::from_name(mode.as_str()));
        let order = self.order.or(project_order).unwrap_or_default();
        Ok(Grouping { options, order })
    }
}

/// Runs `atif envelope`: exit 0 when the envelope was written or no change is clear, 1 on
/// `changed` (and on `inconclusive` with `--require-conclusive`), on a missing golden and on
/// input that is not a trajectory or an envelope, 2 when a file cannot be read or written.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let grouping = args.verdict.grouping(&args.golden)?;
    let (n_outcomes, n_runs) = (args.outcomes.len(), args.runs.len());
    if n_outcomes > 0 && n_outcomes != n_runs {
        return Err(invalid(anyhow::anyhow!(
            "--outcomes gives {n_outcomes} outcome(s) for {n_runs} run(s); expected one per run, in their order"
        )));
    }
    let mut runs = Vec::with_capacity(n_runs);
    for (idx, path) in args.runs.iter().enumerate() {
        let trajectory = load_trajectory(path)?;
        let mut run = Run::new(path, trajectory, &grouping.options).map_err(invalid)?;
        run.set_passed(args.outcomes.get(idx).map(|outcome| *outcome == OutcomeArg::Pass));
        runs.push(run);
    }
    conclude(&args.golden, &runs, &args.verdict, grouping.order, "envelope")
}

/// Writes the envelope of `runs` (`--update`) or compares them with the golden, prints the
/// outcome, and gives the exit status; update mode groups them by `order`; `command` names the
/// subcommand in messages.
pub(crate) fn conclude(
    golden: &Path,
    runs: &[Run],
    args: &VerdictArgs,
    order: ToolOrder,
    command: &str,
) -> anyhow::Result<ExitCode> {
    if args.update {
        let envelope = Envelope::build(runs, order).map_err(invalid)?;
        atif_fs::write_atomic(golden, envelope.to_json().as_bytes())
            .with_context(|| format!("cannot write the envelope {}", golden.display()))?;
        let variants = envelope.variants().len();
        output::note(|out| {
            writeln!(
                out,
                "atif {command}: wrote {} ({} runs, {variants} tool-call variant(s), order {})",
                golden.display(),
                envelope.runs(),
                order
            )
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let envelope = read_envelope(golden, command)?;
    let mut options = VerdictOptions::new();
    options.set_alpha(args.alpha).set_seed(args.seed);
    let verdict = compare(&envelope, runs, &options).map_err(invalid)?;
    if let Some(path) = &args.html {
        // The new runs' envelope, grouped as the golden's is, for their distributions.
        let actual = Envelope::build(runs, envelope.order()).map_err(invalid)?;
        let page = atif_view::render_envelope(&envelope, &actual, &verdict, &ViewOptions::new());
        write_atomically(path, |out| out.write_all(page.as_bytes()))?;
    }
    print_verdict(&verdict, args.format)?;
    let failed = match verdict.verdict {
        Conclusion::Changed => true,
        Conclusion::Inconclusive => args.require_conclusive,
        _ => false,
    };
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Reads the envelope golden: a missing one is a failure naming the command that writes it
/// (exit 1), an unreadable one exit 2, a malformed one exit 1.
fn read_envelope(golden: &Path, command: &str) -> anyhow::Result<Envelope> {
    let text = match std::fs::read_to_string(golden) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(invalid(anyhow::anyhow!(
                "no envelope golden at {}; write it from these runs with:\n  {}",
                golden.display(),
                this_command_as(command, "--update")
            )));
        }
        Err(err) => {
            return Err(anyhow::Error::new(err)
                .context(format!("cannot read the envelope {}", golden.display())));
        }
    };
    Envelope::from_json(&text)
        .map_err(|err| invalid(anyhow::Error::new(err).context(golden.display().to_string())))
}

fn print_verdict(verdict: &Verdict, format: Format) -> anyhow::Result<()> {
    match format {
        Format::Json => output::out(|out| {
            serde_json::to_writer_pretty(&mut *out, verdict)?;
            writeln!(out)
        }),
        // `-q` leaves a run with no clear change silent, as a passing test is.
        Format::Text if output::quiet() && verdict.verdict == Conclusion::NoClearChange => Ok(()),
        Format::Text => output::out(|out| write!(out, "{verdict}")),
    }
}
