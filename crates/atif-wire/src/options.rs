//! Who a captured agent is: the options shared by capture in process (`atif-replay`) and
//! capture from traffic.

use atif_secrets::Scanner;

/// Who the captured agent is. A plain value: `CaptureOptions::new(name, version)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureOptions {
    agent_name: String,
    agent_version: String,
    model_name: Option<String>,
    secrets: Option<Scanner>,
}

impl CaptureOptions {
    /// An agent called `name` at `version`, as written in the trajectory's `agent` object.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        CaptureOptions {
            agent_name: name.into(),
            agent_version: version.into(),
            model_name: None,
            secrets: Some(Scanner::default()),
        }
    }

    /// The agent name. Subagents get the name given to `atif_replay::CaptureHandle::subagent`.
    pub fn agent_name(&self) -> &str {
        &self.agent_name
    }

    /// The agent version.
    pub fn agent_version(&self) -> &str {
        &self.agent_version
    }

    /// The model name written into the trajectory. Default: `None`, meaning the client's
    /// model (`LlmClient::model` in `atif-replay`), or, when the client names none, the `model` of each
    /// request (and the first one for the `agent` object).
    pub fn model_name(&self) -> Option<&str> {
        self.model_name.as_deref()
    }

    /// Sets [`model_name`](CaptureOptions::model_name).
    pub fn set_model_name(&mut self, model_name: Option<String>) {
        self.model_name = model_name;
    }

    /// The scanner whose secrets become `<redacted:KIND>` markers in the captured trajectory,
    /// or `None` when secrets are kept. Default: the default [`Scanner`].
    pub fn secret_scanner(&self) -> Option<&Scanner> {
        self.secrets.as_ref()
    }

    /// Sets the secret scanner; `None` keeps secrets in the trajectory, for a local
    /// investigation only.
    pub fn set_secret_scanner(&mut self, scanner: Option<Scanner>) {
        self.secrets = scanner;
    }
}
