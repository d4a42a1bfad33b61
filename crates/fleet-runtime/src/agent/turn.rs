//! One turn of the loop: what arrived meanwhile, making room in the window, the request,
//! committing the reply, and then either the end of the run (a reply that calls no tool) or
//! the reply's calls answered.

use super::stop::{interrupted, structured_stop, Stop};
use super::{sendable, Agent};
use crate::accounting::Accounting;
use crate::compact::{Need, TooLong};
use crate::dispatch::Call;
use crate::sink::EventSink;
use fleet_model::ModelResponse;
use fleet_protocol::{
    ContentBlock, PermissionDenial, ReplyMeta, RunOrigin, StopReason, TerminalReason,
};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// How a run ended: the final text, or why it stopped.
pub(super) type Outcome = Result<String, Stop>;

/// What the loop does after a turn.
pub(super) enum Step {
    /// Another turn.
    Next,
    /// The run is over.
    End(Outcome),
}

/// What one run keeps from turn to turn, and reports in its result.
pub(super) struct RunState {
    pub(super) started: Instant,
    pub(super) totals: Accounting,
    pub(super) denials: Vec<PermissionDenial>,
    /// Replies received.
    pub(super) turns: u32,
    pub(super) last_stop_reason: Option<StopReason>,
    /// What started the run, when not a prompt.
    pub(super) origin: Option<RunOrigin>,
    /// Why the run ended when no error and no finished reply says it (a hook stopped it).
    pub(super) terminal_reason: Option<TerminalReason>,
    /// The run goes on because a `Stop` hook said so.
    pub(super) stop_hook_active: bool,
    /// The API refused this turn's request as too long: the refusal, and the stop it becomes
    /// if making room fails. Set for one retry of the turn.
    pub(super) recovering: Option<(TooLong, Stop)>,
}

impl RunState {
    pub(super) fn new(origin: Option<RunOrigin>) -> Self {
        Self {
            started: Instant::now(),
            totals: Accounting::default(),
            denials: Vec::new(),
            turns: 0,
            last_stop_reason: None,
            origin,
            terminal_reason: None,
            stop_hook_active: false,
            recovering: None,
        }
    }
}

/// A reply, once committed: what the loop still needs of it.
struct Reply {
    text: String,
    calls: Vec<Call>,
    request_id: Option<String>,
}

impl Agent {
    /// One turn: a request and its reply, with the reply's calls answered.
    pub(super) async fn turn(
        &mut self,
        run: &mut RunState,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Step {
        if cancel.is_cancelled() {
            return Step::End(Err(interrupted()));
        }
        Box::pin(self.deliver_inbox(sink)).await;
        self.sync_controls();
        self.follow_catalog();
        Box::pin(self.refresh_mcp_tools()).await;
        let response = match self.ask(run, sink, cancel).await {
            Ok(response) => response,
            Err(step) => return step,
        };
        let reply = self.take_reply(response, run, sink).await;
        if reply.calls.is_empty() {
            return self.on_final_reply(reply.text, run, sink, cancel).await;
        }
        self.on_tool_calls(reply, run, sink, cancel).await
    }

    /// Makes room in the window when needed and sends the request. After the API refused
    /// it as too long, the turn is tried once more (`Err(Step::Next)`) with room made.
    async fn ask(
        &mut self,
        run: &mut RunState,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, Step> {
        let need = match &run.recovering {
            Some((refusal, _)) => Need::TooLong(*refusal),
            None => Need::Check,
        };
        let fitted = Box::pin(self.fit_context(need, sink, cancel, &mut run.totals)).await;
        if let Err(stop) = fitted {
            // After a refusal, the API's error is what the user needs to see.
            return Err(Step::End(Err(match run.recovering.take() {
                Some((_, refused)) if stop.status.is_none() => Stop {
                    message: format!("{} ({})", refused.message, stop.message),
                    ..refused
                },
                _ => stop,
            })));
        }
        match Box::pin(self.request_with_retries(sink, cancel, &mut run.totals)).await {
            Ok(response) => {
                run.recovering = None;
                Ok(response)
            }
            // Once per turn: make room and ask again rather than fail the run.
            Err(stop) if run.recovering.is_none() && stop.too_long.is_some() => {
                run.recovering = stop.too_long.map(|refusal| (refusal, stop));
                Err(Step::Next)
            }
            Err(stop) => Err(Step::End(Err(stop))),
        }
    }

    /// Counts the reply and commits it to the conversation.
    async fn take_reply(
        &mut self,
        response: ModelResponse,
        run: &mut RunState,
        sink: &EventSink,
    ) -> Reply {
        run.turns += 1;
        self.account(&response, sink, &mut run.totals);
        let reply = response.message;
        run.last_stop_reason = reply.stop_reason.clone();
        let text = reply.text();
        let calls = tool_calls(&reply.content);
        let meta = ReplyMeta {
            id: reply.id.clone(),
            model: reply.model.clone(),
            usage: reply.usage.clone(),
            stop_reason: run.last_stop_reason.clone(),
        };
        let usage = reply.usage.clone();
        self.commit(sink, sendable(reply.content), Some(meta), Vec::new())
            .await;
        self.context.observe(&usage, self.messages.len());
        self.publish_context(Some(&usage));
        Reply {
            text,
            calls,
            request_id: response.request_id,
        }
    }

    /// A reply that calls no tool ends the run, unless structured output is still owed or a
    /// `Stop` hook hands the model more to do (within the run's limits).
    async fn on_final_reply(
        &mut self,
        text: String,
        run: &mut RunState,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Step {
        let more = match crate::structured::next(self.config.stop.structured.as_deref(), false) {
            crate::structured::Next::Remind(reminder) => Some(reminder),
            crate::structured::Next::GiveUp(message) => {
                return Step::End(Err(structured_stop(message)))
            }
            _ => {
                let active = &mut run.stop_hook_active;
                Box::pin(self.stop_hooks(&text, active, sink, cancel)).await
            }
        };
        let Some(more) = more else {
            return Step::End(Ok(text));
        };
        if let Some(stop) = self.limit_reached(run.turns, run.totals.cost_usd) {
            return Step::End(Err(stop));
        }
        self.commit(sink, more, None, Vec::new()).await;
        Step::Next
    }

    /// Answers the reply's calls; the run goes on unless something ends it then.
    async fn on_tool_calls(
        &mut self,
        reply: Reply,
        run: &mut RunState,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Step {
        if let Some(ledger) = self.config.ledger() {
            ledger.record_tool_uses(&sink.agent().agent_id, reply.calls.len() as u64);
        }
        self.publish_fork_point(&reply.calls);
        // The reply's calls are committed and unanswered: the worst moment to crash.
        crate::failpoint::hit("before-tool-calls");
        let request_id = reply.request_id.as_deref();
        let denials = &mut run.denials;
        let hook_stop = Box::pin(self.answer(reply.calls, request_id, sink, cancel, denials)).await;
        if cancel.is_cancelled() {
            return Step::End(Err(interrupted()));
        }
        // A tool hook said `continue: false`: the results are in, no further request.
        if hook_stop.is_some() {
            run.terminal_reason = Some(TerminalReason::HookStopped);
            return Step::End(Ok(reply.text));
        }
        match self.ends_after_calls(run) {
            Some(ended) => Step::End(ended.map(|()| reply.text)),
            None => Step::Next,
        }
    }
}

/// The tool calls of a reply, in order.
fn tool_calls(content: &[ContentBlock]) -> Vec<Call> {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse {
                id, name, input, ..
            } => Some(Call {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            }),
            _ => None,
        })
        .collect()
}
