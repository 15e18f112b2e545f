//! Tests of `atif check`.
