//! Typed models, validation and JSON Schemas for ATIF (Agent Trajectory Interchange Format)
//! v1.0 to v1.8.
#![forbid(unsafe_code)]
