//! `FakeClient`: a test double that answers from a list or a closure and remembers every
//! request it saw.

use std::fmt;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::record::lock;
use crate::{Error, LlmClient, LlmError, LlmRequest, LlmResponse, Result};

type Responder = dyn Fn(usize, &LlmRequest) -> Result<LlmResponse> + Send + Sync;

/// A fake model for tests: replies from a fixed list (in order) or from a closure over the
/// 1-based call number and the request.
///
/// What the agent sent is as much a contract as what it got back, so every request is kept and
/// [`seen`](FakeClient::seen) returns them.
pub struct FakeClient {
    model: Option<String>,
    source: Source,
    seen: Mutex<Vec<LlmRequest>>,
}

enum Source {
    List(Vec<LlmResponse>),
    Closure(Box<Responder>),
}

impl FakeClient {
    /// Replies with `responses` in order; one call too many is [`Error::ScriptExhausted`].
    pub fn from_responses(model: Option<&str>, responses: Vec<LlmResponse>) -> Self {
        FakeClient {
            model: model.map(str::to_owned),
            source: Source::List(responses),
            seen: Mutex::default(),
        }
    }

    /// Replies with whatever `respond(call_number, &request)` returns (call numbers start at 1).
    pub fn from_fn<F>(model: Option<&str>, respond: F) -> Self
    where
        F: Fn(usize, &LlmRequest) -> Result<LlmResponse> + Send + Sync + 'static,
    {
        FakeClient {
            model: model.map(str::to_owned),
            source: Source::Closure(Box::new(respond)),
            seen: Mutex::default(),
        }
    }

    /// Every request received so far, in arrival order.
    pub fn seen(&self) -> Vec<LlmRequest> {
        lock(&self.seen).clone()
    }

    /// How many requests were received so far.
    pub fn calls(&self) -> usize {
        lock(&self.seen).len()
    }
}

impl fmt::Debug for FakeClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match &self.source {
            Source::List(responses) => format!("{} responses", responses.len()),
            Source::Closure(_) => "closure".to_owned(),
        };
        f.debug_struct("FakeClient")
            .field("model", &self.model)
            .field("source", &source)
            .field("seen", &self.calls())
            .finish()
    }
}

#[async_trait]
impl LlmClient for FakeClient {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError> {
        let call = {
            let mut seen = lock(&self.seen);
            seen.push(request.clone());
            seen.len()
        };
        match &self.source {
            Source::List(responses) => {
                responses.get(call - 1).cloned().ok_or_else(|| Error::ScriptExhausted {
                    requested: call,
                    recorded: responses.len(),
                    request_summary: crate::replay::summarize_request(&request),
                    record_command: None,
                })
            }
            Source::Closure(respond) => respond(call, &request),
        }
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
}
