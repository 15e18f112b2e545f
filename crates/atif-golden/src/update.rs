//! Update runs: a test command run with `ATIF_GOLDEN=update` and a check log, and the
//! summary of what its checks did to the goldens (created, changed, unchanged, failed, and the
//! goldens no test touched).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::check_log::{CheckLogEntry, OutcomeKind};
use crate::mode::LOG_ENV;
use crate::pending::{relative, walk};
use crate::{Error, MODE_ENV, Result};

/// What one update run did to the goldens under its folder.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct UpdateSummary {
    /// The folder the summary is about (paths print relative to it).
    pub root: PathBuf,
    /// Goldens written for the first time.
    pub created: Vec<PathBuf>,
    /// Goldens rewritten because the behaviour changed.
    pub changed: Vec<PathBuf>,
    /// Goldens that still matched.
    pub unchanged: Vec<PathBuf>,
    /// Goldens whose check failed (the golden could not be written, say).
    pub failed: Vec<PathBuf>,
    /// Goldens no test touched; `None` when nobody can tell (a filtered run, or tests failed).
    pub deleted_candidates: Option<Vec<PathBuf>>,
    /// Why `deleted_candidates` is `None`, if it is.
    pub unlisted_reason: Option<&'static str>,
    /// Goldens checked by more than one test (across processes, as under nextest).
    pub duplicates: Vec<(PathBuf, Vec<String>)>,
    /// For each changed golden, the unified diff of what the update erased.
    pub erased: BTreeMap<PathBuf, String>,
    /// Whether the test command succeeded.
    pub tests_passed: bool,
}

/// Runs `command` (a test run: `cargo test`, `pytest`, ...) with `ATIF_GOLDEN=update` and a
/// check log that every check appends to, then sums up what the checks did to the goldens
/// under `root`. `filtered` says the command runs only some tests, so goldens it did not touch
/// may still be in use and are not listed as deletion candidates.
///
/// The command's standard output goes to this process's standard error, so a caller's
/// standard output can carry the summary alone.
///
/// # Errors
/// [`Error::Io`] when the command cannot be started or the check log cannot be read.
pub fn run_update(root: &Path, mut command: Command, filtered: bool) -> Result<UpdateSummary> {
    // The check log names goldens by absolute path.
    let root = &std::path::absolute(root).map_err(|source| Error::io("find", root, source))?;
    let log_dir = tempfile::tempdir()
        .map_err(|source| Error::io("create a temporary folder for", root, source))?;
    let log = log_dir.path().join("check-log.jsonl");
    command.env(MODE_ENV, "update").env(LOG_ENV, &log).stdout(std::io::stderr());
    let program = PathBuf::from(command.get_program());
    let status = command.status().map_err(|source| Error::io("run", &program, source))?;
    let entries = crate::check_log::read_check_log(&log)?;
    let unlisted_reason = match (filtered, status.success()) {
        (true, _) => Some("filtered run"),
        (false, false) => Some("some tests failed"),
        (false, true) => None,
    };
    let goldens = match unlisted_reason {
        None => Some(golden_files(root, &entries)?),
        Some(_) => None,
    };
    let mut summary = summarize(root, &entries, goldens.as_deref());
    summary.unlisted_reason = unlisted_reason;
    summary.tests_passed = status.success();
    Ok(summary)
}

impl fmt::Display for UpdateSummary {
    /// The sections `created (N):`, `changed (N):`, `deleted-candidate ...`, `unchanged (N):`,
    /// `failed (N):`, duplicate claims, then what each change erased.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let root = &self.root;
        let mut out = String::new();
        let mut section = |title: &str, paths: &[PathBuf]| {
            let _ = writeln!(out, "{title} ({}):", paths.len());
            for path in paths {
                let _ = writeln!(out, "  {}", relative(root, path).display());
            }
        };
        section("created", &self.created);
        section("changed", &self.changed);
        if let Some(paths) = &self.deleted_candidates {
            section(
                "deleted-candidate (no test touched them; delete them if their test is gone)",
                paths,
            );
        }
        section("unchanged", &self.unchanged);
        if !self.failed.is_empty() {
            section("failed", &self.failed);
        }
        for (path, tests) in &self.duplicates {
            let _ = writeln!(
                out,
                "error: {} is claimed by several tests: {}; give each assertion its own name",
                relative(root, path).display(),
                tests.join(", ")
            );
        }
        for (path, diff) in &self.erased {
            let _ = writeln!(out, "\n{} erased:\n{diff}", relative(root, path).display());
        }
        if let Some(reason) = self.unlisted_reason {
            let _ = writeln!(out, "({reason}: goldens no test touched are not listed)");
        }
        f.write_str(&out)
    }
}

