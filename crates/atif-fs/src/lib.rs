//! Files in and out for atif: atomic writes of what it produces (goldens, pending files, replay
//! scripts, `-o` outputs), and the one rule for when nothing is written implicitly.
//!
//! Which function for which job:
//! - Write a file: [`write_atomic`] from bytes, [`write_atomic_with`] when the contents are
//!   written through a buffer (a large recording). Both return the file actually written: a
//!   symbolic link is followed and stays a link ([`resolve_symlinks`] says where it leads).
//! - Clear what a killed process left: [`stale_temp_files`] lists a folder's temporary files
//!   whose writer is gone, [`remove_stale_temp_files`] removes them; each write does so for the
//!   folder it writes to.
//! - Decide whether to write at all: [`running_on_ci`] (or [`is_ci`] of a value you hold) is
//!   true when `CI` is set and not `0`, `false` or empty. On CI, goldens are checked and replay
//!   scripts replayed, never written.
//!
//! The key design decision: a temporary file beside the target, flushed and renamed over it,
//! so a reader (or a test run killed half way) sees the old file or the new one, never half of
//! one. The temporary file is named `.atif-<pid>-<random>.tmp`, so a leftover of a dead process
//! can be told apart from a file being written right now.
//!
//! # Example
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("golden.json");
//! atif_fs::write_atomic(&path, b"{}\n")?;
//! assert_eq!(std::fs::read(&path).ok().as_deref(), Some(&b"{}\n"[..]));
//! assert!(atif_fs::stale_temp_files(dir.path())?.is_empty());
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod ci;
mod error;
mod temp;
mod write;

pub use ci::{is_ci, running_on_ci};
pub use error::{Error, Result};
pub use temp::{remove_stale_temp_files, stale_temp_files};
pub use write::{resolve_symlinks, write_atomic, write_atomic_with};

/// What other crates of this workspace share with this one (`atif-golden`'s review of pending
/// files): not public API, and free to change in any release.
#[doc(hidden)]
pub mod support {
    pub use crate::temp::is_temp_file_name;
}
