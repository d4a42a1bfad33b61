//! The agent's model requests: building one from the conversation (and the frame that stays
//! byte-identical across turns and compactions), streaming the reply while forwarding its
//! deltas, asking again after a reply broke off, and counting what each reply cost.

use super::stop::{api_error, interrupted, Stop};
use super::{is_empty_text, millis, Agent};
use crate::accounting::Accounting;
use crate::config::AgentConfig;
use crate::context::{AgentContext, INVOKING_REQUEST_HEADER};
use crate::sink::EventSink;
use crate::watchdog::WaitingFor;
use fleet_model::{ModelError, ModelEvent, ModelRequest, ModelResponse};
use fleet_protocol::RetryScope;
use fleet_protocol::{
    EventKind, MessagesRequest, ResultSubtype, Shared, SystemBlock, SystemPrompt, ToolDefinition,
};
use futures::StreamExt;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// How often one turn's request is made when its reply breaks off, and the pause before the
/// next try (growing with each).
const TURN_ATTEMPTS: u32 = 3;
const TURN_RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

/// Why one request produced no reply.
enum Failure {
    Interrupted,
    /// The error, and whether part of the reply reached the agent's readers (with the reply's
    /// id when it was known).
    Model(ModelError, Option<Option<String>>),
}

impl Agent {
    /// Like [`Self::request`], asking for the whole turn again when a reply broke off after it
    /// had started (the transport only retries before the first content) or came back with
    /// tool input that is not JSON, which small local models produce now and then. Nothing of
    /// a broken reply was committed, so asking again cannot duplicate anything in the
    /// conversation; what was streamed of it is declared discarded first, and what a complete
    /// but unusable reply cost is counted.
    pub(super) async fn request_with_retries(
        &self,
        sink: &EventSink,
        cancel: &CancellationToken,
        totals: &mut Accounting,
    ) -> Result<ModelResponse, Stop> {
        let mut attempt = 1;
        let mut limit = self.config.model.max_tokens;
        loop {
            let started = std::time::Instant::now();
            let (err, shown) = match self.request(sink, cancel, limit).await {
                Ok(response) => return Ok(response),
                Err(Failure::Interrupted) => return Err(interrupted()),
                Err(Failure::Model(err, shown)) => (err, shown),
            };
            self.account_failed(&err, shown.is_some(), started.elapsed(), sink, totals);
            let retry = match turn_retry(
                &err,
                &self.catalog.info(&self.config.model.id),
                limit,
                &self.config,
            ) {
                TurnRetry::Again { reason, max_tokens } if attempt < TURN_ATTEMPTS => {
                    limit = max_tokens;
                    reason
                }
                TurnRetry::Again { .. } | TurnRetry::GiveUp => return Err(api_error(&err)),
                TurnRetry::Stop(stop) => return Err(stop),
            };
            attempt += 1;
            if let Some(message_id) = shown {
                sink.emit(EventKind::ReplyDiscarded {
                    message_id,
                    reason: retry.clone(),
                })
                .await;
            }
            let delay = TURN_RETRY_DELAY * (attempt - 1);
            sink.emit(EventKind::Retry {
                attempt,
                max_attempts: TURN_ATTEMPTS,
                delay_ms: millis(delay),
                reason: retry,
                scope: RetryScope::Turn,
                error_status: err.status(),
            })
            .await;
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(interrupted()),
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Counts a request that produced no usable reply, which took `spent`: one that came to
    /// its end with tool input that is not JSON (the server billed it even though the
    /// conversation will not hold it), or one that broke off after part of it `streamed` —
    /// the server wrote those tokens, and as it never said how many, the reply's usage is
    /// unreported (`null`), not zero. Either way its time is API time.
    fn account_failed(
        &self,
        err: &ModelError,
        streamed: bool,
        spent: std::time::Duration,
        sink: &EventSink,
        totals: &mut Accounting,
    ) {
        let usage = match err {
            ModelError::InvalidToolInput { usage, .. } => (**usage).clone(),
            _ if streamed => fleet_protocol::Usage::unreported(),
            _ => {
                totals.api_time += spent;
                return;
            }
        };
        let mut message =
            fleet_protocol::AssistantMessage::empty(String::new(), self.config.model.id.clone());
        message.usage = usage;
        let response = ModelResponse {
            message,
            request_id: None,
            attempts: 1,
            duration: spent,
        };
        self.account(&response, sink, totals);
    }

    /// `max_tokens` for the next request: the agent's limit (or the raised one of a retry), no
    /// more than the model's window leaves after the prompt.
    fn fitted_limit(&self, limit: u32) -> u32 {
        let info = self.catalog.info(&self.config.model.id);
        let window = self
            .context
            .proven_limit()
            .map_or(info.context_window, |proven| {
                proven.min(info.context_window)
            });
        let frame = crate::compact::LazyFrame::new(|| self.request_frame());
        let prompt = self.context.prompt_estimate(&frame, &self.messages);
        crate::output_limit::fit(limit, window, prompt)
    }

    /// Sends the conversation and streams the reply, forwarding deltas and completed blocks.
    async fn request(
        &self,
        sink: &EventSink,
        cancel: &CancellationToken,
        limit: u32,
    ) -> Result<ModelResponse, Failure> {
        let mut body = self.build_request();
        body.max_tokens = u64::from(self.fitted_limit(limit));
        fit_thinking(&mut body);
        let mut request = ModelRequest::from(body);
        request.stream_events = self.config.model.stream_events;
        // A subagent's first request names the parent request that started it.
        if let Some(id) = AgentContext::current().and_then(|c| c.take_invoking_request_id()) {
            request
                .headers
                .push((INVOKING_REQUEST_HEADER.to_string(), id));
        }
        let mut stream = self.client.stream(request);
        let mut partial = self
            .config
            .model
            .stream_events
            .then(super::partial::PartialStream::default);
        // What of this reply reached the agent's readers, and under which id: a retry of the
        // whole turn tells them to drop it.
        let mut shown: Option<Option<String>> = None;
        let mut message_id: Option<String> = None;
        loop {
            let next = {
                // Every wait for the server is the watchdog's to see, deadline or not.
                let _wait = sink.waiting_for(WaitingFor::Model {
                    model: self.config.model.id.clone(),
                });
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(Failure::Interrupted),
                    next = stream.next() => next,
                }
            };
            let event = match next {
                Some(Ok(event)) => event,
                Some(Err(err)) => return Err(Failure::Model(err, shown)),
                None => {
                    let err = ModelError::StreamInterrupted {
                        when: "before the reply was complete",
                        message: "the stream ended without a final message".into(),
                    };
                    return Err(Failure::Model(err, shown));
                }
            };
            if let ModelEvent::Retry { reason, .. } = &event {
                // The transport asks again before any content, but a partial reader may have
                // seen the reply's start.
                if shown.is_some() {
                    sink.emit(EventKind::ReplyDiscarded {
                        message_id: shown.take().flatten(),
                        reason: reason.clone(),
                    })
                    .await;
                }
                message_id = None;
            }
            if let ModelEvent::MessageStart { id, .. } = &event {
                message_id = Some(id.clone()).filter(|id| !id.is_empty());
            }
            if let Some(partial) = partial.as_mut() {
                let parts = partial.translate(&event, &self.config.model.id);
                if !parts.is_empty() && !matches!(event, ModelEvent::Completed(_)) {
                    shown = Some(message_id.clone());
                }
                for part in parts {
                    sink.emit(EventKind::Stream(part)).await;
                }
            }
            match event {
                ModelEvent::MessageStart { .. } => {}
                ModelEvent::Retry {
                    attempt,
                    max_attempts,
                    delay,
                    reason,
                    status,
                } => {
                    sink.emit(EventKind::Retry {
                        attempt,
                        max_attempts,
                        delay_ms: millis(delay),
                        reason,
                        scope: RetryScope::Request,
                        error_status: status,
                    })
                    .await
                }
                ModelEvent::ModelSwitched { from, to, reason } => {
                    sink.emit(EventKind::ModelFallback { from, to, reason })
                        .await
                }
                ModelEvent::TextDelta { text, .. } => {
                    shown = Some(message_id.clone());
                    sink.emit(EventKind::TextDelta(text)).await
                }
                ModelEvent::ThinkingDelta { thinking, .. } => {
                    shown = Some(message_id.clone());
                    sink.emit(EventKind::ThinkingDelta(thinking)).await
                }
                // Blocks are announced once the reply is complete, so that each carries the
                // API's message id and final usage; text is already live through the deltas.
                ModelEvent::BlockComplete { .. } => {}
                ModelEvent::ToolUseStart { .. } | ModelEvent::ToolInputDelta { .. } => {}
                ModelEvent::Completed(response) => {
                    let reply = &response.message;
                    for block in reply.content.iter().filter(|b| !is_empty_text(b)) {
                        sink.emit(EventKind::AssistantBlock {
                            message_id: reply.id.clone(),
                            model: reply.model.clone(),
                            block: block.clone(),
                            usage: reply.usage.clone(),
                        })
                        .await;
                    }
                    return Ok(response);
                }
            }
        }
    }

    /// Counts a reply's usage in the run's totals and the tree's ledger.
    pub(super) fn account(
        &self,
        response: &ModelResponse,
        sink: &EventSink,
        totals: &mut Accounting,
    ) {
        let reply = &response.message;
        let (asked, served) = (&self.config.model.id, &reply.model);
        totals.add(
            &self.catalog,
            asked,
            served,
            &reply.usage,
            response.duration,
        );
        // `maxOutputTokens` says the limit this agent asks with, not the most the model
        // could write (for a local model, its whole window).
        let limit = u64::from(self.config.model.max_tokens);
        totals.show_output_limit(&self.catalog, asked, served, limit);
        if let Some(ledger) = self.config.ledger() {
            let agent_id = &sink.agent().agent_id;
            ledger.record_reply(&self.catalog, agent_id, asked, served, &reply.usage);
            ledger.show_output_limit(&self.catalog, asked, served, limit);
        }
    }

    pub(super) fn build_request(&self) -> MessagesRequest {
        let mut body = self.request_frame();
        body.messages = self.messages.clone();
        body
    }

    /// The request without its messages: what stays byte-identical from turn to turn (and
    /// across a compaction), so the prompt cache holds it.
    pub(super) fn request_frame(&self) -> MessagesRequest {
        frame_of(&self.config, &self.tool_definitions)
    }
}

/// [`Agent::request_frame`] from the fields it reads, so a check can borrow them beside the
/// conversation it changes.
pub(super) fn frame_of(config: &AgentConfig, tools: &Arc<Vec<ToolDefinition>>) -> MessagesRequest {
    let mut body = MessagesRequest::new(
        config.model.id.clone(),
        u64::from(config.model.max_tokens),
        Vec::new(),
    );
    if !config.context.system.is_empty() {
        body.system = Some(SystemPrompt::Blocks(
            config
                .context
                .system
                .iter()
                .map(SystemBlock::text)
                .collect(),
        ));
    }
    body.tools = Shared::from(Arc::clone(tools));
    body.thinking = config.model.thinking.clone();
    body
}

/// What to do after a turn's request failed.
enum TurnRetry {
    /// Ask for the whole turn again, with this output limit, telling the user why.
    Again { reason: String, max_tokens: u32 },
    /// Nothing a retry could mend: the error stands.
    GiveUp,
    /// Stop the turn with this, not the bare error.
    Stop(Stop),
}

/// Decides whether a failed turn is asked for again, naming the real cause: a reply that broke
/// off, tool input garbled by the model, or tool input cut by the output limit (asked again
/// with a larger limit when the user set none) or by the context window (made room for, by
/// the caller's compaction).
fn turn_retry(
    err: &ModelError,
    model: &fleet_model::ModelInfo,
    limit: u32,
    config: &AgentConfig,
) -> TurnRetry {
    use fleet_protocol::StopReason;
    let ModelError::InvalidToolInput {
        tool, stop_reason, ..
    } = err
    else {
        return if err.is_retryable() {
            TurnRetry::Again {
                reason: format!("the reply broke off ({err}); asking again"),
                max_tokens: limit,
            }
        } else {
            TurnRetry::GiveUp
        };
    };
    match stop_reason {
        Some(StopReason::MaxTokens) => {
            match crate::output_limit::raised(model, limit, config.model.max_tokens_asked) {
                Some(more) => TurnRetry::Again {
                    reason: format!(
                        "the reply reached its output limit ({limit} tokens) in the middle of the \
                     input for tool `{tool}`; asking again with a limit of {more}"
                    ),
                    max_tokens: more,
                },
                None => TurnRetry::Stop(Stop {
                    subtype: ResultSubtype::ErrorDuringExecution,
                    message: format!(
                        "The reply reached its output limit ({limit} tokens) in the middle of the \
                     input for tool `{tool}`, so the call was dropped. Raise the limit with \
                     --max-output-tokens (or FLEET_MAX_OUTPUT_TOKENS), or ask for smaller steps."
                    ),
                    status: None,
                    too_long: None,
                }),
            }
        }
        Some(StopReason::ModelContextWindowExceeded) => TurnRetry::Stop(Stop {
            subtype: ResultSubtype::ErrorDuringExecution,
            message: format!(
                "The reply filled the model's context window ({} tokens) in the middle of the \
                 input for tool `{tool}`, so the call was dropped.",
                model.context_window
            ),
            status: None,
            // Made room for, and asked again once, like a prompt the API refused as too long.
            too_long: Some(crate::compact::TooLong { limit: None }),
        }),
        _ => TurnRetry::Again {
            reason: format!(
                "the reply came to its end, but its input for tool `{tool}` is not valid JSON \
                 ({err}); asking again"
            ),
            max_tokens: limit,
        },
    }
}

/// Keeps an extended-thinking budget below a `max_tokens` the window made smaller (the API
/// wants budget < max_tokens and at least 1,024), dropping thinking when no such budget fits.
fn fit_thinking(body: &mut MessagesRequest) {
    const MIN_BUDGET: u64 = 1_024;
    if let Some(fleet_protocol::ThinkingConfig::Enabled { budget_tokens, .. }) = &mut body.thinking
    {
        if *budget_tokens < body.max_tokens {
            return;
        }
        if body.max_tokens > MIN_BUDGET {
            *budget_tokens = body.max_tokens - 1;
        } else {
            body.thinking = None;
        }
    }
}