/// Folds the check log's entries (last entry per golden wins, a `matched` one only when nothing
/// else was recorded) into a summary; paths outside `root` (tests that check goldens in temp
/// folders) are left out. Only tests that updated a golden count as its owners, so a test that
/// merely reads another test's golden is no duplicate. With `all_goldens`, every golden file no
/// entry names is a deletion candidate.
pub(crate) fn summarize(
    root: &Path,
    entries: &[CheckLogEntry],
    all_goldens: Option<&[PathBuf]>,
) -> UpdateSummary {
    let mut last: BTreeMap<PathBuf, OutcomeKind> = BTreeMap::new();
    let mut tests: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut summary = UpdateSummary { root: root.to_owned(), ..UpdateSummary::default() };
    for entry in entries {
        if !entry.path.starts_with(root) {
            continue;
        }
        // A check-only look at a golden (outcome `matched`) neither hides what an update did to
        // it nor makes its test a second owner.
        if entry.outcome == OutcomeKind::Matched {
            last.entry(entry.path.clone()).or_insert(entry.outcome);
            continue;
        }
        last.insert(entry.path.clone(), entry.outcome);
        if let Some(erased) = &entry.erased {
            summary.erased.insert(entry.path.clone(), erased.clone());
        }
        if entry.outcome != OutcomeKind::Failed {
            tests.entry(entry.path.clone()).or_default().insert(entry.test.clone());
        }
    }
    for (path, outcome) in &last {
        let list = match outcome {
            OutcomeKind::Created => &mut summary.created,
            OutcomeKind::Changed => &mut summary.changed,
            OutcomeKind::Failed => &mut summary.failed,
            _ => &mut summary.unchanged,
        };
        list.push(path.clone());
    }
    summary.duplicates = tests
        .into_iter()
        .filter(|(_, tests)| tests.len() > 1)
        .map(|(path, tests)| (path, tests.into_iter().collect()))
        .collect();
    summary.deleted_candidates = all_goldens.map(|goldens| {
        goldens.iter().filter(|golden| !last.contains_key(*golden)).cloned().collect()
    });
    summary
}

