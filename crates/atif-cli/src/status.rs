//! The exit status of a failed command: 1 when the input is wrong, 2 when the command could not
//! run.

use std::fmt;

/// An error about the input itself (exit status 1), for errors of crates other than
/// atif-schema, whose own errors say which kind they are.
#[derive(Debug)]
pub(crate) struct InvalidInput(pub(crate) anyhow::Error);

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for InvalidInput {}

/// Marks `err` as being about the input (exit status 1).
pub(crate) fn invalid(err: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(InvalidInput(err.into()))
}

/// The exit status for an error: 1 when it is about the input (not a trajectory, not JSON, an
/// invalid script or log), 2 when the command could not run (unreadable file, bad arguments,
/// a write error).
pub(crate) fn exit_status(err: &anyhow::Error) -> u8 {
    let about_input = err.chain().any(|cause| {
        cause.is::<InvalidInput>()
            || cause.downcast_ref::<atif_schema::Error>().is_some_and(|err| err.is_invalid_input())
    });
    if about_input { 1 } else { 2 }
}
