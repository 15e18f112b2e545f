//! `cargo xtask golden-*`: the golden-file workflow around the `atif-golden` crate.
//!
//! `golden-update` runs the workspace tests with `ATIF_GOLDEN=update` and a report file named
//! by `ATIF_GOLDEN_REPORT`, which every test process appends to; reading that file afterwards
//! is how this command knows what tests in other processes (nextest runs one per test) did.
//! `golden-review`, `golden-accept` and `golden-reject` work on the pending `.json.new` files
//! a failing local run leaves beside its golden, found anywhere in the workspace (skipping
//! `target/` and hidden folders). The goldens `golden-update` lists as deletion candidates are
//! those in `tests/golden` folders and in the folders of reported goldens that no test touched.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::Context;
use atif_golden::{MODE_ENV, OutcomeKind, REPORT_ENV, ReportEntry};
use atif_normalize::{DiffOptions, NormalizeOptions};

use crate::project_root;

/// `cargo xtask golden-update [FILTER]`.
pub(crate) fn update(args: &[String]) -> anyhow::Result<ExitCode> {
    let filter = single_filter(args, "golden-update")?;
    let root = project_root();
    let report = root.join("target").join(format!("golden-report-{}.jsonl", std::process::id()));
    std::fs::create_dir_all(root.join("target")).context("cannot create target/")?;
    let _ = std::fs::remove_file(&report);

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    // Without --no-fail-fast, one failing test binary would stop cargo before the others had
    // updated their goldens.
    command.current_dir(&root).args(["test", "--workspace", "--all-features", "--no-fail-fast"]);
    if let Some(filter) = filter {
        command.arg(filter);
    }
    // The test output goes to stderr, so standard output carries only the report below.
    command.env(MODE_ENV, "update").env(REPORT_ENV, &report).stdout(std::io::stderr());
    eprintln!(
        "xtask: running cargo test --workspace --all-features --no-fail-fast{} with {MODE_ENV}=update",
        match filter {
            Some(filter) => format!(" {filter}"),
            None => String::new(),
        }
    );
    let status = command.status().context("cannot run cargo test")?;

    let entries = atif_golden::read_report(&report)?;
    let _ = std::fs::remove_file(&report);
    let unlisted = unlisted_reason(filter, status.success());
    let goldens = match unlisted {
        None => Some(golden_files(&root, &entries)?),
        Some(_) => None,
    };
    let summary = summarize(&root, &entries, goldens.as_deref());
    println!("golden-update:");
    print!("{}", summary.render(&root));
    if let Some(reason) = unlisted {
        println!("({reason}: goldens no test touched are not listed)");
    }
    if !summary.duplicates.is_empty() {
        return Ok(ExitCode::from(1));
    }
    if !status.success() {
        eprintln!(
            "xtask: some tests failed for reasons other than their goldens; the goldens listed above were still written"
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Why deletion candidates cannot be listed, if they cannot: only a run of every test, each to
/// its end, touches every golden that is still in use (a filter skips tests, and a test that
/// failed before its assertion touched nothing).
fn unlisted_reason(filter: Option<&str>, tests_passed: bool) -> Option<&'static str> {
    match (filter, tests_passed) {
        (Some(_), _) => Some("filtered run"),
        (None, false) => Some("some tests failed"),
        (None, true) => None,
    }
}

/// `cargo xtask golden-review`.
pub(crate) fn review(args: &[String]) -> anyhow::Result<ExitCode> {
    let filter = single_filter(args, "golden-review")?;
    print!("{}", review_text(&project_root(), filter)?);
    Ok(ExitCode::SUCCESS)
}

/// `cargo xtask golden-accept [FILTER]`.
pub(crate) fn accept(args: &[String]) -> anyhow::Result<ExitCode> {
    let filter = single_filter(args, "golden-accept")?;
    let root = project_root();
    let accepted = accept_pending(&root, filter)?;
    if accepted.is_empty() {
        println!("no pending golden files{}", filter_note(filter));
    }
    for golden in &accepted {
        println!("accepted {}", relative(&root, golden).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `cargo xtask golden-reject [FILTER]`.
pub(crate) fn reject(args: &[String]) -> anyhow::Result<ExitCode> {
    let filter = single_filter(args, "golden-reject")?;
    let root = project_root();
    let rejected = reject_pending(&root, filter)?;
    if rejected.is_empty() {
        println!("no pending golden files{}", filter_note(filter));
    }
    for pending in &rejected {
        println!("rejected {}", relative(&root, pending).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// What one `golden-update` run did, gathered from the report and the golden folders.
#[derive(Debug, Default, PartialEq)]
struct UpdateSummary {
    created: Vec<PathBuf>,
    changed: Vec<PathBuf>,
    unchanged: Vec<PathBuf>,
    failed: Vec<PathBuf>,
    /// Goldens no test touched; `None` when the run was filtered (then nobody can tell).
    deleted_candidates: Option<Vec<PathBuf>>,
    /// Goldens checked by more than one test (across processes, as under nextest).
    duplicates: Vec<(PathBuf, Vec<String>)>,
    /// For each changed golden, the unified diff of what the update erased.
    erased: BTreeMap<PathBuf, String>,
}

impl UpdateSummary {
    fn render(&self, root: &Path) -> String {
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
        out
    }
}

/// Folds the report entries (last entry per golden wins, a `matched` one only when nothing
/// else was recorded) into a summary; paths outside `root` (tests that check goldens in temp
/// folders) are left out. Only tests that updated a golden count as its owners, so a test that
/// merely reads another test's golden is no duplicate. With `all_goldens`, every golden file no
/// entry names is a deletion candidate.
fn summarize(
    root: &Path,
    entries: &[ReportEntry],
    all_goldens: Option<&[PathBuf]>,
) -> UpdateSummary {
    let mut last: BTreeMap<PathBuf, OutcomeKind> = BTreeMap::new();
    let mut tests: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut summary = UpdateSummary::default();
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

/// What a walk of the workspace found: the `tests/golden` folders and every pending file.
#[derive(Debug, Default)]
struct Walk {
    golden_dirs: Vec<PathBuf>,
    pending: Vec<PathBuf>,
}

/// Walks `root`, skipping `target` and hidden folders, for `tests/golden` folders and for
/// pending `*.json.new` files wherever they are (a crate may keep its goldens in another folder
/// through `Settings::set_golden_dir`). Both lists come back sorted.
fn walk(root: &Path) -> anyhow::Result<Walk> {
    let pending_suffix = format!(".json{}", atif_golden::PENDING_SUFFIX);
    let mut found = Walk::default();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_file() && name.ends_with(&pending_suffix) {
                found.pending.push(path);
            } else if kind.is_dir() && name != "target" {
                if name == "golden" && dir.file_name().is_some_and(|parent| parent == "tests") {
                    found.golden_dirs.push(path.clone());
                }
                stack.push(path);
            }
        }
    }
    found.golden_dirs.sort();
    found.pending.sort();
    Ok(found)
}

/// Every golden file (`*.json`, not hidden) in the workspace's `tests/golden` folders and in the
/// folders of the goldens the report names (inside `root`, outside `target/`), sorted.
fn golden_files(root: &Path, entries: &[ReportEntry]) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs: BTreeSet<PathBuf> = walk(root)?.golden_dirs.into_iter().collect();
    for entry in entries {
        let Ok(inside) = entry.path.strip_prefix(root) else { continue };
        let hidden_or_built = inside.components().any(|part| {
            let part = part.as_os_str().to_string_lossy();
            part == "target" || part.starts_with('.')
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
            Err(err) => return Err(err).with_context(|| format!("cannot list {}", dir.display())),
        };
        for entry in listing {
            let path = entry.with_context(|| format!("cannot list {}", dir.display()))?.path();
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

/// Pending files whose path relative to `root` contains `filter`.
fn pending_files(root: &Path, filter: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = walk(root)?.pending;
    if let Some(filter) = filter {
        files.retain(|path| relative(root, path).to_string_lossy().contains(filter));
    }
    Ok(files)
}

/// Moves every matching pending file over its golden; returns the goldens written.
fn accept_pending(root: &Path, filter: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
    let mut accepted = Vec::new();
    for pending in pending_files(root, filter)? {
        accepted.push(atif_golden::accept_pending(&pending)?);
    }
    Ok(accepted)
}

/// Deletes every matching pending file; returns them.
fn reject_pending(root: &Path, filter: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
    let pending = pending_files(root, filter)?;
    for path in &pending {
        atif_golden::reject_pending(path)?;
    }
    Ok(pending)
}

/// For each pending file: its golden, the Shape deltas, the step-level explanation and the
/// unified diff (both sides normalised with the default options, which a golden already is).
fn review_text(root: &Path, filter: Option<&str>) -> anyhow::Result<String> {
    let pending = pending_files(root, filter)?;
    let mut out = String::new();
    if pending.is_empty() {
        let _ = writeln!(out, "no pending golden files{}", filter_note(filter));
        return Ok(out);
    }
    let options = NormalizeOptions::default();
    for path in &pending {
        let golden_path = atif_golden::golden_for_pending(path)
            .with_context(|| format!("{} does not end in .new", path.display()))?;
        let actual = load(path, &options)?;
        let _ = writeln!(out, "== {}", relative(root, &golden_path).display());
        if !golden_path.exists() {
            let shape = atif_normalize::shape(&actual);
            let _ = writeln!(out, "new golden (none recorded yet), shape:");
            let _ = writeln!(out, "  {}", serde_json::to_string(&shape)?);
            continue;
        }
        let golden = load(&golden_path, &options)?;
        let deltas = atif_normalize::diff(
            &atif_normalize::shape(&golden),
            &atif_normalize::shape(&actual),
            &DiffOptions::default(),
        );
        let _ = writeln!(out, "{} difference(s):", deltas.len());
        for delta in &deltas {
            let _ = writeln!(out, "  {delta}");
        }
        let changes = atif_normalize::explain(&golden, &actual);
        if !changes.is_empty() {
            out.push_str("what moved, step by step:\n");
            for change in &changes {
                let _ = writeln!(out, "  {change}");
            }
        }
        out.push_str(&atif_normalize::render(&golden, &actual));
    }
    let _ = writeln!(
        out,
        "\n{} pending; accept with `cargo xtask golden-accept [FILTER]`, reject with `cargo xtask golden-reject [FILTER]`",
        pending.len()
    );
    Ok(out)
}

fn load(path: &Path, options: &NormalizeOptions) -> anyhow::Result<serde_json::Value> {
    // The one loader: bounded, strict, and naming the file and pointer of what is wrong.
    let doc = atif_schema::load_trajectory(path, &atif_schema::LoadOptions::new())?;
    atif_normalize::normalize_owned(doc, options)
        .with_context(|| format!("cannot normalise {}", path.display()))
}

fn single_filter<'a>(args: &'a [String], command: &str) -> anyhow::Result<Option<&'a str>> {
    match args {
        [] => Ok(None),
        [filter] if !filter.starts_with('-') => Ok(Some(filter)),
        _ => anyhow::bail!("usage: cargo xtask {command} [FILTER]"),
    }
}

fn filter_note(filter: Option<&str>) -> String {
    filter.map(|filter| format!(" matching `{filter}`")).unwrap_or_default()
}

fn relative<'a>(root: &Path, path: &'a Path) -> &'a Path {
    path.strip_prefix(root).unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use atif_golden::{Mode, Settings};
    use serde_json::json;

    fn trajectory(n_steps: usize) -> serde_json::Value {
        let steps: Vec<_> = (1..=n_steps)
            .map(|step_id| json!({"step_id": step_id, "source": "agent", "message": "m"}))
            .collect();
        json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": steps})
    }

    /// A workspace with goldens in `crates/a/tests/golden` and `tests/tests/golden`, and a
    /// decoy in `target/` that must be ignored.
    fn workspace() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let mut update = Settings::new();
        update.set_mode(Some(Mode::Update));
        for golden in [
            "crates/a/tests/golden/a__one.json",
            "tests/tests/golden/fixtures__two.json",
            "target/x/tests/golden/decoy.json",
        ] {
            atif_golden::check(&root.path().join(golden), &trajectory(1), &update).unwrap();
        }
        root
    }

    fn entry(outcome: OutcomeKind, path: PathBuf, test: &str) -> ReportEntry {
        ReportEntry { outcome, path, test: test.to_owned(), erased: None }
    }

    #[test]
    fn golden_folders_are_found_outside_target_and_hidden_folders() {
        let root = workspace();
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
        let root = workspace();
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
            summary.render(root.path()),
            "created (1):\n  tests/tests/golden/fixtures__three.json\n\
             changed (1):\n  crates/a/tests/golden/a__one.json\n\
             deleted-candidate (no test touched them; delete them if their test is gone) (1):\n  tests/tests/golden/fixtures__two.json\n\
             unchanged (0):\n\
             \ncrates/a/tests/golden/a__one.json erased:\n--- golden (erased)\n+++ actual\n-old\n+new\n\n"
        );

        let filtered = summarize(root.path(), &entries, None);
        assert_eq!(filtered.deleted_candidates, None);
        assert!(!filtered.render(root.path()).contains("deleted-candidate"));
    }

    #[test]
    fn the_report_written_by_checks_feeds_the_summary() {
        let root = workspace();
        let report = root.path().join("report.jsonl");
        let one = root.path().join("crates/a/tests/golden/a__one.json");
        let two = root.path().join("tests/tests/golden/fixtures__two.json");
        atif_golden::append_report(&report, &entry(OutcomeKind::Unchanged, one.clone(), "one"))
            .unwrap();
        atif_golden::append_report(&report, &entry(OutcomeKind::Changed, two.clone(), "two"))
            .unwrap();
        let entries = atif_golden::read_report(&report).unwrap();
        let summary = summarize(root.path(), &entries, None);
        assert_eq!(summary.unchanged, [one]);
        assert_eq!(summary.changed, [two]);
    }

    #[test]
    fn golden_update_reports_what_real_checks_in_update_mode_did() {
        let root = workspace();
        let report = root.path().join("target/report.jsonl");
        std::fs::create_dir_all(report.parent().unwrap()).unwrap();
        let one = root.path().join("crates/a/tests/golden/a__one.json");
        let two = root.path().join("tests/tests/golden/fixtures__two.json");
        let three = root.path().join("tests/tests/golden/fixtures__three.json");
        let mut update = Settings::new();
        update.set_mode(Some(Mode::Update)).set_report_file(Some(report.clone()));
        atif_golden::check(&one, &trajectory(2), &update).unwrap();
        atif_golden::check(&two, &trajectory(1), &update).unwrap();
        atif_golden::check(&three, &trajectory(3), &update).unwrap();

        let entries = atif_golden::read_report(&report).unwrap();
        let goldens = golden_files(root.path(), &entries).unwrap();
        let summary = summarize(root.path(), &entries, Some(&goldens));
        assert_eq!(summary.created, [three]);
        assert_eq!(summary.changed, std::slice::from_ref(&one));
        assert_eq!(summary.unchanged, [two]);
        assert_eq!(summary.deleted_candidates, Some(vec![]));
        let erased = &summary.erased[&one];
        assert!(erased.contains("\n+      \"step_id\": 2\n"), "{erased}");
        let text = summary.render(root.path());
        assert!(
            text.contains("\ncrates/a/tests/golden/a__one.json erased:\n--- golden (erased)\n"),
            "{text}"
        );
    }

    #[test]
    fn goldens_and_pending_files_in_a_custom_folder_are_found_through_the_report() {
        let root = workspace();
        let custom = root.path().join("crates/b/tests/goldens");
        let mut update = Settings::new();
        update.set_mode(Some(Mode::Update));
        let kept = custom.join("kept.json");
        let orphan = custom.join("orphan.json");
        atif_golden::check(&kept, &trajectory(1), &update).unwrap();
        atif_golden::check(&orphan, &trajectory(1), &update).unwrap();
        let mut review = Settings::new();
        review.set_mode(Some(Mode::Review));
        atif_golden::check(&kept, &trajectory(2), &review).unwrap_err();

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

        // The pending file beside `kept.json` is found although its folder is no `tests/golden`.
        let pending = atif_golden::pending_path(&kept);
        assert_eq!(pending_files(root.path(), None).unwrap(), std::slice::from_ref(&pending));
        assert!(review_text(root.path(), None).unwrap().starts_with(
            "== crates/b/tests/goldens/kept.json\n4 difference(s):\n  step_count: 1 -> 2\n"
        ));
        assert_eq!(accept_pending(root.path(), None).unwrap(), [kept]);
    }

    #[test]
    fn two_tests_in_different_processes_claiming_one_golden_are_reported() {
        let root = workspace();
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
        assert!(summary.render(root.path()).contains(
            "error: crates/a/tests/golden/a__one.json is claimed by several tests: mod_a::first, mod_b::second"
        ));
    }

    #[test]
    fn review_lists_pending_files_with_deltas_and_accept_moves_them_into_place() {
        let root = workspace();
        let golden = root.path().join("crates/a/tests/golden/a__one.json");
        let mut review = Settings::new();
        review.set_mode(Some(Mode::Review));
        atif_golden::check(&golden, &trajectory(2), &review).unwrap_err();
        let fresh = root.path().join("tests/tests/golden/fixtures__new.json");
        atif_golden::check(&fresh, &trajectory(1), &review).unwrap_err();

        let text = review_text(root.path(), None).unwrap();
        assert!(
            text.starts_with(
                "== crates/a/tests/golden/a__one.json\n4 difference(s):\n  step_count: 1 -> 2\n"
            ),
            "{text}"
        );
        assert!(text.contains("what moved, step by step:\n  step 2 (agent) inserted"), "{text}");
        assert!(
            text.contains(
                "== tests/tests/golden/fixtures__new.json\nnew golden (none recorded yet), shape:\n"
            ),
            "{text}"
        );
        assert!(text.ends_with("2 pending; accept with `cargo xtask golden-accept [FILTER]`, reject with `cargo xtask golden-reject [FILTER]`\n"));

        let accepted = accept_pending(root.path(), Some("a__one")).unwrap();
        assert_eq!(accepted, std::slice::from_ref(&golden));
        let mut check = Settings::new();
        check.set_mode(Some(Mode::Check));
        atif_golden::check(&golden, &trajectory(2), &check).unwrap();
        assert_eq!(pending_files(root.path(), None).unwrap(), [atif_golden::pending_path(&fresh)]);

        let rejected = reject_pending(root.path(), None).unwrap();
        assert_eq!(rejected, [atif_golden::pending_path(&fresh)]);
        assert!(pending_files(root.path(), None).unwrap().is_empty());
        assert!(!fresh.exists());
        assert_eq!(review_text(root.path(), None).unwrap(), "no pending golden files\n");
    }

    #[test]
    fn deletion_candidates_are_listed_only_after_an_unfiltered_run_that_passed() {
        assert_eq!(unlisted_reason(None, true), None);
        assert_eq!(unlisted_reason(None, false), Some("some tests failed"));
        assert_eq!(unlisted_reason(Some("fixtures"), true), Some("filtered run"));
        assert_eq!(unlisted_reason(Some("fixtures"), false), Some("filtered run"));
    }

    #[test]
    fn filters_are_one_plain_word() {
        assert_eq!(single_filter(&[], "x").unwrap(), None);
        assert_eq!(single_filter(&["abc".to_owned()], "x").unwrap(), Some("abc"));
        let err = single_filter(&["--all".to_owned()], "golden-accept").unwrap_err();
        assert_eq!(err.to_string(), "usage: cargo xtask golden-accept [FILTER]");
    }
}