/// Every golden file (`*.json`, not hidden) in the `tests/golden` folders under `root` and in
/// the folders of the goldens the check log names (inside `root`, outside `target/`), sorted.
pub(crate) fn golden_files(root: &Path, entries: &[CheckLogEntry]) -> Result<Vec<PathBuf>> {
    let mut dirs: BTreeSet<PathBuf> = walk(root)?.golden_dirs.into_iter().collect();
    for entry in entries {
        let Ok(inside) = entry.path.strip_prefix(root) else { continue };
        let hidden_or_built = inside.components().any(|part| {
            let part = part.as_os_str().to_string_lossy();
            part == "target" || part == "node_modules" || part.starts_with('.')
        });
        if let (false, Some(dir)) = (hidden_or_built, entry.path.parent()) {
            dirs.insert(dir.to_owned());
        }
    }
    let mut files = Vec::new();
    for dir in &dirs {
        let listing = match std::fs::read_dir(dir) {
            Ok(listing) => listing,
            // A reported golden's folder may be gone (a test wrote into a folder it removed).
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(Error::io("list", dir, source)),
        };
        for entry in listing {
            let path = entry.map_err(|source| Error::io("list", dir, source))?.path();
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            if path.is_file() && !name.starts_with('.') && name.ends_with(".json") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Mode, Settings};

    fn trajectory(n_steps: usize) -> serde_json::Value {
        let steps: Vec<_> = (1..=n_steps)
            .map(|step_id| json!({"step_id": step_id, "source": "agent", "message": "m"}))
            .collect();
        json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": steps})
    }

    /// A project with goldens in `crates/a/tests/golden` and `tests/tests/golden`, and decoys
    /// in `target/` and `node_modules/` that must be ignored.
    fn project() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let mut update = Settings::new();
        update.set_mode(Some(Mode::Update));
        for golden in [
            "crates/a/tests/golden/a__one.json",
            "tests/tests/golden/fixtures__two.json",
            "target/x/tests/golden/decoy.json",
            "node_modules/x/tests/golden/decoy.json",
        ] {
            crate::check(&root.path().join(golden), trajectory(1), &update).unwrap();
        }
        root
    }

    fn entry(outcome: OutcomeKind, path: PathBuf, test: &str) -> CheckLogEntry {
        CheckLogEntry { outcome, path, test: test.to_owned(), erased: None }
    }

    #[test]
    fn golden_folders_are_found_outside_target_node_modules_and_hidden_folders() {
        let root = project();
        let dirs = walk(root.path()).unwrap().golden_dirs;
        let relative: Vec<_> =
            dirs.iter().map(|dir| relative(root.path(), dir).to_owned()).collect();
        assert_eq!(
            relative,
            [PathBuf::from("crates/a/tests/golden"), PathBuf::from("tests/tests/golden")]
        );
    }

    #[test]
    fn the_update_summary_sorts_goldens_by_what_happened_and_lists_untouched_ones() {
        let root = project();
        let one = root.path().join("crates/a/tests/golden/a__one.json");
        let two = root.path().join("tests/tests/golden/fixtures__two.json");
        let three = root.path().join("tests/tests/golden/fixtures__three.json");
        let mut changed = entry(OutcomeKind::Changed, one.clone(), "one");
        changed.erased = Some("--- golden (erased)\n+++ actual\n-old\n+new\n".to_owned());
        let entries = vec![
            changed,
            entry(OutcomeKind::Created, three.clone(), "three"),
            entry(OutcomeKind::Created, PathBuf::from("/tmp/elsewhere/x.json"), "temp"),
        ];
        let goldens = golden_files(root.path(), &entries).unwrap();
        let summary = summarize(root.path(), &entries, Some(&goldens));
        assert_eq!(summary.created, [three]);
        assert_eq!(summary.changed, [one]);
        assert_eq!(summary.deleted_candidates, Some(vec![two]));
        assert_eq!(
            summary.to_string(),
            "created (1):\n  tests/tests/golden/fixtures__three.json\n\
             changed (1):\n  crates/a/tests/golden/a__one.json\n\
             deleted-candidate (no test touched them; delete them if their test is gone) (1):\n  tests/tests/golden/fixtures__two.json\n\
             unchanged (0):\n\
             \ncrates/a/tests/golden/a__one.json erased:\n--- golden (erased)\n+++ actual\n-old\n+new\n\n"
        );

        let filtered = summarize(root.path(), &entries, None);
        assert_eq!(filtered.deleted_candidates, None);
        assert!(!filtered.to_string().contains("deleted-candidate"));
    }

    #[test]
    fn goldens_in_a_custom_folder_are_found_through_the_check_log() {
        let root = project();
        let custom = root.path().join("crates/b/tests/goldens");
        let mut update = Settings::new();
        update.set_mode(Some(Mode::Update));
        let kept = custom.join("kept.json");
        let orphan = custom.join("orphan.json");
        crate::check(&kept, trajectory(1), &update).unwrap();
        crate::check(&orphan, trajectory(1), &update).unwrap();

        // Only the test of `kept.json` ran: its folder is searched, and its neighbour is a
        // deletion candidate beside the untouched goldens of the `tests/golden` folders.
        let entries = vec![entry(OutcomeKind::Unchanged, kept.clone(), "kept")];
        let goldens = golden_files(root.path(), &entries).unwrap();
        let summary = summarize(root.path(), &entries, Some(&goldens));
        assert_eq!(summary.unchanged, std::slice::from_ref(&kept));
        let candidates: Vec<_> = summary
            .deleted_candidates
            .unwrap()
            .iter()
            .map(|path| relative(root.path(), path).to_owned())
            .collect();
        assert_eq!(
            candidates,
            [
                PathBuf::from("crates/a/tests/golden/a__one.json"),
                PathBuf::from("crates/b/tests/goldens/orphan.json"),
                PathBuf::from("tests/tests/golden/fixtures__two.json"),
            ]
        );
    }

    #[test]
    fn two_tests_in_different_processes_claiming_one_golden_are_reported() {
        let root = project();
        let one = root.path().join("crates/a/tests/golden/a__one.json");
        let entries = vec![
            entry(OutcomeKind::Created, one.clone(), "mod_a::first"),
            entry(OutcomeKind::Unchanged, one.clone(), "mod_b::second"),
            entry(OutcomeKind::Matched, one.clone(), "mod_c::only_reads_it"),
        ];
        let summary = summarize(root.path(), &entries, None);
        assert_eq!(
            summary.duplicates,
            [(one.clone(), vec!["mod_a::first".to_owned(), "mod_b::second".to_owned()])]
        );
        assert_eq!(summary.unchanged, [one]);
        assert!(summary.to_string().contains(
            "error: crates/a/tests/golden/a__one.json is claimed by several tests: mod_a::first, mod_b::second"
        ));
    }
}
