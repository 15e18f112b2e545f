//! Small HTTP helpers that the request handler and the recorder share: a JSON reply, the
//! headers never forwarded, and durations as messages say them.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

/// A reply of `status` with `body` as JSON.
pub(crate) fn json_reply(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Headers that describe one hop of a connection, never forwarded.
pub(crate) fn is_hop_header(name: &str) -> bool {
    matches!(
        name,
        "host"
            | "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authorization"
            | "proxy-authenticate"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "content-length"
    )
}

/// `duration` for a message: `30 s`, `0.5 s`.
pub(crate) fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}
