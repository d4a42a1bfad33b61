//! The one interface the agent loop uses to talk to any model server.

use crate::error::ModelError;
use crate::event::{ModelEvent, ModelResponse};
use fleet_protocol::MessagesRequest;
use futures::{Stream, StreamExt};
use std::pin::Pin;

/// A response as it streams in. It ends after `Completed`, or after one `Err`.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send>>;

/// A request in the common (Messages API) shape, plus transport details that are not part of
/// the body.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub body: MessagesRequest,
    /// Extra HTTP headers for this request only (e.g. an id tying a subagent's first request
    /// to the call that started it).
    pub headers: Vec<(String, String)>,
    /// Report the reply's start ([`crate::ModelEvent::MessageStart`]) too, for callers that
    /// replay the whole stream; off, the decoder copies nothing for it.
    pub stream_events: bool,
}

impl From<MessagesRequest> for ModelRequest {
    fn from(body: MessagesRequest) -> Self {
        Self {
            body,
            headers: Vec::new(),
            stream_events: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Anthropic,
    OpenAi,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
        }
    }
}

impl std::str::FromStr for Provider {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "anthropic" | "claude" => Ok(Self::Anthropic),
            "openai" | "openai-compatible" | "vllm" | "ollama" | "llama.cpp" | "llamacpp" => {
                Ok(Self::OpenAi)
            }
            other => Err(ModelError::Config(format!(
                "unknown provider `{other}`; use `anthropic` or `openai`"
            ))),
        }
    }
}

/// What a server says about a model it serves, for choosing `max_tokens` (see
/// [`ModelClient::server_limits`]). Every field is optional: servers publish little.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerLimits {
    /// The id the server itself uses for the model, when it differs from the one asked for.
    pub served_model: Option<String>,
    /// Prompt plus reply, in tokens (vLLM's `max_model_len`, llama-server's `n_ctx`).
    pub context_window: Option<u64>,
    /// The longest reply the server allows, when it says.
    pub max_output_tokens: Option<u64>,
    /// Whether the server's chat template renders tool definitions (llama-server's `/props`
    /// `chat_template_caps.supports_tools`). `Some(false)`: the server drops the tools from
    /// the prompt, so the model cannot call any.
    pub supports_tools: Option<bool>,
    /// The server is on this machine or a private network: what it says is all there is to
    /// know of the model, whose name may still be one the catalogue gives Anthropic's
    /// figures (and prices) for.
    pub local: bool,
    /// The server could not answer yet (503 while it loads the model, or a timeout): ask
    /// again once it has answered a request.
    pub ask_again: bool,
}

pub trait ModelClient: Send + Sync {
    fn provider(&self) -> Provider;

    /// Asks the server what it knows of `model` (its context window above all), quickly and
    /// at most once per run; `None` when it says nothing or cannot be asked. The Anthropic
    /// API publishes nothing fleet's catalogue does not already know.
    fn server_limits<'a>(
        &'a self,
        _model: &'a str,
    ) -> Pin<Box<dyn std::future::Future<Output = Option<ServerLimits>> + Send + 'a>> {
        Box::pin(async { None })
    }

    /// How many tokens the server makes of `request`'s prompt, counted by its own tokenizer
    /// (llama-server's `/apply-template` and `/tokenize`): what the window really holds, tool
    /// definitions the chat template drops left out. `None` when the server cannot say; the
    /// caller then estimates.
    fn count_prompt_tokens<'a>(
        &'a self,
        _request: &'a MessagesRequest,
    ) -> Pin<Box<dyn std::future::Future<Output = Option<u64>> + Send + 'a>> {
        Box::pin(async { None })
    }

    /// Starts a streaming request. Nothing is sent until the stream is polled.
    fn stream(&self, request: ModelRequest) -> ModelStream;

    /// Runs a request to the end and returns only the assembled reply.
    fn complete(
        &self,
        request: ModelRequest,
    ) -> Pin<Box<dyn std::future::Future<Output = Result<ModelResponse, ModelError>> + Send + '_>>
    {
        let mut stream = self.stream(request);
        Box::pin(async move {
            while let Some(event) = stream.next().await {
                if let ModelEvent::Completed(response) = event? {
                    return Ok(response);
                }
            }
            Err(ModelError::StreamInterrupted {
                when: "before the reply was complete",
                message: "the stream ended without a final message".into(),
            })
        })
    }
}
