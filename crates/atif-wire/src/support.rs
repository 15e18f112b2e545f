//! Not public API: what `atif-replay` shares with this crate (the trajectory writer of both
//! captures, and the text of a provider's error object). It may change in any release.

pub use crate::protocol::provider_message;
pub use crate::steps::{ResultRecord, Source, StepRecord, TrajectoryRecord, build};
