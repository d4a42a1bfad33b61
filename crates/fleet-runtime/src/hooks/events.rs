//! One function per event: the fields of its input (Claude Code's names) and what its
//! matcher is tried against. The callers — agent loop, dispatcher, session, compaction —
//! decide what to do with the [`Verdict`].

use super::{HookEvent, Hooks, Verdict};
use crate::context::AgentContext;
use crate::sink::EventSink;
use fleet_protocol::PermissionMode;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// Who fires an event: the fields every hook input carries about its agent.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    pub session_id: String,
    pub cwd: PathBuf,
    /// The agent's permission mode; `None` where no agent is running (the worktree hooks of
    /// a session that has not started one), written as `""` as it always was.
    pub permission_mode: Option<PermissionMode>,
    /// `(agent_id, agent_type)` for a subagent or teammate; `None` for the main agent.
    pub agent: Option<(String, String)>,
}

impl Caller {
    /// The caller as seen from inside the running agent (its task-local context says whether
    /// it is a subagent or teammate).
    pub fn current(
        session_id: &str,
        cwd: PathBuf,
        permission_mode: Option<PermissionMode>,
    ) -> Self {
        Self {
            session_id: session_id.to_string(),
            cwd,
            permission_mode,
            agent: AgentContext::current()
                .map(|ctx| (ctx.agent_id().to_string(), ctx.agent_type().to_string())),
        }
    }
}

/// The call a tool hook is about: its name, input and id travel together into every tool
/// event's input.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallRef<'a> {
    pub name: &'a str,
    pub input: &'a Value,
    pub id: &'a str,
}

fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// What ends an agent's turn, by who the agent is: the main agent `Stop`s, a subagent
/// `SubagentStop`s, a teammate goes idle (`TeammateIdle`).
pub fn stop_event() -> HookEvent {
    match AgentContext::current().as_deref() {
        Some(AgentContext::Teammate(_)) => HookEvent::TeammateIdle,
        Some(_) => HookEvent::SubagentStop,
        None => HookEvent::Stop,
    }
}

