//! The check log: one JSON line per check, appended by every test process, read by
//! `atif golden update` ([`run_update`](crate::review::run_update)) to say which goldens were
//! created, changed or left alone.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// What a check did to its golden, as recorded in the check log.
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

/// One line of the check log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckLogEntry {
    /// What happened to the golden.
    pub outcome: OutcomeKind,
    /// The golden file.
    pub path: PathBuf,
    /// The test that checked it (its harness name, or the golden file's stem).
    pub test: String,
    /// For a changed golden, the unified diff of what the update erased (test harnesses hide
    /// the output of passing tests, so the check log carries it to `atif golden update`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erased: Option<String>,
}

/// Appends `entry` to the check log at `log` as one JSON line.
///
/// Safe for many processes and threads at once: the file is opened in append mode and each
/// line goes out in a single `write_all` of one buffer; on Linux and macOS an append-mode write
/// to a local file is not interleaved with other appends.
///
/// # Errors
/// [`Error::Io`] when the check log cannot be opened or written.
pub fn append_check_log(log: &Path, entry: &CheckLogEntry) -> Result<()> {
    let mut line = serde_json::to_vec(entry).map_err(|source| Error::Serialize { source })?;
    line.push(b'\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|source| Error::io("open check log", log, source))?;
    file.write_all(&line).map_err(|source| Error::io("append to check log", log, source))
}

/// Reads every entry of the check log at `log`, in the order written. A missing file is an
/// empty log (no test checked a golden).
///
/// # Errors
/// [`Error::Io`] when it cannot be read, [`Error::InvalidCheckLog`] naming the line that is not
/// an entry.
pub fn read_check_log(log: &Path) -> Result<Vec<CheckLogEntry>> {
    let text = match std::fs::read_to_string(log) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::io("read check log", log, source)),
    };
    let mut entries = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(line).map_err(|source| Error::InvalidCheckLog {
            path: log.to_owned(),
            line: idx + 1,
            source,
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

/// Appends to the settings' check log, else to the one named by `ATIF_GOLDEN_LOG`, when either
/// is set.
pub(crate) fn record(
    settings: &crate::Settings,
    outcome: OutcomeKind,
    path: &Path,
    test: &str,
    erased: Option<&str>,
) -> Result<()> {
    let log = match settings.log_file() {
        Some(log) => log.as_os_str().to_owned(),
        None => std::env::var_os(crate::mode::LOG_ENV).unwrap_or_default(),
    };
    if log.is_empty() {
        return Ok(());
    }
    // Absolute, so the reader can tell which goldens are under its folder wherever the test
    // process ran (`atif check tests/golden/x.json` from a script, say).
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let entry =
        CheckLogEntry { outcome, path, test: test.to_owned(), erased: erased.map(str::to_owned) };
    append_check_log(Path::new(&log), &entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_the_check_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("check-log.jsonl");
        assert_eq!(read_check_log(&log).unwrap(), Vec::new());
        let entries = vec![
            CheckLogEntry {
                outcome: OutcomeKind::Created,
                path: "/g/a.json".into(),
                test: "a".into(),
                erased: None,
            },
            CheckLogEntry {
                outcome: OutcomeKind::Unchanged,
                path: "/g/b\tc.json".into(),
                test: "b".into(),
                erased: Some("-old\n+new\n".into()),
            },
        ];
        for entry in &entries {
            append_check_log(&log, entry).unwrap();
        }
        assert_eq!(read_check_log(&log).unwrap(), entries);
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            r#"{"outcome":"created","path":"/g/a.json","test":"a"}"#
        );
    }

    #[test]
    fn concurrent_appends_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("check-log.jsonl");
        std::thread::scope(|scope| {
            for thread in 0..16 {
                let log = &log;
                scope.spawn(move || {
                    for idx in 0..50 {
                        let entry = CheckLogEntry {
                            outcome: OutcomeKind::Changed,
                            path: format!("/golden/{thread}/{idx}/{}.json", "x".repeat(200)).into(),
                            test: format!("t{thread}_{idx}"),
                            erased: Some("-x\n".repeat(idx)),
                        };
                        append_check_log(log, &entry).unwrap();
                    }
                });
            }
        });
        let entries = read_check_log(&log).unwrap();
        assert_eq!(entries.len(), 16 * 50);
    }

    #[test]
    fn a_broken_line_is_an_error_naming_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("check-log.jsonl");
        std::fs::write(&log, "{\"outcome\":\"created\",\"path\":\"a\",\"test\":\"t\"}\nnope\n")
            .unwrap();
        let err = read_check_log(&log).unwrap_err();
        assert!(err.to_string().starts_with("line 2 of check log "), "{err}");
    }
}
