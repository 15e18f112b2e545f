//! Pending files under a folder: finding them, what a reviewer sees for each, and the
//! accept / reject / skip loop of `atif golden review` (and its `cargo xtask` alias).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use atif_normalize::{DiffOptions, NormalizeOptions};
use serde::Serialize;

use crate::command::shell_word;
use crate::{Error, Result, file};

/// A pending file (`<name>.json.new`, written by a failing check) and the golden it would
/// replace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Pending {
    /// The golden file (which may not exist yet).
    pub golden: PathBuf,
    /// The pending file beside it.
    pub pending: PathBuf,
}

/// What kind of change a pending file proposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum PendingStatus {
    /// No golden exists yet: accepting records it.
    New,
    /// The golden exists and the pending run behaves differently.
    Changed,
    /// The golden exists and the pending run behaves the same (a stale pending file).
    Same,
}

/// What a reviewer sees for one pending file: its status, the Shape deltas and the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Review {
    /// The golden file.
    pub golden: PathBuf,
    /// The pending file.
    pub pending: PathBuf,
    /// New, changed or the same.
    pub status: PendingStatus,
    /// Each Shape delta as displayed (`step_count: 1 -> 2`); empty unless changed.
    pub deltas: Vec<String>,
    /// The report: for a new golden its Shape, for a changed one the deltas, the step-level
    /// explanation and the first places of the unified diff.
    pub report: String,
}

/// How many of each answer an interactive review got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Pending files moved over their goldens.
    pub accepted: usize,
    /// Pending files deleted.
    pub rejected: usize,
    /// Pending files left for later.
    pub skipped: usize,
}

/// Every pending file under `dir` whose path relative to `dir` contains `filter`, sorted.
/// A filter that is exactly a golden's file name or its path relative to `dir` (or the pending
/// file's) selects only the goldens it names exactly: `one.json` does not also pick
/// `another_one.json`, so the command a failure suggests acts on that golden alone.
///
/// The walk skips `target/`, `node_modules/` and hidden folders; a pending file is any
/// `*.json.new` file, so goldens kept in any folder are found.
///
/// # Errors
/// [`Error::Io`] naming a folder that cannot be listed.
pub fn find_pending(dir: &Path, filter: Option<&str>) -> Result<Vec<Pending>> {
    let mut found = Vec::new();
    for pending in walk(dir)?.pending {
        if !matches_filter(dir, &pending, filter) {
            continue;
        }
        if let Some(golden) = file::golden_for_pending(&pending) {
            found.push(Pending { golden, pending });
        }
    }
    if let Some(filter) = filter {
        let names_exactly = |item: &Pending| {
            [&item.golden, &item.pending].into_iter().any(|path| {
                relative(dir, path) == Path::new(filter)
                    || path.file_name().is_some_and(|name| name == filter)
            })
        };
        if found.iter().any(names_exactly) {
            found.retain(names_exactly);
        }
    }
    Ok(found)
}

/// The temporary files in every folder under `dir` that writers which are gone left behind (a
/// killed `atif check --update`, a test run stopped half way), whose path relative to `dir`
/// contains `filter`, sorted; `atif_fs::stale_temp_files` looks in one folder only. The walk is [`find_pending`]'s; a file is stale as
/// [`atif_fs::stale_temp_files`] decides: its writer's process no longer runs. A file being
/// written right now is never listed.
///
/// # Errors
/// [`Error::Io`] naming a folder that cannot be listed.
pub fn find_stale_temp_files_under(dir: &Path, filter: Option<&str>) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for folder in walk(dir)?.temp_dirs {
        let stale = atif_fs::stale_temp_files(&folder)
            .map_err(|err| Error::io(err.action, &err.path, err.source))?;
        found.extend(stale.into_iter().filter(|path| matches_filter(dir, path, filter)));
    }
    found.sort();
    Ok(found)
}

/// Removes the [`find_stale_temp_files_under`] of `dir` matching `filter`, and returns them,
/// in every folder under `dir` (`atif_fs::remove_stale_temp_files` clears one folder). A file
/// another process removed first is not an error.
///
/// # Errors
/// [`Error::Io`] naming a folder that cannot be listed or a file that cannot be removed.
pub fn remove_stale_temp_files_under(dir: &Path, filter: Option<&str>) -> Result<Vec<PathBuf>> {
    let stale = find_stale_temp_files_under(dir, filter)?;
    for path in &stale {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(Error::io("remove", path, source)),
        }
    }
    Ok(stale)
}

