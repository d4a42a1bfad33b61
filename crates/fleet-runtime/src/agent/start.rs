//! The start of a run: what its prompt is (a turn for the model, `/compact`, or a prompt a
//! hook refused), committing it with the team mail it delivers, and the session's controls
//! taken up for the run.

use super::Agent;
use crate::sink::EventSink;
use fleet_protocol::Message;
use tokio_util::sync::CancellationToken;

/// What a run does after its start.
pub(super) enum Opening {
    /// Turns with the model until it is done.
    Turns,
    /// `/compact [focus]`: a command to the session, never sent to the model (nor to the
    /// `UserPromptSubmit` hooks, which see prompts).
    Compact(String),
    /// A `UserPromptSubmit` hook blocked the prompt, for this reason.
    Refused(String),
}

impl Agent {
    /// Starts a run on `prompt`; `prompted` says nothing but a prompt started it (no
    /// notifications).
    pub(super) async fn open_run(
        &mut self,
        mut prompt: Message,
        prompted: bool,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Opening {
        let mail_ids = std::mem::take(&mut self.prompt_mail_ids);
        self.install_pre_compact(sink, cancel);
        let opening = match crate::compact::manual_command(&prompt.text()) {
            Some(focus) => Opening::Compact(focus.to_owned()),
            None => {
                let typed = prompted && mail_ids.is_empty();
                match self.prompt_hooks(&mut prompt, typed, sink, cancel).await {
                    Some(reason) => Opening::Refused(reason),
                    None => Opening::Turns,
                }
            }
        };
        if matches!(opening, Opening::Turns) {
            self.commit_mail(sink, prompt, mail_ids).await;
        }
        if let Some(ack) = self.prompt_ack.take() {
            ack();
        }
        self.sync_controls_for_run();
        opening
    }
}
