//! Integration tests of atif-secrets: every default kind, the name rules, JSON walking, reports.

#![allow(clippy::unwrap_used, reason = "test code")]

mod report;
mod samples;
mod scanner;
