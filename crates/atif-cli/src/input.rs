//! The command line a subcommand runs as, and reading its inputs through atif-schema's bounded
//! reader (`--max-input-bytes`, `-` for standard input).

use std::cell::RefCell;
use std::path::Path;
use std::sync::OnceLock;

use atif_golden::support::shell_word;
use atif_schema::{Expected, LoadOptions};
use serde_json::Value;

static LOAD_OPTIONS: OnceLock<LoadOptions> = OnceLock::new();

thread_local! {
    /// The command line `atif harness` runs in-process on this thread, with its own
    /// `--max-input-bytes`: what [`command_args`] and the readers see instead of the process's.
    static LINE: RefCell<Option<(Vec<String>, LoadOptions)>> = const { RefCell::new(None) };
}

/// Runs `run` as the command line `args` (`atif check ...`), with `max_input_bytes` as its
/// limit, on this thread.
pub(crate) fn with_command_line<T>(
    args: &[String],
    max_input_bytes: u64,
    run: impl FnOnce() -> T,
) -> T {
    let mut options = LoadOptions::new();
    options.set_max_bytes(max_input_bytes);
    let outer = LINE.with(|line| line.replace(Some((args.to_vec(), options))));
    let value = run();
    LINE.with(|line| line.replace(outer));
    value
}

/// The words of this command line, `atif` first: the process's, or the one
/// [`with_command_line`] runs.
pub(crate) fn command_args() -> Vec<String> {
    LINE.with(|line| line.borrow().as_ref().map(|(args, _)| args.clone()))
        .unwrap_or_else(|| std::env::args().collect())
}

/// Sets the `--max-input-bytes` limit for this run; called once by `main`.
pub(crate) fn set_max_input_bytes(max_bytes: u64) {
    let mut options = LoadOptions::new();
    options.set_max_bytes(max_bytes);
    let _ = LOAD_OPTIONS.set(options);
}

fn load_options() -> LoadOptions {
    LINE.with(|line| line.borrow().as_ref().map(|(_, options)| *options))
        .unwrap_or_else(|| LOAD_OPTIONS.get().copied().unwrap_or_default())
}

/// The `--max-input-bytes` limit of this run, for readers other than [`read_input`] (the log
/// files `atif import` reads through atif-import).
pub(crate) fn max_input_bytes() -> u64 {
    load_options().max_bytes()
}

/// Reads `path` whole, or standard input when `path` is `-`, through atif-schema's bounded
/// reader: at most `--max-input-bytes`, stopped at the first byte of binary input.
///
/// A missing file, a directory or an unreadable file is an error naming the path (exit 2);
/// binary input is invalid input (exit 1).
pub(crate) fn read_input(path: &str) -> anyhow::Result<Vec<u8>> {
    read_input_expecting(path, Expected::TRAJECTORY)
}

/// [`read_input`] for an input that is not a trajectory: `expected` says what it should be
/// in an error about bytes that cannot be JSON.
pub(crate) fn read_input_expecting(path: &str, expected: Expected) -> anyhow::Result<Vec<u8>> {
    let mut options = load_options();
    options.set_expected(expected);
    if path == "-" {
        return Ok(atif_schema::support::read_stdin(&options)?);
    }
    atif_schema::read_path(Path::new(path), &options).map_err(|err| {
        let looks_like_json = path.trim_start().starts_with(['{', '[']);
        match err {
            atif_schema::Error::Read { .. } if looks_like_json => anyhow::anyhow!(
                "{:#}; this argument is a file name, and it looks like JSON text: save the JSON \
                 to a file, or pass `-` and give it on standard input",
                anyhow::Error::new(err)
            ),
            err => err.into(),
        }
    })
}

/// Reads and parses the trajectory at `path` (`-` for standard input): the one loader of
/// atif-schema, which rejects what is not a trajectory with the JSON pointer (exit 1).
pub(crate) fn load_trajectory(path: &str) -> anyhow::Result<Value> {
    let bytes = read_input(path)?;
    Ok(atif_schema::parse_trajectory(&bytes, display_name(path))?)
}

/// How an input is named in messages: its path, or `standard input` for `-`.
pub(crate) fn display_name(path: &str) -> &str {
    if path == "-" { "standard input" } else { path }
}

/// This very command line turned into `atif SUBCOMMAND FLAG ...`, without the flags that only
/// `check` takes (`--update`, `--update-command CMD`), `--full` or `--format`: the fix
/// (`atif check --update ...`) and the full diff (`atif diff --full ...`) a failure names.
pub(crate) fn this_command_as(subcommand: &str, flag: &str) -> String {
    let mut words = vec!["atif".to_owned(), subcommand.to_owned(), flag.to_owned()];
    let mut args = command_args().into_iter().skip(2);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--update" | "--full" => {}
            "--update-command" | "--format" => {
                args.next();
            }
            _ if arg.starts_with("--update-command=") || arg.starts_with("--format=") => {}
            _ => words.push(shell_word(&arg)),
        }
    }
    words.join(" ")
}
