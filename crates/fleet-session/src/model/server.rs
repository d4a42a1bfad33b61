//! What an OpenAI-compatible server says of the model it serves, and how the session takes
//! it in: the server's figures win over the catalogue's, a local server's model never gets
//! Anthropic's figures or prices for sharing a name with a Claude model (`--model sonnet`),
//! a server that was still loading is asked again after it first answered, and a model that
//! cannot take tools is said once.

use crate::options::Choice;
use crate::report::Report;
use fleet_model::{
    Catalog, ModelClient, ModelEvent, ModelInfo, ModelRequest, ModelStream, Provider, ServerLimits,
};
use fleet_protocol::MessagesRequest;
use futures::StreamExt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Asks an OpenAI-compatible server what it knows of the chosen model (its context window
/// above all) and records it in the catalogue, so that output limits, compaction and
/// `modelUsage` fit the window the server really has. A server that says nothing leaves the
/// catalogue's figures (for a model it does not know: a 128,000-token window, 8,192-token
/// replies); one still loading (503) is asked again after its first complete reply. `report`
/// hears, once, that the server's template cannot render tools.
pub async fn learn_server_limits(choice: &mut Choice, report: Arc<dyn Report>) {
    if choice.client.provider() != Provider::OpenAi {
        return;
    }
    let Some(limits) = choice.client.server_limits(&choice.model).await else {
        return;
    };
    let warned = Arc::new(AtomicBool::new(false));
    take_in(&choice.catalog, &choice.model, &limits, &*report, &warned);
    if limits.ask_again {
        choice.client = Arc::new(AskAgain {
            inner: choice.client.clone(),
            shared: Arc::new(Pending {
                catalog: choice.catalog.clone(),
                model: choice.model.clone(),
                pending: AtomicBool::new(true),
                report,
                warned,
            }),
        });
    }
}

/// Records `limits` for `model` and warns (once, through `warned`) of a template without
/// tools.
fn take_in(
    catalog: &Catalog,
    model: &str,
    limits: &ServerLimits,
    report: &dyn Report,
    warned: &AtomicBool,
) {
    if let Some(info) = model_info(catalog, model, limits) {
        tracing::debug!(model, ?info, "the server's limits");
        catalog.learn(model, info);
    }
    if limits.supports_tools == Some(false) && !warned.swap(true, Ordering::SeqCst) {
        report.line(&tools_warning(model), "");
    }
}

/// The figures `limits` give `model`: the server's window and output limit over the
/// catalogue's. A local server's model starts from nothing known (no price, no extended
/// thinking) whatever its name; a remote one's keeps the catalogue's other figures. `None`
/// when there is nothing to record.
fn model_info(catalog: &Catalog, model: &str, limits: &ServerLimits) -> Option<ModelInfo> {
    let base = if limits.local {
        ModelInfo::unknown(model)
    } else if limits.context_window.is_some() || limits.max_output_tokens.is_some() {
        catalog.info(model)
    } else {
        return None;
    };
    let context_window = limits.context_window.unwrap_or(base.context_window).max(1);
    Some(ModelInfo {
        id: model.to_owned(),
        context_window,
        max_output_tokens: limits
            .max_output_tokens
            .unwrap_or(base.max_output_tokens)
            .min(context_window),
        ..base
    })
}

/// What the person is told when the server's chat template cannot render tools.
fn tools_warning(model: &str) -> String {
    format!(
        "warning: the server serving {model} says its chat template cannot use tools (/props: \
         chat_template_caps.supports_tools is false): it leaves the tool definitions out of \
         the prompt, so the model will not call any tool; serve a model whose chat template \
         takes tools (llama-server --jinja) for agent work"
    )
}

/// The client of a server that could not describe itself at start (503 while loading): it
/// asks again after the first complete reply, so that the rest of the session runs on the
/// server's real window rather than the catalogue's guess.
struct AskAgain {
    inner: Arc<dyn ModelClient>,
    shared: Arc<Pending>,
}

struct Pending {
    catalog: Catalog,
    model: String,
    /// Still to be asked; cleared by the reply that asks (and set again if the server still
    /// could not answer).
    pending: AtomicBool,
    report: Arc<dyn Report>,
    warned: Arc<AtomicBool>,
}

impl Pending {
    /// Asks the server again and takes in what it says.
    async fn ask(&self, client: &dyn ModelClient) {
        let Some(limits) = client.server_limits(&self.model).await else {
            return;
        };
        take_in(
            &self.catalog,
            &self.model,
            &limits,
            &*self.report,
            &self.warned,
        );
        if limits.ask_again {
            self.pending.store(true, Ordering::SeqCst);
        }
    }
}

impl ModelClient for AskAgain {
    fn provider(&self) -> Provider {
        self.inner.provider()
    }

    fn server_limits<'a>(
        &'a self,
        model: &'a str,
    ) -> Pin<Box<dyn Future<Output = Option<ServerLimits>> + Send + 'a>> {
        self.inner.server_limits(model)
    }

    fn count_prompt_tokens<'a>(
        &'a self,
        request: &'a MessagesRequest,
    ) -> Pin<Box<dyn Future<Output = Option<u64>> + Send + 'a>> {
        self.inner.count_prompt_tokens(request)
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let events = self.inner.stream(request);
        if !self.shared.pending.load(Ordering::SeqCst) {
            return events;
        }
        let (inner, shared) = (self.inner.clone(), self.shared.clone());
        // The reply is handed on once the server has been asked, so the next request is
        // already sized by the answer.
        Box::pin(events.then(move |event| {
            let (inner, shared) = (inner.clone(), shared.clone());
            async move {
                if matches!(event, Ok(ModelEvent::Completed(_)))
                    && shared.pending.swap(false, Ordering::SeqCst)
                {
                    shared.ask(&*inner).await;
                }
                event
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(window: Option<u64>) -> ServerLimits {
        ServerLimits {
            context_window: window,
            local: true,
            ..ServerLimits::default()
        }
    }

    #[test]
    fn a_local_server_s_sonnet_is_not_anthropic_s() {
        let catalog = Catalog::builtin();
        let info = model_info(&catalog, "sonnet", &local(Some(4096)));
        let info = info.expect("something to record");
        assert_eq!(
            (info.context_window, info.max_output_tokens, info.known),
            (4096, 4096, false)
        );
        assert_eq!(info.pricing, fleet_model::Pricing::default());
        assert!(!info.thinking);
        // Saying nothing, it still is no Claude model.
        let silent = model_info(&catalog, "sonnet", &local(None)).expect("recorded");
        assert_eq!(silent.context_window, ModelInfo::UNKNOWN_CONTEXT_WINDOW);
        assert_eq!(silent.pricing, fleet_model::Pricing::default());
    }

    #[test]
    fn a_remote_server_s_window_wins_and_the_rest_stays() {
        let catalog = Catalog::builtin();
        let remote = ServerLimits {
            context_window: Some(100_000),
            ..ServerLimits::default()
        };
        let info = model_info(&catalog, "claude-sonnet-4-5", &remote).expect("recorded");
        assert_eq!(info.context_window, 100_000);
        assert!(info.known);
        assert_eq!(model_info(&catalog, "x", &ServerLimits::default()), None);
    }
}
