//! HTTP exchanges in a script: what an agent sent a model provider over HTTP and what came
//! back, with streamed replies kept as their server-sent events (no network code here).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One HTTP request an agent made to a model provider and the reply it got, as recorded by
/// `atif record` (the `atif-proxy` crate).
///
/// The reply is one of [`body`](Self::body) (a JSON body), [`text`](Self::text) (any other
/// body) or [`events`](Self::events) (a `text/event-stream` reply, one entry per event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct HttpExchange {
    /// The request method, upper case (`POST`).
    pub method: String,
    /// The request path with its query string (`/v1/messages?beta=true`), credentials in the
    /// query (Gemini's `key=`) removed.
    pub path: String,
    /// The request body as JSON (`null` when the request had none), secrets redacted and the
    /// recording's working and home directories replaced by `<cwd>` and `<home>`.
    #[serde(default)]
    pub request: Value,
    /// The reply's HTTP status.
    pub status: u16,
    /// The reply headers a replay repeats (today only `content-type`), names lower case.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The reply body, when it was JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// The reply body, when it was neither JSON nor an event stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The reply's server-sent events in order, when it was an event stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<SseEvent>>,
    /// Whether the event stream's lines ended with `\r\n` (Gemini's) rather than `\n`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub crlf: bool,
    /// Why the reply ended early, when the upstream cut it off midway (a replay cuts it at
    /// the same place).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl HttpExchange {
    /// An exchange of `method path` with the request body `request`, answered with `status`
    /// and no body yet.
    pub fn new(
        method: impl Into<String>,
        path: impl Into<String>,
        request: Value,
        status: u16,
    ) -> HttpExchange {
        HttpExchange {
            method: method.into(),
            path: path.into(),
            request,
            status,
            headers: BTreeMap::new(),
            body: None,
            text: None,
            events: None,
            crlf: false,
            cut: None,
        }
    }

    /// This exchange with a JSON reply body (and content type `application/json`).
    pub fn with_body(mut self, body: Value) -> HttpExchange {
        self.headers.insert("content-type".to_owned(), "application/json".to_owned());
        self.body = Some(body);
        self
    }

    /// This exchange with an event-stream reply (and content type `text/event-stream`).
    pub fn with_events(mut self, events: Vec<SseEvent>) -> HttpExchange {
        self.headers.insert("content-type".to_owned(), "text/event-stream".to_owned());
        self.events = Some(events);
        self
    }

    /// The reply's events in `text/event-stream` framing, with the recorded line ends.
    pub fn events_wire(&self) -> Vec<String> {
        let line_end = if self.crlf { "\r\n" } else { "\n" };
        self.events.iter().flatten().map(|event| event.to_wire_with(line_end)).collect()
    }

    /// The reply's `content-type` header, if recorded.
    pub fn content_type(&self) -> Option<&str> {
        self.headers.get("content-type").map(String::as_str)
    }

    /// The path without its query string.
    pub fn endpoint(&self) -> &str {
        self.path.split_once('?').map_or(self.path.as_str(), |(path, _)| path)
    }
}

/// One server-sent event of a streamed reply, or a block of the stream that carried no data.
///
/// `data` holds the event's data parsed as JSON when it is a JSON object or array, and the
/// raw text otherwise (`"[DONE]"`), so a reviewer reads JSON, and the event is written back
/// as it was received, framing included. Comment lines (`: ping`) and the `retry:` field are
/// kept too, so a replay sends the keep-alives and the reconnection time the provider sent,
/// in the same places; a block with only those has no `data` (`null`), and readers of the
/// reply skip it, as clients dispatch no event for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SseEvent {
    /// The block's comment lines, without their leading `:` (`: ping` is `" ping"`); written
    /// back before its fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<String>,
    /// The `event:` field, when the event had one (Anthropic's and OpenAI Responses' events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The `id:` field, when the event had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The `retry:` field (the reconnection time in milliseconds, as sent), when the block
    /// had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<String>,
    /// The data: a JSON object or array, or the raw text as a string; `null` for a block
    /// without data.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub data: Value,
}

impl SseEvent {
    /// An event named `event` (or unnamed) carrying `data`.
    pub fn new(event: Option<&str>, data: Value) -> Self {
        SseEvent {
            comments: Vec::new(),
            event: event.map(str::to_owned),
            id: None,
            retry: None,
            data,
        }
    }

