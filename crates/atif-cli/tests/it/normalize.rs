//! Tests of `atif normalize`.
