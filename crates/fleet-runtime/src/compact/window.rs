//! How big the conversation is, and how big it may grow.
//!
//! The size comes from the API itself wherever possible: each reply's usage says how many
//! tokens its request held (fresh input, cache reads and cache writes) and how many it wrote.
//! Only what was added since that reply (tool results, notifications, a new prompt) is
//! estimated, from the bytes it takes as JSON. When the conversation was rewritten (results
//! cleared, a compaction, a resumed session) there is no reply to go by, and the whole request
//! is estimated once until the next reply grounds it again.

use fleet_model::ModelInfo;
use fleet_protocol::{Message, Usage};
use serde::Serialize;

/// The most a reply is given room for, however large `max_tokens` is: replies near that size
/// are rare, and holding back more would waste a fifth of a small model's window.
const MAX_REPLY_RESERVE: u64 = 20_000;

/// A model's window and the size at which the conversation is made smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The model's context window, in tokens.
    pub context: u64,
    /// Past this many tokens (request and room for the reply) the conversation is shrunk
    /// before the next request goes out.
    pub threshold: u64,
}

impl Window {
    /// The window for `model` asked for replies of up to `max_tokens`, triggering at
    /// `trigger_pct` percent of the window when that comes earlier than the default (the
    /// window minus room for the reply: `max_tokens`, at most 20k tokens and a quarter of the
    /// window).
    pub fn new(model: &ModelInfo, max_tokens: u32, trigger_pct: Option<u64>) -> Self {
        let context = model.context_window.max(1);
        let reserve = u64::from(max_tokens)
            .min(MAX_REPLY_RESERVE)
            .min(context / 4);
        let by_default = context - reserve;
        let threshold = match trigger_pct {
            Some(pct) => (context.saturating_mul(pct.clamp(1, 100)) / 100).min(by_default),
            None => by_default,
        };
        Self {
            context,
            threshold: threshold.max(1),
        }
    }

    /// This window, no larger than `limit`: the size the API showed it really accepts when
    /// it refused a prompt as too long. The threshold keeps 15% of it in reserve, as the
    /// estimates that missed once may miss again.
    pub fn capped(self, limit: Option<u64>) -> Self {
        let Some(limit) = limit.filter(|l| *l < self.context) else {
            return self;
        };
        Self {
            context: limit,
            threshold: self.threshold.min(limit / 100 * 85).max(1),
        }
    }

    /// The size the conversation should come down to when shrinking it: low enough that a
    /// good number of turns fit before it has to be shrunk again.
    pub fn low_water(&self) -> u64 {
        self.threshold / 10 * 8
    }

    /// How many tokens of the most recent turns a compaction keeps word for word.
    pub fn recent_budget(&self) -> u64 {
        self.threshold / 4
    }
}

/// The conversation's size as the API last reported it, to add estimates to.
#[derive(Debug, Clone, Default)]
pub struct ContextTracker {
    /// Tokens of the last request and its reply, and how many messages (the reply included)
    /// those covered.
    anchor: Option<(u64, usize)>,
    /// The conversation's length when an automatic compaction last failed, to wait a few
    /// turns before trying again.
    pub(super) failed_at: Option<usize>,
    /// The largest prompt the API has shown it accepts, once it refused one as too long.
    pub(super) limit: Option<u64>,
    /// The size last estimated before a request, and the conversation length it was for:
    /// the request's output limit is fitted to it without estimating twice.
    last_estimate: Option<(u64, usize)>,
}

impl ContextTracker {
    /// Records a reply's usage; `messages` is the conversation's length with the reply
    /// committed. A reply without usage figures (some OpenAI-compatible servers) leaves the
    /// size to estimates.
    pub fn observe(&mut self, usage: &Usage, messages: usize) {
        let tokens =
            usage.input_tokens + usage.cache_read() + usage.cache_creation() + usage.output_tokens;
        self.anchor = (usage.input_tokens + usage.cache_read() + usage.cache_creation() > 0)
            .then_some((tokens, messages));
    }

    /// Takes `tokens`, the server's own count of the prompt of a conversation of `messages`
    /// messages, as its size until the next reply reports one.
    pub fn ground(&mut self, tokens: u64, messages: usize) {
        self.anchor = Some((tokens, messages));
        self.last_estimate = None;
    }

    /// Whether the size of a conversation of `messages` messages rests on a figure from the
    /// server (a reply's usage or its count of the prompt) rather than on estimates alone.
    pub fn is_grounded(&self, messages: usize) -> bool {
        self.anchor.is_some_and(|(_, covered)| covered <= messages)
    }

