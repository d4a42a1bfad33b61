//! The agent's model requests: building one from the conversation (and the frame that stays
//! byte-identical across turns and compactions), streaming the reply while forwarding its
//! deltas, asking again after a reply broke off, and counting what each reply cost.

use super::*;
use fleet_protocol::RetryScope;

impl Agent {
    /// Like [`Self::request`], asking again when a reply broke off after it had started (the
    /// transport only retries before the first content) or came with tool input that is not
    /// JSON, which small local models produce now and then. Nothing of a broken reply was
    /// committed, so asking again cannot duplicate anything in the conversation.
    pub(super) async fn request_with_retries(
        &self,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, Stop> {
        let mut attempt = 1;
        loop {
            let err = match self.request(sink, cancel).await {
                Ok(response) => return Ok(response),
                Err(Failure::Interrupted) => return Err(interrupted()),
                Err(Failure::Model(err)) => err,
            };
            let worth_retrying =
                err.is_retryable() || matches!(err, ModelError::InvalidToolInput { .. });
            if attempt >= TURN_ATTEMPTS || !worth_retrying {
                return Err(api_error(&err));
            }
            attempt += 1;
            let delay = TURN_RETRY_DELAY * (attempt - 1);
            sink.emit(EventKind::Retry {
                attempt,
                max_attempts: TURN_ATTEMPTS,
                delay_ms: millis(delay),
                reason: format!("the reply broke off ({err}); asking again"),
                scope: RetryScope::Turn,
            })
            .await;
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(interrupted()),
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Sends the conversation and streams the reply, forwarding deltas and completed blocks.
    async fn request(
        &self,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, Failure> {
        let mut request = ModelRequest::from(self.build_request());
        request.stream_events = self.config.stream_events;
        // A subagent's first request names the parent request that started it.
        if let Some(id) = AgentContext::current().and_then(|c| c.take_invoking_request_id()) {
            request
                .headers
                .push((INVOKING_REQUEST_HEADER.to_string(), id));
        }
        let mut stream = self.client.stream(request);
        let mut partial = self
            .config
            .stream_events
            .then(super::partial::PartialStream::default);
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(Failure::Interrupted),
                next = stream.next() => next,
            };
            let event = match next {
                Some(Ok(event)) => event,
                Some(Err(err)) => return Err(Failure::Model(err)),
                None => {
                    return Err(Failure::Model(ModelError::StreamInterrupted {
                        when: "before the reply was complete",
                        message: "the stream ended without a final message".into(),
                    }))
                }
            };
            if let Some(partial) = partial.as_mut() {
                for part in partial.translate(&event, &self.config.model) {
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
                } => {
                    sink.emit(EventKind::Retry {
                        attempt,
                        max_attempts,
                        delay_ms: millis(delay),
                        reason,
                        scope: RetryScope::Request,
                    })
                    .await
                }
                ModelEvent::ModelSwitched { from, to, reason } => {
                    sink.emit(EventKind::ModelFallback { from, to, reason })
                        .await
                }
                ModelEvent::TextDelta { text, .. } => sink.emit(EventKind::TextDelta(text)).await,
                ModelEvent::ThinkingDelta { thinking, .. } => {
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
        let (asked, served) = (&self.config.model, &reply.model);
        totals.add(
            &self.catalog,
            asked,
            served,
            &reply.usage,
            response.duration,
        );
        if let Some(ledger) = &self.config.ledger {
            let agent_id = &sink.agent().agent_id;
            ledger.record_reply(&self.catalog, agent_id, asked, served, &reply.usage);
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
        config.model.clone(),
        u64::from(config.max_tokens),
        Vec::new(),
    );
    if !config.system.is_empty() {
        body.system = Some(SystemPrompt::Blocks(
            config.system.iter().map(SystemBlock::text).collect(),
        ));
    }
    body.tools = Shared::from(Arc::clone(tools));
    body.thinking = config.thinking.clone();
    body
}
