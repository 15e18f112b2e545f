//! What bounds a request body: its own size, the bytes all requests hold at once, and how
//! long the client may pause while sending it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use futures_util::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::reply::seconds;

/// The default limit on one request body: 256 MiB (agents with long contexts send a few MB).
pub const DEFAULT_MAX_BODY_BYTES: u64 = 256 * 1024 * 1024;

/// The default limit on the request bodies held at once, across all requests: 1 GiB, four
/// bodies of the largest size.
pub const DEFAULT_MAX_BUFFERED_BYTES: u64 = 1024 * 1024 * 1024;

/// The default longest pause while a client sends a request body: 30 s.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The default longest time a client may take over a request's head: 10 s.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The default longest idle spell of a kept-alive connection between requests: 60 s.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The default longest wait for the upstream's reply to begin (its status and headers):
/// 10 minutes, since a reasoning model may think that long before it answers.
pub const DEFAULT_UPSTREAM_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(600);

/// The default longest silence of the upstream within a reply (between two events of a
/// stream): 10 minutes too, since a reasoning model may think silently between a stream's
/// first event and its next.
pub const DEFAULT_UPSTREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The bytes the server has left for request bodies, shared by all requests, in KiB.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    semaphore: Arc<Semaphore>,
    total_kib: u32,
}

/// Why a body was not read.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Larger than the limit on one body.
    TooLarge { limit: u64 },
    /// The bodies in flight already hold the limit on all of them.
    Busy { limit: u64 },
    /// The client paused longer than the timeout.
    Idle { timeout: Duration },
    /// The connection failed.
    Read(String),
}

impl BodyError {
    /// The status of the reply to a request whose body was not read for this reason: 413,
    /// 503, 408, or 400 when the connection failed.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            BodyError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
            BodyError::Idle { .. } => StatusCode::REQUEST_TIMEOUT,
            BodyError::Read(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// Why, as the failure says it, naming the flag that sets the limit.
impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::TooLarge { limit } => {
                write!(f, "it is larger than the limit of {limit} bytes (--max-body-bytes)")
            }
            BodyError::Busy { limit } => write!(
                f,
                "the request bodies in flight already hold the limit of {limit} bytes \
                 (--max-buffered-bytes)"
            ),
            BodyError::Idle { timeout } => {
                write!(f, "the client sent nothing for {} (--body-read-timeout)", seconds(*timeout))
            }
            BodyError::Read(err) => f.write_str(err),
        }
    }
}

impl Budget {
    /// A budget of `max_bytes` across all requests (rounded down to KiB, at most 4 TiB).
    pub(crate) fn new(max_bytes: u64) -> Budget {
        let total_kib = u32::try_from(max_bytes / 1024).unwrap_or(u32::MAX);
        let permits = usize::try_from(total_kib).unwrap_or(usize::MAX).min(Semaphore::MAX_PERMITS);
        Budget { semaphore: Arc::new(Semaphore::new(permits)), total_kib }
    }

    fn limit(&self) -> u64 {
        u64::from(self.total_kib) * 1024
    }
}

/// A body being read: the bytes so far, and the share of the budget they hold.
#[derive(Debug)]
pub(crate) struct Reading {
    budget: Budget,
    held: Option<OwnedSemaphorePermit>,
    held_kib: u32,
}

impl Reading {
    /// A body of which nothing is read yet, within `budget`.
    pub(crate) fn new(budget: &Budget) -> Reading {
        Reading { budget: budget.clone(), held: None, held_kib: 0 }
    }

    /// Holds enough of the budget for `bytes` in all, or fails at once: waiting could leave
    /// every request holding half of what it needs.
    pub(crate) fn hold(&mut self, bytes: u64) -> Result<(), BodyError> {
        let busy = BodyError::Busy { limit: self.budget.limit() };
        let needed = u32::try_from(bytes.div_ceil(1024))
            .map_err(|_| BodyError::Busy { limit: self.budget.limit() })?;
        if needed <= self.held_kib {
            return Ok(());
        }
        let more = needed - self.held_kib;
        let permit =
            self.budget.semaphore.clone().try_acquire_many_owned(more).map_err(|_| busy)?;
        match &mut self.held {
            Some(held) => held.merge(permit),
            None => self.held = Some(permit),
        }
        self.held_kib = needed;
        Ok(())
    }
}

/// Reads `body` whole: at most `max_bytes`, within `budget` (held until the returned permit is
/// dropped), with no pause longer than `idle`. A `Content-Length` over a limit fails before a
/// byte is read.
pub(crate) async fn read_body(
    body: Body,
    content_length: Option<u64>,
    max_bytes: u64,
    idle: Duration,
    budget: &Budget,
) -> Result<(Bytes, Option<OwnedSemaphorePermit>), BodyError> {
    let mut reading = Reading::new(budget);
    if let Some(length) = content_length {
        if length > max_bytes {
            return Err(BodyError::TooLarge { limit: max_bytes });
        }
        reading.hold(length)?;
    }
    let capacity = usize::try_from(content_length.unwrap_or(0)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity);
    let mut stream = body.into_data_stream();
    loop {
        let chunk = match tokio::time::timeout(idle, stream.next()).await {
            Err(_) => return Err(BodyError::Idle { timeout: idle }),
            Ok(None) => break,
            Ok(Some(Err(err))) => return Err(BodyError::Read(err.to_string())),
            Ok(Some(Ok(chunk))) => chunk,
        };
        let total = bytes.len() as u64 + chunk.len() as u64;
        if total > max_bytes {
            return Err(BodyError::TooLarge { limit: max_bytes });
        }
        reading.hold(total)?;
        bytes.extend_from_slice(&chunk);
    }
    Ok((Bytes::from(bytes), reading.held))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_and_given_back() {
        let budget = Budget::new(10 * 1024);
        let mut first = Reading::new(&budget);
        first.hold(6 * 1024).unwrap();
        first.hold(6 * 1024 + 1).unwrap();
        let mut second = Reading::new(&budget);
        assert!(matches!(second.hold(4 * 1024), Err(BodyError::Busy { limit: 10240 })));
        second.hold(3 * 1024).unwrap();
        drop(first);
        second.hold(10 * 1024).unwrap();
    }
}