    /// An event named `event` from the raw text of its data, stored as
    /// [`from_raw`](Self::from_raw) stores it.
    pub fn from_text(event: Option<&str>, data: &str) -> Self {
        SseEvent::from_raw(event.map(str::to_owned), None, data)
    }

    /// An event from its `event:` name and the raw text of its `data:` lines (joined by
    /// newlines).
    pub fn from_raw(event: Option<String>, id: Option<String>, data: &str) -> Self {
        let data = match serde_json::from_str::<Value>(data) {
            Ok(value @ (Value::Object(_) | Value::Array(_))) => value,
            _ => Value::String(data.to_owned()),
        };
        SseEvent { comments: Vec::new(), event, id, retry: None, data }
    }

    /// A block without data holding only `comments` (without their leading `:`).
    pub fn comment(comments: Vec<String>) -> Self {
        SseEvent { comments, event: None, id: None, retry: None, data: Value::Null }
    }

    /// Whether the block carried data, so a client dispatches it as an event.
    pub fn has_data(&self) -> bool {
        !self.data.is_null()
    }

    /// The raw text of the event's data, as it goes on the wire (empty without data).
    pub fn data_text(&self) -> String {
        match &self.data {
            Value::String(text) => text.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }

    /// The event in `text/event-stream` framing: its comment lines, `event:`, `id:` and
    /// `retry:` lines when present, one `data:` line per line of data, and the blank line that
    /// ends an event.
    pub fn to_wire(&self) -> String {
        self.to_wire_with("\n")
    }

    /// As [`to_wire`](Self::to_wire), each line ended with `line_end` (`"\r\n"` for Gemini).
    pub fn to_wire_with(&self, line_end: &str) -> String {
        let mut out = String::new();
        for comment in &self.comments {
            out.push(':');
            out.push_str(comment);
            out.push_str(line_end);
        }
        for (field, value) in [("event", &self.event), ("id", &self.id), ("retry", &self.retry)] {
            if let Some(value) = value {
                out.push_str(field);
                out.push_str(": ");
                out.push_str(value);
                out.push_str(line_end);
            }
        }
        if self.has_data() {
            for line in self.data_text().split('\n') {
                out.push_str("data: ");
                out.push_str(line);
                out.push_str(line_end);
            }
        }
        out.push_str(line_end);
        out
    }
}

/// An incremental `text/event-stream` parser: feed it bytes as they arrive, take the events
/// completed so far.
///
/// It follows the WHATWG rules that matter for model providers: `\n`, `\r\n` or `\r` line
/// ends, `field: value` with one optional space, several `data:` lines joined by newlines, and
/// an event dispatched at a blank line. Comment lines (`: ping`) and `retry:` are kept with
/// their block, and a block without data but with comments or fields becomes an
/// [`SseEvent`] without data, so the stream can be written back as it came.
#[derive(Debug, Default, Clone)]
pub struct SseParser {
    line: Vec<u8>,
    after_cr: bool,
    crlf: Option<bool>,
    comments: Vec<String>,
    event: Option<String>,
    id: Option<String>,
    retry: Option<String>,
    data: Option<String>,
    done: Vec<SseEvent>,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next bytes of the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            match byte {
                b'\n' if self.after_cr => {
                    self.after_cr = false;
                    self.crlf.get_or_insert(true);
                }
                b'\n' | b'\r' => {
                    if byte == b'\n' {
                        self.crlf.get_or_insert(false);
                    }
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    self.end_line(&String::from_utf8_lossy(&line));
                }
                _ => {
                    self.after_cr = false;
                    self.line.push(byte);
                }
            }
        }
    }

    /// Whether the stream's first line ended with `\r\n`.
    pub fn crlf(&self) -> bool {
        self.crlf.unwrap_or(false)
    }

    /// The events completed since the last call.
    pub fn take_events(&mut self) -> Vec<SseEvent> {
        std::mem::take(&mut self.done)
    }

    /// Whether bytes of an event not yet ended by a blank line are pending (the stream was cut
    /// inside an event when this is true at its end).
    pub fn has_partial_event(&self) -> bool {
        !self.line.is_empty() || self.data.is_some() || self.event.is_some()
    }

    fn end_line(&mut self, line: &str) {
        if line.is_empty() {
            let event = self.event.take();
            let id = self.id.take();
            let retry = self.retry.take();
            let comments = std::mem::take(&mut self.comments);
            let mut block = match self.data.take() {
                Some(data) => SseEvent::from_raw(event, id, &data),
                None if event.is_none()
                    && id.is_none()
                    && retry.is_none()
                    && comments.is_empty() =>
                {
                    return;
                }
                None => SseEvent { event, id, ..SseEvent::comment(Vec::new()) },
            };
            block.comments = comments;
            block.retry = retry;
            self.done.push(block);
            return;
        }
        if let Some(comment) = line.strip_prefix(':') {
            self.comments.push(comment.to_owned());
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "id" => self.id = Some(value.to_owned()),
            "retry" => self.retry = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            _ => {}
        }
    }
}

