//! Who may talk to the server: the `Host` and `Origin` checks that keep web pages out, and the
//! content type a model endpoint accepts, and the token of the control endpoints.
//!
//! A page open in the developer's browser can send "simple" cross-site requests to any
//! address, loopback included, without a preflight; after DNS rebinding its own host name
//! points at 127.0.0.1 and it can read the replies too. Browsers always name the page in
//! `Origin` on a cross-site POST, and always send the host name the page used in `Host`, so a
//! request is answered only when its `Host` is this server's own address and its `Origin`, if
//! any, is a loopback origin.

use std::net::{IpAddr, SocketAddr};

use axum::http::{HeaderMap, HeaderValue, Uri, header};

use crate::{Error, Result};

/// The addresses a request may name in `Host`, from the address the server listens on, and
/// the token the control endpoints (`/_atif/*`) require.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    addr: SocketAddr,
    token: String,
}

/// How many characters of a refused header value a message quotes.
const QUOTED_CHARS: usize = 80;

impl Access {
    /// The rules for a server listening on `addr` (its actual port, not 0) whose control
    /// endpoints require `token`.
    pub(crate) fn new(addr: SocketAddr, token: String) -> Access {
        Access { addr, token }
    }

    /// Why a request to a control endpoint is refused (401): it does not carry the run's
    /// token, as `x-atif-token: TOKEN` or `Authorization: Bearer TOKEN`.
    pub(crate) fn control_refusal(&self, headers: &HeaderMap) -> Option<String> {
        let given = |value: &HeaderValue| value.to_str().ok().map(str::trim).map(str::to_owned);
        let header_token = headers.get("x-atif-token").and_then(given);
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(given)
            .and_then(|value| value.strip_prefix("Bearer ").map(|token| token.trim().to_owned()));
        let token = header_token.or(bearer);
        match token {
            Some(token) if token == self.token => None,
            Some(_) => Some(
                "its control token is not this run's; the control endpoints need the token \
                 `atif serve` prints, or $ATIF_PROXY_TOKEN under `atif record` and `atif replay`"
                    .to_owned(),
            ),
            None => Some(
                "the control endpoints need the run's token, as `x-atif-token: TOKEN` or \
                 `Authorization: Bearer TOKEN`: the one `atif serve` prints, or \
                 $ATIF_PROXY_TOKEN under `atif record` and `atif replay`"
                    .to_owned(),
            ),
        }
    }

    /// Why a request with these `headers` and `uri` is refused (403), or `None` when it may be
    /// answered.
    pub(crate) fn refusal(&self, headers: &HeaderMap, uri: &Uri) -> Option<String> {
        let host = match uri.authority() {
            // An absolute-form request line names the host itself.
            Some(authority) => Some(authority.as_str().to_owned()),
            None => {
                headers.get(header::HOST).map(|value| value.to_str().unwrap_or_default().to_owned())
            }
        };
        let Some(host) = host else {
            return Some(format!(
                "it has no Host header; this server answers only requests to {}",
                self.expected()
            ));
        };
        if !self.is_own_host(&host) {
            return Some(format!(
                "its Host `{}` is not this server's address (a web page after DNS rebinding?); \
                 this server answers only requests to {}",
                quoted(&host),
                self.expected()
            ));
        }
        for origin in headers.get_all(header::ORIGIN) {
            if !is_loopback_origin(origin) {
                return Some(format!(
                    "its Origin `{}` is a web page, not a program on this machine; this server \
                     answers no cross-site request",
                    quoted(origin.to_str().unwrap_or("(not text)"))
                ));
            }
        }
        None
    }

    /// Whether `host` (a `Host` header: name or address, and port) names this server.
    fn is_own_host(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(host) else { return false };
        if port.unwrap_or(80) != self.addr.port() {
            return false;
        }
        if name.eq_ignore_ascii_case("localhost") {
            return true;
        }
        let Ok(ip) = name.parse::<IpAddr>() else {
            // A host name other than localhost is what DNS rebinding needs.
            return false;
        };
        let bound = self.addr.ip();
        // An address literal cannot be rebound. Bound to every interface, the server is
        // reached at any of the machine's addresses, which it does not know.
        ip.is_loopback() || ip == bound || bound.is_unspecified()
    }

    /// The addresses a request may name, for messages.
    fn expected(&self) -> String {
        let port = self.addr.port();
        let mut names = format!("127.0.0.1:{port}, localhost:{port} and [::1]:{port}");
        let bound = self.addr.ip();
        if bound.is_unspecified() {
            names.push_str(&format!(
                " (or any address of this machine, as a number, on port {port})"
            ));
        } else if !bound.is_loopback() {
            names.push_str(&format!(" (or {})", self.addr));
        }
        names
    }
}

