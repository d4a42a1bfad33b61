//! `isolation: "remote"`: the agent runs on a remote worker, and here it is a background task
//! like any other — progress, TaskStop, TaskOutput, a `<task-notification>` at the end, with
//! the branch its changes arrived on reported as a kept worktree is.
//!
//! How the job reaches a worker is the session's [`RemoteLauncher`]; nothing here knows the
//! broker. Only what the call would have had locally travels: the definition, the resolved
//! model, the caller's permission mode (never more) and rules, and its folder.
//!
//! [`RemoteLauncher`]: crate::remote::RemoteLauncher

use super::input::AgentInput;
use super::ParentView;
use crate::definitions::{AgentDefinition, ModelSetting};
use crate::remote::{RemoteEnding, RemoteLauncher, RemoteRequest, RemoteUpdate};
use crate::tasks::{NewTask, TaskKind, TaskRegistry};
use fleet_protocol::{TaskProgress, TaskStatus, TaskUsage};
use fleet_tools::{ToolContext, ToolError, ToolOutput};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub(crate) use crate::remote::NO_WORKERS;

/// Where the agent runs and with what, resolved as a local child's would be.
pub(crate) struct RemoteCall<'a> {
    pub parent: &'a Arc<ParentView>,
    pub input: &'a AgentInput,
    pub def: &'a AgentDefinition,
    pub model: String,
    pub cwd: PathBuf,
    pub depth: u32,
}

impl RemoteCall<'_> {
    /// Publishes the call as a remote job through the session's `launcher`, registers its
    /// task in `tasks` and returns at once.
    pub(crate) async fn launch(
        self,
        launcher: Option<&Arc<dyn RemoteLauncher>>,
        tasks: &Arc<TaskRegistry>,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let launcher = launcher.ok_or_else(|| ToolError::failed(NO_WORKERS))?;
        let RemoteCall {
            parent,
            input,
            def,
            model,
            cwd,
            depth,
        } = self;
        let prompt = match &def.initial_prompt {
            Some(first) => format!("{first}\n\n{}", input.prompt),
            None => input.prompt.clone(),
        };
        let task_id = new_remote_id();
        let mode = match def.permission_mode {
            Some(wanted) => super::pool::narrower(parent.permissions.mode(), wanted),
            None => parent.permissions.mode(),
        };
        let (allow, deny) = rules_of(&parent.permissions);
        let request = RemoteRequest {
            task_id: task_id.clone(),
            description: input.description.clone(),
            prompt: prompt.clone(),
            agent_type: def.name.clone(),
            definition: agents_entry(def),
            model: model.clone(),
            permission_mode: mode,
            allow,
            deny,
            cwd,
        };
        let cancel = CancellationToken::new();
        let launched = launcher
            .launch(request, cancel.clone())
            .await
            .map_err(|why| ToolError::Failed(format!("Cannot start the remote agent: {why}")))?;
        tasks
            .register_kind(
                NewTask {
                    task_id: task_id.clone(),
                    name: input.name.clone(),
                    owner_id: parent.agent_id.clone(),
                    owner_inbox: parent.inbox.clone(),
                    tool_use_id: ctx.tool_use_id.clone().unwrap_or_default(),
                    description: input.description.clone(),
                    subagent_type: def.name.clone(),
                    prompt: prompt.clone(),
                    model,
                    depth,
                    output_file: String::new(),
                    cancel: cancel.clone(),
                },
                TaskKind::Remote,
            )
            .await;
        tokio::spawn(follow(
            tasks.clone(),
            task_id.clone(),
            launched.updates,
            cancel,
        ));
        Ok(launched_output(
            &task_id,
            def,
            &input.description,
            &prompt,
            &launched.session_url,
            parent.tool_names(),
        ))
    }
}

