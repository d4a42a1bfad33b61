//! A fallback model for when the main one is overloaded (`--fallback-model`).
//!
//! [`FallbackClient`] wraps any client. Requests for the main model go through unchanged
//! until one fails with an overload (HTTP 529 or an `overloaded_error`) after the retry policy
//! has given up, before any content arrived. From then on, for the rest of the run, every
//! request that names the main model is sent to the fallback instead — the failed one first —
//! and the stream says so once with [`ModelEvent::ModelSwitched`]. Requests for other models
//! (a subagent that picked its own) are never touched.

use crate::client::{ModelClient, ModelRequest, ModelStream, Provider};
use crate::error::ModelError;
use crate::event::ModelEvent;
use futures::StreamExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct FallbackClient {
    inner: Arc<dyn ModelClient>,
    main: String,
    fallback: String,
    /// Set by the first overload; shared by every agent of the run.
    switched: Arc<AtomicBool>,
}

impl FallbackClient {
    /// `main` and `fallback` are model ids as requests carry them (aliases resolved).
    pub fn new(inner: Arc<dyn ModelClient>, main: String, fallback: String) -> Self {
        Self {
            inner,
            main,
            fallback,
            switched: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Whether the run has moved to the fallback model.
    pub fn switched(&self) -> bool {
        self.switched.load(Ordering::SeqCst)
    }
}

/// Whether `err` says the model is overloaded (as opposed to a rate limit or an outage).
pub fn is_overloaded(err: &ModelError) -> bool {
    match err.root() {
        ModelError::Api {
            status, error_type, ..
        } => *status == 529 || error_type == "overloaded_error",
        ModelError::StreamError { error_type, .. } => error_type == "overloaded_error",
        _ => false,
    }
}

impl ModelClient for FallbackClient {
    fn provider(&self) -> Provider {
        self.inner.provider()
    }

    fn server_limits<'a>(
        &'a self,
        model: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<crate::ServerLimits>> + Send + 'a>>
    {
        self.inner.server_limits(model)
    }

    fn count_prompt_tokens<'a>(
        &'a self,
        request: &'a fleet_protocol::MessagesRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<u64>> + Send + 'a>> {
        self.inner.count_prompt_tokens(request)
    }

    fn stream(&self, mut request: ModelRequest) -> ModelStream {
        if request.body.model != self.main {
            return self.inner.stream(request);
        }
        if self.switched() {
            request.body.model.clone_from(&self.fallback);
            return self.inner.stream(request);
        }
        let inner = self.inner.clone();
        let switched = self.switched.clone();
        let (main, fallback) = (self.main.clone(), self.fallback.clone());
        Box::pin(async_stream::stream! {
            let mut again = request.clone();
            let mut first = inner.stream(request);
            let mut content_seen = false;
            while let Some(item) = first.next().await {
                match item {
                    Err(err) if !content_seen && is_overloaded(&err) => {
                        // Another agent may have switched meanwhile: say so only once.
                        let first_switch = !switched.swap(true, Ordering::SeqCst);
                        tracing::warn!("{main} is overloaded ({err}); switching to {fallback}");
                        if first_switch {
                            yield Ok(ModelEvent::ModelSwitched {
                                from: main.clone(),
                                to: fallback.clone(),
                                reason: err.to_string(),
                            });
                        }
                        again.body.model.clone_from(&fallback);
                        let mut second = inner.stream(again);
                        while let Some(item) = second.next().await {
                            yield item;
                        }
                        return;
                    }
                    Ok(event) => {
                        content_seen |= event.is_content();
                        yield Ok(event);
                    }
                    Err(err) => {
                        yield Err(err);
                        return;
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: u16, error_type: &str) -> ModelError {
        ModelError::Api {
            provider: "anthropic",
            status,
            error_type: error_type.into(),
            message: "busy".into(),
            request_id: None,
            retry_after: None,
            url: None,
        }
    }

    #[test]
    fn only_overloads_trigger_the_fallback() {
        assert!(is_overloaded(&api(529, "overloaded_error")));
        assert!(is_overloaded(&ModelError::RetriesExhausted {
            attempts: 3,
            last: Box::new(api(529, "overloaded_error")),
        }));
        assert!(is_overloaded(&ModelError::StreamError {
            provider: "anthropic",
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        }));
        assert!(!is_overloaded(&api(429, "rate_limit_error")));
        assert!(!is_overloaded(&api(500, "api_error")));
    }
}
