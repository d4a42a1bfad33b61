//! The agent's side of [`crate::hooks`] around a run: the `PreCompact` slot compaction calls,
//! `UserPromptSubmit` on the prompt, and `Stop` when the model is done. (Tool hooks run in
//! the dispatcher, see `calls.rs`.)

use super::Agent;
use crate::sink::EventSink;
use fleet_protocol::Message;
use tokio_util::sync::CancellationToken;

impl Agent {
    /// This agent as hook inputs describe it.
    pub(crate) fn hook_caller(&self) -> crate::hooks::Caller {
        crate::hooks::Caller::current(
            &self.session_id,
            self.ctx.cwd.clone(),
            Some(self.config.tools.permissions.mode()),
        )
    }

    /// Lets compaction run the `PreCompact` hooks of this run (they report on its sink and
    /// stop with its cancellation).
    pub(super) fn install_pre_compact(&mut self, sink: &EventSink, cancel: &CancellationToken) {
        if let Some(hooks) = self.config.hooks.clone() {
            let slot = crate::hooks::turn::pre_compact_slot(
                hooks,
                self.hook_caller(),
                sink.clone(),
                cancel.clone(),
            );
            self.config.context.compact.pre_compact = Some(slot);
        }
    }

    /// `UserPromptSubmit`: may add context to `prompt`, or block it (the reason returned).
    /// `typed` says the prompt came from the user, not from notifications or team mail.
    pub(super) async fn prompt_hooks(
        &self,
        prompt: &mut Message,
        typed: bool,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let hooks = self.config.hooks.clone()?;
        let caller = self.hook_caller();
        Box::pin(crate::hooks::turn::on_run_start(
            &hooks, &caller, prompt, typed, sink, cancel,
        ))
        .await
    }

    /// `Stop`: when the model is done, a hook may hand it more to do (the message returned).
    /// `active` is set while the run goes on because of a Stop hook.
    pub(super) async fn stop_hooks(
        &self,
        final_text: &str,
        active: &mut bool,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Option<Message> {
        let hooks = self.config.hooks.clone()?;
        let caller = self.hook_caller();
        Box::pin(crate::hooks::turn::on_stop(
            &hooks, &caller, active, final_text, sink, cancel,
        ))
        .await
    }
}
