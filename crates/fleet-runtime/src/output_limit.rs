//! How long a reply an agent asks for (`max_tokens`).
//!
//! A fixed 32,000 suits no one: it is half of what current Claude models may write, and on a
//! small local model it lets a rambling reply run for a quarter of an hour, or makes a server
//! that checks prompt + `max_tokens` against its window (vLLM) refuse every request. So the
//! limit is the model's own (the catalogue's figure for known models; for a model fleet does
//! not know, what its server published, at most a quarter of its window), the user may set it
//! (`--max-output-tokens`, `FLEET_MAX_OUTPUT_TOKENS`, `CLAUDE_CODE_MAX_OUTPUT_TOKENS`,
//! `maxOutputTokens`), and each request asks for no more than the window leaves after the
//! prompt.

use fleet_model::ModelInfo;

/// The least a request asks for even when the window looks full: the estimate of the prompt
/// may be high, and a server that really is full answers "prompt too long", which compaction
/// handles.
const MIN_REPLY: u32 = 256;

/// The room kept free of the window beyond the estimated prompt, as a fraction: the prompt is
/// estimated from bytes between replies and may come out a little low.
const ESTIMATE_MARGIN_DIVISOR: u64 = 50;

/// The limit for `model` when the user set none: the catalogue's output limit for a model it
/// knows; for any other, the figure its server gave (or the catalogue's modest guess), at most
/// a quarter of its window so that a long answer still leaves room for the conversation.
pub fn natural(model: &ModelInfo) -> u32 {
    let tokens = if model.known {
        model.max_output_tokens
    } else {
        model
            .max_output_tokens
            .min((model.context_window / 4).max(u64::from(MIN_REPLY)))
    };
    clamp_u32(tokens)
}

/// The limit for `model`: the user's when set (no more than a known model can write: the API
/// would refuse more), else [`natural`].
pub fn for_model(model: &ModelInfo, asked: Option<u32>) -> u32 {
    match asked {
        Some(asked) if model.known => asked.min(clamp_u32(model.max_output_tokens)).max(1),
        Some(asked) => asked.max(1),
        None => natural(model),
    }
}

/// `max_tokens` for one request whose prompt is about `prompt_tokens`: the agent's limit, no
/// more than the window leaves, and never below [`MIN_REPLY`].
pub fn fit(max_tokens: u32, context_window: u64, prompt_tokens: u64) -> u32 {
    let margin = context_window / ESTIMATE_MARGIN_DIVISOR;
    let room = context_window
        .saturating_sub(prompt_tokens)
        .saturating_sub(margin);
    max_tokens
        .min(clamp_u32(room))
        .max(MIN_REPLY.min(max_tokens))
}

/// A larger limit to try after a reply was cut by `current` in the middle of a tool call's
/// input: twice as much, up to what the model can write (a known model's limit; for others a
/// half of the window), and only when the user did not fix the limit. `None` when it cannot
/// grow.
pub fn raised(model: &ModelInfo, current: u32, asked: Option<u32>) -> Option<u32> {
    if asked.is_some() {
        return None;
    }
    let ceiling = if model.known {
        model.max_output_tokens
    } else {
        (model.context_window / 2).max(u64::from(MIN_REPLY))
    };
    let next = clamp_u32(u64::from(current).saturating_mul(2).min(ceiling));
    (next > current).then_some(next)
}

fn clamp_u32(tokens: u64) -> u32 {
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_model::Catalog;

    fn local(context: u64) -> ModelInfo {
        ModelInfo {
            context_window: context,
            ..Catalog::builtin().info("smollm2-135m")
        }
    }

    #[test]
    fn known_models_get_their_own_output_limit() {
        let catalog = Catalog::builtin();
        for (model, limit) in [
            ("sonnet", 64_000),
            ("opus", 64_000),
            ("claude-opus-4-1-20250805", 32_000),
            ("claude-3-5-haiku-20241022", 8_192),
            ("haiku", 64_000),
        ] {
            assert_eq!(natural(&catalog.info(model)), limit, "{model}");
        }
    }

    #[test]
    fn unknown_models_get_a_modest_limit_within_a_quarter_of_their_window() {
        assert_eq!(natural(&Catalog::builtin().info("qwen2.5-coder:7b")), 8_192);
        assert_eq!(natural(&local(4_096)), 1_024);
        assert_eq!(natural(&local(512)), 256);
    }

    #[test]
    fn the_users_limit_wins_but_not_past_a_known_models_own() {
        let catalog = Catalog::builtin();
        assert_eq!(for_model(&catalog.info("sonnet"), Some(1_000)), 1_000);
        assert_eq!(for_model(&catalog.info("sonnet"), Some(500_000)), 64_000);
        assert_eq!(for_model(&local(4_096), Some(3_000)), 3_000);
        assert_eq!(for_model(&local(4_096), None), 1_024);
    }

    #[test]
    fn a_request_asks_for_no_more_than_the_window_leaves() {
        // 8192 window, 6000-token prompt, 163 tokens of margin.
        assert_eq!(fit(4_096, 8_192, 6_000), 2_029);
        assert_eq!(fit(1_000, 8_192, 100), 1_000);
        assert_eq!(fit(4_096, 8_192, 9_000), 256);
        assert_eq!(fit(100, 8_192, 9_000), 100);
    }

    #[test]
    fn a_cut_tool_call_may_ask_for_more_only_when_the_user_set_no_limit() {
        let catalog = Catalog::builtin();
        assert_eq!(raised(&local(8_192), 1_024, None), Some(2_048));
        assert_eq!(raised(&local(8_192), 4_096, None), None);
        assert_eq!(raised(&local(8_192), 1_024, Some(1_024)), None);
        assert_eq!(raised(&catalog.info("sonnet"), 64_000, None), None);
        assert_eq!(raised(&catalog.info("sonnet"), 20_000, None), Some(40_000));
    }
}
