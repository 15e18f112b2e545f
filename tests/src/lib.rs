//! Reference agents used by the workspace's end-to-end tests.
#![forbid(unsafe_code)]
