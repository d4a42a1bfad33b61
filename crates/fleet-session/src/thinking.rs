//! `--thinking`, `--max-thinking-tokens` and `--thinking-display` (the Agent SDKs' `thinking`
//! and `max_thinking_tokens` options) on top of fleet's effort (`--effort`, settings).
//!
//! | flags | the request's `thinking` |
//! |---|---|
//! | `--thinking disabled`, or `--max-thinking-tokens 0` | none |
//! | `--max-thinking-tokens N` | `enabled`, `budget_tokens: N` (wins over `--effort`) |
//! | `--thinking enabled` | `enabled` with the budget of `--effort` (or settings), else 31,999 |
//! | `--thinking adaptive` | `adaptive` (the model decides; newer models only) |
//! | none of them | what `--effort` / the settings' `effort` give |
//!
//! Like effort, thinking goes only to models the catalogue says take it; `--thinking-display`
//! adds `display` to whatever is sent. Subagents get the budget (as their effort) but not
//! adaptive thinking or the display.

use fleet_model::Catalog;
use fleet_protocol::ThinkingConfig;
use fleet_runtime::definitions::Effort;
use fleet_runtime::AgentConfig;

/// What the run's flags and settings say about thinking.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thinking {
    /// The effort subagents inherit and the main agent's budget comes from.
    effort: Option<Effort>,
    adaptive: bool,
    off: bool,
    display: Option<String>,
}

impl Thinking {
    /// From `effort` (`--effort`, else the settings' `effort`), `--thinking` (`mode`),
    /// `--max-thinking-tokens` and `--thinking-display`.
    pub fn new(
        effort: Option<Effort>,
        mode: Option<&str>,
        max_thinking_tokens: Option<u32>,
        display: Option<String>,
    ) -> Self {
        let effort = match (max_thinking_tokens, mode) {
            (Some(tokens), _) => Some(Effort::Tokens(tokens)),
            (None, Some("enabled")) => effort.or_else(|| Some(Effort::Level("high".into()))),
            _ => effort,
        };
        Self {
            off: mode == Some("disabled") || max_thinking_tokens == Some(0),
            adaptive: mode == Some("adaptive") && max_thinking_tokens.is_none(),
            effort,
            display,
        }
    }

    /// The effort subagents inherit: none when thinking is off.
    pub fn effort(&self) -> Option<Effort> {
        if self.off {
            None
        } else {
            self.effort.clone()
        }
    }

    /// Whether thinking is switched off altogether.
    pub fn is_off(&self) -> bool {
        self.off
    }

    /// Sets the main agent's thinking (and `max_tokens`) for its model.
    pub fn apply(&self, config: &mut AgentConfig, catalog: &Catalog) {
        if self.off {
            config.model.thinking = None;
            return;
        }
        if self.adaptive {
            if catalog.info(&config.model.id).thinking {
                config.model.thinking = Some(ThinkingConfig::Adaptive {
                    display: self.display.clone(),
                });
            }
            return;
        }
        fleet_runtime::effort::apply(config, self.effort.as_ref(), catalog);
        if let Some(ThinkingConfig::Enabled { display, .. }) = &mut config.model.thinking {
            display.clone_from(&self.display);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn level(text: &str) -> Option<Effort> {
        Some(fleet_runtime::effort::parse_effort(text).unwrap())
    }

    #[test]
    fn the_budget_beats_effort_and_disabled_beats_everything() {
        let t = Thinking::new(level("low"), None, Some(5000), None);
        assert_eq!(t.effort(), Some(Effort::Tokens(5000)));
        let t = Thinking::new(level("high"), Some("disabled"), None, None);
        assert_eq!(t.effort(), None);
        let t = Thinking::new(None, Some("enabled"), None, None);
        assert_eq!(t.effort(), Some(Effort::Level("high".into())));
        let t = Thinking::new(level("low"), Some("enabled"), None, None);
        assert_eq!(t.effort(), Some(Effort::Level("low".into())));
        let t = Thinking::new(level("high"), None, Some(0), None);
        assert_eq!(t.effort(), None);
        assert!(t.is_off());
    }
}
