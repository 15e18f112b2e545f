//! Files on disk: atomic writes, pending-file names, accepting and rejecting pending files.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// The suffix of a pending file: `x.json` is pending as `x.json.new`.
pub const PENDING_SUFFIX: &str = ".new";

/// The pending file beside `golden`: its name with [`PENDING_SUFFIX`] appended.
pub fn pending_path(golden: &Path) -> PathBuf {
    let mut name = OsString::from(golden.as_os_str());
    name.push(PENDING_SUFFIX);
    PathBuf::from(name)
}

/// The golden a pending file belongs to, or `None` when `pending` does not end in `.new`.
pub fn golden_for_pending(pending: &Path) -> Option<PathBuf> {
    let text = pending.to_str()?;
    let golden = text.strip_suffix(PENDING_SUFFIX)?;
    (!golden.is_empty()).then(|| PathBuf::from(golden))
}

/// Writes `contents` to `path` atomically, through `atif-fs`, the one place atif replaces
/// files: a temporary file in the target's folder is written, flushed and renamed over it, so a
/// reader sees the old file or the new one, never a partial write. A symbolic link is followed
/// and kept (its target is replaced); parent folders are created as needed; temporary files
/// that killed writers left in that folder are removed.
///
/// Returns the file actually written, as `atif_fs::write_atomic` does (through a link, the
/// file it points to).
///
/// # Errors
/// [`Error::Io`] naming the folder or file when creating, writing or renaming fails; the
/// temporary file is removed and `path` keeps its old contents.
pub(crate) fn write_atomic(path: &Path, contents: &[u8]) -> Result<PathBuf> {
    atif_fs::write_atomic(path, contents)
        .map_err(|err| Error::io(err.action, &err.path, err.source))
}

/// Moves the pending file `pending` over its golden (atomically, by rename) and returns the
/// golden's path; [`accept`](crate::review::accept) does the same for a found
/// [`Pending`](crate::review::Pending). The pending file is read with the strict loader first:
/// what is not a trajectory (a file edited by hand, or written by something else) never becomes
/// a golden.
///
/// # Errors
/// [`Error::Io`] when `pending` does not end in `.new` or cannot be renamed, and
/// [`Error::Load`] naming the pending file and the JSON Pointer of what is wrong (the golden
/// is left alone).
pub fn accept_pending(pending: &Path) -> Result<PathBuf> {
    let Some(golden) = golden_for_pending(pending) else {
        let source = std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "expected a pending file whose name ends in .new",
        );
        return Err(Error::io("accept", pending, source));
    };
    atif_schema::load_trajectory(pending, &atif_schema::LoadOptions::new())
        .map_err(|err| Error::Load(Box::new(err)))?;
    // Renaming over a symbolic link would replace the link: a linked golden gets the pending
    // text written through the link (atomically) instead.
    let linked = std::fs::symlink_metadata(&golden).is_ok_and(|meta| meta.file_type().is_symlink());
    if linked {
        let text = std::fs::read(pending).map_err(|source| Error::io("accept", pending, source))?;
        write_atomic(&golden, &text)?;
        reject_pending(pending)?;
    } else {
        std::fs::rename(pending, &golden).map_err(|source| Error::io("accept", pending, source))?;
    }
    Ok(golden)
}

/// Deletes the pending file `pending`.
///
/// # Errors
/// [`Error::Io`] when it cannot be removed.
pub fn reject_pending(pending: &Path) -> Result<()> {
    std::fs::remove_file(pending).map_err(|source| Error::io("remove", pending, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_files_sit_beside_their_golden() {
        let golden = Path::new("/g/tests/golden/a__b.json");
        let pending = pending_path(golden);
        assert_eq!(pending, Path::new("/g/tests/golden/a__b.json.new"));
        assert_eq!(golden_for_pending(&pending).as_deref(), Some(golden));
        assert_eq!(golden_for_pending(Path::new("/g/x.json")), None);
    }

    #[cfg(unix)]
    #[test]
    fn accepting_a_pending_file_of_a_linked_golden_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.json");
        std::fs::write(&target, b"old").unwrap();
        let golden = dir.path().join("golden.json");
        std::os::unix::fs::symlink("target.json", &golden).unwrap();
        let new = br#"{"schema_version": "ATIF-v1.8", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": []}"#;
        std::fs::write(pending_path(&golden), new).unwrap();
        assert_eq!(accept_pending(&pending_path(&golden)).unwrap(), golden);
        assert!(std::fs::symlink_metadata(&golden).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), new);
        assert!(!pending_path(&golden).exists());
    }

    #[test]
    fn write_atomic_creates_parent_folders_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.json");
        write_atomic(&path, b"one\n").unwrap();
        write_atomic(&path, b"two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\n");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("c.json")]);
    }
}