/// A new control token: 128 random bits from the operating system, in hex.
pub(crate) fn new_token() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|source| Error::Token { source })?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Whether a request body's `Content-Type` is JSON: `application/json`, or a `+json` type,
/// with any parameters.
pub(crate) fn is_json_content_type(value: Option<&HeaderValue>) -> bool {
    let Some(value) = value.and_then(|value| value.to_str().ok()) else { return false };
    let media_type = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    media_type == "application/json"
        || media_type.strip_prefix("application/").is_some_and(|sub| sub.ends_with("+json"))
}

/// The content type of a request, quoted for a message.
pub(crate) fn content_type_text(value: Option<&HeaderValue>) -> String {
    match value {
        None => "no Content-Type".to_owned(),
        Some(value) => format!("Content-Type `{}`", quoted(value.to_str().unwrap_or("(not text)"))),
    }
}

/// Splits `host[:port]` (IPv6 in brackets); `None` when it does not read as one.
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        return match after {
            "" => Some((name, None)),
            _ => Some((name, Some(after.strip_prefix(':')?.parse().ok()?))),
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) => Some((name, Some(port.parse().ok()?))),
        None => Some((host, None)),
    }
}

/// Whether `origin` is a page served from this machine's loopback (any port).
fn is_loopback_origin(origin: &HeaderValue) -> bool {
    let Ok(origin) = origin.to_str() else { return false };
    let Some(host) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"))
    else {
        // `null` (a sandboxed page, a file) and every other scheme.
        return false;
    };
    let Some((name, _)) = split_host(host) else { return false };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `text` cut to a length a message can quote, with control characters shown escaped.
fn quoted(text: &str) -> String {
    let mut quoted: String =
        text.chars().take(QUOTED_CHARS).flat_map(char::escape_default).collect();
    if text.chars().count() > QUOTED_CHARS {
        quoted.push('…');
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(listen: &str, host: Option<&str>, origin: Option<&str>) -> Option<String> {
        let access = Access::new(listen.parse().unwrap(), "t0ken".to_owned());
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        access.refusal(&headers, &Uri::from_static("/v1/chat/completions"))
    }

    #[test]
    fn the_listening_address_by_any_loopback_name_is_answered() {
        for host in ["127.0.0.1:4000", "localhost:4000", "LocalHost:4000", "[::1]:4000"] {
            assert_eq!(refusal("127.0.0.1:4000", Some(host), None), None, "{host}");
        }
        for origin in ["http://127.0.0.1:4000", "http://localhost:3000", "https://[::1]"] {
            assert_eq!(refusal("127.0.0.1:4000", Some("localhost:4000"), Some(origin)), None);
        }
        assert_eq!(refusal("127.0.0.1:80", Some("127.0.0.1"), None), None);
    }

    #[test]
    fn other_hosts_ports_and_web_origins_are_refused() {
        let refused = |host, origin| refusal("127.0.0.1:4000", host, origin).is_some();
        assert!(refused(Some("rebind.attacker.test:4000"), None));
        assert!(refused(Some("127.0.0.1:4001"), None));
        assert!(refused(Some("127.0.0.1"), None));
        assert!(refused(Some("10.0.0.5:4000"), None));
        assert!(refused(None, None));
        assert!(refused(Some("localhost:4000"), Some("http://rebind.attacker.test")));
        assert!(refused(Some("localhost:4000"), Some("null")));
        assert!(refused(Some("localhost:4000"), Some("http://127.0.0.1.attacker.test")));
    }

    #[test]
    fn a_remote_server_also_answers_its_own_address_but_never_a_name() {
        assert_eq!(refusal("10.0.0.5:4000", Some("10.0.0.5:4000"), None), None);
        assert_eq!(refusal("0.0.0.0:4000", Some("192.168.1.9:4000"), None), None);
        assert!(refusal("0.0.0.0:4000", Some("devbox.example:4000"), None).is_some());
        assert!(refusal("10.0.0.5:4000", Some("10.0.0.6:4000"), None).is_some());
    }

    #[test]
    fn the_control_endpoints_need_the_token_in_either_header() {
        let access = Access::new("127.0.0.1:4000".parse().unwrap(), "t0ken".to_owned());
        let check = |name: &str, value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
            access.control_refusal(&headers).is_none()
        };
        assert!(check("x-atif-token", "t0ken"));
        assert!(check("authorization", "Bearer t0ken"));
        assert!(!check("x-atif-token", "other"));
        assert!(!check("authorization", "Bearer other"));
        assert!(!check("authorization", "t0ken"));
        assert!(access.control_refusal(&HeaderMap::new()).is_some());
    }

    #[test]
    fn json_content_types_are_recognised_with_parameters_and_suffixes() {
        let check =
            |value: &str| is_json_content_type(Some(&HeaderValue::from_str(value).unwrap()));
        assert!(check("application/json"));
        assert!(check("Application/JSON; charset=utf-8"));
        assert!(check("application/vnd.api+json"));
        assert!(!check("text/plain"));
        assert!(!check("application/x-www-form-urlencoded"));
        assert!(!check("multipart/form-data; boundary=x"));
        assert!(!is_json_content_type(None));
    }
}
