//! Keeping a conversation inside the model's context window.
//!
//! Every agent (the main one, subagents, teammates, coordinator workers) runs the same loop,
//! and before each request the loop asks [`Conversation::fit`] whether the request still fits.
//! The size comes from the API's own usage figures plus an estimate of what was added since
//! ([`ContextTracker`]). Past the threshold ([`Window`]) two things happen, cheapest first:
//!
//! 1. old tool results are emptied ([`clear`]): the calls stay, answered by a placeholder that
//!    says what was there;
//! 2. if that does not bring the conversation well under the threshold, it is compacted: the
//!    model writes a summary ([`prompt`]) and the conversation becomes that summary plus the
//!    most recent turns ([`summarize`]).
//!
//! The system prompt and tools are never touched, so the prompt cache that holds them keeps
//! serving every request. A 400 "prompt is too long" from the API (the estimate was wrong, or
//! the window is smaller than the catalogue says) takes the same path instead of failing the
//! run. A compaction is reported as [`EventKind::CompactBoundary`]: stream-json prints it as a
//! `compact_boundary` line and the transcript records it, so `--resume` starts from it.

pub mod clear;
mod frame;
pub mod prompt;
pub mod summarize;
pub mod window;

pub use frame::LazyFrame;
pub use prompt::{manual_command, COMPACT_REQUEST_MARKER, SUMMARY_PREFIX};
pub use window::{ContextTracker, Window};

use crate::sink::EventSink;
use fleet_model::{ModelClient, ModelError, ModelResponse};
use fleet_protocol::{env, CompactBoundary, CompactTrigger, EventKind, Message};
use futures::future::BoxFuture;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What a `PreCompact` hook is told before a compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreCompactInput {
    pub trigger: CompactTrigger,
    /// The conversation's estimated size, in tokens.
    pub pre_tokens: u64,
    /// What the user asked the summary to focus on (`/compact <focus>`), if anything.
    pub custom_instructions: Option<String>,
    /// The agent about to compact (`main` for the session's own agent).
    pub agent_id: String,
}

/// The slot the hook engine fills to run `PreCompact` hooks: called before every compaction
/// (auto and manual) and awaited. What it returns (the hooks' output meant for the model) is
/// added to the summary instructions; `None` adds nothing. It cannot stop a compaction: a
/// conversation that no longer fits has no other way on.
pub type PreCompactHook =
    Arc<dyn Fn(PreCompactInput) -> BoxFuture<'static, Option<String>> + Send + Sync>;

/// How an agent keeps its conversation in the window; part of its [`crate::AgentConfig`].
#[derive(Clone)]
pub struct CompactSettings {
    /// Shrink the conversation on its own as it nears the window. Off, only a "prompt is too
    /// long" from the API (and `/compact`) compacts. `FLEET_DISABLE_AUTO_COMPACT=1` turns it off.
    pub auto: bool,
    /// Compact at this percentage of the window when that is earlier than the default
    /// (`FLEET_AUTOCOMPACT_PCT`).
    pub trigger_pct: Option<u64>,
    /// Run before each compaction; see [`PreCompactHook`].
    pub pre_compact: Option<PreCompactHook>,
}

impl Default for CompactSettings {
    fn default() -> Self {
        Self {
            auto: true,
            trigger_pct: None,
            pre_compact: None,
        }
    }
}

impl std::fmt::Debug for CompactSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactSettings")
            .field("auto", &self.auto)
            .field("trigger_pct", &self.trigger_pct)
            .field("pre_compact", &self.pre_compact.is_some())
            .finish()
    }
}

impl CompactSettings {
    /// The defaults with `FLEET_AUTOCOMPACT_PCT` and `FLEET_DISABLE_AUTO_COMPACT` applied. The
    /// binary checks both before anything runs; a bad value met here is logged and ignored.
    pub fn from_env() -> Self {
        let trigger_pct = env::FLEET_AUTOCOMPACT_PCT.get().unwrap_or_else(|err| {
            tracing::warn!("{err}; compacting at the default threshold");
            None
        });
        let disabled = env::FLEET_DISABLE_AUTO_COMPACT
            .is_on()
            .unwrap_or_else(|err| {
                tracing::warn!("{err}; automatic compaction stays on");
                false
            });
        Self {
            auto: !disabled,
            trigger_pct,
            pre_compact: None,
        }
    }
}

/// Why a compaction did not happen.
#[cfg(test)]
mod tests {
    use super::named_limit;

