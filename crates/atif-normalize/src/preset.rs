//! Named presets of normalise options for logs of well-known agents (`claude-code`, `codex`).

use crate::{Error, NormalizeOptions, Result};

/// The names of the known presets.
pub const PRESETS: &[&str] = &[];

/// The options of the preset called `name`.
///
/// # Errors
/// [`Error::UnknownPreset`] when there is no preset of that name.
pub fn preset(name: &str) -> Result<NormalizeOptions> {
    Err(Error::UnknownPreset { name: name.to_owned(), known: PRESETS.join(", ") })
}
