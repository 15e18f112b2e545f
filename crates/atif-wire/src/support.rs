//! Not public API: what `atif-replay` and the CLI share with this crate (the trajectory writer
//! of both captures, the text of a provider's error object, the model a Gemini path names). It
//! may change in any release.

pub use crate::protocol::{gemini_model_from_path, provider_message};
pub use crate::steps::{add_tools, finish, response_step};