    #[test]
    fn the_limit_is_read_from_either_apis_message() {
        assert_eq!(
            named_limit("prompt is too long: 215000 tokens > 200000 maximum"),
            Some(200_000)
        );
        assert_eq!(
            named_limit(
                "This model's maximum context length is 8192 tokens. However, you asked for 9000"
            ),
            Some(8_192)
        );
        assert_eq!(
            named_limit(
                "request (289 tokens) exceeds the available context size (256 tokens), try \
                 increasing it"
            ),
            Some(256)
        );
        assert_eq!(named_limit("prompt is too long"), None);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    #[error("the run was cancelled during compaction")]
    Interrupted,
    #[error("the summary request failed: {0}")]
    Model(#[from] ModelError),
    #[error("the summary request came back without a summary")]
    NoSummary,
    #[error("there is nothing to compact: the conversation is a single message")]
    NothingToCompact,
    #[error("the compacted conversation still needs about {tokens} tokens, more than the {limit} the window allows")]
    StillTooLong { tokens: u64, limit: u64 },
}

/// Why the loop asks for room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Before a request: shrink only if past the threshold.
    Check,
    /// The API said the last request was too long: shrink now, whatever the estimate says.
    TooLong(TooLong),
}

/// The API's refusal of a prompt as too long, with the limit it named if it named one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong {
    /// The window the API says the model has (`> 200000 maximum`, `maximum context length
    /// is 8192 tokens`).
    pub limit: Option<u64>,
}

impl TooLong {
    /// The refusal in `err`, if it is one.
    pub fn from_error(err: &ModelError) -> Option<Self> {
        if !err.is_prompt_too_long() {
            return None;
        }
        let message = match err.root() {
            ModelError::Api { message, .. } | ModelError::StreamError { message, .. } => message,
            _ => return Some(Self { limit: None }),
        };
        Some(Self {
            limit: named_limit(message),
        })
    }
}

/// The window a "too long" message names: the number before `maximum` (Anthropic), after
/// `maximum context length is` (vLLM, OpenAI) or after `available context size` (llama-server:
/// "request (289 tokens) exceeds the available context size (256 tokens)").
fn named_limit(message: &str) -> Option<u64> {
    let number_in = |text: &str| {
        text.split(|c: char| !c.is_ascii_digit())
            .find(|word| !word.is_empty())
            .and_then(|word| word.parse().ok())
    };
    for marker in ["maximum context length is", "available context size"] {
        if let Some((_, after)) = message.split_once(marker) {
            return number_in(after);
        }
    }
    let (before, _) = message.split_once(" maximum")?;
    let (_, last) = before.rsplit_once('>')?;
    number_in(last)
}

/// Messages a failed automatic compaction waits for before it is tried again, so a summary
/// request that keeps failing is not repeated on every turn.
const RETRY_AFTER_MESSAGES: usize = 6;

/// One agent's conversation, borrowed from the agent for the time of a check or compaction.
pub struct Conversation<'a> {
    pub client: &'a dyn ModelClient,
    /// The agent's request without messages: model, system prompt, tools, thinking.
    pub frame: LazyFrame<'a>,
    pub window: Window,
    pub settings: &'a CompactSettings,
    pub messages: &'a mut Vec<Message>,
    pub tracker: &'a mut ContextTracker,
    pub sink: &'a EventSink,
    pub cancel: &'a CancellationToken,
}

