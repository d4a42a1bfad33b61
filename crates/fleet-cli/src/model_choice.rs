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
