//! The Chat Completions JSON shapes fleet writes and reads, and nothing else.
//!
//! The request side is typed so that a field can only be written the one way every compatible
//! server understands. The reading side is deliberately loose — almost every field optional,
//! the few that servers disagree on kept as raw JSON — because vLLM, Ollama, llama.cpp and
//! OpenRouter each leave out or reshape something that OpenAI itself always sends.

use serde::{Deserialize, Serialize};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// What fleet sends: the body of `POST /v1/chat/completions`.
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ChatTool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    pub max_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StreamOptions {
    /// Asks for a final chunk carrying token usage; without it most servers send none.
    pub include_usage: bool,
}

/// One message of the conversation, tagged by `role` as on the wire.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub(crate) enum ChatMessage {
    System {
        content: String,
    },
    User {
        content: UserContent,
    },
    /// `content` is written as `null` when the turn only calls tools, as OpenAI does.
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ChatToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A user turn is a plain string when it is only text — the form every server and chat
/// template handles — and a list of parts only when it carries an image.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum UserContent {
    Text(String),
    Parts(Vec<UserPart>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum UserPart {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ImageUrl {
    /// An `https:` address or a `data:<media type>;base64,<bytes>` URL.
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ChatTool {
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionDefinition,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FunctionDefinition {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool's JSON Schema, passed through unchanged.
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ChatToolCall {
    pub id: String,
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FunctionCall {
    pub name: String,
    /// The input as a JSON *string*: the protocol wants it serialised, not nested.
    pub arguments: String,
}

// ---------------------------------------------------------------------------------------------
// What fleet reads: one `data:` payload of the stream.
// ---------------------------------------------------------------------------------------------

/// One streamed chunk. A chunk may carry choices, usage, an error, or only some of them.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// vLLM's older flat error body says `"object": "error"` instead of nesting an `error`.
    #[serde(default)]
    pub object: Option<String>,
    #[serde(default)]
    pub choices: Option<Vec<Choice>>,
    #[serde(default)]
    pub usage: Option<ChunkUsage>,
    #[serde(default)]
    pub error: Option<Value>,
}

impl Chunk {
    /// Whether the chunk is an error report (nested `error`, or vLLM's flat `object: error`).
    pub fn is_error(&self) -> bool {
        self.error.is_some() || self.object.as_deref() == Some("error")
    }
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub index: Option<u64>,
    #[serde(default)]
    pub delta: Option<Delta>,
    /// The whole reply, in a non-streamed `chat.completion` (servers that ignore `stream`).
    #[serde(default)]
    pub message: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    /// Usually a string; kept raw because some servers send a list of text parts.
    #[serde(default)]
    pub content: Option<Value>,
    /// vLLM and DeepSeek name the reasoning stream `reasoning_content` …
    #[serde(default)]
    pub reasoning_content: Option<Value>,
    /// … Ollama, OpenRouter and newer vLLM name it `reasoning`.
    #[serde(default)]
    pub reasoning: Option<Value>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

/// A fragment of one tool call. Every field may be missing on some server.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolCallDelta {
    #[serde(default)]
    pub index: Option<u64>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    /// A fragment of the JSON string — or, on some servers, the whole input as an object.
    #[serde(default)]
    pub arguments: Option<Value>,
}

#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct ChunkUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    /// DeepSeek reports its cache hits here instead of in `prompt_tokens_details`.
    #[serde(default)]
    pub prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct PromptTokensDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}
