//! Bash commands the user moved to the background, as tasks of the main agent: the Bash tool
//! (in `fleet-tools`, below the registry) hands a moved command to [`SessionShells`], which
//! registers it like any background task — `TaskStarted`, `BackgroundTasksChanged`, TaskOutput,
//! TaskStop and a `<task-notification>` to the main agent when it ends.

use super::{NewTask, TaskKind, TaskRegistry};
use crate::subagent::Spawner;
use fleet_protocol::{KilledBy, TaskStatus, TaskUsage};
use fleet_tools::background::{
    AdoptFuture, AdoptedShell, ShellEnding, ShellStart, ShellStatus, ShellTasks,
};
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// How much of a running command's output file TaskOutput shows.
const LIVE_TAIL_BYTES: u64 = 8 * 1024;

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
            let spawner = self
                .spawner
                .upgrade()
                .ok_or("the session is ending: no task can be started")?;
            let owner = spawner
                .main_view()
                .ok_or("the main agent's tools are not set up")?;
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
            tasks.set_running(&task_id).map_err(|e| e.to_string())?;
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
        .transcript_path(task_id)
        .and_then(|t| t.parent().and_then(|d| d.parent()).map(PathBuf::from));
    match session_dir {
        Some(dir) => dir.join("tasks").join(file),
        None => std::env::temp_dir().join("fleet-tasks").join(file),
    }
}

/// The end of a running command's output file, for TaskOutput; `None` when it cannot be read.
pub(crate) async fn output_tail(path: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let mut file = tokio::fs::File::open(path).await.ok()?;
    let len = file.metadata().await.ok()?.len();
    let start = len.saturating_sub(LIVE_TAIL_BYTES);
    file.seek(std::io::SeekFrom::Start(start)).await.ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).await.ok()?;
    let text = String::from_utf8_lossy(&bytes);
    // A cut start may fall inside a line (or a character): begin at the next whole line.
    let text = match (start > 0, text.find('\n')) {
        (true, Some(at)) => &text[at + 1..],
        _ => &text[..],
    };
    let text = text.trim_end();
    Some(if text.is_empty() {
        "(no output yet)".to_string()
    } else {
        text.to_string()
    })
}
