//! `RecordingClient`: forwards every call to a real client and keeps what it said, to be saved
//! as a script.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use crate::script::{RecordedCall, Script, fingerprint_with, write_script};
use crate::secrets::Redactor;
use crate::{Chunk, ChunkStream, Error, LlmClient, LlmError, LlmRequest, LlmResponse, Result};

/// How a [`RecordingClient`] records. A plain value: build it, set what differs from the
/// defaults, hand it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOptions {
    store_requests: bool,
    secret_patterns: Vec<String>,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions { store_requests: true, secret_patterns: Vec::new() }
    }
}

impl RecordOptions {
    /// Whether the script keeps each full request beside its fingerprint, so a drifted replay
    /// can show what changed. Default: `true`.
    pub fn store_requests(&self) -> bool {
        self.store_requests
    }

    /// Sets [`store_requests`](RecordOptions::store_requests).
    pub fn set_store_requests(&mut self, store: bool) {
        self.store_requests = store;
    }

    /// Extra secret patterns (regexes) redacted on top of the default credential shapes.
    /// Default: none.
    pub fn secret_patterns(&self) -> &[String] {
        &self.secret_patterns
    }

    /// Adds a secret pattern. Saving refuses to write a script in which it still matches.
    pub fn add_secret_pattern(&mut self, pattern: impl Into<String>) {
        self.secret_patterns.push(pattern.into());
    }
}

/// Wraps a client, forwards every call to it, and records requests and replies; [`save`]
/// writes them as a [`Script`] for [`ReplayClient`](crate::ReplayClient).
///
/// Calls are recorded in the order they were made; a streamed reply is recorded chunk by chunk
/// as the agent reads it.
///
/// [`save`]: RecordingClient::save
pub struct RecordingClient<C> {
    inner: C,
    calls: Arc<Mutex<Vec<Slot>>>,
    options: RecordOptions,
    redactor: Redactor,
}

#[derive(Debug)]
struct Slot {
    request: LlmRequest,
    outcome: Outcome,
}

#[derive(Debug)]
enum Outcome {
    InProgress(Vec<Chunk>),
    Response(LlmResponse),
    Stream(Vec<Chunk>),
    Failed(String),
}

impl<C: LlmClient> RecordingClient<C> {
    /// Records calls to `inner` with the default [`RecordOptions`].
    pub fn new(inner: C) -> Self {
        let redactor = Redactor::new(&[]).expect(
            "the default secret patterns compile because the secrets unit tests check them",
        );
        RecordingClient {
            inner,
            calls: Arc::default(),
            options: RecordOptions::default(),
            redactor,
        }
    }

    /// Records calls to `inner` with `options`.
    ///
    /// # Errors
    ///
    /// [`Error::Pattern`] when a secret pattern is not a valid regex.
    pub fn with_options(inner: C, options: RecordOptions) -> Result<Self> {
        let redactor = Redactor::new(&options.secret_patterns)?;
        Ok(RecordingClient { inner, calls: Arc::default(), options, redactor })
    }

    /// The wrapped client.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// How many calls were made so far.
    pub fn len(&self) -> usize {
        lock(&self.calls).len()
    }

    /// Whether no call was made yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The recording as a script, secrets not yet redacted (saving redacts them).
    ///
    /// # Errors
    ///
    /// [`Error::CallInProgress`] when a streamed reply has not been read to its end.
    pub fn script(&self) -> Result<Script> {
        let calls = lock(&self.calls);
        let mut script = Script::new(self.inner.model().map(str::to_owned));
        for (idx, slot) in calls.iter().enumerate() {
            let mut call = RecordedCall {
                request_sha256: Some(fingerprint_with(&slot.request, &self.redactor)),
                request: self.options.store_requests.then(|| slot.request.clone()),
                response: None,
                chunks: None,
                error: None,
            };
            match &slot.outcome {
                Outcome::InProgress(_) => return Err(Error::CallInProgress { call: idx + 1 }),
                Outcome::Response(response) => call.response = Some(response.clone()),
                Outcome::Stream(chunks) => {
                    call.response = Some(LlmResponse::from_chunks(chunks));
                    call.chunks = Some(chunks.clone());
                }
                Outcome::Failed(message) => call.error = Some(message.clone()),
            }
            script.calls.push(call);
        }
        Ok(script)
    }

    /// Writes the recording to `path` atomically, secrets redacted (see
    /// [`write_script`](crate::write_script)).
    ///
    /// # Errors
    ///
    /// [`Error::CallInProgress`], [`Error::SecretSurvived`] (nothing written) or [`Error::Io`].
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let script = self.script()?;
        write_script(path.as_ref(), &script, &self.options.secret_patterns)
    }

    fn start(&self, request: &LlmRequest) -> usize {
        let mut calls = lock(&self.calls);
        calls.push(Slot { request: request.clone(), outcome: Outcome::InProgress(Vec::new()) });
        calls.len() - 1
    }
}

impl<C> fmt::Debug for RecordingClient<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordingClient")
            .field("calls", &lock(&self.calls).len())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<C: LlmClient> LlmClient for RecordingClient<C> {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError> {
        let idx = self.start(&request);
        let result = self.inner.complete(request).await;
        let outcome = match &result {
            Ok(response) => Outcome::Response(response.clone()),
            Err(err) => Outcome::Failed(atif_schema::error_chain(err)),
        };
        lock(&self.calls)[idx].outcome = outcome;
        result
    }

    fn model(&self) -> Option<&str> {
        self.inner.model()
    }

    fn run_failed(&self, error: &LlmError) {
        self.inner.run_failed(error);
    }

    async fn complete_stream(&self, request: LlmRequest) -> Result<ChunkStream, LlmError> {
        let idx = self.start(&request);
        let mut inner = match self.inner.complete_stream(request).await {
            Ok(stream) => stream,
            Err(err) => {
                lock(&self.calls)[idx].outcome = Outcome::Failed(atif_schema::error_chain(&err));
                return Err(err);
            }
        };
        let (sender, stream) = ChunkStream::channel(16);
        let calls = Arc::clone(&self.calls);
        // A forwarding task records each chunk before passing it on, and marks the call done
        // before the agent sees the end of the stream, so a save right after is complete.
        tokio::spawn(async move {
            loop {
                match inner.next().await {
                    Some(Ok(chunk)) => {
                        if let Outcome::InProgress(chunks) = &mut lock(&calls)[idx].outcome {
                            chunks.push(chunk.clone());
                        }
                        if sender.send(Ok(chunk)).await.is_err() {
                            return;
                        }
                    }
                    Some(Err(err)) => {
                        lock(&calls)[idx].outcome = Outcome::Failed(atif_schema::error_chain(&err));
                        let _ = sender.send(Err(err)).await;
                        return;
                    }
                    None => {
                        let slot = &mut lock(&calls)[idx];
                        if let Outcome::InProgress(chunks) = &mut slot.outcome {
                            slot.outcome = Outcome::Stream(std::mem::take(chunks));
                        }
                        return;
                    }
                }
            }
        });
        Ok(stream)
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of our locks leaves plain data behind; keep using it.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
