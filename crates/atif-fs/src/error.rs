//! The one error type of atif-fs.

use std::path::{Path, PathBuf};

/// A file-system operation failed: what was being done, on which path, and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {}", path.display())]
#[non_exhaustive]
pub struct Error {
    /// What was being done (`create folder`, `write`, `replace`, ...).
    pub action: &'static str,
    /// The file or folder.
    pub path: PathBuf,
    /// The operating system's error.
    #[source]
    pub source: std::io::Error,
}

impl Error {
    pub(crate) fn new(action: &'static str, path: &Path, source: std::io::Error) -> Error {
        Error { action, path: path.to_owned(), source }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
