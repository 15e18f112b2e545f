//! A request body being recorded: forwarded upstream chunk by chunk as it arrives, and read
//! as JSON on the side by `json_reader`, so the server never holds the whole body beside its
//! JSON (a 200 MB prompt costs about 200 MB, not 400).
//!
//! The body's last chunk is held back until its JSON has been read whole: a body that is not
//! JSON, or breaks a limit, never reaches the upstream complete. The upstream request is then
//! aborted and the agent gets the same answer as in replay (400, 413, 503 or 408).

use std::pin::Pin;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, BodyDataStream, Bytes};
use futures_util::{FutureExt, Stream, StreamExt};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::json_reader::{ChunkReader, read_value};
use crate::limits::{BodyError, Budget, Reading};

/// What bounds a body being recorded: `--max-body-bytes`, the budget of all bodies in flight,
/// and the longest pause of the client.
#[derive(Debug, Clone)]
pub(crate) struct UploadLimits {
    pub(crate) max_bytes: u64,
    pub(crate) idle: Duration,
    pub(crate) budget: Budget,
}

/// The body on its way upstream; give it to the upstream request as its body.
pub(crate) struct Upload {
    incoming: BodyDataStream,
    to_reader: Option<Sender<Bytes>>,
    /// Whether the JSON reader read the whole body as JSON, once it has.
    read_whole: Option<oneshot::Receiver<bool>>,
    held_back: Option<Bytes>,
    total: u64,
    max_bytes: u64,
    reading: Reading,
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
    failure: Arc<Mutex<Option<BodyError>>>,
    finished: bool,
}

/// The body's JSON, or why there is none, once the upload has ended.
#[derive(Debug)]
pub(crate) struct Uploaded {
    json: JoinHandle<Result<Value, String>>,
    failure: Arc<Mutex<Option<BodyError>>>,
}

/// Why a recorded body was not forwarded whole.
#[derive(Debug)]
pub(crate) enum UploadError {
    /// A limit, a pause or the connection (as when a body is read whole).
    Body(BodyError),
    /// The body is not JSON: what is wrong and where.
    NotJson(String),
}

/// Starts recording `body`: the returned [`Upload`] forwards it, the [`Uploaded`] gives its JSON.
///
/// # Errors
/// [`BodyError::TooLarge`] or [`BodyError::Busy`] at once when the `Content-Length` is over a
/// limit, before a byte is read.
pub(crate) fn upload(
    body: Body,
    content_length: Option<u64>,
    limits: &UploadLimits,
) -> Result<(Upload, Uploaded), BodyError> {
    let mut reading = Reading::new(&limits.budget);
    if let Some(length) = content_length {
        if length > limits.max_bytes {
            return Err(BodyError::TooLarge { limit: limits.max_bytes });
        }
        reading.hold(length)?;
    }
    let (to_reader, chunks) = std::sync::mpsc::channel();
    let (verdict, read_whole) = oneshot::channel();
    let json = tokio::task::spawn_blocking(move || {
        let json = read_value(&mut ChunkReader::new(chunks));
        let _ = verdict.send(json.is_ok());
        json
    });
    let failure = Arc::new(Mutex::new(None));
    let upload = Upload {
        incoming: body.into_data_stream(),
        to_reader: Some(to_reader),
        read_whole: Some(read_whole),
        held_back: None,
        total: 0,
        max_bytes: limits.max_bytes,
        reading,
        idle: limits.idle,
        deadline: Box::pin(tokio::time::sleep(limits.idle)),
        failure: failure.clone(),
        finished: false,
    };
    Ok((upload, Uploaded { json, failure }))
}

impl Uploaded {
    /// The body's JSON once the upload has ended (or been dropped, when the upstream stopped
    /// reading it), or why it failed.
    pub(crate) async fn json(self) -> Result<Value, UploadError> {
        let json = self.json.await;
        // A limit the body broke, or a connection that failed, is why its JSON ended early.
        let failure = self.failure.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(err) = failure {
            return Err(UploadError::Body(err));
        }
        match json {
            Ok(Ok(json)) => Ok(json),
            Ok(Err(err)) => Err(UploadError::NotJson(err)),
            Err(err) => Err(UploadError::NotJson(format!("the JSON reader failed: {err}"))),
        }
    }
}