/// What a reviewer sees for `pending`: both sides normalised with the default options (which a
/// golden already is) and compared with the default tolerance.
///
/// # Errors
/// [`Error::Io`] when the golden cannot be read, [`Error::Load`] naming a file
/// that cannot be read or is not a trajectory, [`Error::Normalize`] when normalising fails.
pub fn review(pending: &Pending) -> Result<Review> {
    let options = NormalizeOptions::default();
    // Both sides are read into the fast path's tree, which borrows from their texts: a run of
    // a hundred megabytes is never copied into a `Value`.
    let actual_text = atif_schema::read_path(&pending.pending, &atif_schema::LoadOptions::new())
        .map_err(|err| Error::Load(Box::new(err)))?;
    let actual_name = pending.pending.display().to_string();
    let (actual, _) = crate::check::normalize_json(&actual_text, &actual_name, &options)?;
    let golden_text = match std::fs::read(&pending.golden) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(Error::io("read golden file", &pending.golden, source)),
        Ok(text) => Some(text),
    };
    let Some(golden_text) = golden_text else {
        let shape =
            serde_json::to_string(&actual.shape()).map_err(|source| Error::Serialize { source })?;
        let content = content_listing(&actual.into_value());
        return Ok(Review {
            golden: pending.golden.clone(),
            pending: pending.pending.clone(),
            status: PendingStatus::New,
            deltas: Vec::new(),
            report: format!("new golden (none recorded yet), shape:\n  {shape}\n{content}"),
        });
    };
    let golden_name = pending.golden.display().to_string();
    let (golden, _) = crate::check::normalize_json(&golden_text, &golden_name, &options)?;
    let comparison = atif_normalize::compare(&golden, &actual, &DiffOptions::default());
    let deltas: Vec<String> = comparison.deltas().iter().map(ToString::to_string).collect();
    let (status, report) = if deltas.is_empty() {
        (PendingStatus::Same, "no behaviour change (the golden already matches)\n".to_owned())
    } else {
        let mut options = atif_normalize::ReportOptions::new();
        options.set_full_command(Some(format!(
            "atif diff --full {} {}",
            shell_word(&pending.golden.display().to_string()),
            shell_word(&pending.pending.display().to_string())
        )));
        (PendingStatus::Changed, comparison.report_with(&deltas, &options))
    };
    Ok(Review {
        golden: pending.golden.clone(),
        pending: pending.pending.clone(),
        status,
        deltas,
        report,
    })
}

/// What a new golden holds, for a reviewer who has nothing to compare it with: each step with
/// its source and message, each tool call with its arguments, each result, then the subagents
/// by name; long texts are cut to a line.
fn content_listing(run: &serde_json::Value) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("content:\n");
    let steps =
        run.get("steps").and_then(serde_json::Value::as_array).map_or(&[][..], Vec::as_slice);
    for step in steps {
        let field = |name: &str| step.get(name).unwrap_or(&serde_json::Value::Null);
        let source = field("source").as_str().unwrap_or("?");
        let _ =
            writeln!(out, "  step {} ({source}): {}", field("step_id"), one_line(field("message")));
        for call in field("tool_calls").as_array().into_iter().flatten() {
            let name = call.get("function_name").and_then(serde_json::Value::as_str).unwrap_or("?");
            let arguments = call.get("arguments").unwrap_or(&serde_json::Value::Null);
            let _ = writeln!(out, "    calls {name} {}", one_line(arguments));
        }
        let results = field("observation").get("results").and_then(serde_json::Value::as_array);
        for result in results.into_iter().flatten() {
            let content = result.get("content").unwrap_or(&serde_json::Value::Null);
            let _ = writeln!(out, "    result: {}", one_line(content));
        }
    }
    let subagents = run.get("subagent_trajectories").and_then(serde_json::Value::as_array);
    for sub in subagents.into_iter().flatten() {
        let name = sub.pointer("/agent/name").and_then(serde_json::Value::as_str).unwrap_or("?");
        let n_steps = sub.get("steps").and_then(serde_json::Value::as_array).map_or(0, Vec::len);
        let _ = writeln!(out, "  subagent {name:?}: {n_steps} steps");
    }
    out
}

/// A value on one line of at most 100 characters: a string as JSON (its line breaks escaped),
/// anything else as compact JSON.
fn one_line(value: &serde_json::Value) -> String {
    const MAX_CHARS: usize = 100;
    let text = value.to_string();
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => {
            format!("{}... ({} more characters)", &text[..cut], text[cut..].chars().count())
        }
        None => text,
    }
}

impl Review {
    /// The review as a reviewer reads it: `== <golden relative to root>`, then the report.
    pub fn render(&self, root: &Path) -> String {
        format!("== {}\n{}", relative(root, &self.golden).display(), self.report)
    }
}

/// Moves `pending` over its golden (one rename, so atomic) and returns the golden's path:
/// [`accept_pending`](crate::review::accept_pending) on its path. The pending file is read with
/// the strict loader first: what is not a trajectory (a file edited by hand, or written by
/// something else) never becomes a golden.
///
/// # Errors
/// [`Error::Load`] naming the pending file and the JSON Pointer of what is wrong (the golden
/// is left alone), and [`Error::Io`] when the rename fails.
pub fn accept(pending: &Pending) -> Result<PathBuf> {
    file::accept_pending(&pending.pending)
}

/// Deletes the pending file.
///
/// # Errors
/// [`Error::Io`] when it cannot be removed.
pub fn reject(pending: &Pending) -> Result<()> {
    file::reject_pending(&pending.pending)
}