    /// Remembers the size estimated for a conversation of `messages` messages.
    pub fn remember_estimate(&mut self, tokens: u64, messages: usize) {
        self.last_estimate = Some((tokens, messages));
    }

    /// The size of the next request, as last estimated when the conversation still has that
    /// length, else estimated now.
    pub fn prompt_estimate(&self, frame: &super::LazyFrame<'_>, messages: &[Message]) -> u64 {
        match self.last_estimate {
            Some((tokens, len)) if len == messages.len() => tokens,
            _ => self.estimate(frame, messages),
        }
    }

    /// The largest prompt the API has shown it accepts, once it refused one as too long.
    pub fn proven_limit(&self) -> Option<u64> {
        self.limit
    }

    /// Forgets the reported size: the conversation was rewritten.
    pub fn forget(&mut self) {
        self.anchor = None;
        self.last_estimate = None;
    }

    /// The size of the next request: `frame` (model, system prompt, tools) with `messages`.
    pub fn estimate(&self, frame: &super::LazyFrame<'_>, messages: &[Message]) -> u64 {
        match self.anchor {
            Some((tokens, covered)) if covered <= messages.len() => {
                tokens + estimate_messages(&messages[covered..])
            }
            _ => estimate_tokens(frame.get()) + estimate_messages(messages),
        }
    }
}

/// Tokens of a list of messages, estimated.
pub fn estimate_messages(messages: &[Message]) -> u64 {
    messages.iter().map(estimate_tokens).sum()
}

/// Tokens of anything sent to the API, estimated as a quarter of its JSON bytes (the ratio
/// for English text; code and JSON come out a little denser, which the API's own figures
/// correct on the next reply).
pub fn estimate_tokens<T: Serialize + ?Sized>(value: &T) -> u64 {
    let mut counter = ByteCounter(0);
    // Serialising plain data into a counter cannot fail; a value that somehow does counts
    // as what was written before the failure.
    let _ = serde_json::to_writer(&mut counter, value);
    (counter.0 as u64).div_ceil(4)
}

/// Counts bytes instead of keeping them, so estimating a large conversation allocates
/// nothing.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use fleet_model::Catalog;

    #[test]
    fn the_threshold_leaves_room_for_the_reply_and_the_override_only_lowers_it() {
        let info = Catalog::builtin().info("claude-sonnet-4-5");
        let window = Window::new(&info, 32_000, None);
        assert_eq!(window.context, 200_000);
        assert_eq!(window.threshold, 180_000);
        assert_eq!(Window::new(&info, 32_000, Some(50)).threshold, 100_000);
        assert_eq!(Window::new(&info, 32_000, Some(100)).threshold, 180_000);
        let small = ModelInfo {
            context_window: 20_000,
            ..info
        };
        assert_eq!(Window::new(&small, 32_000, None).threshold, 15_000);
    }

    #[test]
    fn the_reported_size_is_topped_up_with_estimates_of_what_came_after() {
        let frame = super::super::LazyFrame::ready(fleet_protocol::MessagesRequest::new(
            "m",
            100,
            Vec::new(),
        ));
        let mut messages = vec![Message::user_text("hello")];
        let mut tracker = ContextTracker::default();
        let unanchored = tracker.estimate(&frame, &messages);
        assert!(unanchored > 0);
        tracker.observe(
            &Usage {
                input_tokens: 1_000,
                output_tokens: 10,
                ..Usage::default()
            },
            1,
        );
        assert_eq!(tracker.estimate(&frame, &messages), 1_010);
        messages.push(Message::user_text("x".repeat(400)));
        let grown = tracker.estimate(&frame, &messages);
        assert!((1_110..1_130).contains(&grown), "{grown}");
        tracker.forget();
        assert!(tracker.estimate(&frame, &messages) < 1_000);
    }

    #[test]
    fn with_a_reported_size_the_frame_is_never_built() {
        let frame = super::super::LazyFrame::new(|| {
            fleet_protocol::MessagesRequest::new("m", 100, Vec::new())
        });
        let messages = vec![Message::user_text("hello")];
        let mut tracker = ContextTracker::default();
        tracker.observe(
            &Usage {
                input_tokens: 1_000,
                ..Usage::default()
            },
            1,
        );
        assert_eq!(tracker.estimate(&frame, &messages), 1_000);
        assert!(!frame.is_built(), "the tools were cloned for nothing");
        tracker.forget();
        assert!(tracker.estimate(&frame, &messages) > 0);
        assert!(frame.is_built());
    }
}
