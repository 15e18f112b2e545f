//! Integration tests of atif-fs: real files, links and processes in temp dirs.
#![allow(clippy::unwrap_used, reason = "test code")]

mod temp;
mod write;

pub(crate) use atif_test_support::{dead_pid, file_names};
