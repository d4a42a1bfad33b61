//! A foreground child: its caller waits for its answer — unless the user moves it to the
//! background (Ctrl+B, [`crate::SessionControls::move_to_background`]).
//!
//! The child runs in a task of its own from the start, so the caller can stop waiting without
//! stopping it: nothing is restarted, the same run goes on. While the caller waits, its
//! interrupt reaches the child (forwarded to the child's token, and on the caller's future
//! being dropped). Once moved, the child is registered as a background `local_agent` task
//! under the id its foreground announcement used (a second `TaskStarted`, now with
//! `is_backgrounded: true`, and `BackgroundTasksChanged`), the call answers as an
//! `async_launched` Agent call does, and the child's end reaches the caller's inbox as a
//! `<task-notification>` — the caller's interrupt no longer touches it.

use super::build::Blueprint;
use super::report::{self, ChildOutcome};
use super::run::{run_guarded, Admitted};
use super::{ParentView, Spawner};
use crate::isolation::WorktreeReport;
use crate::tasks::{ForegroundStart, ForegroundTask, NewTask};
use crate::watchdog::WaitingFor;
use fleet_protocol::KilledBy;
use fleet_tools::background::{Enrolment, Moving};
use fleet_tools::{ToolContext, ToolError, ToolOutput};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{oneshot, Mutex};
use tokio_util::sync::CancellationToken;

/// Who the child answers when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Its caller, through the tool result.
    Waiting,
    /// Its task, through a notification: the user moved it.
    Moved,
    /// It has answered its caller: too late to move.
    Answered,
}

/// What the finished child hands its waiting caller.
type Ended = (ChildOutcome, Option<WorktreeReport>);

