//! Golden-file regression tests for agent trajectories.
#![forbid(unsafe_code)]
