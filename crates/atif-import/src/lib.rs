//! Import Claude Code and Codex logs as ATIF trajectories.
#![forbid(unsafe_code)]
