//! Temporary files: their names, and finding the ones dead processes left behind.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::{Error, Result};

/// How every temporary file [`write_atomic`](crate::write_atomic) creates starts: the leading
/// dot keeps it out of globs over `*.json`; the writer's process id follows.
pub(crate) const TEMP_PREFIX: &str = ".atif-";

/// How every temporary file of ours ends.
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

/// How old a temporary file whose writer cannot be checked must be to count as stale: one
/// left by an older atif without a process id in its name, or on a system without `/proc`.
const UNKNOWN_WRITER_AGE: Duration = Duration::from_secs(60 * 60);

/// Whether `name` is the name of a temporary file atif writes, or wrote in earlier versions
/// (`.atif-golden-*.tmp`, `.<file>.<pid>.<n>.tmp`).
pub fn is_temp_file_name(name: &str) -> bool {
    writer(name).is_some()
}

/// The temporary files in `dir` (not below it) whose writer is gone: its process id names a
/// process that no longer runs, or, when that cannot be told, the file is over an hour old.
/// A temporary file being written right now is never listed.
///
/// # Errors
/// [`Error`] when `dir` cannot be listed; a missing folder has no stale files.
pub fn stale_temp_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::new("list", dir, source)),
    };
    let mut stale = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::new("list", dir, source))?;
        let name = entry.file_name();
        let Some(writer) = name.to_str().and_then(writer) else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
        let dead = match writer.and_then(process_is_running) {
            Some(running) => !running,
            None => older_than(&entry.path(), UNKNOWN_WRITER_AGE),
        };
        if is_file && dead {
            stale.push(entry.path());
        }
    }
    stale.sort();
    Ok(stale)
}

/// Removes the [`stale_temp_files`] of `dir` and returns them. A file another process removed
/// first is not an error.
///
/// # Errors
/// [`Error`] when `dir` cannot be listed or a stale file cannot be removed.
pub fn remove_stale_temp_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let stale = stale_temp_files(dir)?;
    for path in &stale {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(Error::new("remove", path, source)),
        }
    }
    Ok(stale)
}

/// `Some(Some(pid))` for a temporary file of ours naming its writer, `Some(None)` for one of
/// ours that does not (older versions), `None` for any other file.
fn writer(name: &str) -> Option<Option<u32>> {
    let stem = name.strip_suffix(TEMP_SUFFIX)?;
    if let Some(rest) = stem.strip_prefix(TEMP_PREFIX) {
        // `.atif-<pid>-<random>.tmp`, or `.atif-golden-<random>.tmp` from before pids.
        let (head, random) = rest.split_once('-')?;
        if random.is_empty() {
            return None;
        }
        return match head.parse::<u32>() {
            Ok(pid) => Some(Some(pid)),
            Err(_) if head == "golden" => Some(None),
            Err(_) => None,
        };
    }
    // `.<file>.<pid>.<counter>.tmp`, the replay scripts' own temporary files before this crate.
    let mut parts = stem.rsplitn(3, '.');
    let (counter, pid, file) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if file.len() > 1 && file.starts_with('.') && digits(counter) && digits(pid) {
        return Some(pid.parse().ok());
    }
    None
}

/// Whether process `pid` runs (a zombie does not), or `None` when this system cannot tell.
fn process_is_running(pid: u32) -> Option<bool> {
    if pid == std::process::id() {
        return Some(true);
    }
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return None;
    }
    match std::fs::read_to_string(proc.join(pid.to_string()).join("stat")) {
        // The state is the first field after the command name, which ends with the last `)`.
        Ok(stat) => {
            let state =
                stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
            Some(!matches!(state, Some('Z' | 'X' | 'x')))
        }
        Err(_) => Some(false),
    }
}

fn older_than(path: &Path, age: Duration) -> bool {
    std::fs::metadata(path)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|modified| SystemTime::now().duration_since(modified).ok())
        .is_some_and(|elapsed| elapsed > age)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_file_names_are_recognised_with_their_writer() {
        assert_eq!(writer(".atif-1234-AbC123.tmp"), Some(Some(1234)));
        assert_eq!(writer(".atif-golden-AbC123.tmp"), Some(None));
        assert_eq!(writer(".s.script.json.77.3.tmp"), Some(Some(77)));
        for other in [
            "golden.json",
            ".atif-.tmp",
            ".atif-12-.tmp",
            ".atif-x-1.tmp",
            "a.1.2.tmp",
            ".gitignore",
        ] {
            assert_eq!(writer(other), None, "{other}");
        }
    }

    #[test]
    fn this_process_runs() {
        assert_eq!(process_is_running(std::process::id()), Some(true));
    }
}
