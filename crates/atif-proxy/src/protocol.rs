//! The wire protocols the server speaks: which endpoints exist, which protocol each belongs to,
//! where its provider's public API lives, and each provider's error JSON shape.

use atif_wire::Protocol;
use serde_json::{Value, json};

/// The provider's public API origin, where a recording without `--upstream` sends a request
/// of `protocol`.
pub(crate) fn public_origin(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::OpenAiChat | Protocol::OpenAiResponses => "https://api.openai.com",
        Protocol::AnthropicMessages => "https://api.anthropic.com",
        Protocol::Gemini => "https://generativelanguage.googleapis.com",
    }
}

/// The protocol a request path most likely belongs to, for the shape of an error about a path
/// the server does not know (OpenAI's when nothing in the path says otherwise).
pub(crate) fn guess(path: &str) -> Protocol {
    if path.contains("/messages") {
        Protocol::AnthropicMessages
    } else if path.contains("v1beta") || path.contains(":generateContent") {
        Protocol::Gemini
    } else {
        Protocol::OpenAiChat
    }
}

/// An error reply body in the shape of `protocol`'s provider, so its SDK reports `message` as
/// it would a real error.
pub(crate) fn error_body(protocol: Protocol, status: u16, message: &str) -> Value {
    match protocol {
        Protocol::OpenAiChat | Protocol::OpenAiResponses => json!({
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": null,
                "code": "atif_replay",
            }
        }),
        Protocol::AnthropicMessages => json!({
            "type": "error",
            "error": {"type": anthropic_error_type(status), "message": message},
        }),
        Protocol::Gemini => json!({
            "error": {"code": status, "message": message, "status": gemini_status(status)}
        }),
    }
}

fn anthropic_error_type(status: u16) -> &'static str {
    match status {
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        502..=504 => "api_error",
        _ => "invalid_request_error",
    }
}

fn gemini_status(status: u16) -> &'static str {
    match status {
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        408 | 504 => "DEADLINE_EXCEEDED",
        502 | 503 => "UNAVAILABLE",
        _ => "INVALID_ARGUMENT",
    }
}

/// An endpoint the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Endpoint {
    /// `POST /v1/chat/completions`.
    ChatCompletions,
    /// `POST /v1/responses`.
    Responses,
    /// `POST /v1/messages`.
    Messages,
    /// `POST /v1/messages/count_tokens`.
    CountTokens,
    /// `POST /v1beta/models/{model}:generateContent`.
    GenerateContent,
    /// `POST /v1beta/models/{model}:streamGenerateContent`.
    StreamGenerateContent,
    /// `GET /v1/models`.
    Models,
    /// `GET /api/hello`: Claude Code's connectivity probe (it sends `HEAD`), no model call.
    Probe,
}

impl Endpoint {
    /// The endpoint of a request, from its method and path (without the query).
    ///
    /// `HEAD` is the endpoint of `GET` on the same path: it is answered like `GET`, without
    /// the body.
    pub(crate) fn of(method: &str, path: &str) -> Option<Endpoint> {
        let endpoint = match (method, path) {
            ("HEAD", _) => {
                return Endpoint::of("GET", path).filter(|endpoint| endpoint.is_get());
            }
            ("POST", "/v1/chat/completions" | "/chat/completions") => Endpoint::ChatCompletions,
            ("POST", "/v1/responses" | "/responses") => Endpoint::Responses,
            ("POST", "/v1/messages") => Endpoint::Messages,
            ("POST", "/v1/messages/count_tokens") => Endpoint::CountTokens,
            ("GET", "/v1/models" | "/models") => Endpoint::Models,
            ("GET", "/api/hello") => Endpoint::Probe,
            ("POST", _) => {
                let model_call = path
                    .strip_prefix("/v1beta/models/")
                    .or_else(|| path.strip_prefix("/v1/models/"))?;
                let (model, method) = model_call.split_once(':')?;
                if model.is_empty() || model.contains('/') {
                    return None;
                }
                match method {
                    "generateContent" => Endpoint::GenerateContent,
                    "streamGenerateContent" => Endpoint::StreamGenerateContent,
                    _ => return None,
                }
            }
            _ => return None,
        };
        Some(endpoint)
    }

    /// Whether this is a `GET` endpoint (which `HEAD` reaches too).
    pub(crate) fn is_get(self) -> bool {
        matches!(self, Endpoint::Models | Endpoint::Probe)
    }

