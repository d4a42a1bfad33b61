//! What the person is told to do after an event the transcript alone leaves them stuck on.
//! A run refused with HTTP 401 shows the API's words (`invalid x-api-key`); what a person
//! needs is which variable holds the key and how to set it.

use fleet_model::Provider;
use fleet_protocol::{AgentEvent, EventKind};

/// The advice for `event`, when it is the main agent's run ended by a refused key.
pub(super) fn after(event: &AgentEvent, provider: Provider) -> Option<String> {
    let EventKind::Finished(result) = &event.kind else {
        return None;
    };
    if event.agent.parent_tool_use_id.is_some() || result.api_error_status != Some(401) {
        return None;
    }
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    Some(refused_key(
        provider,
        set("ANTHROPIC_AUTH_TOKEN") && !set("ANTHROPIC_API_KEY"),
    ))
}

/// Which variable to fix, and how; `bearer` when the Anthropic credential in use is
/// `ANTHROPIC_AUTH_TOKEN`.
fn refused_key(provider: Provider, bearer: bool) -> String {
    match provider {
        Provider::Anthropic if bearer => "The API did not accept ANTHROPIC_AUTH_TOKEN (HTTP 401). \
             Set it to a valid token (`export ANTHROPIC_AUTH_TOKEN=…`), or unset it and set \
             ANTHROPIC_API_KEY, then start fleet again."
            .into(),
        Provider::Anthropic => "The API did not accept the key in ANTHROPIC_API_KEY (HTTP 401). \
             Set it to a valid key (`export ANTHROPIC_API_KEY=sk-ant-…` in your shell, or in \
             your shell's profile to keep it), then start fleet again."
            .into(),
        Provider::OpenAi => "The server did not accept the key in OPENAI_API_KEY (HTTP 401). \
             Set it to a key this server takes (`export OPENAI_API_KEY=…`; check \
             OPENAI_BASE_URL names the server you mean), then start fleet again."
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_names_its_key_variable_and_how_to_set_it() {
        let anthropic = refused_key(Provider::Anthropic, false);
        assert!(
            anthropic.contains("export ANTHROPIC_API_KEY="),
            "{anthropic}"
        );
        let bearer = refused_key(Provider::Anthropic, true);
        assert!(bearer.contains("export ANTHROPIC_AUTH_TOKEN="), "{bearer}");
        let openai = refused_key(Provider::OpenAi, false);
        assert!(openai.contains("export OPENAI_API_KEY="), "{openai}");
    }
}
