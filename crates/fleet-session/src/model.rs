//! Which provider and model a session talks to, and the client it talks through: a flag beats
//! the environment, which beats the settings, which beat whichever credentials happen to be
//! set. `--betas` and `--fallback-model` wrap the client; an OpenAI-compatible server is asked
//! what it knows of the model's limits.

use crate::config::Settings;
use crate::error::{Result, SessionError};
use crate::options::Choice;
use crate::report::Report;
use fleet_model::{
    client_from_env_over, Catalog, ClientDefaults, FallbackClient, ModelClient, ModelRequest,
    ModelStream, Provider,
};
use std::sync::Arc;

mod server;
pub use server::learn_server_limits;

/// The client, catalogue and model for `provider` and `model` (flags), else the environment
/// (`FLEET_PROVIDER`, `FLEET_MODEL`), else the settings.
pub fn choose(
    provider: Option<Provider>,
    model: Option<String>,
    settings: &Settings,
) -> Result<Choice> {
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
    let model =
        match model
            .or_else(|| env("FLEET_MODEL"))
            .or_else(|| settings.model.clone())
        {
            Some(m) if client.provider() == Provider::Anthropic => catalog.resolve_id(&m),
            Some(m) => m,
            None if client.provider() == Provider::Anthropic => catalog.resolve_id("sonnet"),
            None => return Err(SessionError::invalid(
                "name the model your OpenAI-compatible server serves with --model, FLEET_MODEL \
                 or `model` in .fleet/settings.json (e.g. qwen2.5-coder:7b)",
            )),
        };
    Ok(Choice {
        client,
        catalog,
        model,
    })
}

/// The output limit the user set, if any: `flag` (`--max-output-tokens`), else
/// `FLEET_MAX_OUTPUT_TOKENS`, else `CLAUDE_CODE_MAX_OUTPUT_TOKENS`, else `maxOutputTokens`.
pub fn asked_output_limit(flag: Option<u32>, settings: &Settings) -> Result<Option<u32>> {
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

/// The client with `betas` (`--betas`, comma lists) and `fallback` (`--fallback-model`)
/// applied. A fallback equal to the main model is an error; betas on an OpenAI-compatible
/// server are a line for the person (there is no such header there).
pub fn with_extras(
    mut choice: Choice,
    betas: &[String],
    fallback: Option<&str>,
    report: &dyn Report,
) -> Result<Choice> {
    let betas: Vec<String> = betas
        .iter()
        .flat_map(|list| list.split(','))
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .collect();
    let anthropic = choice.client.provider() == Provider::Anthropic;
    if !betas.is_empty() {
        if anthropic {
            choice.client = Arc::new(BetaClient {
                inner: choice.client,
                header: betas.join(","),
            });
        } else {
            report.line(
                &format!(
                    "warning: --betas {} ignored: beta headers are for the Anthropic API, and \
                     this run uses an OpenAI-compatible server",
                    betas.join(",")
                ),
                "",
            );
        }
    }
    if let Some(fallback) = fallback.map(str::trim) {
        if fallback.is_empty() {
            return Err(SessionError::invalid(
                "--fallback-model is empty: name a model",
            ));
        }
        let fallback = if anthropic {
            choice.catalog.resolve_id(fallback)
        } else {
            fallback.to_string()
        };
        if fallback == choice.model {
            return Err(SessionError::invalid(format!(
                "--fallback-model {fallback} is the main model: name a different model to fall \
                 back to"
            )));
        }
        choice.client = Arc::new(FallbackClient::new(
            choice.client,
            choice.model.clone(),
            fallback,
        ));
    }
    Ok(choice)
}

/// Adds the `--betas` header to every request (the Anthropic client folds it into the one
/// `anthropic-beta` header with any from `ANTHROPIC_BETAS`).
struct BetaClient {
    inner: Arc<dyn ModelClient>,
    header: String,
}

impl ModelClient for BetaClient {
    fn provider(&self) -> Provider {
        self.inner.provider()
    }

    fn stream(&self, mut request: ModelRequest) -> ModelStream {
        request
            .headers
            .push(("anthropic-beta".to_string(), self.header.clone()));
        self.inner.stream(request)
    }
}
