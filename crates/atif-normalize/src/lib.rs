//! Normalise ATIF trajectories so that two runs of the same behaviour are byte-identical,
//! reduce them to a [`Shape`]-style summary and say what moved between two runs.
//!
//! This crate is pure: no I/O, no async.
#![forbid(unsafe_code)]

mod error;
mod options;
mod preset;
mod selector;

pub use error::{Error, Result};
pub use options::{Masker, NormalizeOptions, Redaction};
pub use preset::{PRESETS, preset};
