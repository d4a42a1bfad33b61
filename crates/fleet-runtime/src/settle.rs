//! After a run: waiting for the agent's own background tasks and running it again on their
//! notifications (and on messages sent to it), until none is left. The session does this for the main agent, and every
//! subagent does it before it reports, so no task is left without someone to hear from it.

use crate::agent::Agent;
use crate::inbox::Inbox;
use crate::sink::EventSink;
use crate::tasks::TaskRegistry;
use fleet_protocol::{
    ContentBlock, EventKind, Message, Role, RunOrigin, RunResult, SessionInfo, TaskNotification,
};
use tokio_util::sync::CancellationToken;

/// Who is settling, and what it does around each run.
pub(crate) struct Settle<'a> {
    pub owner: &'a str,
    pub tasks: &'a TaskRegistry,
    pub inbox: &'a Inbox,
    pub sink: &'a EventSink,
    pub cancel: &'a CancellationToken,
    /// Announced (`Started`) before each run, for the main agent.
    pub announce: Option<&'a (dyn Fn(&Agent) -> SessionInfo + Sync)>,
    /// The lead's team, whose activity also keeps the owner waiting, and whose mail (in the
    /// spawner's team inbox) is read here, between runs.
    pub team: Option<&'a crate::subagent::Spawner>,
    /// Wait for outstanding tasks (`-p`, subagents), or only answer what is already waiting
    /// (an attended session, where the person may type while tasks run).
    pub wait_for_tasks: bool,
}

impl Settle<'_> {
    /// Runs `agent` on each batch of notifications until the owner has no task outstanding
    /// or the cancel token fires; `each_run` sees every run's result.
    pub async fn run(&self, agent: &mut Agent, mut each_run: impl FnMut(&RunResult)) {
        loop {
            if self.cancel.is_cancelled() {
                return;
            }
            // Counted before draining: a task stops counting only once its notification is
            // in the inbox, so the drain sees it.
            let seen = self.team.map_or(0, |s| s.team_version());
            let outstanding = self.tasks.outstanding(self.owner);
            // Checked before draining too: a teammate going idle leaves its notification in
            // the lead's mailbox first, so one or the other is seen.
            let team_busy = self.team.is_some_and(|s| s.team_busy());
            let mut waiting = self.inbox.drain();
            // Team mail is acknowledged only after the run that reads it: by then its turn is
            // in the transcript with the mail's ids, which a resume checks before delivering.
            let mail = match self.team {
                Some(spawner) => spawner.team_inbox().take_mail(),
                None => crate::inbox::Taken::default(),
            };
            waiting.extend(mail.messages);
            if !waiting.is_empty() {
                agent.set_origin(origin_of(&waiting));
                if let Some(announce) = self.announce {
                    self.sink.emit(EventKind::Started(announce(agent))).await;
                }
                agent.set_prompt_mail_ids(mail.mail_ids);
                let result = agent.run(merge(waiting), self.sink, self.cancel).await;
                for ack in mail.acks {
                    ack();
                }
                each_run(&result);
                continue;
            }
            if !self.wait_for_tasks || (outstanding == 0 && !team_busy) {
                return;
            }
            let team_changed = async {
                match self.team {
                    Some(spawner) => tokio::select! {
                        _ = spawner.team_changed_since(seen) => {}
                        _ = spawner.team_inbox().wait() => {}
                    },
                    None => std::future::pending().await,
                }
            };
            let _wait = self.sink.waiting_for(crate::watchdog::WaitingFor::Tasks);
            tokio::select! {
                _ = self.cancel.cancelled() => return,
                _ = self.inbox.wait() => {}
                _ = team_changed => {}
            }
        }
    }
}

/// Several waiting notifications as one user turn.
fn merge(messages: Vec<Message>) -> Message {
    if messages.len() == 1 {
        if let Some(only) = messages.into_iter().next() {
            return only;
        }
        return Message::user_text("");
    }
    let blocks = messages
        .iter()
        .map(|m| ContentBlock::text(m.text()))
        .collect();
    Message::with_blocks(Role::User, blocks)
}

/// What started a run on `messages`: task notifications (with their task ids), or messages
/// from other agents when there is no notification among them.
fn origin_of(messages: &[Message]) -> RunOrigin {
    let task_ids: Vec<String> = messages
        .iter()
        .filter_map(|m| TaskNotification::parse(&m.text()))
        .map(|n| n.task_id)
        .collect();
    RunOrigin {
        kind: if task_ids.is_empty() {
            "message"
        } else {
            "task-notification"
        }
        .into(),
        task_ids,
    }
}
