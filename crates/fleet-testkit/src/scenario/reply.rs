//! The scripted content of a reply: the blocks a rule answers with and the usage overrides.
//!
//! In YAML each block is a small map naming its kind (`text:`, `thinking:`, `tool_use:`,
//! `redacted_thinking:`); it is read through a flat "raw" form so that a block naming two kinds,
//! or none, is reported as such instead of as an opaque "data did not match any variant".

use super::problem::ScenarioProblem;
use serde::Deserialize;
use serde_json::Value;

/// One content block of a scripted reply.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawReplyBlock")]
pub enum ReplyBlock {
    Text(String),
    /// Extended thinking. Without a `signature` the server generates one from the text (and
    /// checks it when the block comes back in a later request, as the real API does).
    Thinking {
        thinking: String,
        signature: Option<String>,
    },
    RedactedThinking(String),
    /// A tool call. Without an `id` the server generates a stable one (`toolu_…` on the
    /// Anthropic path, `call_…` on the OpenAI path) from the request number and block index.
    ToolUse {
        id: Option<String>,
        name: String,
        input: Value,
    },
}

impl ReplyBlock {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(text.into())
    }

    pub fn thinking(thinking: impl Into<String>) -> Self {
        Self::Thinking {
            thinking: thinking.into(),
            signature: None,
        }
    }

    pub fn thinking_signed(thinking: impl Into<String>, signature: impl Into<String>) -> Self {
        Self::Thinking {
            thinking: thinking.into(),
            signature: Some(signature.into()),
        }
    }

    pub fn redacted_thinking(data: impl Into<String>) -> Self {
        Self::RedactedThinking(data.into())
    }

    pub fn tool_use(name: impl Into<String>, input: Value) -> Self {
        Self::ToolUse {
            id: None,
            name: name.into(),
            input,
        }
    }

    pub fn tool_use_with_id(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self::ToolUse {
            id: Some(id.into()),
            name: name.into(),
            input,
        }
    }

    /// Checks what serde cannot: a tool call needs a name and an object input (the API only
    /// ever produces objects, and clients rely on it).
    pub(crate) fn validate(&self) -> Result<(), ScenarioProblem> {
        match self {
            Self::ToolUse { name, input, .. } => {
                if name.is_empty() {
                    return Err(ScenarioProblem::ToolUseWithoutName);
                }
                if !input.is_object() {
                    return Err(ScenarioProblem::ToolInputNotObject {
                        name: name.clone(),
                        input: input.clone(),
                    });
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReplyBlock {
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    redacted_thinking: Option<String>,
    tool_use: Option<RawToolUse>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolUse {
    name: String,
    #[serde(default = "empty_object")]
    input: Value,
    id: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl TryFrom<RawReplyBlock> for ReplyBlock {
    type Error = ScenarioProblem;

    fn try_from(raw: RawReplyBlock) -> Result<Self, ScenarioProblem> {
        let kinds = [
            raw.text.is_some(),
            raw.thinking.is_some(),
            raw.redacted_thinking.is_some(),
            raw.tool_use.is_some(),
        ];
        let count = kinds.iter().filter(|k| **k).count();
        if count != 1 {
            return Err(ScenarioProblem::BlockKinds { found: count });
        }
        if raw.signature.is_some() && raw.thinking.is_none() {
            return Err(ScenarioProblem::SignatureWithoutThinking);
        }
        let block = if let Some(text) = raw.text {
            Self::Text(text)
        } else if let Some(thinking) = raw.thinking {
            Self::Thinking {
                thinking,
                signature: raw.signature,
            }
        } else if let Some(data) = raw.redacted_thinking {
            Self::RedactedThinking(data)
        } else if let Some(t) = raw.tool_use {
            Self::ToolUse {
                id: t.id,
                name: t.name,
                input: t.input,
            }
        } else {
            return Err(ScenarioProblem::EmptyBlock);
        };
        block.validate()?;
        Ok(block)
    }
}

/// Replaces the estimated token counts of a reply. Absent fields keep the estimate (or, for the
/// cache fields, the prompt-cache simulation's figure).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageOverride {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}
