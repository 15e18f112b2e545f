//! Tests of `atif script`.
