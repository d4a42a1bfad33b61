//! What a model client emits while a response streams in. Deltas come first, as they arrive,
//! so a printer can show text immediately; `Completed` closes every successful stream with the
//! assembled message.

use fleet_protocol::{AssistantMessage, ContentBlock};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// An attempt failed before any content and another one will start after `delay`.
    Retry {
        /// The attempt that is about to start (2 for the first retry).
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
        /// The HTTP status of the failure, when it was an HTTP error.
        status: Option<u16>,
    },
    /// The run moved from model `from` to `to` for good (see `fallback`); this request and
    /// every later one for `from` go to `to`.
    ModelSwitched {
        from: String,
        to: String,
        reason: String,
    },
    /// The reply began: its id, model and the usage known so far (the prompt's side). Not
    /// content: a failure after it may still be retried.
    MessageStart {
        id: String,
        model: String,
        usage: fleet_protocol::Usage,
    },
    TextDelta {
        index: usize,
        text: String,
    },
    ThinkingDelta {
        index: usize,
        thinking: String,
    },
    ToolUseStart {
        index: usize,
        id: String,
        name: String,
    },
    ToolInputDelta {
        index: usize,
        partial_json: String,
    },
    /// A content block is complete; tool input has been parsed.
    BlockComplete {
        index: usize,
        block: ContentBlock,
    },
    /// The whole reply, with stop reason and final usage.
    Completed(ModelResponse),
}

impl ModelEvent {
    /// Whether the caller has now seen part of the answer; from then on a failure can no
    /// longer be retried without showing the same content twice.
    pub fn is_content(&self) -> bool {
        !matches!(
            self,
            Self::Retry { .. }
                | Self::ModelSwitched { .. }
                | Self::MessageStart { .. }
                | Self::Completed(_)
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    pub message: AssistantMessage,
    /// The server's request id (`request-id` header), for support tickets.
    pub request_id: Option<String>,
    /// How many attempts this response took (1 when nothing was retried).
    pub attempts: u32,
    /// Wall time from the first attempt to the end of the stream.
    pub duration: Duration,
}
