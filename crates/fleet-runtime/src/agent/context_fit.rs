//! The agent's side of keeping its conversation inside the model's window: lending its
//! conversation to [`crate::compact`] before each request, after a "prompt is too long", and
//! for `/compact`, and counting what the summary requests cost.

use super::stop::{api_error, interrupted, Stop};
use super::Agent;
use crate::accounting::Accounting;
use crate::compact::{CompactError, Conversation, LazyFrame, Need, Window};
use crate::sink::EventSink;
use fleet_protocol::{CompactTrigger, ResultSubtype};
use tokio_util::sync::CancellationToken;

impl Agent {
    /// The conversation, borrowed for keeping it inside the model's window.
    pub(super) fn conversation<'a>(
        &'a mut self,
        sink: &'a EventSink,
        cancel: &'a CancellationToken,
    ) -> Conversation<'a> {
        let (config, tools) = (&self.config, &self.tool_definitions);
        let frame = LazyFrame::new(move || super::request::frame_of(config, tools));
        let window = Window::new(
            &self.catalog.info(&self.config.model.id),
            self.config.model.max_tokens,
            self.config.context.compact.trigger_pct,
        );
        Conversation {
            client: self.client.as_ref(),
            frame,
            window,
            settings: &self.config.context.compact,
            messages: &mut self.messages,
            tracker: &mut self.context,
            sink,
            cancel,
        }
    }

    /// Makes room for the next request when it would not fit (see [`crate::compact`]).
    pub(super) async fn fit_context(
        &mut self,
        need: Need,
        sink: &EventSink,
        cancel: &CancellationToken,
        totals: &mut Accounting,
    ) -> Result<(), Stop> {
        let spent = self.conversation(sink, cancel).fit(need).await;
        if let Some(response) = spent.map_err(compact_error)? {
            self.account(&response, sink, totals);
        }
        Ok(())
    }

    /// `/compact [focus]`: compacts the conversation now; the result says by how much.
    pub(super) async fn compact_now(
        &mut self,
        focus: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
        totals: &mut Accounting,
    ) -> Result<String, Stop> {
        let focus = Some(focus).filter(|f| !f.is_empty());
        let mut conversation = self.conversation(sink, cancel);
        let response = conversation
            .compact(CompactTrigger::Manual, focus)
            .await
            .map_err(compact_error)?;
        drop(conversation);
        self.account(&response, sink, totals);
        Ok("Conversation compacted.".to_string())
    }
}

/// A compaction that could not make room.
fn compact_error(err: CompactError) -> Stop {
    match err {
        CompactError::Interrupted => interrupted(),
        CompactError::Model(err) => Stop {
            message: format!("Compaction failed: {}", api_error(&err).message),
            ..api_error(&err)
        },
        other => Stop {
            subtype: ResultSubtype::ErrorDuringExecution,
            message: format!("Compaction failed: {other}"),
            status: None,
            too_long: None,
        },
    }
}