impl Upload {
    fn fail(&mut self, err: BodyError) -> Poll<Option<std::io::Result<Bytes>>> {
        let message = format!("{err:?}");
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(err);
        self.to_reader = None;
        self.held_back = None;
        self.finished = true;
        Poll::Ready(Some(Err(std::io::Error::other(message))))
    }

    /// After the last chunk: the held-back chunk once the JSON reader accepted the body.
    fn poll_end(&mut self, cx: &mut Context<'_>) -> Poll<Option<std::io::Result<Bytes>>> {
        let Some(read_whole) = &mut self.read_whole else { return Poll::Ready(None) };
        let accepted = match read_whole.poll_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(accepted) => accepted.unwrap_or(false),
        };
        self.read_whole = None;
        self.finished = true;
        if !accepted {
            self.held_back = None;
            return Poll::Ready(Some(Err(std::io::Error::other("the request body is not JSON"))));
        }
        Poll::Ready(self.held_back.take().map(Ok))
    }
}

impl Stream for Upload {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.finished {
                return Poll::Ready(None);
            }
            if this.to_reader.is_none() {
                return this.poll_end(cx);
            }
            let chunk = match this.incoming.poll_next_unpin(cx) {
                Poll::Pending => {
                    if this.deadline.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    return this.fail(BodyError::Idle { timeout: this.idle });
                }
                Poll::Ready(Some(Err(err))) => return this.fail(BodyError::Read(err.to_string())),
                Poll::Ready(None) => {
                    // The reader sees the end of input once its sender is gone.
                    this.to_reader = None;
                    continue;
                }
                Poll::Ready(Some(Ok(chunk))) => chunk,
            };
            let next = tokio::time::Instant::now() + this.idle;
            this.deadline.as_mut().reset(next);
            this.total += chunk.len() as u64;
            if this.total > this.max_bytes {
                return this.fail(BodyError::TooLarge { limit: this.max_bytes });
            }
            if let Err(err) = this.reading.hold(this.total) {
                return this.fail(err);
            }
            if let Some(to_reader) = &this.to_reader {
                // A reader that stopped early has found the body is not JSON: the end says so.
                let _ = to_reader.send(chunk.clone());
            }
            if let Some(previous) = this.held_back.replace(chunk) {
                return Poll::Ready(Some(Ok(previous)));
            }
        }
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        // Dropped before its end: the upstream stopped reading the body (it answered early,
        // as a rate limiter may, or could not be reached). The rest is still read, within the
        // same limits, so that the recording holds the whole request.
        let Some(to_reader) = self.to_reader.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let mut rest = Rest {
            incoming: std::mem::replace(&mut self.incoming, Body::empty().into_data_stream()),
            to_reader,
            total: self.total,
            max_bytes: self.max_bytes,
            reading: std::mem::replace(&mut self.reading, Reading::new(&Budget::new(0))),
            idle: self.idle,
            failure: self.failure.clone(),
        };
        runtime.spawn(async move { rest.read().await });
    }
}

/// What is left of a body the upstream stopped reading, read for the recording alone.
struct Rest {
    incoming: BodyDataStream,
    to_reader: Sender<Bytes>,
    total: u64,
    max_bytes: u64,
    reading: Reading,
    idle: Duration,
    failure: Arc<Mutex<Option<BodyError>>>,
}

impl Rest {
    async fn read(&mut self) {
        let err = loop {
            let chunk = match tokio::time::timeout(self.idle, self.incoming.next()).await {
                Err(_) => break BodyError::Idle { timeout: self.idle },
                Ok(None) => return,
                Ok(Some(Err(err))) => break BodyError::Read(err.to_string()),
                Ok(Some(Ok(chunk))) => chunk,
            };
            self.total += chunk.len() as u64;
            if self.total > self.max_bytes {
                break BodyError::TooLarge { limit: self.max_bytes };
            }
            if let Err(err) = self.reading.hold(self.total) {
                break err;
            }
            let _ = self.to_reader.send(chunk);
        };
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(err);
    }
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload").field("total", &self.total).finish_non_exhaustive()
    }
}
