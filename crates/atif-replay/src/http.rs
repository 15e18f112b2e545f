//! `HttpClient`: an [`LlmClient`] over HTTP for OpenAI Chat Completions, OpenAI Responses,
//! Anthropic Messages and Gemini, streamed and not, through the one wire mapping (feature `http`).

use std::fmt;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::{Chunk, ChunkStream, Error, LlmClient, LlmError, LlmRequest, LlmResponse, Result};
use atif_wire::{Protocol, SseParser, StreamAssembler};

/// The Anthropic API version the adapter asks for.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A model provider reached over HTTP, speaking one [`Protocol`].
///
/// Requests are written with [`request_body`](atif_wire::request_body) and replies read with
/// [`parse_response`](atif_wire::parse_response), or event by event with [`StreamAssembler`] when
/// streamed, so what a recording saves is what the capture from traffic reads. Wrap it in a
/// [`RecordingClient`](crate::RecordingClient) to record a script from a live provider.
///
/// The base URL is the one the provider's SDKs take: `https://api.openai.com/v1` for OpenAI
/// (the client posts to `{base}/chat/completions` or `{base}/responses`),
/// `https://api.anthropic.com` for Anthropic (`{base}/v1/messages`),
/// `https://generativelanguage.googleapis.com` for Gemini (`{base}/v1beta/models/{model}:generateContent`,
/// or `:streamGenerateContent?alt=sse` when streamed).
///
/// # Example
///
/// ```no_run
/// use std::sync::Arc;
///
/// use atif_replay::{HttpClient, LlmClient, LlmRequest, Message, RecordingClient};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let key = std::env::var("OPENAI_API_KEY")?;
/// let live = HttpClient::openai_chat("https://api.openai.com/v1", &key)?.with_model("gpt-4.1-mini");
/// let recorder = Arc::new(RecordingClient::new(live));
/// let reply = recorder.complete(LlmRequest::new(vec![Message::user("Say hi.")])).await?;
/// println!("{}", reply.text());
/// recorder.save("hi.script.json")?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct HttpClient {
    protocol: Protocol,
    url: String,
    model: Option<String>,
    headers: HeaderMap,
    client: reqwest::Client,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The headers hold the API key: never shown.
        f.debug_struct("HttpClient")
            .field("protocol", &self.protocol)
            .field("url", &self.url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// OpenAI Chat Completions at `{base_url}/chat/completions`, authenticated with `api_key`
    /// as a bearer token.
    ///
    /// # Errors
    ///
    /// [`Error::Http`] when the key cannot be a header value or the HTTP client cannot start.
    pub fn openai_chat(base_url: &str, api_key: &str) -> Result<Self> {
        let url = format!("{}/chat/completions", base_url.trim_end_matches('/'));
        HttpClient::new(Protocol::OpenAiChat, url, &[("authorization", &bearer(api_key))])
    }

    /// OpenAI Responses at `{base_url}/responses`, authenticated with `api_key` as a bearer
    /// token.
    ///
    /// # Errors
    ///
    /// As for [`openai_chat`](HttpClient::openai_chat).
    pub fn openai_responses(base_url: &str, api_key: &str) -> Result<Self> {
        let url = format!("{}/responses", base_url.trim_end_matches('/'));
        HttpClient::new(Protocol::OpenAiResponses, url, &[("authorization", &bearer(api_key))])
    }

    /// Anthropic Messages at `{base_url}/v1/messages`, authenticated with `api_key` as
    /// `x-api-key`, asking for API version [`ANTHROPIC_VERSION`].
    ///
    /// # Errors
    ///
    /// As for [`openai_chat`](HttpClient::openai_chat).
    pub fn anthropic(base_url: &str, api_key: &str) -> Result<Self> {
        let url = format!("{}/v1/messages", base_url.trim_end_matches('/'));
        let headers = [("x-api-key", api_key), ("anthropic-version", ANTHROPIC_VERSION)];
        HttpClient::new(Protocol::AnthropicMessages, url, &headers)
    }

    /// Gemini at `{base_url}/v1beta/models/{model}:generateContent` (and
    /// `:streamGenerateContent?alt=sse` when streamed), authenticated with `api_key` as
    /// `x-goog-api-key`.
    ///
    /// Gemini names the model in the URL, not in the body: each request needs one, from
    /// [`LlmRequest::model`] or else [`with_model`](HttpClient::with_model).
    ///
    /// # Errors
    ///
    /// As for [`openai_chat`](HttpClient::openai_chat).
    pub fn gemini(base_url: &str, api_key: &str) -> Result<Self> {
        let url = format!("{}/v1beta/models", base_url.trim_end_matches('/'));
        HttpClient::new(Protocol::Gemini, url, &[("x-goog-api-key", api_key)])
    }

    fn new(protocol: Protocol, url: String, headers: &[(&'static str, &str)]) -> Result<Self> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let value = HeaderValue::from_str(value)
                .map_err(|source| Error::Http { url: url.clone(), source: Box::new(source) })?;
            map.insert(HeaderName::from_static(name), value);
        }
        let client = reqwest::Client::builder()
            .build()
            .map_err(|source| Error::Http { url: url.clone(), source: Box::new(source) })?;
        Ok(HttpClient { protocol, url, model: None, headers: map, client })
    }

    /// Sets the model asked for when a request names none, and reported by
    /// [`model`](LlmClient::model).
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The protocol spoken.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The URL requests are posted to; for Gemini, the models collection under which each
    /// request posts to `{model}:generateContent`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL a request for `model` posts to.
    fn endpoint(&self, model: Option<&str>, stream: bool) -> Result<String> {
        if self.protocol != Protocol::Gemini {
            return Ok(self.url.clone());
        }
        // Gemini's SDKs accept `models/gemini-…` as well as the bare name.
        let model = model.map(|model| model.strip_prefix("models/").unwrap_or(model));
        let Some(model) = model.filter(|model| !model.is_empty()) else {
            return Err(Error::MissingModel {
                protocol: self.protocol.name(),
                url: self.url.clone(),
            });
        };
        if stream {
            Ok(format!("{}/{model}:streamGenerateContent?alt=sse", self.url))
        } else {
            Ok(format!("{}/{model}:generateContent", self.url))
        }
    }

    /// Posts `request` and returns the reply, and the URL it came from, once its status says
    /// it is one.
    async fn send(
        &self,
        request: &LlmRequest,
        stream: bool,
    ) -> Result<(reqwest::Response, String)> {
        let mut request = request.clone();
        if request.model.is_none() {
            request.model.clone_from(&self.model);
        }
        let url = self.endpoint(request.model.as_deref(), stream)?;
        let body = atif_wire::request_body(self.protocol, &request, stream);
        let bytes = serde_json::to_vec(&body)
            .map_err(|source| Error::Serialize { what: "request", source })?;
        let response = self
            .client
            .post(&url)
            .headers(self.headers.clone())
            .header("content-type", "application/json")
            .body(bytes)
            .send()
            .await
            .map_err(|source| transport(&url, source))?;
        let status = response.status();
        if status.is_success() {
            return Ok((response, url));
        }
        let text = response.text().await.unwrap_or_default();
        let detail = match serde_json::from_str::<Value>(&text) {
            Ok(body) => match body.get("error") {
                Some(error) => atif_wire::support::provider_message(error),
                None => text,
            },
            Err(_) => text,
        };
        Err(Error::provider(format!("{url} answered HTTP {status}: {detail}")))
    }
}

fn transport(url: &str, source: reqwest::Error) -> Error {
    Error::Http { url: url.to_owned(), source: Box::new(source) }
}

fn bearer(api_key: &str) -> String {
    format!("Bearer {api_key}")
}

#[async_trait]
impl LlmClient for HttpClient {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError> {
        let (response, url) = self.send(&request, false).await?;
        let bytes = response.bytes().await.map_err(|source| transport(&url, source))?;
        let body: Value = serde_json::from_slice(&bytes).map_err(|err| {
            Error::Wire(atif_wire::Error::WireFormat {
                protocol: self.protocol.name(),
                what: "reply",
                pointer: String::new(),
                message: format!("the body is not JSON ({err})"),
            })
        })?;
        Ok(atif_wire::parse_response(self.protocol, &body)?)
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    async fn complete_stream(&self, request: LlmRequest) -> Result<ChunkStream, LlmError> {
        let (mut response, url) = self.send(&request, true).await?;
        let (sender, stream) = ChunkStream::channel(64);
        let protocol = self.protocol;
        // Text reaches the agent as it arrives; tool calls and the finish chunk once the stream
        // has ended and every argument delta is in.
        tokio::spawn(async move {
            let mut parser = SseParser::new();
            let mut assembler = StreamAssembler::new(protocol);
            let outcome: Result<()> = async {
                loop {
                    let chunk = response.chunk().await.map_err(|source| transport(&url, source))?;
                    let Some(bytes) = chunk else { break };
                    parser.feed(&bytes);
                    for event in parser.take_events() {
                        for delta in assembler.push(&event)? {
                            if sender.send(Ok(delta)).await.is_err() {
                                return Ok(());
                            }
                        }
                    }
                }
                // A last event without its closing blank line still counts.
                parser.feed(b"\n\n");
                for event in parser.take_events() {
                    for delta in assembler.push(&event)? {
                        let _ = sender.send(Ok(delta)).await;
                    }
                }
                if !assembler.is_complete() {
                    return Err(Error::Wire(atif_wire::Error::WireFormat {
                        protocol: protocol.name(),
                        what: "stream",
                        pointer: String::new(),
                        message: "the stream ended before its final event".to_owned(),
                    }));
                }
                let whole = assembler.finish()?;
                for call in whole.tool_calls {
                    let _ = sender.send(Ok(Chunk::ToolCall { call })).await;
                }
                let finish = Chunk::Finish {
                    finish_reason: whole.finish_reason,
                    usage: whole.usage,
                    model: whole.model,
                };
                let _ = sender.send(Ok(finish)).await;
                Ok(())
            }
            .await;
            if let Err(err) = outcome {
                let _ = sender.send(Err(err)).await;
            }
        });
        Ok(stream)
    }
}
