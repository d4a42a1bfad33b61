//! The Anthropic Messages API client.

mod body;
mod decode;

pub(crate) use decode::preview;

use crate::cache::{breakpoints, Marked};
use crate::client::{ModelClient, ModelRequest, ModelStream, Provider};
use crate::error::ModelError;
use crate::transport::{self, HttpOptions, Wire};
use body::StreamedBody;
pub use decode::AnthropicDecoder;
use fleet_protocol::env;
use fleet_protocol::ApiErrorBody;
use reqwest::header::HeaderMap;

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const API_VERSION: &str = "2023-06-01";

/// How requests authenticate: an API key (`x-api-key`) or an OAuth/bearer token.
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    ApiKey(String),
    Bearer(String),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ApiKey(_) => f.write_str("ApiKey(<redacted>)"),
            Self::Bearer(_) => f.write_str("Bearer(<redacted>)"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    pub base_url: String,
    pub auth: Auth,
    pub version: String,
    /// Sent as one comma-joined `anthropic-beta` header when not empty.
    pub betas: Vec<String>,
    /// Marks cache breakpoints on each request (see `cache`). On by default.
    pub prompt_caching: bool,
    pub http: HttpOptions,
}

impl AnthropicConfig {
    pub fn new(base_url: impl Into<String>, auth: Auth) -> Self {
        Self {
            base_url: base_url.into(),
            auth,
            version: API_VERSION.into(),
            betas: Vec::new(),
            prompt_caching: true,
            http: HttpOptions::default(),
        }
    }

    /// Reads `ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_BASE_URL`,
    /// `ANTHROPIC_BETAS` (comma-separated) and `DISABLE_PROMPT_CACHING`.
    pub fn from_env() -> Result<Self, ModelError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let auth = match (var("ANTHROPIC_API_KEY"), var("ANTHROPIC_AUTH_TOKEN")) {
            (Some(key), _) => Auth::ApiKey(key),
            (None, Some(token)) => Auth::Bearer(token),
            (None, None) => {
                return Err(ModelError::Config(
                    "no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token), \
                     or choose another provider with FLEET_PROVIDER=openai"
                        .into(),
                ))
            }
        };
        let mut config = Self::new(
            var("ANTHROPIC_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.into()),
            auth,
        );
        if let Some(betas) = var("ANTHROPIC_BETAS") {
            config.betas = betas
                .split(',')
                .map(|b| b.trim().to_owned())
                .filter(|b| !b.is_empty())
                .collect();
        }
        config.prompt_caching = !env::DISABLE_PROMPT_CACHING.is_on()?;
        config.http = HttpOptions::from_env()?;
        Ok(config)
    }
}

#[derive(Debug, Clone)]
pub struct AnthropicClient {
    config: AnthropicConfig,
    url: String,
    http: reqwest::Client,
}

impl AnthropicClient {
    pub fn new(config: AnthropicConfig) -> Result<Self, ModelError> {
        let url = transport::endpoint(&config.base_url, "messages")?;
        let http = config.http.build_client()?;
        Ok(Self { config, url, http })
    }

    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }
}

impl ModelClient for AnthropicClient {
    fn provider(&self) -> Provider {
        Provider::Anthropic
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let body = request.body;
        let marked = if self.config.prompt_caching {
            breakpoints(&body)
        } else {
            Marked::default()
        };
        let body = match StreamedBody::new(body, marked) {
            Ok(body) => body,
            Err(err) => {
                let err = ModelError::Config(format!("cannot serialize the request: {err}"));
                return Box::pin(futures::stream::once(async move { Err(err) }));
            }
        };
        let config = self.config.clone();
        let url = self.url.clone();
        let extra_headers = request.headers;
        let wire = Wire {
            provider: "anthropic",
            url: url.clone(),
            new_decoder: if request.stream_events {
                AnthropicDecoder::reporting_start
            } else {
                AnthropicDecoder::new
            },
            api_error,
        };
        transport::stream(self.http.clone(), config.http.clone(), wire, move |http| {
            let mut builder = http
                .post(&url)
                .header("anthropic-version", &config.version)
                .header("accept", "text/event-stream")
                .header("content-type", "application/json")
                .header("content-length", body.len())
                .body(body.clone().into_body());
            builder = match &config.auth {
                Auth::ApiKey(key) => builder.header("x-api-key", key),
                Auth::Bearer(token) => builder.bearer_auth(token),
            };
            // One header for every beta: the configured ones, then the request's own.
            let mut betas = config.betas.clone();
            for (name, value) in &extra_headers {
                if name.eq_ignore_ascii_case("anthropic-beta") {
                    betas.extend(value.split(',').map(|b| b.trim().to_owned()));
                } else {
                    builder = builder.header(name, value);
                }
            }
            betas.retain(|b| !b.is_empty());
            if !betas.is_empty() {
                builder = builder.header("anthropic-beta", betas.join(","));
            }
            builder
        })
    }
}

/// Reads the API's error body; a proxy's HTML page or an empty body still gives a useful
/// error, which then names the address tried.
fn api_error(status: u16, headers: &HeaderMap, body: &[u8], url: &str) -> ModelError {
    let (error_type, message, readable) = match serde_json::from_slice::<ApiErrorBody>(body) {
        Ok(parsed) => (parsed.error.error_type, parsed.error.message, true),
        Err(_) => (
            ApiErrorBody::type_for_status(status).to_owned(),
            transport::unreadable_body(body),
            false,
        ),
    };
    ModelError::Api {
        provider: "anthropic",
        status,
        error_type,
        message,
        request_id: transport::request_id(headers),
        retry_after: transport::retry_after(headers),
        url: (status == 404 || !readable).then(|| url.to_owned()),
    }
}
