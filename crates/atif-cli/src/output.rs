//! The one way the `atif` command writes its output: standard output, standard error, and the
//! file of `-o/--output`, written atomically.
//!
//! Every write returns its error instead of panicking (`println!` panics on a full disk). A
//! reader that stops early (`atif diff a b | head`) closes the pipe: that is not an error, the
//! rest of the output is dropped and the command ends with the status it would have had. Any
//! other write error (`> /dev/full`) becomes an error naming the stream, which `main` reports on
//! standard error (when that still works) with exit status 2.
//!
//! The settings that shape output for the whole run (`--color`, `--quiet`) are set once, in
//! `main`, before a subcommand runs.

use std::cell::RefCell;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use anstyle::{AnsiColor, Style};

/// When to colour output: the values of `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour on a terminal, unless `NO_COLOR` is set; always when `CLICOLOR_FORCE` is set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

#[derive(Debug, Clone, Copy)]
struct Settings {
    quiet: bool,
    color_stdout: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Where this thread's output goes instead of the process's streams, while [`capture`]
    /// runs a command line in-process (`atif harness`).
    static CAPTURED: RefCell<Option<Captured>> = const { RefCell::new(None) };
}

/// What a command line run under [`capture`] wrote on each stream.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

/// Runs `run` with this thread's output kept in memory instead of written, and returns it.
pub(crate) fn capture<T>(run: impl FnOnce() -> T) -> (T, Captured) {
    let outer = CAPTURED.with(|captured| captured.replace(Some(Captured::default())));
    let value = run();
    let captured = CAPTURED.with(|captured| captured.replace(outer)).unwrap_or_default();
    (value, captured)
}

/// Runs `write` on the captured stream when [`capture`] is running on this thread.
fn write_captured(
    stderr: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<io::Result<()>, impl FnOnce(&mut dyn Write) -> io::Result<()>> {
    CAPTURED.with(|captured| match captured.borrow_mut().as_mut() {
        Some(captured) if stderr => Ok(write(&mut captured.stderr)),
        Some(captured) => Ok(write(&mut captured.stdout)),
        None => Err(write),
    })
}

/// Sets how this run writes; called once by `main`.
pub(crate) fn init(color: ColorChoice, quiet: bool) {
    let settings = Settings { quiet, color_stdout: use_color(color, io::stdout().is_terminal()) };
    let _ = SETTINGS.set(settings);
}

fn settings() -> Settings {
    SETTINGS.get().copied().unwrap_or(Settings { quiet: false, color_stdout: false })
}

/// Whether to colour a stream: `--color always|never` decides; under `auto`, a non-empty
/// `NO_COLOR` turns colour off, a `CLICOLOR_FORCE` other than `0` turns it on, and otherwise a
/// terminal gets colour (<https://no-color.org>, <https://bixense.com/clicolors/>).
fn use_color(choice: ColorChoice, is_terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            let set = |name| std::env::var_os(name).filter(|value| !value.is_empty());
            if set("NO_COLOR").is_some() {
                false
            } else if set("CLICOLOR_FORCE").is_some_and(|value| value != "0") {
                true
            } else {
                is_terminal
            }
        }
    }
}

/// Whether standard output is coloured in this run.
pub(crate) fn color_stdout() -> bool {
    settings().color_stdout
}

/// Whether `-q/--quiet` asked for no notes on standard error.
pub(crate) fn quiet() -> bool {
    settings().quiet
}

