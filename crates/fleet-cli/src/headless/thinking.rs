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

use crate::args::PrintArgs;
use crate::settings::Settings;
use fleet_model::Catalog;
use fleet_protocol::ThinkingConfig;
use fleet_runtime::definitions::Effort;
use fleet_runtime::AgentConfig;

/// What the run's flags and settings say about thinking.
#[derive(Debug, Clone, PartialEq)]
pub struct Thinking {
    /// The effort subagents inherit and the main agent's budget comes from.
    effort: Option<Effort>,
    adaptive: bool,
    off: bool,
    display: Option<String>,
}

impl Thinking {
    pub fn from_args(args: &PrintArgs, settings: &Settings) -> Self {
        let effort = args.effort.clone().or_else(|| settings.effort.clone());
        let mode = args.thinking.as_deref();
        let effort = match (args.max_thinking_tokens, mode) {
            (Some(tokens), _) => Some(Effort::Tokens(tokens)),
            (None, Some("enabled")) => effort.or_else(|| Some(Effort::Level("high".into()))),
            _ => effort,
        };
        Self {
            off: mode == Some("disabled") || args.max_thinking_tokens == Some(0),
            adaptive: mode == Some("adaptive") && args.max_thinking_tokens.is_none(),
            effort,
            display: args.thinking_display.clone(),
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

    /// Sets the main agent's thinking (and `max_tokens`) for its model.
    pub fn apply(&self, config: &mut AgentConfig, catalog: &Catalog) {
        if self.off {
            config.thinking = None;
            return;
        }
        if self.adaptive {
            if catalog.info(&config.model).thinking {
                config.thinking = Some(ThinkingConfig::Adaptive {
                    display: self.display.clone(),
                });
            }
            return;
        }
        fleet_runtime::effort::apply(config, self.effort.as_ref(), catalog);
        if let Some(ThinkingConfig::Enabled { display, .. }) = &mut config.thinking {
            display.clone_from(&self.display);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: PrintArgs,
    }

    fn thinking(flags: &[&str], settings_effort: Option<&str>) -> Thinking {
        let mut argv = vec!["fleet"];
        argv.extend_from_slice(flags);
        let args = Cli::try_parse_from(argv).unwrap().args;
        let settings = Settings {
            effort: settings_effort.map(|e| fleet_runtime::effort::parse_effort(e).unwrap()),
            ..Settings::default()
        };
        Thinking::from_args(&args, &settings)
    }

    #[test]
    fn the_budget_beats_effort_and_disabled_beats_everything() {
        let t = thinking(&["--max-thinking-tokens", "5000", "--effort", "low"], None);
        assert_eq!(t.effort(), Some(Effort::Tokens(5000)));
        let t = thinking(&["--thinking", "disabled", "--effort", "high"], Some("max"));
        assert_eq!(t.effort(), None);
        let t = thinking(&["--thinking", "enabled"], None);
        assert_eq!(t.effort(), Some(Effort::Level("high".into())));
        let t = thinking(&["--thinking", "enabled"], Some("low"));
        assert_eq!(t.effort(), Some(Effort::Level("low".into())));
        let t = thinking(&["--max-thinking-tokens", "0"], Some("high"));
        assert_eq!(t.effort(), None);
        assert!(t.off);
    }
}
