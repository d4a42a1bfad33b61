//! Bash commands the user moved to the background, as tasks of the main agent: the Bash tool
//! (in `fleet-tools`, below the registry) hands a moved command to [`SessionShells`], which
//! registers it in the session's task registry like any background task — `TaskStarted`,
//! `BackgroundTasksChanged`, TaskOutput, TaskStop and a `<task-notification>` to the main
//! agent when it ends. It lives beside the spawner because the main agent's view (who owns the
//! task, where its notification goes) is the spawner's.

use super::Spawner;
use crate::tasks::{NewTask, TaskKind, TaskRegistry};
use fleet_protocol::{KilledBy, TaskStatus, TaskUsage};
use fleet_tools::background::{
    AdoptError, AdoptFuture, AdoptedShell, ShellEnding, ShellStart, ShellStatus, ShellTasks,
};
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Adopts the main agent's moved Bash commands into the session's task registry.
pub(crate) struct SessionShells {
    spawner: Weak<Spawner>,
}

impl SessionShells {
    pub(crate) fn new(spawner: &Arc<Spawner>) -> Self {
        Self {
            spawner: Arc::downgrade(spawner),
        }
    }
}

impl ShellTasks for SessionShells {
    fn adopt(&self, shell: ShellStart) -> AdoptFuture<'_> {
        Box::pin(async move {
            let spawner = self.spawner.upgrade().ok_or(AdoptError::SessionEnding)?;
            let owner = spawner.main_view().ok_or(AdoptError::NoMainAgent)?;
            let task_id = new_shell_id();
            let output_file = output_path(&spawner, &task_id);
            let cancel = CancellationToken::new();
            let tasks = spawner.tasks().clone();
            tasks
                .register_kind(
                    NewTask {
                        task_id: task_id.clone(),
                        name: None,
                        owner_id: owner.agent_id.clone(),
                        owner_inbox: owner.inbox.clone(),
                        tool_use_id: shell.tool_use_id,
                        description: shell.description,
                        subagent_type: String::new(),
                        prompt: shell.command,
                        model: String::new(),
                        depth: 0,
                        output_file: output_file.display().to_string(),
                        cancel: cancel.clone(),
                    },
                    TaskKind::Shell,
                )
                .await;
            tasks
                .set_running(&task_id)
                .map_err(|e| AdoptError::Registry(Box::new(e)))?;
            let (done, ended) = oneshot::channel();
            tokio::spawn(finish_when_done(tasks, task_id.clone(), ended));
            Ok(AdoptedShell {
                task_id,
                output_file,
                cancel,
                done,
            })
        })
    }
}

/// Ends the task with the command. A task TaskStop ended already keeps its kill.
async fn finish_when_done(
    tasks: Arc<TaskRegistry>,
    task_id: String,
    ended: oneshot::Receiver<ShellEnding>,
) {
    let ending = ended.await.unwrap_or_else(|_| ShellEnding {
        status: ShellStatus::Failed,
        result: "The command's runner went away before it finished.".into(),
        exit_code: None,
    });
    let (status, killed_by) = match ending.status {
        ShellStatus::Completed => (TaskStatus::Completed, None),
        ShellStatus::Failed => (TaskStatus::Failed, None),
        ShellStatus::Killed => (TaskStatus::Killed, Some(KilledBy::User)),
    };
    let _ = tasks
        .finish(
            &task_id,
            status,
            ending.result,
            TaskUsage::default(),
            killed_by,
        )
        .await;
}

/// `b` and 16 hex digits: a shell task's id, told apart from an agent's (`a…`) at a glance.
fn new_shell_id() -> String {
    let uuid = uuid::Uuid::new_v4().simple().to_string();
    format!("b{}", &uuid[..16])
}

/// `<session>/tasks/<id>.output` beside the session's subagent transcripts; a temporary
/// folder when transcripts are off.
fn output_path(spawner: &Spawner, task_id: &str) -> PathBuf {
    let file = format!("{task_id}.output");
    let session_dir = spawner
        .settings()
        .transcript_path(task_id)
        .and_then(|t| t.parent().and_then(|d| d.parent()).map(PathBuf::from));
    match session_dir {
        Some(dir) => dir.join("tasks").join(file),
        None => std::env::temp_dir().join("fleet-tasks").join(file),
    }
}