/// Runs `write` on a locked standard output and flushes it; see the module docs for errors.
///
/// # Errors
///
/// Any write error other than a broken pipe, naming standard output.
pub(crate) fn out(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> anyhow::Result<()> {
    match write_captured(false, write) {
        Ok(written) => Ok(written?),
        Err(write) => write_to(io::stdout().lock(), &STDOUT_CLOSED, "standard output", write),
    }
}

/// Writes a note (a summary, a warning) on standard error, unless `--quiet`.
///
/// # Errors
///
/// As [`error`].
pub(crate) fn note(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> anyhow::Result<()> {
    if quiet() {
        return Ok(());
    }
    error(write)
}

/// Writes on standard error, even under `--quiet` (error messages, and what a command must say).
///
/// # Errors
///
/// Any write error other than a broken pipe, naming standard error.
pub(crate) fn error(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> anyhow::Result<()> {
    match write_captured(true, write) {
        Ok(written) => Ok(written?),
        Err(write) => write_to(io::stderr().lock(), &STDERR_CLOSED, "standard error", write),
    }
}

fn write_to(
    mut stream: impl Write,
    closed: &AtomicBool,
    name: &str,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    if closed.load(Ordering::Relaxed) {
        return Ok(());
    }
    match write(&mut stream).and_then(|()| stream.flush()) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {
            closed.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(err) => Err(anyhow::Error::new(err).context(format!("cannot write to {name}"))),
    }
}

/// Writes a report (a diff, a check failure) on standard output, colouring its lines when
/// colour is on: additions green, removals red, hunk headers cyan, headings bold.
pub(crate) fn write_report(out: &mut dyn Write, text: &str) -> io::Result<()> {
    if !color_stdout() {
        return out.write_all(text.as_bytes());
    }
    for line in text.split_inclusive('\n') {
        let style = line_style(line);
        if style == Style::new() {
            out.write_all(line.as_bytes())?;
        } else {
            let (body, end) = match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            };
            write!(out, "{}{body}{}{end}", style.render(), style.render_reset())?;
        }
    }
    Ok(())
}

/// A writer that colours each whole line it is given as [`write_report`] does, when colour is
/// on; a line still being written (a question waiting for its answer) goes out plain on
/// `flush`.
#[derive(Debug)]
pub(crate) struct ReportWriter<W: Write> {
    inner: W,
    line: Vec<u8>,
}

impl<W: Write> ReportWriter<W> {
    /// Colours what goes to `inner`.
    pub(crate) fn new(inner: W) -> ReportWriter<W> {
        ReportWriter { inner, line: Vec::new() }
    }
}

impl<W: Write> Write for ReportWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        for chunk in bytes.split_inclusive(|&byte| byte == b'\n') {
            self.line.extend_from_slice(chunk);
            if chunk.ends_with(b"\n") {
                let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
                write_report(&mut self.inner, &line)?;
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.write_all(&std::mem::take(&mut self.line))?;
        self.inner.flush()
    }
}

fn line_style(line: &str) -> Style {
    let color = |color: AnsiColor| Style::new().fg_color(Some(color.into()));
    if line.starts_with("+++") || line.starts_with("---") {
        Style::new().bold()
    } else if line.starts_with('+') {
        color(AnsiColor::Green)
    } else if line.starts_with('-') {
        color(AnsiColor::Red)
    } else if line.starts_with("@@") {
        color(AnsiColor::Cyan)
    } else if !line.starts_with(' ') && line.trim_end().ends_with(':') {
        Style::new().bold()
    } else {
        Style::new()
    }
}

/// The `-o/--output FILE` flag of the commands that print a document.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct OutputArgs {
    /// Write to FILE instead of standard output, atomically: a killed run leaves the old file
    /// (or none), never a truncated one. A symlink is followed and kept.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

impl OutputArgs {
    /// Runs `write` on the output file (atomically) or on standard output.
    pub(crate) fn write(
        &self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> anyhow::Result<()> {
        match &self.output {
            Some(path) => write_atomically(path, write),
            None => out(write),
        }
    }
}

/// Writes a file atomically through `atif_fs::write_atomic_with` (temp file beside it, then
/// a rename), the one atomic write of the workspace, for a command that needs no path back.
pub(crate) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    atif_fs::write_atomic_with(path, write)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines_get_their_colours_and_other_lines_none() {
        assert_eq!(line_style("+added\n"), Style::new().fg_color(Some(AnsiColor::Green.into())));
        assert_eq!(line_style("-gone"), Style::new().fg_color(Some(AnsiColor::Red.into())));
        assert_eq!(line_style("@@ -1 +1 @@"), Style::new().fg_color(Some(AnsiColor::Cyan.into())));
        assert_eq!(line_style("steps:\n"), Style::new().bold());
        assert_eq!(line_style("  step 3 (agent) inserted\n"), Style::new());
    }

    #[test]
    fn never_and_always_win_over_the_terminal() {
        assert!(!use_color(ColorChoice::Never, true));
        assert!(use_color(ColorChoice::Always, false));
    }
}
