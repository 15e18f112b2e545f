//! The journal of a run: what the server saw (the traffic in order of arrival, the requests
//! served) and what went wrong (failures and warnings, capped), written by the request handler
//! and the recorder alike, and read by the verdict.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use atif_wire::{HttpExchange, Protocol};
use axum::body::Bytes;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;

use crate::clean::Cleaner;
use crate::limits::BodyError;
use crate::protocol::error_body;
use crate::reply::json_reply;
use crate::verdict::{Capped, MAX_KEPT};

/// What the server saw and what went wrong, shared by every request of a run.
#[derive(Debug)]
pub(crate) struct Journal {
    quiet: bool,
    pub(crate) served: AtomicUsize,
    next_seq: AtomicU64,
    /// What the agent asked and got, with the number of the request's arrival.
    pub(crate) traffic: Mutex<Vec<(u64, Logged)>>,
    pub(crate) errors: Mutex<Capped>,
    pub(crate) warnings: Mutex<Capped>,
    /// Every message passes it before it is said, kept or sent.
    cleaner: Cleaner,
}

/// One exchange of the traffic log.
#[derive(Debug, Clone)]
pub(crate) enum Logged {
    /// What a recording forwarded and got back.
    Recorded(HttpExchange),
    /// A request a replay answered with the tape's exchange `index`: its path with query and
    /// its body as the agent sent them, kept as bytes (smaller than its JSON tree) and read
    /// again, with the directories replaced, only when the log is read.
    Replayed { index: usize, path: String, body: Bytes },
}

impl Journal {
    /// An empty journal; `quiet` keeps failures off standard error.
    pub(crate) fn new(quiet: bool) -> Journal {
        Journal {
            quiet,
            served: AtomicUsize::new(0),
            next_seq: AtomicU64::new(0),
            traffic: Mutex::new(Vec::new()),
            errors: Mutex::new(Capped::default()),
            warnings: Mutex::new(Capped::default()),
            cleaner: Cleaner::new(),
        }
    }

    /// `message` with its secrets redacted and the userinfo of its URLs masked, as everything
    /// the server says.
    pub(crate) fn clean(&self, message: String) -> String {
        self.cleaner.clean(message)
    }

    /// Records a failure that makes the run not exact, and prints it.
    pub(crate) fn fail(&self, message: String) {
        let message = self.cleaner.clean(message);
        let mut errors = self.errors.lock().unwrap_or_else(PoisonError::into_inner);
        let line = message.clone();
        if errors.push(message) {
            self.say(&line);
        } else if errors.just_filled() {
            self.say(&format!("more than {MAX_KEPT} failures: the rest are only counted"));
        }
    }

    /// Records a warning, which leaves the run exact, and prints it.
    pub(crate) fn warn(&self, message: String) {
        let message = self.cleaner.clean(message);
        let mut warnings = self.warnings.lock().unwrap_or_else(PoisonError::into_inner);
        let line = format!("warning: {message}");
        if warnings.push(message) {
            self.say(&line);
        } else if warnings.just_filled() {
            self.say(&format!("more than {MAX_KEPT} warnings: the rest are only counted"));
        }
    }

    /// A failed request: recorded, printed, and answered with a non-retryable error in the
    /// provider's own shape.
    pub(crate) fn failure(
        &self,
        protocol: Protocol,
        status: StatusCode,
        message: String,
    ) -> Response {
        let message = self.cleaner.clean(message);
        let body = error_body(protocol, status.as_u16(), &message);
        self.fail(message);
        let mut response = json_reply(status, &body);
        // Both OpenAI's and Anthropic's SDKs read this header before their retry rules.
        response.headers_mut().insert("x-should-retry", HeaderValue::from_static("false"));
        response
    }

    /// Counts a request answered.
    pub(crate) fn served(&self) {
        self.served.fetch_add(1, Ordering::Relaxed);
    }

    /// The number of the next request to arrive.
    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed)
    }

    /// Notes an exchange of the request that arrived `seq`th.
    pub(crate) fn log(&self, seq: u64, exchange: Logged) {
        self.traffic.lock().unwrap_or_else(PoisonError::into_inner).push((seq, exchange));
    }

    /// Prints `line` on standard error, unless quiet.
    #[allow(clippy::print_stderr, reason = "failure lines on stderr are the server's interface")]
    pub(crate) fn say(&self, line: &str) {
        if !self.quiet {
            eprintln!("atif proxy: {line}");
        }
    }
}

/// Answers a request whose body was not read: too large (413), over the budget of all bodies
/// (503), paused too long (408), or the connection failed (400).
pub(crate) fn body_failure(
    journal: &Journal,
    protocol: Protocol,
    method: &Method,
    path: &str,
    err: BodyError,
) -> Response {
    let message = format!("cannot read the request body of {method} {path}: {err}");
    journal.failure(protocol, err.status(), message)
}

/// Answers a request whose body is not JSON; `err` says what is wrong and where.
pub(crate) fn not_json(
    journal: &Journal,
    protocol: Protocol,
    method: &Method,
    path: &str,
    err: &str,
) -> Response {
    let message = format!(
        "the request body of {method} {path} is not valid JSON ({err}); the agent must send a \
         JSON body"
    );
    journal.failure(protocol, StatusCode::BAD_REQUEST, message)
}
