//! Tests of `atif validate`.
