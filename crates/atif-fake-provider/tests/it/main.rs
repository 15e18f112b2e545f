//! Integration tests of the fake provider over raw HTTP: each protocol streamed and not, the
//! tool loop, the request log, simulated failures, and the binary.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

mod binary;
mod http;
mod protocols;
mod sampling;
