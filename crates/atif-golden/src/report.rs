//! The golden report: one JSON line per check, appended by every test process, read by
//! `atif golden update` ([`run_update`](crate::run_update)) to say which goldens were created,
//! changed or left alone.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// What a check did to its golden, as recorded in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum OutcomeKind {
    /// Check mode, and the behaviour matched.
    Matched,
    /// Update mode wrote a golden that did not exist.
    Created,
    /// Update mode rewrote a golden that no longer matched.
    Changed,
    /// Update mode found the golden still matching and left it alone.
    Unchanged,
    /// The check failed (missing golden, schema version change, behaviour change).
    Failed,
}

/// One line of a golden report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportEntry {
    /// What happened to the golden.
    pub outcome: OutcomeKind,
    /// The golden file.
    pub path: PathBuf,
    /// The test that checked it (its harness name, or the golden file's stem).
    pub test: String,
    /// For a changed golden, the unified diff of what the update erased (test harnesses hide
    /// the output of passing tests, so the report carries it to `atif golden update`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erased: Option<String>,
}

/// Appends `entry` to the report file at `report` as one JSON line.
///
/// Safe for many processes and threads at once: the file is opened in append mode and each
/// line goes out in a single `write_all` of one buffer; on Linux and macOS an append-mode write
/// to a local file is not interleaved with other appends.
///
/// # Errors
/// [`Error::Io`] when the report cannot be opened or written.
pub fn append_report(report: &Path, entry: &ReportEntry) -> Result<()> {
    let mut line = serde_json::to_vec(entry).map_err(|source| Error::Serialize { source })?;
    line.push(b'\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(report)
        .map_err(|source| Error::io("open golden report", report, source))?;
    file.write_all(&line).map_err(|source| Error::io("append to golden report", report, source))
}

/// Reads every entry of the report file at `report`, in the order written. A missing file is
/// an empty report (no test checked a golden).
///
/// # Errors
/// [`Error::Io`] when it cannot be read, [`Error::InvalidReport`] naming the line that is not
/// an entry.
pub fn read_report(report: &Path) -> Result<Vec<ReportEntry>> {
    let text = match std::fs::read_to_string(report) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::io("read golden report", report, source)),
    };
    let mut entries = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(line).map_err(|source| Error::InvalidReport {
            path: report.to_owned(),
            line: idx + 1,
            source,
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

/// Appends to the settings' report file, else to the one named by `ATIF_GOLDEN_REPORT`, when
/// either is set.
pub(crate) fn record(
    settings: &crate::Settings,
    outcome: OutcomeKind,
    path: &Path,
    test: &str,
    erased: Option<&str>,
) -> Result<()> {
    let report = match settings.report_file() {
        Some(report) => report.as_os_str().to_owned(),
        None => std::env::var_os(crate::mode::REPORT_ENV).unwrap_or_default(),
    };
    if report.is_empty() {
        return Ok(());
    }
    // Absolute, so the reader can tell which goldens are under its folder wherever the test
    // process ran (`atif check tests/golden/x.json` from a script, say).
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let entry =
        ReportEntry { outcome, path, test: test.to_owned(), erased: erased.map(str::to_owned) };
    append_report(Path::new(&report), &entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_the_report_file() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.jsonl");
        assert_eq!(read_report(&report).unwrap(), Vec::new());
        let entries = vec![
            ReportEntry {
                outcome: OutcomeKind::Created,
                path: "/g/a.json".into(),
                test: "a".into(),
                erased: None,
            },
            ReportEntry {
                outcome: OutcomeKind::Unchanged,
                path: "/g/b\tc.json".into(),
                test: "b".into(),
                erased: Some("-old\n+new\n".into()),
            },
        ];
        for entry in &entries {
            append_report(&report, entry).unwrap();
        }
        assert_eq!(read_report(&report).unwrap(), entries);
        let text = std::fs::read_to_string(&report).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            r#"{"outcome":"created","path":"/g/a.json","test":"a"}"#
        );
    }

    #[test]
    fn concurrent_appends_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.jsonl");
        std::thread::scope(|scope| {
            for thread in 0..16 {
                let report = &report;
                scope.spawn(move || {
                    for idx in 0..50 {
                        let entry = ReportEntry {
                            outcome: OutcomeKind::Changed,
                            path: format!("/golden/{thread}/{idx}/{}.json", "x".repeat(200)).into(),
                            test: format!("t{thread}_{idx}"),
                            erased: Some("-x\n".repeat(idx)),
                        };
                        append_report(report, &entry).unwrap();
                    }
                });
            }
        });
        let entries = read_report(&report).unwrap();
        assert_eq!(entries.len(), 16 * 50);
    }

    #[test]
    fn a_broken_line_is_an_error_naming_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.jsonl");
        std::fs::write(&report, "{\"outcome\":\"created\",\"path\":\"a\",\"test\":\"t\"}\nnope\n")
            .unwrap();
        let err = read_report(&report).unwrap_err();
        assert!(err.to_string().starts_with("line 2 of golden report "), "{err}");
    }
}
