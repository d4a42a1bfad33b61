//! The OpenAI-compatible Chat Completions client: OpenAI itself, and the servers that copy its
//! protocol (vLLM, Ollama, llama.cpp, OpenRouter, …).
//!
//! fleet speaks the Messages API shape internally, so this client translates each request
//! (`request`), reads the stream back into the same events and message the Anthropic client
//! produces (`decode`), and shares everything else — retries, timeouts, SSE — with it
//! through `transport`.

mod decode;
mod error;
mod limits;
mod request;
mod tokens;
mod wire;

use crate::client::{ModelClient, ModelRequest, ModelStream, Provider, ServerLimits};
use crate::error::ModelError;
use crate::event::ModelEvent;
use crate::transport::{self, HttpOptions, Wire};
pub use decode::OpenAiDecoder;
use futures::StreamExt;

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The `tool_choice` sent with the tools when the request names none of its own. Some local
/// servers (and chat templates) only call tools when it is given; a few reject it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolChoiceMode {
    /// Send no `tool_choice`: the server's default applies.
    Omit,
    /// `"auto"`: the model may call a tool or answer in text.
    #[default]
    Auto,
    /// `"required"`: the model must call a tool.
    Required,
}

impl ToolChoiceMode {
    /// The words it is written with, in settings and in `FLEET_OPENAI_TOOL_CHOICE`.
    pub const WORDS: &'static [&'static str] = &["omit", "auto", "required"];

    /// `FLEET_OPENAI_TOOL_CHOICE`, when set.
    pub fn from_env() -> Result<Option<Self>, fleet_protocol::env::EnvError> {
        Ok(fleet_protocol::env::FLEET_OPENAI_TOOL_CHOICE
            .get()?
            .and_then(|word| word.parse().ok()))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Omit => "omit",
            Self::Auto => "auto",
            Self::Required => "required",
        }
    }
}

impl std::str::FromStr for ToolChoiceMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "omit" => Ok(Self::Omit),
            "auto" => Ok(Self::Auto),
            "required" => Ok(Self::Required),
            other => Err(format!(
                "{other:?} is not a tool choice; use {}",
                Self::WORDS.join(", ")
            )),
        }
    }
}

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
    /// Sent as `tool_choice` when a request has tools and no choice of its own.
    pub tool_choice: ToolChoiceMode,
    pub http: HttpOptions,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("stream_usage", &self.stream_usage)
            .field("tool_choice", &self.tool_choice)
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
            tool_choice: ToolChoiceMode::default(),
            http: HttpOptions::default(),
        }
    }

    /// Reads `OPENAI_BASE_URL` (default [`DEFAULT_BASE_URL`]), `OPENAI_API_KEY` (optional) and
    /// `FLEET_OPENAI_TOOL_CHOICE`, plus the shared HTTP settings ([`HttpOptions::from_env`]).
    /// Empty values count as unset.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_env_over(&crate::provider::ClientDefaults::default())
    }

    /// Like [`Self::from_env`], with `defaults` (from settings files) where the environment
    /// says nothing: a variable beats a setting.
    pub fn from_env_over(defaults: &crate::provider::ClientDefaults) -> Result<Self, ModelError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let mut config = Self::new(
            var("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.into()),
            var("OPENAI_API_KEY").map(|key| key.trim().to_owned()),
        );
        config.http = HttpOptions::from_env()?;
        config.tool_choice = ToolChoiceMode::from_env()?
            .or(defaults.openai_tool_choice)
            .unwrap_or_default();
        Ok(config)
    }
}

