//! Integration tests of the `atif` binary: each runs the real executable on files in a temp dir.

mod check;
mod examples;
mod import;
mod normalize;
mod schema;
mod script;
mod validate;