/// Cancels the child when the caller stops waiting without having moved it (its call was
/// interrupted and dropped): a foreground child does not outlive its call.
struct StopOnDrop(Option<CancellationToken>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

impl Spawner {
    /// Runs `child` in the foreground for the call `ctx` answers, and returns the call's
    /// result: the child's answer, or — when moved — that it goes on in the background.
    pub(super) async fn run_foreground(
        self: &Arc<Self>,
        parent: &Arc<ParentView>,
        admitted: Admitted,
        prompt: &str,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Admitted {
            bp,
            child,
            record,
            slot,
        } = admitted;
        let started = Instant::now();
        let agent_id = child.agent_id.clone();
        let cancel = child.run.cancel.clone();
        let tool_use_id = ctx.tool_use_id.clone().unwrap_or_default();
        // The awaits boxed here and in `drive` are each taken once (3 KB apiece inline); these
        // two futures live as long as their child, so a fan-out of thousands pays for every
        // inline byte once per waiting agent.
        let task = Box::pin(ForegroundTask::start(
            &self.sink,
            ForegroundStart {
                task_id: &agent_id,
                tool_use_id: &tool_use_id,
                description: &bp.description,
                subagent_type: bp.kind.type_name(),
                prompt,
                model: &bp.model,
                depth: child.depth,
                output_file: &child.output_file,
            },
        ))
        .await;
        let mode = Arc::new(Mutex::new(Mode::Waiting));
        let (tx, mut ended) = oneshot::channel();
        let tap = child.tap.clone();
        let (output_file, depth) = (child.output_file.clone(), child.depth);
        let mut stop_on_drop = StopOnDrop(Some(cancel.clone()));
        // Enrolled before the child starts: whoever sees it running can move it.
        let mut enrolment = ctx.enrol_foreground();
        tokio::spawn(self.clone().drive(
            Admitted {
                bp: bp.clone(),
                child,
                record,
                slot,
            },
            task,
            mode.clone(),
            tx,
        ));
        let _wait = self.sink.waiting_for(WaitingFor::Child {
            agent_id: agent_id.clone(),
        });
        loop {
            tokio::select! {
                biased;
                done = &mut ended => {
                    stop_on_drop.0 = None;
                    let (outcome, kept) = done.map_err(|_| {
                        ToolError::failed("The subagent stopped unexpectedly (internal error).")
                    })?;
                    return Ok(report::completed(
                        &agent_id,
                        &bp,
                        &outcome,
                        started.elapsed(),
                        kept.as_ref(),
                    ));
                }
                () = ctx.cancel.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
                moving = moved(&mut enrolment) => {
                    enrolment = None;
                    let mut mode = mode.lock().await;
                    if *mode != Mode::Waiting || cancel.is_cancelled() {
                        // It finished, or was interrupted, meanwhile: its answer is on its way.
                        moving.refused();
                        continue;
                    }
                    let _ = tap.task.set((self.tasks.clone(), agent_id.clone()));
                    Box::pin(self.tasks.register(NewTask {
                            task_id: agent_id.clone(),
                            name: bp.name.clone(),
                            owner_id: parent.agent_id.clone(),
                            owner_inbox: parent.inbox.clone(),
                            tool_use_id,
                            description: bp.description.clone(),
                            subagent_type: bp.kind.type_name().to_string(),
                            prompt: prompt.to_string(),
                            model: bp.model.clone(),
                            depth,
                            output_file: output_file.clone(),
                            cancel: cancel.clone(),
                        }))
                        .await;
                    let _ = self.tasks.set_running(&agent_id);
                    *mode = Mode::Moved;
                    stop_on_drop.0 = None;
                    moving.done();
                    return Ok(moved_result(&agent_id, &bp, prompt, &output_file));
                }
            }
        }
    }

    /// Runs the child to its end and reports it to whoever it answers by then.
    async fn drive(
        self: Arc<Self>,
        admitted: Admitted,
        task: ForegroundTask,
        mode: Arc<Mutex<Mode>>,
        answer: oneshot::Sender<Ended>,
    ) {
        let Admitted {
            bp,
            child,
            record,
            slot,
        } = admitted;
        let agent_id = child.agent_id.clone();
        let cancel = child.run.cancel.clone();
        let outcome = run_guarded(self.clone(), child, &record).await;
        drop(slot);
        Box::pin(bp.mcp.stop()).await;
        let kept = match &bp.worktree {
            Some(wt) => Box::pin(self.isolation.settle(wt)).await,
            None => None,
        };
        let status = outcome.status(cancel.is_cancelled());
        let usage = outcome.task_usage();
        // Held to the end, so a move cannot slip in between this check and the report.
        let mut mode = mode.lock().await;
        match *mode {
            Mode::Waiting | Mode::Answered => {
                *mode = Mode::Answered;
                self.ledger
                    .finish(&agent_id, status, Some(KilledBy::Parent));
                Box::pin(task.end(&self.sink, status, outcome.result_text(), usage)).await;
                record.life.set_stopped();
                let _ = answer.send((outcome, kept));
            }
            Mode::Moved => {
                let mut result = outcome.result_text();
                if let Some(kept) = &kept {
                    result.push_str(&super::isolate::kept_text(kept));
                    if let Ok(json) = serde_json::to_string(kept) {
                        self.tasks.set_worktree(&agent_id, json);
                    }
                }
                // A task stopped meanwhile has already ended; its kill stands.
                let _ = Box::pin(self.tasks.finish(&agent_id, status, result, usage, None)).await;
                record.life.set_stopped();
            }
        }
    }
}

/// Resolves when the call is moved to the background; never without an enrolment.
async fn moved(enrolment: &mut Option<Enrolment>) -> Moving {
    match enrolment {
        Some(enrolment) => enrolment.moved().await,
        None => std::future::pending().await,
    }
}

/// The call's answer once the user moved the child: like a background launch's, saying who
/// moved it, so the model knows a notification will come and does not wait for it.
fn moved_result(agent_id: &str, bp: &Blueprint, prompt: &str, output_file: &str) -> ToolOutput {
    let mut text = format!(
        "The user moved agent {agent_id} ({}) to the background: it was backgrounded by the \
         user and is still working on \"{}\". You will receive a <task-notification> with its \
         result when it finishes. Do not wait for it or check on it in a loop, and do not do \
         its work yourself: carry on with other work, or end your turn if there is none.",
        bp.kind.type_name(),
        bp.description
    );
    if !output_file.is_empty() {
        text.push_str(&format!("\nIts transcript is written to {output_file}."));
    }
    let mut structured = report::launch_record(agent_id, bp, prompt, output_file);
    structured["backgroundedByUser"] = json!(true);
    ToolOutput::text(text).with_structured(structured)
}