/// Parses a whole `text/event-stream` body into its events (an event not ended by a blank
/// line at the end is kept too).
pub fn parse_sse(bytes: &[u8]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    parser.feed(bytes);
    if parser.has_partial_event() {
        parser.feed(b"\n\n");
    }
    parser.take_events()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn events_survive_any_split_of_the_stream() {
        let wire = "event: message_start\r\ndata: {\"a\":1}\r\n\r\n: ping\n\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n";
        let whole = parse_sse(wire.as_bytes());
        assert_eq!(
            whole,
            vec![
                SseEvent::new(Some("message_start"), json!({"a": 1})),
                SseEvent::comment(vec![" ping".to_owned()]),
                SseEvent::from_text(None, "line1\nline2"),
                SseEvent::from_text(None, "[DONE]"),
            ]
        );
        for split in 0..wire.len() {
            let mut parser = SseParser::new();
            parser.feed(&wire.as_bytes()[..split]);
            let mut events = parser.take_events();
            parser.feed(&wire.as_bytes()[split..]);
            events.extend(parser.take_events());
            assert_eq!(events, whole, "split at {split}");
        }
    }

    #[test]
    fn an_event_is_written_back_with_its_framing() {
        let events = parse_sse(b"event: x\ndata: {\"b\":[1,2]}\n\ndata: [DONE]\n\n");
        let wire: String = events.iter().map(SseEvent::to_wire).collect();
        assert_eq!(wire, "event: x\ndata: {\"b\":[1,2]}\n\ndata: [DONE]\n\n");
        assert_eq!(parse_sse(wire.as_bytes()), events);
    }

    #[test]
    fn comments_and_retry_are_kept_in_their_blocks_and_written_back_in_order() {
        let wire = ": connected\nretry: 3000\n\n: ping\n\n: note\nevent: x\ndata: {\"a\":1}\n\nid: 9\n\ndata: [DONE]\n\n";
        let events = parse_sse(wire.as_bytes());
        let mut first = SseEvent::comment(vec![" connected".to_owned()]);
        first.retry = Some("3000".to_owned());
        let mut third = SseEvent::new(Some("x"), json!({"a": 1}));
        third.comments = vec![" note".to_owned()];
        let mut fourth = SseEvent::comment(Vec::new());
        fourth.id = Some("9".to_owned());
        assert_eq!(
            events,
            vec![
                first,
                SseEvent::comment(vec![" ping".to_owned()]),
                third,
                fourth,
                SseEvent::from_text(None, "[DONE]"),
            ]
        );
        assert_eq!(events.iter().filter(|event| event.has_data()).count(), 2);
        let written: String = events.iter().map(SseEvent::to_wire).collect();
        assert_eq!(written, wire);
        let text = serde_json::to_string(&events[0]).unwrap();
        assert_eq!(text, r#"{"comments":[" connected"],"retry":"3000"}"#);
        assert_eq!(serde_json::from_str::<SseEvent>(&text).unwrap(), events[0]);
    }

    #[test]
    fn crlf_line_ends_are_noticed_and_written_back() {
        let wire = "data: {\"a\":1}\r\n\r\ndata: {\"a\":2}\r\n\r\n";
        let mut parser = SseParser::new();
        parser.feed(wire.as_bytes());
        assert!(parser.crlf());
        let mut exchange =
            HttpExchange::new("POST", "/x", Value::Null, 200).with_events(parser.take_events());
        exchange.crlf = true;
        assert_eq!(exchange.events_wire().concat(), wire);
        let mut lf = SseParser::new();
        lf.feed(b"data: x\n\n");
        assert!(!lf.crlf());
    }

    #[test]
    fn json_scalars_stay_raw_text_so_they_are_written_back_unchanged() {
        let event = SseEvent::from_raw(None, None, "\"quoted\"");
        assert_eq!(event.data, json!("\"quoted\""));
        assert_eq!(event.to_wire(), "data: \"quoted\"\n\n");
    }
}
