//! Files on disk: atomic writes, pending-file names, accepting and rejecting pending files.

use std::ffi::OsString;
use std::io::Write;
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

/// Writes `contents` to `path` atomically: a temporary file in the same folder is written,
/// flushed to disk and renamed over `path`, so a reader sees either the old file or the new
/// one, never a partial write. Parent folders are created as needed.
///
/// # Errors
/// [`Error::Io`] naming the folder or file when creating, writing or renaming fails; the
/// temporary file is removed and `path` keeps its old contents.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|source| Error::io("create folder", &dir, source))?;
    // A leading dot keeps the temporary file out of globs over `*.json` while it exists.
    let mut builder = tempfile::Builder::new();
    builder.prefix(".atif-golden-").suffix(".tmp");
    // Temporary files are private (0o600) by default; a golden is an ordinary file, so it gets
    // the permissions `std::fs::write` would give it (0o666 less the umask).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder
        .tempfile_in(&dir)
        .map_err(|source| Error::io("create a temporary file in", &dir, source))?;
    // A file being replaced keeps its permissions (a read-only golden stays read-only).
    if let Ok(existing) = std::fs::metadata(path) {
        if existing.is_file() {
            temp.as_file()
                .set_permissions(existing.permissions())
                .map_err(|source| Error::io("set the permissions of", temp.path(), source))?;
        }
    }
    temp.write_all(contents).map_err(|source| Error::io("write", temp.path(), source))?;
    temp.as_file().sync_all().map_err(|source| Error::io("flush", temp.path(), source))?;
    temp.persist(path).map_err(|err| Error::io("replace", path, err.error))?;
    Ok(())
}

/// Moves the pending file `pending` over its golden (atomically, by rename) and returns the
/// golden's path.
///
/// # Errors
/// [`Error::Io`] when `pending` does not end in `.new` or cannot be renamed.
pub fn accept_pending(pending: &Path) -> Result<PathBuf> {
    let Some(golden) = golden_for_pending(pending) else {
        let source = std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "expected a pending file whose name ends in .new",
        );
        return Err(Error::io("accept", pending, source));
    };
    std::fs::rename(pending, &golden).map_err(|source| Error::io("accept", pending, source))?;
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

    #[cfg(unix)]
    #[test]
    fn new_files_get_ordinary_permissions_and_replaced_files_keep_theirs() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        // What the process's umask makes of an ordinary new file.
        let plain = dir.path().join("plain.json");
        std::fs::write(&plain, b"x").unwrap();
        let fresh = dir.path().join("fresh.json");
        write_atomic(&fresh, b"one\n").unwrap();
        // Under the usual umask 0o022 this is 0o644, not a temporary file's private 0o600.
        assert_eq!(mode(&fresh), mode(&plain));

        std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&fresh, b"two\n").unwrap();
        assert_eq!(mode(&fresh), 0o640);
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "two\n");
    }

    #[test]
    fn a_failed_write_keeps_the_old_contents_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty folder where the file should go makes the final rename fail.
        let path = dir.path().join("golden.json");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("keep"), b"old").unwrap();
        let err = write_atomic(&path, b"new").unwrap_err();
        assert!(err.to_string().starts_with("cannot replace "), "{err}");
        assert_eq!(std::fs::read(path.join("keep")).unwrap(), b"old");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .filter(|name| name != "golden.json")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
