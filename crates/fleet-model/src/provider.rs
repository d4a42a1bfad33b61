//! Choosing a model client from the environment, so that every entry point (the CLI, a remote
//! worker, a benchmark) makes the same choice from the same settings.

use crate::anthropic::{AnthropicClient, AnthropicConfig};
use crate::client::{ModelClient, Provider};
use crate::error::ModelError;
use crate::openai::{OpenAiClient, OpenAiConfig, ToolChoiceMode};
use std::sync::Arc;

/// What settings files say about the client, for where the environment says nothing (a
/// variable beats a setting).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientDefaults {
    /// `openai.toolChoice`; `FLEET_OPENAI_TOOL_CHOICE` beats it.
    pub openai_tool_choice: Option<ToolChoiceMode>,
}

/// Builds the client for `provider`, or for the provider the environment points at:
/// `FLEET_PROVIDER=anthropic|openai`, else Anthropic when `ANTHROPIC_API_KEY` or
/// `ANTHROPIC_AUTH_TOKEN` is set, else OpenAI-compatible when `OPENAI_BASE_URL` or
/// `OPENAI_API_KEY` is set.
pub fn client_from_env(provider: Option<Provider>) -> Result<Arc<dyn ModelClient>, ModelError> {
    client_from_env_over(provider, &ClientDefaults::default())
}

/// Like [`client_from_env`], with `defaults` from settings under the environment.
pub fn client_from_env_over(
    provider: Option<Provider>,
    defaults: &ClientDefaults,
) -> Result<Arc<dyn ModelClient>, ModelError> {
    let provider = choose(provider, |name| std::env::var(name).ok())?;
    Ok(match provider {
        Provider::Anthropic => Arc::new(AnthropicClient::new(AnthropicConfig::from_env()?)?),
        Provider::OpenAi => Arc::new(OpenAiClient::new(OpenAiConfig::from_env_over(defaults)?)?),
    })
}

/// The provider decision alone, reading variables through `var` so it can be tested without
/// touching the process environment.
fn choose(
    explicit: Option<Provider>,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Provider, ModelError> {
    if let Some(provider) = explicit {
        return Ok(provider);
    }
    let set = |name: &str| var(name).is_some_and(|v| !v.trim().is_empty());
    if let Some(name) = var("FLEET_PROVIDER").filter(|v| !v.trim().is_empty()) {
        return name.parse::<Provider>().map_err(|_| {
            ModelError::Config(format!(
                "FLEET_PROVIDER={name:?} is not a provider; use `anthropic` or `openai`"
            ))
        });
    }
    if set("ANTHROPIC_API_KEY") || set("ANTHROPIC_AUTH_TOKEN") {
        return Ok(Provider::Anthropic);
    }
    if set("OPENAI_BASE_URL") || set("OPENAI_API_KEY") {
        return Ok(Provider::OpenAi);
    }
    Err(ModelError::Config(
        "no model provider is configured. Do one of: \
         set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) to use Anthropic; \
         set OPENAI_BASE_URL (e.g. http://localhost:11434/v1 for Ollama) and/or OPENAI_API_KEY \
         to use an OpenAI-compatible server; \
         or set FLEET_PROVIDER=anthropic|openai to choose explicitly"
            .into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn pick(explicit: Option<Provider>, vars: &[(&str, &str)]) -> Result<Provider, ModelError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        choose(explicit, |name| vars.get(name).cloned())
    }

    #[test]
    fn explicit_choice_wins() {
        let vars = [("FLEET_PROVIDER", "anthropic"), ("ANTHROPIC_API_KEY", "k")];
        assert_eq!(
            pick(Some(Provider::OpenAi), &vars).ok(),
            Some(Provider::OpenAi)
        );
    }

    #[test]
    fn fleet_provider_beats_credentials() {
        let vars = [("FLEET_PROVIDER", "openai"), ("ANTHROPIC_API_KEY", "k")];
        assert_eq!(pick(None, &vars).ok(), Some(Provider::OpenAi));
        let vars = [
            ("FLEET_PROVIDER", "Anthropic"),
            ("OPENAI_BASE_URL", "http://x"),
        ];
        assert_eq!(pick(None, &vars).ok(), Some(Provider::Anthropic));
    }

    #[test]
    fn credentials_decide_anthropic_first() {
        let both = [("ANTHROPIC_AUTH_TOKEN", "t"), ("OPENAI_API_KEY", "k")];
        assert_eq!(pick(None, &both).ok(), Some(Provider::Anthropic));
        let local = [("OPENAI_BASE_URL", "http://localhost:11434")];
        assert_eq!(pick(None, &local).ok(), Some(Provider::OpenAi));
        let blank = [("ANTHROPIC_API_KEY", " "), ("OPENAI_API_KEY", "k")];
        assert_eq!(pick(None, &blank).ok(), Some(Provider::OpenAi));
    }

    #[test]
    fn nothing_configured_explains_all_three_ways() {
        let message = pick(None, &[])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        for needle in ["ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "FLEET_PROVIDER"] {
            assert!(message.contains(needle), "{message}");
        }
    }

    #[test]
    fn unknown_provider_name_is_an_error() {
        let message = pick(None, &[("FLEET_PROVIDER", "gemini")])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(message.contains("gemini"), "{message}");
    }
}