#[derive(Debug, Clone)]
pub struct OpenAiClient {
    config: OpenAiConfig,
    url: String,
    http: reqwest::Client,
    /// Set once the server showed it has no tokenizer endpoints (see `tokens`), so that
    /// they are not asked for again on every rewritten conversation.
    no_tokenizer: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Set once `/props` said the chat template cannot render tools: the server leaves them
    /// out of the prompt, and an estimate of it must too (see `tokens`).
    drops_tools: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl OpenAiClient {
    /// Fails only on a configuration that can never work (a base URL that is not http(s)).
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        let url = transport::endpoint(&config.base_url, "chat/completions")?;
        let http = config.http.build_client()?;
        Ok(Self {
            config,
            url,
            http,
            no_tokenizer: std::sync::Arc::default(),
            drops_tools: std::sync::Arc::default(),
        })
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The full address requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// GETs `url` as JSON, quickly and once (see [`limits::Reply`] for what a failure means).
    async fn get_json(&self, url: &str) -> limits::Reply {
        let mut request = self.http.get(url).timeout(limits::LIMITS_TIMEOUT);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        self.json_reply(url, request).await
    }

    /// Sends `request` to `url` and reads its JSON answer, sorting failures into "not here"
    /// and "not yet" (503 while a model loads, a timeout, no connection).
    async fn json_reply(&self, url: &str, request: reqwest::RequestBuilder) -> limits::Reply {
        let response = match request.send().await {
            Ok(response) if response.status().is_success() => response,
            Ok(response) => {
                let status = response.status().as_u16();
                tracing::debug!(url, status, "the server does not say");
                return if status == 503 {
                    limits::Reply::NotYet
                } else {
                    limits::Reply::Absent
                };
            }
            Err(e) => {
                tracing::debug!(url, "cannot ask the server: {e}");
                return limits::Reply::NotYet;
            }
        };
        match response.json().await {
            Ok(value) => limits::Reply::Json(value),
            Err(e) => {
                tracing::debug!(url, "the server's answer is not JSON: {e}");
                limits::Reply::Absent
            }
        }
    }
}

impl ModelClient for OpenAiClient {
    fn provider(&self) -> Provider {
        Provider::OpenAi
    }

    /// Asks `/v1/models` and llama-server's `/props` at once (see `limits`).
    fn server_limits<'a>(
        &'a self,
        model: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<ServerLimits>> + Send + 'a>>
    {
        Box::pin(async move {
            let models_url = transport::endpoint(&self.config.base_url, "models").ok()?;
            let props_url = limits::props_url(&self.config.base_url);
            let (models, props) =
                tokio::join!(self.get_json(&models_url), self.get_json(&props_url));
            let listed = models
                .json()
                .map(|list| limits::from_models(list, model))
                .unwrap_or_default();
            let ask_again =
                matches!(models, limits::Reply::NotYet) || matches!(props, limits::Reply::NotYet);
            let local = transport::Host::of(&self.config.base_url).local;
            let found = limits::combine(listed, props.json(), local, ask_again);
            if found.as_ref().and_then(|l| l.supports_tools) == Some(false) {
                self.drops_tools
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            tracing::debug!(model, ?found, "server limits");
            found
        })
    }

    fn count_prompt_tokens<'a>(
        &'a self,
        request: &'a fleet_protocol::MessagesRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<u64>> + Send + 'a>> {
        Box::pin(tokens::count(self, request))
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        // Serialized once, exactly sized, and the converted request dropped: the bytes are
        // all an attempt needs, and they are held for as long as the request is in flight.
        let body = match serde_json::to_vec(&request::chat_request(
            &request.body,
            self.config.stream_usage,
            self.config.tool_choice,
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
        let max_tokens = request.body.max_tokens;
        let report_start = request.stream_events;
        let api_key = self.config.api_key.clone();
        let url = self.url.clone();
        let extra_headers = request.headers;
        let wire = Wire {
            provider: error::PROVIDER,
            url: url.clone(),
            new_decoder: move || {
                if report_start {
                    OpenAiDecoder::reporting_start(max_tokens)
                } else {
                    OpenAiDecoder::for_request(max_tokens)
                }
            },
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
            Ok(ModelEvent::MessageStart { id, model, usage }) if model.is_empty() => {
                Ok(ModelEvent::MessageStart {
                    id,
                    model: requested_model.clone(),
                    usage,
                })
            }
            other => other,
        }))
    }
}