    /// Whether a request to this endpoint is answered as often as asked and never owed: a
    /// listing or a probe, not a model call.
    pub(crate) fn is_repeatable(self) -> bool {
        self.is_get()
    }

    /// The protocol this endpoint belongs to (a listing is OpenAI's, a probe Anthropic's).
    pub(crate) fn protocol(self) -> Protocol {
        match self {
            Endpoint::ChatCompletions | Endpoint::Models => Protocol::OpenAiChat,
            Endpoint::Responses => Protocol::OpenAiResponses,
            Endpoint::Messages | Endpoint::CountTokens | Endpoint::Probe => {
                Protocol::AnthropicMessages
            }
            Endpoint::GenerateContent | Endpoint::StreamGenerateContent => Protocol::Gemini,
        }
    }
}

/// The endpoints, as an unknown-endpoint error lists them.
pub(crate) const SUPPORTED: &str = "POST /v1/chat/completions, POST /v1/responses, \
     POST /v1/messages, POST /v1/messages/count_tokens, \
     POST /v1beta/models/{model}:generateContent, \
     POST /v1beta/models/{model}:streamGenerateContent, GET /v1/models, GET /api/hello \
     (and HEAD on each GET endpoint)";

/// The model a request asks for: the body's `model`, or Gemini's model in the path.
pub(crate) fn model_of(path: &str, request: &Value) -> Option<String> {
    if let Some(model) = request.get("model").and_then(Value::as_str) {
        return Some(model.to_owned());
    }
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let model_call =
        path.strip_prefix("/v1beta/models/").or_else(|| path.strip_prefix("/v1/models/"))?;
    Some(model_call.split_once(':').map_or(model_call, |(model, _)| model).to_owned())
}

/// The query string without credentials (Gemini accepts its API key as `key=`), so a saved
/// path never holds one.
pub(crate) fn strip_credentials(path_and_query: &str) -> String {
    let Some((path, query)) = path_and_query.split_once('?') else {
        return path_and_query.to_owned();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let name = pair.split_once('=').map_or(*pair, |(name, _)| name);
            !matches!(name, "key" | "api_key" | "api-key" | "access_token")
        })
        .collect();
    if kept.is_empty() { path.to_owned() } else { format!("{path}?{}", kept.join("&")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_recognised_by_method_and_path() {
        let check = |method, path, expected| assert_eq!(Endpoint::of(method, path), expected);
        check("POST", "/v1/chat/completions", Some(Endpoint::ChatCompletions));
        check("POST", "/v1/responses", Some(Endpoint::Responses));
        check("POST", "/v1/messages", Some(Endpoint::Messages));
        check("POST", "/v1/messages/count_tokens", Some(Endpoint::CountTokens));
        check(
            "POST",
            "/v1beta/models/gemini-2.5-flash:generateContent",
            Some(Endpoint::GenerateContent),
        );
        check(
            "POST",
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            Some(Endpoint::StreamGenerateContent),
        );
        check("GET", "/v1/models", Some(Endpoint::Models));
        check("HEAD", "/v1/models", Some(Endpoint::Models));
        check("HEAD", "/api/hello", Some(Endpoint::Probe));
        check("GET", "/api/hello", Some(Endpoint::Probe));
        check("HEAD", "/v1/messages", None);
        check("POST", "/api/hello", None);
        check("GET", "/v1/messages", None);
        check("POST", "/v1/embeddings", None);
        check("POST", "/v1beta/models/:generateContent", None);
        check("POST", "/v1beta/models/a/b:generateContent", None);
    }

    #[test]
    fn credentials_in_the_query_are_never_kept() {
        assert_eq!(strip_credentials("/v1/messages?beta=true"), "/v1/messages?beta=true");
        assert_eq!(
            strip_credentials("/m:streamGenerateContent?alt=sse&key=AIzaX"),
            "/m:streamGenerateContent?alt=sse"
        );
        assert_eq!(strip_credentials("/m:generateContent?key=AIzaX"), "/m:generateContent");
    }

    #[test]
    fn the_model_comes_from_the_body_or_the_gemini_path() {
        assert_eq!(
            model_of("/v1/messages", &json!({"model": "claude"})).as_deref(),
            Some("claude")
        );
        assert_eq!(
            model_of("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", &json!({}))
                .as_deref(),
            Some("gemini-2.5-flash")
        );
        assert_eq!(model_of("/v1/chat/completions", &json!({})), None);
    }
}