impl Conversation<'_> {
    /// Grounds a size nothing reported yet (the first request, a rewritten conversation) on
    /// the server's own count of the prompt, where an OpenAI-compatible server can give one:
    /// an estimate from bytes counts tool definitions a local server's chat template may drop
    /// (23 KB of schemas, ≈ 5,800 tokens, on a 4k window), which would shrink the reply to
    /// the minimum and compact a conversation that fits.
    async fn measure(&mut self) {
        if self.client.provider() != fleet_model::Provider::OpenAi
            || self.tracker.is_grounded(self.messages.len())
        {
            return;
        }
        let mut request = self.frame.get().clone();
        request.messages = self.messages.clone().into();
        if let Some(tokens) = self.client.count_prompt_tokens(&request).await {
            self.tracker.ground(tokens, self.messages.len());
        }
    }

    /// Makes room if the next request would not fit (or the API said it did not). Returns the
    /// summary request's response when a compaction ran, for the run's accounting.
    ///
    /// An automatic compaction that fails is logged and the run goes on (the request may
    /// still fit: the threshold keeps a reserve); after a "prompt is too long" the failure is
    /// returned, as the request cannot succeed.
    pub async fn fit(mut self, need: Need) -> Result<Option<ModelResponse>, CompactError> {
        let forced = matches!(need, Need::TooLong(_));
        if let Need::TooLong(refusal) = need {
            // The estimate said it fitted: believe the API's limit from now on, or, when it
            // named none, a little less than what it refused.
            let refused = self.tracker.estimate(&self.frame, self.messages);
            let limit = refusal.limit.unwrap_or(refused / 10 * 9);
            self.tracker.limit = Some(self.tracker.limit.map_or(limit, |l| l.min(limit)));
        }
        self.window = self.window.capped(self.tracker.limit);
        if !forced {
            self.measure().await;
        }
        let before = self.tracker.estimate(&self.frame, self.messages);
        self.tracker.remember_estimate(before, self.messages.len());
        if !forced {
            let waiting = self
                .tracker
                .failed_at
                .is_some_and(|at| self.messages.len() < at + RETRY_AFTER_MESSAGES);
            if !self.settings.auto || waiting || before <= self.window.threshold {
                return Ok(None);
            }
        }
        let cleared = clear::clear_old_results(self.messages, self.window.recent_budget());
        if cleared.results > 0 {
            self.tracker.forget();
            let size = self.tracker.estimate(&self.frame, self.messages);
            tracing::debug!(
                results = cleared.results,
                tokens = cleared.tokens,
                size,
                "cleared old tool results"
            );
            if !forced && size <= self.window.low_water() {
                return Ok(None);
            }
        }
        match self.compact_from(CompactTrigger::Auto, None, before).await {
            Ok(response) => Ok(Some(response)),
            Err(CompactError::Interrupted) => Err(CompactError::Interrupted),
            Err(err) if forced => Err(err),
            Err(err) => {
                tracing::warn!("could not compact the conversation: {err}; carrying on");
                Ok(None)
            }
        }
    }

    /// Summarises the conversation and replaces it with the summary plus the most recent
    /// turns; `focus` is what the summary should keep in view.
    pub async fn compact(
        &mut self,
        trigger: CompactTrigger,
        focus: Option<&str>,
    ) -> Result<ModelResponse, CompactError> {
        self.window = self.window.capped(self.tracker.limit);
        let before = self.tracker.estimate(&self.frame, self.messages);
        self.compact_from(trigger, focus, before).await
    }

    /// [`Self::compact`] of a conversation that measured `pre_tokens` before anything was
    /// done to it (clearing tool results comes first, and the boundary reports the size
    /// before both).
    async fn compact_from(
        &mut self,
        trigger: CompactTrigger,
        focus: Option<&str>,
        pre_tokens: u64,
    ) -> Result<ModelResponse, CompactError> {
        let outcome = self.compact_once(trigger, focus, pre_tokens).await;
        self.tracker.failed_at = match &outcome {
            Err(CompactError::Interrupted) | Ok(_) => None,
            Err(_) => Some(self.messages.len()),
        };
        outcome
    }

    async fn compact_once(
        &mut self,
        trigger: CompactTrigger,
        focus: Option<&str>,
        pre_tokens: u64,
    ) -> Result<ModelResponse, CompactError> {
        let start = summarize::suffix_start(self.messages, self.window.recent_budget())
            .ok_or(CompactError::NothingToCompact)?;
        let mut focus = focus.map(str::to_string).filter(|f| !f.is_empty());
        if let Some(hook) = &self.settings.pre_compact {
            let input = PreCompactInput {
                trigger,
                pre_tokens,
                custom_instructions: focus.clone(),
                agent_id: self.sink.agent().agent_id.clone(),
            };
            if let Some(extra) = hook(input).await.filter(|e| !e.trim().is_empty()) {
                focus = Some(match focus {
                    Some(asked) => format!("{asked}\n\n{extra}"),
                    None => extra,
                });
            }
        }
        let response = summarize::request_summary(
            self.client,
            self.frame.get(),
            self.window,
            self.messages,
            focus.as_deref(),
            self.cancel,
        )
        .await?;
        let summary = summarize::summary_text(&response).ok_or(CompactError::NoSummary)?;
        let mut next = summarize::compacted(&summary, self.messages, start);
        let frame_tokens = window::estimate_tokens(self.frame.get());
        let mut post_tokens = frame_tokens + window::estimate_messages(&next);
        if post_tokens > self.window.threshold {
            clear::clear_all_results(&mut next[1..]);
            post_tokens = frame_tokens + window::estimate_messages(&next);
        }
        if post_tokens > self.window.context {
            return Err(CompactError::StillTooLong {
                tokens: post_tokens,
                limit: self.window.context,
            });
        }
        *self.messages = next;
        self.tracker.forget();
        self.sink
            .emit(EventKind::CompactBoundary(CompactBoundary {
                trigger,
                pre_tokens,
                post_tokens,
                messages: self.messages.clone(),
            }))
            .await;
        Ok(response)
    }
}
