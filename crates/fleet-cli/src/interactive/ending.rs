//! How the driver ends a session (on quit, `/clear`, `/resume`) and what it notes of each
//! event on the way: the transcript, the agents' labels, the background tasks running.

use super::approver::{AgentLabels, UiApprover};
use super::session::Live;
use fleet_protocol::{AgentEvent, EventKind};
use fleet_runtime::approval::Approval;
use fleet_tui::port::{UiCommand, UiEvent};
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc;

/// How long a session with no background work may take to end once its prompts closed,
/// counted from its last event.
const IDLE_END: std::time::Duration = std::time::Duration::from_secs(15);

/// Records what the transcript keeps and notes what the driver tracks of one event.
pub(super) fn observe(
    live: &mut Live,
    event: &AgentEvent,
    labels: &AgentLabels,
    background: &AtomicUsize,
) -> anyhow::Result<()> {
    labels.note(&event.agent);
    if let (EventKind::BackgroundTasksChanged(tasks), None) =
        (&event.kind, &event.agent.parent_tool_use_id)
    {
        background.store(tasks.len(), Ordering::Relaxed);
    }
    live.file.record_event(event).map_err(|err| {
        // Nothing more may happen that the transcript cannot hold.
        live.handle.cancel.cancel();
        anyhow::Error::new(err)
    })
}

/// Ends `live`: no more prompts; with `stop`, its turn and background tasks are stopped,
/// else they finish first. Its last events are recorded and forwarded; a `Quit` with
/// `stop_background` arriving meanwhile stops what is left. Returns the session's id when
/// it has a transcript on disk to resume.
pub(super) async fn end(
    mut live: Live,
    stop: bool,
    ui: &mpsc::Sender<UiEvent>,
    labels: &AgentLabels,
    background: &AtomicUsize,
    approver: &UiApprover,
    mut commands: Option<&mut mpsc::UnboundedReceiver<UiCommand>>,
) -> Option<String> {
    live.ops = fleet_session::OpSender::closed();
    if stop {
        live.handle.cancel.cancel();
        approver.deny_all();
    }
    let mut idle_since = tokio::time::Instant::now();
    loop {
        // With nothing left running in the background, the session ends as soon as it sees
        // its prompts close; one that is still there after IDLE_END is stopped, so leaving
        // never waits on something that will not come.
        let deadline = idle_since + IDLE_END;
        let idle = background.load(Ordering::Relaxed) == 0;
        let event = match commands.as_deref_mut() {
            Some(commands) => tokio::select! {
                event = live.handle.recv() => event,
                () = tokio::time::sleep_until(deadline), if idle => {
                    if live.handle.cancel.is_cancelled() {
                        tracing::warn!("the session did not end {IDLE_END:?} after it was stopped; leaving it");
                        break;
                    }
                    tracing::warn!("the session did not end {IDLE_END:?} after its last prompt; stopping it");
                    live.handle.cancel.cancel();
                    approver.deny_all();
                    idle_since = tokio::time::Instant::now();
                    continue;
                }
                Some(command) = commands.recv() => {
                    match command {
                        UiCommand::Quit { stop_background: true } | UiCommand::Interrupt => {
                            live.handle.cancel.cancel();
                            approver.deny_all();
                        }
                        UiCommand::Answer { id, .. } => {
                            if let Some(pending) = approver.take(id) {
                                pending.reply(Approval::deny());
                            }
                        }
                        _ => {}
                    }
                    continue;
                }
            },
            None => live.handle.recv().await,
        };
        let Some(event) = event else { break };
        idle_since = tokio::time::Instant::now();
        if let Err(err) = observe(&mut live, &event, labels, background) {
            tracing::warn!("recording the session's last events: {err:#}");
        }
        let _ = ui.send(UiEvent::Agent(event)).await;
    }
    let Live {
        handle,
        mut file,
        socket,
        ..
    } = live;
    if tokio::time::timeout(IDLE_END, handle.finish())
        .await
        .is_err()
    {
        tracing::warn!("the session's task did not end {IDLE_END:?} after its events did");
    }
    if let Some(path) = socket {
        let _ = std::fs::remove_file(path);
    }
    if let Err(err) = file.finish() {
        tracing::warn!("saving the session: {err:#}");
    }
    file.is_written().then(|| file.id().to_string())
}
