//! A minimal HTTP/1.1 client over a raw TCP stream, so the tests see the exact bytes sent.

use std::io::{Read, Write};
use std::net::SocketAddr;

use serde_json::Value;

/// A response as received: status, headers (lowercase names), and the body with the chunked
/// transfer coding removed; `complete` is false when the chunked body had no final chunk.
#[derive(Debug)]
pub(crate) struct Raw {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
    pub(crate) complete: bool,
}

impl Raw {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("{err}: {}", self.body))
    }

    /// The SSE events of the body: (event name, data) pairs, split on blank lines with either
    /// line ending.
    pub(crate) fn events(&self) -> Vec<(Option<String>, String)> {
        let normalized = self.body.replace("\r\n", "\n");
        normalized
            .split("\n\n")
            .filter(|block| !block.trim().is_empty())
            .map(|block| {
                let mut event = None;
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(name) = line.strip_prefix("event: ") {
                        event = Some(name.to_owned());
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        data.push_str(value);
                    } else {
                        panic!("unexpected SSE line {line:?} in {:?}", self.body);
                    }
                }
                (event, data)
            })
            .collect()
    }
}

pub(crate) fn post(addr: SocketAddr, path: &str, body: &Value) -> Raw {
    request(addr, "POST", path, &[], &body.to_string())
}

pub(crate) fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Raw {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() {
        head.push_str(&format!(
            "content-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        ));
    }
    stream.write_all(format!("{head}\r\n{body}").as_bytes()).unwrap();
    let mut bytes = Vec::new();
    // A cut stream ends with a reset or an early close; what arrived before is what counts.
    let _ = stream.read_to_end(&mut bytes);
    parse(&String::from_utf8(bytes).unwrap())
}

fn parse(text: &str) -> Raw {
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(": ").unwrap();
            (name.to_ascii_lowercase(), value.to_owned())
        })
        .collect();
    let chunked =
        headers.iter().any(|(name, value)| name == "transfer-encoding" && value == "chunked");
    if !chunked {
        return Raw { status, headers, body: rest.to_owned(), complete: true };
    }
    let mut body = String::new();
    let mut rest = rest;
    loop {
        let Some((size, after)) = rest.split_once("\r\n") else {
            return Raw { status, headers, body, complete: false };
        };
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            return Raw { status, headers, body, complete: true };
        }
        if after.len() < size + 2 {
            body.push_str(&after[..after.len().min(size)]);
            return Raw { status, headers, body, complete: false };
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
}
