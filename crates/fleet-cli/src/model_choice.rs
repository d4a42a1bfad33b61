//! Which provider and model a command talks to: a flag beats the environment, which beats
//! the settings files, which beat whichever credentials happen to be set.

use crate::settings::Settings;
use fleet_model::{client_from_env_over, Catalog, ClientDefaults, ModelClient, Provider};
use std::sync::Arc;

pub struct Choice {
    pub client: Arc<dyn ModelClient>,
    pub catalog: Catalog,
    /// The model id to send (aliases resolved on Anthropic).
    pub model: String,
}

/// The output limit the user set, if any: `--max-output-tokens`, else
/// `FLEET_MAX_OUTPUT_TOKENS`, else `CLAUDE_CODE_MAX_OUTPUT_TOKENS`, else `maxOutputTokens`.
pub fn asked_output_limit(flag: Option<u32>, settings: &Settings) -> anyhow::Result<Option<u32>> {
    use fleet_protocol::env::{CLAUDE_CODE_MAX_OUTPUT_TOKENS, FLEET_MAX_OUTPUT_TOKENS};
    if flag.is_some() {
        return Ok(flag);
    }
    let from_env = match FLEET_MAX_OUTPUT_TOKENS.get()? {
        Some(tokens) => Some(tokens),
        None => CLAUDE_CODE_MAX_OUTPUT_TOKENS.get()?,
    };
    Ok(match from_env {
        Some(tokens) => Some(u32::try_from(tokens).unwrap_or(u32::MAX)),
        None => settings.max_output_tokens,
    })
}

/// Asks an OpenAI-compatible server what it knows of the chosen model (its context window
/// above all) and records it in the catalogue, so that output limits and compaction fit the
/// window the server really has. A server that says nothing leaves the catalogue's guess.
pub async fn learn_server_limits(choice: &mut Choice) {
    if choice.client.provider() != Provider::OpenAi {
        return;
    }
    let Some(limits) = choice.client.server_limits(&choice.model).await else {
        return;
    };
    let guess = choice.catalog.info(&choice.model);
    let context_window = limits.context_window.unwrap_or(guess.context_window).max(1);
    choice.catalog.insert(fleet_model::ModelInfo {
        id: choice.model.clone(),
        context_window,
        max_output_tokens: limits
            .max_output_tokens
            .unwrap_or(guess.max_output_tokens)
            .min(context_window),
        ..guess
    });
    tracing::debug!(model = %choice.model, context_window, "the server's limits");
}

pub fn parse_provider(s: &str) -> Result<Provider, String> {
    s.parse()
        .map_err(|e: fleet_model::ModelError| e.to_string())
}

pub fn choose(
    provider: Option<Provider>,
    model: Option<String>,
    settings: &Settings,
) -> anyhow::Result<Choice> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let provider = match provider {
        Some(provider) => Some(provider),
        None if env("FLEET_PROVIDER").is_some() => None,
        None => settings.provider,
    };
    let defaults = ClientDefaults {
        openai_tool_choice: settings.openai_tool_choice,
    };
    let client = client_from_env_over(provider, &defaults)?;
    let catalog = Catalog::from_env();
    let model = match model
        .or_else(|| env("FLEET_MODEL"))
        .or_else(|| settings.model.clone())
    {
        Some(m) if client.provider() == Provider::Anthropic => catalog.resolve_id(&m),
        Some(m) => m,
        None if client.provider() == Provider::Anthropic => catalog.resolve_id("sonnet"),
        None => anyhow::bail!(
            "name the model your OpenAI-compatible server serves with --model, FLEET_MODEL or \
             `model` in .fleet/settings.json (e.g. qwen2.5-coder:7b)"
        ),
    };
    Ok(Choice {
        client,
        catalog,
        model,
    })
}
