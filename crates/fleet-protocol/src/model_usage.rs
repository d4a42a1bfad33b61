//! Usage and cost of one model over a run, as `modelUsage` reports it.
//!
//! Replies whose server reported no usage (see [`Usage::unreported`]) are counted apart: they
//! add nothing to the token counts or the cost, and when every reply of a model was one of
//! them, the counts and the cost are unknown rather than zero, so they go out as `null`.

use crate::usage::Usage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "ModelUsageWire", from = "ModelUsageWire")]
pub struct ModelUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cost_usd: f64,
    pub context_window: u64,
    pub max_output_tokens: u64,
    /// The name the server answered with, when it is not the one the entry is keyed by (the
    /// model asked for): a local server that names its file, a dated snapshot.
    pub served_model: Option<String>,
    /// Replies that reported no usage; they are in none of the counts above.
    pub unreported_replies: u64,
}

impl ModelUsage {
    /// Counts one reply and what it cost (nothing, when it reported no usage).
    pub fn add_reply(&mut self, usage: &Usage, cost: f64) {
        if !usage.is_reported() {
            self.unreported_replies += 1;
            return;
        }
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cache_read_input_tokens += usage.cache_read();
        self.cache_creation_input_tokens += usage.cache_creation();
        self.cost_usd += cost;
    }

    /// Whether nothing counted here came from a report: only unreported replies, so the
    /// figures are unknown, not zero.
    pub fn is_unreported(&self) -> bool {
        self.unreported_replies > 0
            && self.input_tokens == 0
            && self.output_tokens == 0
            && self.cache_read_input_tokens == 0
            && self.cache_creation_input_tokens == 0
            && self.cost_usd == 0.0
    }

    /// Every token counted, input of all kinds and output.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens
            + self.output_tokens
            + self.cache_read_input_tokens
            + self.cache_creation_input_tokens
    }
}

/// [`ModelUsage`] on the wire: Claude Code's keys in its order, the counts and cost `null`
/// when unknown, and fleet's additions after them, left out when they say nothing.
#[doc(hidden)]
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsageWire {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    #[serde(rename = "costUSD")]
    cost_usd: Option<f64>,
    #[serde(default)]
    context_window: u64,
    #[serde(default)]
    max_output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    served_model: Option<String>,
    #[serde(
        default,
        rename = "usageUnreportedReplies",
        skip_serializing_if = "is_zero"
    )]
    unreported_replies: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl From<ModelUsage> for ModelUsageWire {
    fn from(m: ModelUsage) -> Self {
        let known = !m.is_unreported();
        let count = |n: u64| known.then_some(n);
        Self {
            input_tokens: count(m.input_tokens),
            output_tokens: count(m.output_tokens),
            cache_read_input_tokens: count(m.cache_read_input_tokens),
            cache_creation_input_tokens: count(m.cache_creation_input_tokens),
            cost_usd: known.then_some(m.cost_usd),
            context_window: m.context_window,
            max_output_tokens: m.max_output_tokens,
            served_model: m.served_model,
            unreported_replies: m.unreported_replies,
        }
    }
}

impl From<ModelUsageWire> for ModelUsage {
    fn from(w: ModelUsageWire) -> Self {
        Self {
            input_tokens: w.input_tokens.unwrap_or(0),
            output_tokens: w.output_tokens.unwrap_or(0),
            cache_read_input_tokens: w.cache_read_input_tokens.unwrap_or(0),
            cache_creation_input_tokens: w.cache_creation_input_tokens.unwrap_or(0),
            cost_usd: w.cost_usd.unwrap_or(0.0),
            context_window: w.context_window,
            max_output_tokens: w.max_output_tokens,
            served_model: w.served_model,
            unreported_replies: w.unreported_replies,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reported(input: u64, output: u64) -> Usage {
        Usage::of(input, output)
    }

    #[test]
    fn a_model_that_reported_keeps_claude_codes_shape() {
        let mut m = ModelUsage {
            context_window: 200_000,
            max_output_tokens: 64_000,
            ..ModelUsage::default()
        };
        m.add_reply(&reported(10, 5), 0.25);
        let text = serde_json::to_string(&m).unwrap_or_default();
        assert_eq!(
            text,
            r#"{"inputTokens":10,"outputTokens":5,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.25,"contextWindow":200000,"maxOutputTokens":64000}"#
        );
    }

    #[test]
    fn a_model_that_never_reported_has_null_figures_and_says_how_many_replies() {
        let mut m = ModelUsage {
            served_model: Some("qwen.gguf".into()),
            ..ModelUsage::default()
        };
        m.add_reply(&Usage::unreported(), 0.0);
        // Whatever a caller priced it at, a reply without usage adds no cost.
        m.add_reply(&Usage::unreported(), 0.5);
        assert_eq!(m.cost_usd, 0.0);
        let value = serde_json::to_value(&m).unwrap_or_default();
        assert_eq!(value["inputTokens"], json!(null));
        assert_eq!(value["outputTokens"], json!(null));
        assert_eq!(value["costUSD"], json!(null));
        assert_eq!(value["servedModel"], "qwen.gguf");
        assert_eq!(value["usageUnreportedReplies"], 2);
        let back: Option<ModelUsage> = serde_json::from_value(value).ok();
        assert_eq!(back, Some(m));
    }

    #[test]
    fn some_replies_reported_gives_their_sums_and_the_count_of_the_others() {
        let mut m = ModelUsage::default();
        m.add_reply(&Usage::unreported(), 0.0);
        m.add_reply(&reported(7, 3), 0.0);
        assert!(!m.is_unreported());
        let value = serde_json::to_value(&m).unwrap_or_default();
        assert_eq!(value["inputTokens"], 7);
        assert_eq!(value["costUSD"], 0.0);
        assert_eq!(value["usageUnreportedReplies"], 1);
    }
}
