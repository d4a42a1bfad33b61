//! Effort: how hard the model thinks before it answers, set by an agent definition's
//! `effort`, `--effort` or the `effort` settings key.
//!
//! fleet sends effort as extended thinking (`thinking: {type: enabled, budget_tokens}`) to
//! models the catalogue says take it, and drops it for the rest (older and local models
//! reject or ignore the field). The levels map to budgets as Claude Code's thinking keywords
//! do ("think", "think hard", "ultrathink"):
//!
//! | effort | `budget_tokens` |
//! |---|---|
//! | `low` | 4,000 |
//! | `medium` | 10,000 |
//! | `high` | 31,999 |
//! | `xhigh` | 48,000 (the Agent SDKs' level between high and max) |
//! | `max` | the model's output limit less 8,192 for the answer |
//! | a number `n` | `n` (`0` turns thinking off) |
//!
//! The budget is at least 1,024 (the API's minimum) and leaves at least 1,024 tokens of the
//! model's output limit for the answer; `max_tokens` is raised to budget + 8,192 when it was
//! lower, never past the model's limit, because the API requires it above the budget.

use crate::config::AgentConfig;
use crate::definitions::Effort;
use fleet_model::{Catalog, ModelInfo};
use fleet_protocol::ThinkingConfig;

pub const LOW_BUDGET: u32 = 4_000;
pub const MEDIUM_BUDGET: u32 = 10_000;
pub const HIGH_BUDGET: u32 = 31_999;
pub const XHIGH_BUDGET: u32 = 48_000;
/// The named levels, lowest first.
pub const LEVELS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];
/// The API refuses a smaller thinking budget.
pub const MIN_BUDGET: u32 = 1_024;
/// Tokens kept for the answer after the thinking, when the output limit allows.
pub const ANSWER_ROOM: u32 = 8_192;

/// An effort that is neither a level nor a whole number of tokens; `given` as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("effort must be low, medium, high, xhigh, max or a whole number of tokens, not {given:?}")]
pub struct EffortError {
    pub given: String,
}

/// Reads `low`, `medium`, `high`, `xhigh`, `max` (any case) or a whole number of tokens.
pub fn parse_effort(text: &str) -> Result<Effort, EffortError> {
    let level = text.trim().to_ascii_lowercase();
    if LEVELS.contains(&level.as_str()) {
        return Ok(Effort::Level(level));
    }
    level
        .parse::<u32>()
        .map(Effort::Tokens)
        .map_err(|_| EffortError {
            given: text.to_string(),
        })
}

/// The effort as a person would write it: `high`, `20000`.
pub fn effort_label(effort: &Effort) -> String {
    match effort {
        Effort::Level(level) => level.clone(),
        Effort::Tokens(n) => n.to_string(),
    }
}

/// What a request carries for `effort` on the model `info` describes, with `max_tokens` as
/// configured: the thinking setting and the `max_tokens` to send with it, or `None` when the
/// model does not take thinking (or the effort turns it off).
pub fn thinking_for(
    effort: &Effort,
    info: &ModelInfo,
    max_tokens: u32,
) -> Option<(ThinkingConfig, u32)> {
    if !info.thinking {
        return None;
    }
    let ceiling = u32::try_from(info.max_output_tokens).unwrap_or(u32::MAX);
    if ceiling < MIN_BUDGET * 2 {
        return None;
    }
    let wanted = match effort {
        Effort::Tokens(0) => return None,
        Effort::Tokens(n) => *n,
        Effort::Level(level) => match level.as_str() {
            "low" => LOW_BUDGET,
            "medium" => MEDIUM_BUDGET,
            "high" => HIGH_BUDGET,
            "xhigh" => XHIGH_BUDGET,
            _ => ceiling.saturating_sub(ANSWER_ROOM),
        },
    };
    let budget = wanted.max(MIN_BUDGET).min(ceiling - MIN_BUDGET);
    let max_tokens = max_tokens
        .max(budget.saturating_add(ANSWER_ROOM))
        .min(ceiling);
    Some((
        ThinkingConfig::Enabled {
            budget_tokens: u64::from(budget),
            display: None,
        },
        max_tokens,
    ))
}

/// Sets `config`'s thinking from `effort` for its model; with no effort, or a model that does
/// not take it, the config is left as it was.
pub fn apply(config: &mut AgentConfig, effort: Option<&Effort>, catalog: &Catalog) {
    let Some(effort) = effort else {
        return;
    };
    let info = catalog.info(&config.model.id);
    match thinking_for(effort, &info, config.model.max_tokens) {
        Some((thinking, max_tokens)) => {
            config.model.thinking = Some(thinking);
            config.model.max_tokens = max_tokens;
        }
        None => tracing::debug!(
            model = %config.model.id,
            "effort {} dropped: the model does not take extended thinking",
            effort_label(effort)
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn budget(effort: &str, model: &str, max_tokens: u32) -> Option<(u64, u32)> {
        let info = Catalog::builtin().info(model);
        thinking_for(&parse_effort(effort).unwrap(), &info, max_tokens).map(|(t, m)| match t {
            ThinkingConfig::Enabled { budget_tokens, .. } => (budget_tokens, m),
            ThinkingConfig::Adaptive { .. } | ThinkingConfig::Disabled => (0, m),
        })
    }

    #[test]
    fn levels_map_to_budgets_within_the_model_limit() {
        assert_eq!(budget("low", "sonnet", 32_000), Some((4_000, 32_000)));
        assert_eq!(budget("Medium", "sonnet", 32_000), Some((10_000, 32_000)));
        assert_eq!(budget("high", "sonnet", 32_000), Some((31_999, 40_191)));
        assert_eq!(budget("xhigh", "sonnet", 32_000), Some((48_000, 56_192)));
        assert_eq!(budget("max", "sonnet", 32_000), Some((55_808, 64_000)));
        // claude-opus-4-1 may write 32,000 tokens: the budget leaves room for an answer.
        assert_eq!(
            budget("high", "claude-opus-4-1", 32_000),
            Some((30_976, 32_000))
        );
        assert_eq!(budget("100", "sonnet", 32_000), Some((1_024, 32_000)));
        assert_eq!(budget("0", "sonnet", 32_000), None);
    }

    #[test]
    fn models_without_thinking_get_none() {
        assert_eq!(budget("high", "claude-3-5-haiku", 8_192), None);
        assert_eq!(budget("high", "qwen2.5-coder", 8_192), None);
    }

    #[test]
    fn parsing_names_the_bad_value() {
        assert_eq!(parse_effort("MAX").unwrap(), Effort::Level("max".into()));
        assert_eq!(parse_effort("2048").unwrap(), Effort::Tokens(2048));
        let err = parse_effort("lots").unwrap_err();
        assert_eq!(err.given, "lots");
        assert!(err.to_string().contains("\"lots\""));
    }
}
