//! Integration tests of atif-wire: capture from hand-written traffic of each protocol.
#![allow(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]

mod traffic;

pub(crate) use atif_schema::error_chain as chain;