/// How many lines of a review are shown before the rest is folded behind the `m` key: what
/// fits a terminal with the question under it.
pub const FOLD_LINES: usize = 40;

/// Shows each pending file's review on `output` and asks `accept (a), reject (r), skip (s),
/// quit (q)?`, reading one answer per line from `input`; what `atif golden review` does on a
/// terminal. A review longer than [`FOLD_LINES`] lines is folded after them, and `m` shows the
/// rest. The end of `input` quits; an answer it does not know gets the list of keys, and the
/// question again.
///
/// # Errors
/// What [`review`], [`accept`] and [`reject`] return, and [`Error::Io`] when the terminal
/// cannot be read or written.
pub fn review_interactively(
    pending: &[Pending],
    root: &Path,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<Tally> {
    let terminal = Path::new("the terminal");
    let io = |source| Error::io("talk to", terminal, source);
    let mut tally = Tally::default();
    for (idx, item) in pending.iter().enumerate() {
        let text = format!("[{}/{}] {}", idx + 1, pending.len(), review(item)?.render(root));
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut folded = lines.len() > FOLD_LINES;
        let shown: String = lines.iter().take(FOLD_LINES).copied().collect();
        output.write_all(shown.as_bytes()).map_err(io)?;
        if folded {
            writeln!(output, "... {} more lines (m shows them)", lines.len() - FOLD_LINES)
                .map_err(io)?;
        }
        loop {
            let more = if folded { ", more (m)" } else { "" };
            write!(output, "accept (a), reject (r), skip (s), quit (q){more}? ").map_err(io)?;
            output.flush().map_err(io)?;
            let mut answer = String::new();
            if input.read_line(&mut answer).map_err(io)? == 0 {
                writeln!(output).map_err(io)?;
                tally.skipped += pending.len() - idx;
                return Ok(tally);
            }
            match answer.trim() {
                "a" | "accept" => {
                    let golden = accept(item)?;
                    writeln!(output, "accepted {}", relative(root, &golden).display())
                        .map_err(io)?;
                    tally.accepted += 1;
                }
                "r" | "reject" => {
                    reject(item)?;
                    writeln!(output, "rejected {}", relative(root, &item.pending).display())
                        .map_err(io)?;
                    tally.rejected += 1;
                }
                "s" | "skip" | "" => tally.skipped += 1,
                "q" | "quit" => {
                    tally.skipped += pending.len() - idx;
                    return Ok(tally);
                }
                "m" | "more" if folded => {
                    let rest: String = lines.iter().skip(FOLD_LINES).copied().collect();
                    output.write_all(rest.as_bytes()).map_err(io)?;
                    folded = false;
                    continue;
                }
                other => {
                    writeln!(
                        output,
                        "unknown answer `{other}`: a accepts the pending file as the golden, r rejects (deletes) it, s skips it, q quits{}",
                        if folded { ", m shows the rest of the review" } else { "" }
                    )
                    .map_err(io)?;
                    continue;
                }
            }
            break;
        }
    }
    Ok(tally)
}

/// Whether `path`, relative to `dir`, contains `filter` (always, without a filter).
fn matches_filter(dir: &Path, path: &Path, filter: Option<&str>) -> bool {
    filter.is_none_or(|filter| relative(dir, path).to_string_lossy().contains(filter))
}

/// `path` relative to `root` when it is inside it.
pub(crate) fn relative<'a>(root: &Path, path: &'a Path) -> &'a Path {
    path.strip_prefix(root).unwrap_or(path)
}

/// What a walk of a folder found: the `tests/golden` folders, every pending file, and the
/// folders holding temporary files of atif's atomic writes.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    pub(crate) golden_dirs: Vec<PathBuf>,
    pub(crate) pending: Vec<PathBuf>,
    pub(crate) temp_dirs: Vec<PathBuf>,
}

/// Walks `root`, skipping `target/`, `node_modules/` and hidden folders, for `tests/golden`
/// folders, for pending `*.json.new` files wherever they are, and for folders with
/// temporary files (`.atif-<pid>-<random>.tmp`). The lists come back sorted.
pub(crate) fn walk(root: &Path) -> Result<Walk> {
    let pending_suffix = format!(".json{}", file::PENDING_SUFFIX);
    let mut found = Walk::default();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|source| Error::io("list", &dir, source))?;
        for entry in entries {
            let entry = entry.map_err(|source| Error::io("list", &dir, source))?;
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            // Temporary files are hidden: a glob over `*.json` must not see them.
            if atif_fs::support::is_temp_file_name(&name) && found.temp_dirs.last() != Some(&dir) {
                found.temp_dirs.push(dir.clone());
            }
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_file() && name.ends_with(&pending_suffix) {
                found.pending.push(path);
            } else if kind.is_dir() && name != "target" && name != "node_modules" {
                if name == "golden" && dir.file_name().is_some_and(|parent| parent == "tests") {
                    found.golden_dirs.push(path.clone());
                }
                stack.push(path);
            }
        }
    }
    found.golden_dirs.sort();
    found.pending.sort();
    found.temp_dirs.sort();
    Ok(found)
}
