//! What a context compaction leaves behind: the boundary every consumer of the event stream
//! sees (the stream-json `compact_boundary` line, the transcript's boundary record).

use crate::message::Message;
use serde::{Deserialize, Serialize};

/// What started a compaction, as Claude Code names it in `compact_metadata.trigger`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactTrigger {
    /// The conversation was about to outgrow the model's window (or the API said it had).
    Auto,
    /// The user asked for it (`/compact`).
    Manual,
}

impl CompactTrigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Manual => "manual",
        }
    }
}

/// A compaction happened: the conversation was replaced by `messages` (a summary of what came
/// before, then the most recent turns, kept as they were).
///
/// The new conversation travels with the event so that the transcript writer can record it
/// after the boundary, and a resumed session reads from there instead of the whole history.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactBoundary {
    pub trigger: CompactTrigger,
    /// The estimated size of the conversation (system prompt and tools included) before.
    pub pre_tokens: u64,
    /// The same estimate after.
    pub post_tokens: u64,
    /// The conversation from now on, summary first.
    pub messages: Vec<Message>,
}
