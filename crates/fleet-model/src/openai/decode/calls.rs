//! One tool call as it streams in: its fragments matched up, and the block it becomes.

use super::super::wire::ToolCallDelta;
use crate::anthropic::preview;
use crate::error::ModelError;
use fleet_protocol::{ContentBlock, StopReason, Usage};
use serde_json::Value;

#[derive(Debug)]
pub(super) struct ToolCall {
    /// The server's `index` for this call, when it sends one.
    pub wire_index: Option<u64>,
    /// The id the server gave, if any.
    pub wire_id: Option<String>,
    pub name: Option<String>,
    pub arguments: String,
    /// Event index and id, set once the name is known and `ToolUseStart` went out.
    pub started: Option<(usize, String)>,
}

/// One tool-call fragment, with empty strings read as absent.
#[derive(Debug)]
pub(super) struct Fragment {
    pub index: Option<u64>,
    pub id: Option<String>,
    pub name: Option<String>,
    pub arguments: String,
}

impl From<ToolCallDelta> for Fragment {
    fn from(wire: ToolCallDelta) -> Self {
        let (name, arguments) = match wire.function {
            Some(function) => (function.name, arguments_text(function.arguments)),
            None => (None, String::new()),
        };
        Self {
            index: wire.index,
            id: wire.id.filter(|id| !id.is_empty()),
            name: name.filter(|name| !name.is_empty()),
            arguments,
        }
    }
}

impl Fragment {
    pub fn is_empty(&self) -> bool {
        self.id.is_none() && self.name.is_none() && self.arguments.is_empty()
    }
}

impl ToolCall {
    /// Whether `fragment`, matched to this call by index or position, begins another call:
    /// it carries another id or another tool's name, or it names a tool and brings input
    /// after this call's input is already whole (servers that number every call 0, or none).
    pub fn is_ended_by(&self, fragment: &Fragment) -> bool {
        let differs = |new: &Option<String>, old: &Option<String>| matches!((new, old), (Some(new), Some(old)) if new != old);
        differs(&fragment.id, &self.wire_id)
            || differs(&fragment.name, &self.name)
            || (fragment.name.is_some()
                && !fragment.arguments.is_empty()
                && self.arguments_complete())
    }

    /// Whether the input gathered so far is already one whole JSON value (cheap test first).
    fn arguments_complete(&self) -> bool {
        let text = self.arguments.trim();
        text.ends_with('}') && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
    }

    /// The finished block; bad input is reported with how the reply ended and what it cost.
    pub fn into_block(
        self,
        stop: &StopReason,
        usage: &Usage,
    ) -> Result<(usize, ContentBlock), ModelError> {
        let Some((index, id)) = self.started else {
            return Err(ModelError::Protocol(format!(
                "a tool call (id {}) never named its function; its arguments were {}",
                self.wire_id.as_deref().unwrap_or("none"),
                preview(&self.arguments)
            )));
        };
        let name = self.name.unwrap_or_default();
        let input = if self.arguments.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str(&self.arguments).map_err(|e| ModelError::InvalidToolInput {
                tool: name.clone(),
                id: id.clone(),
                message: format!("{e} in {}", preview(&self.arguments)),
                stop_reason: Some(stop.clone()),
                usage: usage.clone(),
            })?
        };
        Ok((index, ContentBlock::tool_use(id, name, input)))
    }
}

/// A fragment of the arguments string; an object sent instead of a string is its JSON text.
fn arguments_text(arguments: Option<Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}
