//! [`write_atomic`]: the one way atif replaces a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::temp::{TEMP_PREFIX, TEMP_SUFFIX};
use crate::{Error, Result, remove_stale_temp_files};

/// How many symbolic links [`resolve_symlinks`] follows before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Writes `contents` to `path` atomically, and returns the file actually written.
///
/// When `path` is a symbolic link (or a chain of them), the file it points to is replaced and
/// the link is kept. A temporary file named `.atif-<pid>-<random>.tmp` is written in the
/// target's folder, flushed to disk and renamed over the target
/// (`tempfile::NamedTempFile::persist`), so a reader sees the old file or the new one, never
/// part of one. Parent folders are created as needed. A new file gets the permissions an
/// ordinary new file gets (`0o666` less the umask); a replaced file keeps its own. Before
/// writing, temporary files that dead processes left in that folder are removed.
///
/// # Errors
/// [`Error`] naming the folder or file when resolving, creating, writing or renaming fails;
/// the temporary file is then removed and the target keeps its old contents.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<PathBuf> {
    write_atomic_with(path, |file| file.write_all(contents))
}

/// [`write_atomic`] for contents produced by `write`, which writes them into the temporary
/// file (through a buffer) rather than into memory first, so a large file, such as a recording
/// of a 200 MB request, is never held whole as text.
///
/// The target is replaced only when `write` returns `Ok`; when it fails, the temporary file is
/// removed and the target keeps its old contents.
///
/// # Errors
/// As for [`write_atomic`]; an error `write` returns is reported as failing to write the
/// temporary file, with that error as its source.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<PathBuf> {
    write_atomic_inner(path, Box::new(write))
}

/// The writer [`write_atomic_with`] calls, boxed so that the work is done by one non-generic
/// function.
type WriteFn<'a> = dyn FnOnce(&mut dyn Write) -> std::io::Result<()> + 'a;

fn write_atomic_inner(path: &Path, write: Box<WriteFn<'_>>) -> Result<PathBuf> {
    let target = resolve_symlinks(path)?;
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|source| Error::new("create folder", &dir, source))?;
    // Cleaning is a courtesy: a folder that cannot be listed fails the write below anyway.
    let _ = remove_stale_temp_files(&dir);

    let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    // Temporary files are private (0o600) by default; the files we write are ordinary ones.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder
        .tempfile_in(&dir)
        .map_err(|source| Error::new("create a temporary file in", &dir, source))?;
    if let Ok(existing) = std::fs::metadata(&target) {
        if existing.is_file() {
            temp.as_file()
                .set_permissions(existing.permissions())
                .map_err(|source| Error::new("set the permissions of", temp.path(), source))?;
        }
    }
    let temp_path = temp.path().to_owned();
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, temp.as_file_mut());
    let written = write(&mut buffered).and_then(|()| buffered.flush());
    drop(buffered);
    written.map_err(|source| Error::new("write", &temp_path, source))?;
    temp.as_file().sync_all().map_err(|source| Error::new("flush", temp.path(), source))?;
    temp.persist(&target).map_err(|err| Error::new("replace", &target, err.error))?;
    Ok(target)
}

/// The file `path` names once every symbolic link on its last component is followed (a
/// relative link resolves against the link's own folder); `path` itself when it is not a
/// link or does not exist. The target need not exist.
///
/// # Errors
/// [`Error`] when a link cannot be read or there are more than 40 in a row (a loop).
pub fn resolve_symlinks(path: &Path) -> Result<PathBuf> {
    let mut current = path.to_owned();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)
                    .map_err(|source| Error::new("read the symbolic link", &current, source))?;
                current = match current.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    let source = std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("more than {MAX_LINKS} symbolic links in a row (a loop?)"),
    );
    Err(Error::new("resolve", path, source))
}
