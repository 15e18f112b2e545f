//! Tests of `atif import`.
