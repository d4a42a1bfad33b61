//! The OpenAI-compatible Chat Completions client: OpenAI itself, and the servers that copy its
//! protocol (vLLM, Ollama, llama.cpp, OpenRouter, …).
//!
//! fleet speaks the Messages API shape internally, so this client translates each request
//! (`request`), reads the stream back into the same events and message the Anthropic client
//! produces (`decode`), and shares everything else — retries, timeouts, SSE — with it
//! through `transport`.

mod decode;
mod error;
mod request;
mod wire;

use crate::client::{ModelClient, ModelRequest, ModelStream, Provider};
use crate::error::ModelError;
use crate::event::ModelEvent;
use crate::transport::{self, HttpOptions, Wire};
pub use decode::OpenAiDecoder;
use futures::StreamExt;

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

#[derive(Clone)]
pub struct OpenAiConfig {
    /// With or without the trailing `/v1`: `http://localhost:11434` and
    /// `http://localhost:11434/v1` both work.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` when set. Local servers usually need none.
    pub api_key: Option<String>,
    /// Asks for a final usage chunk (`stream_options.include_usage`). On by default; turn it
    /// off for an old server that rejects the option.
    pub stream_usage: bool,
    pub http: HttpOptions,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("stream_usage", &self.stream_usage)
            .field("http", &self.http)
            .finish()
    }
}

impl OpenAiConfig {
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key,
            stream_usage: true,
            http: HttpOptions::default(),
        }
    }

    /// Reads `OPENAI_BASE_URL` (default [`DEFAULT_BASE_URL`]) and `OPENAI_API_KEY` (optional),
    /// plus the shared HTTP settings ([`HttpOptions::from_env`]). Empty values count as unset.
    pub fn from_env() -> Result<Self, ModelError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let mut config = Self::new(
            var("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.into()),
            var("OPENAI_API_KEY").map(|key| key.trim().to_owned()),
        );
        config.http = HttpOptions::from_env()?;
        Ok(config)
    }
}

#[derive(Debug, Clone)]
pub struct OpenAiClient {
    config: OpenAiConfig,
    url: String,
    http: reqwest::Client,
}

impl OpenAiClient {
    /// Fails only on a configuration that can never work (a base URL that is not http(s)).
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        let url = transport::endpoint(&config.base_url, "chat/completions")?;
        let http = config.http.build_client()?;
        Ok(Self { config, url, http })
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The full address requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl ModelClient for OpenAiClient {
    fn provider(&self) -> Provider {
        Provider::OpenAi
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        // Serialized once, exactly sized, and the converted request dropped: the bytes are
        // all an attempt needs, and they are held for as long as the request is in flight.
        let body = match serde_json::to_vec(&request::chat_request(
            &request.body,
            self.config.stream_usage,
        )) {
            Ok(mut bytes) => {
                bytes.shrink_to_fit();
                bytes::Bytes::from(bytes)
            }
            Err(err) => {
                let err = ModelError::Config(format!("cannot serialize the request: {err}"));
                return Box::pin(futures::stream::once(async move { Err(err) }));
            }
        };
        let requested_model = request.body.model;
        let api_key = self.config.api_key.clone();
        let url = self.url.clone();
        let extra_headers = request.headers;
        let wire = Wire {
            provider: error::PROVIDER,
            url: url.clone(),
            new_decoder: OpenAiDecoder::new,
            api_error: error::api_error,
        };
        let events = transport::stream(
            self.http.clone(),
            self.config.http.clone(),
            wire,
            move |http| {
                let mut builder = http
                    .post(&url)
                    .header("accept", "text/event-stream")
                    .header("content-type", "application/json")
                    .body(body.clone());
                if let Some(key) = &api_key {
                    builder = builder.bearer_auth(key);
                }
                for (name, value) in &extra_headers {
                    builder = builder.header(name, value);
                }
                builder
            },
        );
        // A server that never names its model still leaves the reply attributed to one.
        Box::pin(events.map(move |event| match event {
            Ok(ModelEvent::Completed(mut response)) if response.message.model.is_empty() => {
                response.message.model = requested_model.clone();
                Ok(ModelEvent::Completed(response))
            }
            other => other,
        }))
    }
}
