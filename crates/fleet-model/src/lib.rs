//! Talking to models.
//!
//! One trait, [`ModelClient`], hides which server is on the other end: the Anthropic Messages
//! API or an OpenAI-compatible Chat Completions server (vLLM, Ollama, llama.cpp, OpenRouter).
//! Both stream over SSE through one decoder and one retry policy, and both speak fleet's
//! common message model (`fleet-protocol`), so the agent loop never sees a wire format.

pub mod anthropic;
pub mod cache;
pub mod catalog;
pub mod client;
pub mod error;
pub mod event;
pub mod fallback;
pub mod openai;
pub mod provider;
pub mod retry;
pub mod sse;
pub mod tls;
mod transport;

pub use anthropic::{AnthropicClient, AnthropicConfig, Auth};
pub use catalog::{Catalog, ModelInfo, Pricing};
pub use client::{ModelClient, ModelRequest, ModelStream, Provider, ServerLimits};
pub use error::ModelError;
pub use event::{ModelEvent, ModelResponse};
pub use fallback::FallbackClient;
pub use openai::{OpenAiClient, OpenAiConfig, ToolChoiceMode};
pub use provider::{client_from_env, client_from_env_over, ClientDefaults};
pub use retry::RetryPolicy;
pub use transport::{
    max_in_flight, HttpOptions, WireDecoder, LOCAL_FIRST_TOKEN_TIMEOUT, REMOTE_FIRST_TOKEN_TIMEOUT,
};
