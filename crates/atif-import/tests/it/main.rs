//! Integration tests of atif-import: our own fixtures for every format and feature, hostile
//! input, and every Claude Code / Codex sample of the shared corpus (read in place).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr, reason = "tests")]

mod agents;
mod claude_code;
mod claude_stream;
mod codex_exec;
mod codex_rollout;
mod corpus;
mod format;
mod golden;
mod hostile;
mod malformed;
mod normalize;
mod otel;
mod path;
mod real;
mod support;
