//! Atomic writes of the files atif produces (goldens, pending files, replay scripts, `-o`
//! outputs), in one place.
//!
//! [`write_atomic`] writes a temporary file beside the target, flushes it and renames it over
//! the target with `tempfile::NamedTempFile::persist`, so a reader (or a test run killed half
//! way) sees the old file or the new one, never half of one. Three details make that hold in
//! practice:
//!
//! - a target that is a symbolic link is resolved first: the file it points to is replaced
//!   and the link stays a link;
//! - the temporary file is named `.atif-<pid>-<random>.tmp`, so a temporary file left by a
//!   process that was killed can be told apart from one being written right now;
//! - each write removes such leftovers of dead processes from the folder it writes to
//!   ([`remove_stale_temp_files`]); [`stale_temp_files`] lists them.
//!
//! It also holds the one rule for when nothing is written implicitly: [`is_ci`], read by the
//! golden files' modes and by the record modes of replay scripts alike.
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
pub use temp::{
    TEMP_PREFIX, TEMP_SUFFIX, is_temp_file_name, remove_stale_temp_files, stale_temp_files,
};
pub use write::{resolve_symlinks, write_atomic, write_atomic_with};
