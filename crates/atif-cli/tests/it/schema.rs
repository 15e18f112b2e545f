//! Tests of `atif schema`.