impl Hooks {
    pub async fn pre_tool_use(
        &self,
        caller: &Caller,
        call: ToolCallRef<'_>,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let input = json!({"tool_name": call.name, "tool_input": call.input,
                           "tool_use_id": call.id});
        self.fire(
            HookEvent::PreToolUse,
            Some(call.name),
            caller,
            fields(input),
            sink,
            cancel,
        )
        .await
    }

    pub async fn post_tool_use(
        &self,
        caller: &Caller,
        call: ToolCallRef<'_>,
        tool_response: Value,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let input = json!({"tool_name": call.name, "tool_input": call.input,
                           "tool_response": tool_response, "tool_use_id": call.id});
        self.fire(
            HookEvent::PostToolUse,
            Some(call.name),
            caller,
            fields(input),
            sink,
            cancel,
        )
        .await
    }

    pub async fn post_tool_use_failure(
        &self,
        caller: &Caller,
        call: ToolCallRef<'_>,
        error: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let input = json!({"tool_name": call.name, "tool_input": call.input,
                           "tool_use_id": call.id, "error": error,
                           "is_interrupt": cancel.is_cancelled()});
        self.fire(
            HookEvent::PostToolUseFailure,
            Some(call.name),
            caller,
            fields(input),
            sink,
            cancel,
        )
        .await
    }

    /// Before the user is asked about a call: a hook may answer for them.
    pub async fn permission_request(
        &self,
        caller: &Caller,
        tool_name: &str,
        tool_input: &Value,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let input = json!({"tool_name": tool_name, "tool_input": tool_input});
        self.fire(
            HookEvent::PermissionRequest,
            Some(tool_name),
            caller,
            fields(input),
            sink,
            cancel,
        )
        .await
    }

    /// Something wants the user's attention (`permission_prompt`, `idle_prompt`).
    pub async fn notification(
        &self,
        caller: &Caller,
        message: &str,
        notification_type: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let input = json!({"message": message, "notification_type": notification_type});
        self.fire(
            HookEvent::Notification,
            Some(notification_type),
            caller,
            fields(input),
            sink,
            cancel,
        )
        .await
    }

    pub async fn user_prompt_submit(
        &self,
        caller: &Caller,
        prompt: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let input = json!({ "prompt": prompt });
        self.fire(
            HookEvent::UserPromptSubmit,
            None,
            caller,
            fields(input),
            sink,
            cancel,
        )
        .await
    }

    /// The agent is about to end its turn (see [`stop_event`] for which event that is).
    /// `stop_hook_active` says the agent is already continuing because a stop hook blocked.
    pub async fn stop(
        &self,
        caller: &Caller,
        stop_hook_active: bool,
        last_assistant_message: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let event = stop_event();
        let mut input = json!({"stop_hook_active": stop_hook_active,
                               "last_assistant_message": last_assistant_message});
        if let Some(AgentContext::Teammate(mate)) = AgentContext::current().as_deref() {
            input["teammate_name"] = mate.agent_name.clone().into();
            input["team_name"] = mate.team_name.clone().into();
        }
        let target = caller.agent.as_ref().map(|(_, kind)| kind.as_str());
        let target = (event == HookEvent::SubagentStop)
            .then_some(target)
            .flatten();
        self.fire(event, target, caller, fields(input), sink, cancel)
            .await
    }

    /// A subagent starts (its matcher is tried against the agent type).
    pub async fn subagent_start(
        &self,
        caller: &Caller,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let target = caller.agent.as_ref().map(|(_, kind)| kind.clone());
        self.fire(
            HookEvent::SubagentStart,
            target.as_deref(),
            caller,
            Map::new(),
            sink,
            cancel,
        )
        .await
    }

    /// `source`: `startup`, `resume`, `clear` or `compact`.
    pub async fn session_start(
        &self,
        caller: &Caller,
        source: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let input = json!({ "source": source });
        self.fire(
            HookEvent::SessionStart,
            Some(source),
            caller,
            fields(input),
            sink,
            cancel,
        )
        .await
    }

    /// `reason`: `clear`, `logout`, `prompt_input_exit` or `other`.
    pub async fn session_end(
        &self,
        caller: &Caller,
        reason: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let input = json!({ "reason": reason });
        self.fire(
            HookEvent::SessionEnd,
            Some(reason),
            caller,
            fields(input),
            sink,
            cancel,
        )
        .await
    }

    /// Before a compaction. `trigger` is `manual` (`/compact`) or `auto`; a blocked verdict
    /// means the hook asked not to compact now. For the compaction engine to call.
    pub async fn pre_compact(
        &self,
        caller: &Caller,
        trigger: &str,
        custom_instructions: Option<&str>,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let input = json!({"trigger": trigger,
                           "custom_instructions": custom_instructions.unwrap_or_default()});
        self.fire(
            HookEvent::PreCompact,
            Some(trigger),
            caller,
            fields(input),
            sink,
            cancel,
        )
        .await
    }

    /// A task was added to the team's task list (exit 2 refuses it, as in Claude Code).
    pub async fn task_created(
        &self,
        caller: &Caller,
        task: Value,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        self.fire(
            HookEvent::TaskCreated,
            None,
            caller,
            fields(task),
            sink,
            cancel,
        )
        .await
    }

    /// A task is being marked completed (exit 2 keeps it open, with the reason).
    pub async fn task_completed(
        &self,
        caller: &Caller,
        task: Value,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        self.fire(
            HookEvent::TaskCompleted,
            None,
            caller,
            fields(task),
            sink,
            cancel,
        )
        .await
    }

    /// `WorktreeRemove` (or another worktree event whose answer is only a verdict), with
    /// `details` as its fields (`worktree_path`, …). `WorktreeCreate`, whose hooks print a
    /// path, is run by `worktree.rs`.
    pub async fn worktree(
        &self,
        event: HookEvent,
        caller: &Caller,
        details: Value,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        self.fire(event, None, caller, fields(details), sink, cancel)
            .await
    }
}
