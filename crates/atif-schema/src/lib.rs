//! Typed models, validation and JSON Schemas for ATIF (Agent Trajectory Interchange Format)
//! v1.0 to v1.8.
#![forbid(unsafe_code)]

mod builder;
mod error;
mod json_schema;
mod trajectory;
mod validate;
mod version;

pub use builder::*;
pub use error::{Error, Result};
pub use json_schema::*;
pub use trajectory::*;
pub use validate::*;
pub use version::SchemaVersion;
