//! The wire protocols the server speaks: which endpoints exist, which provider each belongs to,
//! where its public API lives, and each provider's error JSON shape.

use serde_json::{Value, json};

/// A model provider's wire protocol family; it decides the error JSON shape and the default
/// upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI: Chat Completions and Responses.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini (the Generative Language API).
    Gemini,
}

impl Provider {
    /// The provider's public API origin, where a recording without `--upstream` goes.
    pub fn public_origin(self) -> &'static str {
        match self {
            Provider::OpenAi => "https://api.openai.com",
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::Gemini => "https://generativelanguage.googleapis.com",
        }
    }

    /// The provider a request path most likely belongs to, for the shape of an error about a
    /// path the server does not know.
    pub(crate) fn guess(path: &str) -> Provider {
        if path.contains("/messages") {
            Provider::Anthropic
        } else if path.contains("v1beta") || path.contains(":generateContent") {
            Provider::Gemini
        } else {
            Provider::OpenAi
        }
    }

    /// An error reply body in this provider's own shape, so its SDK reports `message` as it
    /// would a real error.
    pub(crate) fn error_body(self, status: u16, message: &str) -> Value {
        match self {
            Provider::OpenAi => json!({
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": null,
                    "code": "atif_replay",
                }
            }),
            Provider::Anthropic => json!({
                "type": "error",
                "error": {"type": anthropic_error_type(status), "message": message},
            }),
            Provider::Gemini => json!({
                "error": {"code": status, "message": message, "status": gemini_status(status)}
            }),
        }
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

    /// The provider whose protocol this endpoint is.
    pub(crate) fn provider(self) -> Provider {
        match self {
            Endpoint::ChatCompletions | Endpoint::Responses | Endpoint::Models => Provider::OpenAi,
            Endpoint::Messages | Endpoint::CountTokens | Endpoint::Probe => Provider::Anthropic,
            Endpoint::GenerateContent | Endpoint::StreamGenerateContent => Provider::Gemini,
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