/// Turns the launcher's updates into the task's progress and its ending.
async fn follow(
    tasks: Arc<TaskRegistry>,
    task_id: String,
    mut updates: mpsc::Receiver<RemoteUpdate>,
    cancel: CancellationToken,
) {
    let mut ending = None;
    while let Some(update) = updates.recv().await {
        match update {
            RemoteUpdate::Started { worker, attempt } => {
                let _ = tasks.set_running(&task_id);
                tasks.update_progress(&task_id, |progress| {
                    // A redelivered job starts over on another worker.
                    *progress = TaskProgress::default();
                    progress.last_activity = Some(match attempt {
                        0 | 1 => format!("running on {worker}"),
                        n => format!("running on {worker} (attempt {n})"),
                    });
                });
            }
            RemoteUpdate::Progress {
                tool_uses,
                total_tokens,
                last_activity,
            } => {
                let _ = tasks.set_running(&task_id);
                tasks.update_progress(&task_id, |progress| {
                    progress.tool_uses = tool_uses;
                    progress.total_tokens = total_tokens;
                    if last_activity.is_some() {
                        progress.last_activity = last_activity;
                    }
                });
            }
            RemoteUpdate::Ended(ended) => {
                ending = Some(ended);
                break;
            }
        }
    }
    let ending = ending.unwrap_or_else(|| RemoteEnding {
        status: TaskStatus::Failed,
        result: "The remote job could no longer be followed: its launcher stopped reporting."
            .into(),
        usage: TaskUsage::default(),
        branch: None,
    });
    let mut result = ending.result;
    if let Some(branch) = &ending.branch {
        result.push_str(&branch_text(branch));
        tasks.set_worktree(
            &task_id,
            json!({"branch": branch, "remote": true}).to_string(),
        );
    }
    let status = if cancel.is_cancelled() {
        TaskStatus::Killed
    } else {
        ending.status
    };
    // Only a running task may complete; one stopped meanwhile has ended already and its
    // kill stands.
    let _ = tasks.set_running(&task_id);
    let _ = tasks
        .finish(&task_id, status, result, ending.usage, None)
        .await;
}

/// The paragraph a fetched branch adds to the result, as a kept worktree's does.
pub(crate) fn branch_text(branch: &str) -> String {
    format!(
        "\n\nThe agent ran on a remote worker; its changes were fetched into this repository \
         on branch {branch}. Merge the branch or copy what you need; `git branch -D {branch}` \
         removes it."
    )
}

/// The definition in the form `--agents` takes, so a worker runs the same agent without the
/// caller's agent files.
pub(crate) fn agents_entry(def: &AgentDefinition) -> Value {
    let mut entry = json!({"description": def.description, "prompt": def.prompt});
    if let Some(tools) = &def.tools {
        entry["tools"] = tools.iter().map(|t| t.to_rule_string()).collect();
    }
    if !def.disallowed_tools.is_empty() {
        entry["disallowedTools"] = def
            .disallowed_tools
            .iter()
            .map(|t| t.to_rule_string())
            .collect();
    }
    match &def.model {
        Some(ModelSetting::Named(name)) => entry["model"] = json!(name),
        Some(ModelSetting::Inherit) => entry["model"] = json!("inherit"),
        None => {}
    }
    if let Some(mode) = def.permission_mode {
        entry["permissionMode"] = json!(mode.as_str());
    }
    if let Some(turns) = def.max_turns {
        entry["maxTurns"] = json!(turns);
    }
    entry
}

/// The caller's allow and deny rules in settings syntax, those granted while it runs
/// included.
fn rules_of(permissions: &fleet_tools::permissions::Permissions) -> (Vec<String>, Vec<String>) {
    let granted = permissions.granted_rules();
    let texts = |own: &[Arc<fleet_tools::permissions::Rule>],
                 more: &[Arc<fleet_tools::permissions::Rule>]| {
        let mut texts: Vec<String> = Vec::new();
        for rule in own.iter().chain(more) {
            let text = rule.to_string();
            if !texts.contains(&text) {
                texts.push(text);
            }
        }
        texts
    };
    (
        texts(&permissions.rules.allow, &granted.allow),
        texts(&permissions.rules.deny, &granted.deny),
    )
}

/// The launch answer: the model reads that it started and how to follow it; printers get
/// `remote_launched` with the task and where its events are.
fn launched_output(
    task_id: &str,
    def: &AgentDefinition,
    description: &str,
    prompt: &str,
    session_url: &str,
    held: &[String],
) -> ToolOutput {
    let mut text = format!(
        "Started remote agent {task_id} ({}) on a remote worker: {description}.\n\
         It works on its own; when it finishes you will receive a <task-notification> with its \
         result and, if it changed files, the branch they arrived on. Do not wait for it or \
         check on it in a loop, and do not do its work yourself meanwhile: carry on with other \
         work, or end your turn if there is none.",
        def.name
    );
    let uses = super::report::held_uses(
        held,
        &[
            ("TaskOutput", "TaskOutput to look at its progress"),
            ("TaskStop", "TaskStop to stop it"),
        ],
    );
    if !uses.is_empty() {
        text.push_str(&format!(" Use {}.", uses.join(" or ")));
    }
    text.push_str(&format!(
        "\n`fleet remote logs {task_id}` shows what it does ({session_url})."
    ));
    ToolOutput::text(text).with_structured(json!({
        "status": "remote_launched",
        "taskId": task_id,
        "sessionUrl": session_url,
        "description": description,
        "prompt": prompt,
    }))
}

/// A remote task id: `r` and 16 hex digits (agents are `a…`, shells `b…`), as the broker's
/// side makes them.
pub(crate) fn new_remote_id() -> String {
    let uuid = uuid::Uuid::new_v4().simple().to_string();
    format!("r{}", &uuid[..16])
}
