//! The hooks at the edges of an agent's run, for the agent loop: `UserPromptSubmit` (or
//! `SubagentStart`) before the prompt is committed, and the stop hook (`Stop`,
//! `SubagentStop` or `TeammateIdle`) when the model ends its turn.

use super::{stop_event, Caller, HookEvent, Hooks};
use crate::context::AgentContext;
use crate::sink::EventSink;
use fleet_protocol::{ContentBlock, Message, MessageContent};
use tokio_util::sync::CancellationToken;

/// Before a run's prompt is committed. `typed` says the prompt came from the user (not a task
/// notification, not team mail). Returns the reason when a `UserPromptSubmit` hook blocked
/// the prompt, which then must not reach the model; hooks' context is added to the prompt.
pub(crate) async fn on_run_start(
    hooks: &Hooks,
    caller: &Caller,
    prompt: &mut Message,
    typed: bool,
    sink: &EventSink,
    cancel: &CancellationToken,
) -> Option<String> {
    let subagent = matches!(
        AgentContext::current().as_deref(),
        Some(AgentContext::Subagent(_))
    );
    // A subagent's prompt comes from its parent, not the user: it gets SubagentStart instead.
    let verdict = if subagent {
        if !typed || !hooks.has(HookEvent::SubagentStart) {
            return None;
        }
        hooks.subagent_start(caller, sink, cancel).await
    } else if typed && caller.agent.is_none() && hooks.has(HookEvent::UserPromptSubmit) {
        let verdict = hooks
            .user_prompt_submit(caller, &prompt.text(), sink, cancel)
            .await;
        if let Some(reason) = verdict.blocked.clone().or(verdict.stop.clone()) {
            return Some(reason);
        }
        verdict
    } else {
        return None;
    };
    if let Some(context) = verdict.context_text() {
        add_text(prompt, context);
    }
    None
}

/// When the model ended its turn. Returns the message to continue with when a stop hook
/// blocked: its reason, as a new user turn. `active` is `stop_hook_active`: once a stop hook
/// has made the agent go on in this run, the next stop is final whatever the hooks say, so a
/// hook that always blocks cannot keep an agent running forever.
pub(crate) async fn on_stop(
    hooks: &Hooks,
    caller: &Caller,
    active: &mut bool,
    last_text: &str,
    sink: &EventSink,
    cancel: &CancellationToken,
) -> Option<Message> {
    let event = stop_event();
    if !hooks.has(event) || cancel.is_cancelled() {
        return None;
    }
    let verdict = hooks.stop(caller, *active, last_text, sink, cancel).await;
    if *active || verdict.stop.is_some() {
        return None;
    }
    let reason = verdict.blocked?;
    *active = true;
    Some(Message::user_text(format!(
        "{event} hook feedback: {reason}"
    )))
}

/// Adds `text` to a prompt as one more text block.
fn add_text(prompt: &mut Message, text: String) {
    let blocks = match std::mem::replace(&mut prompt.content, MessageContent::Blocks(Vec::new())) {
        MessageContent::Text(first) => vec![ContentBlock::text(first), ContentBlock::text(text)],
        MessageContent::Blocks(mut blocks) => {
            blocks.push(ContentBlock::text(text));
            blocks
        }
    };
    prompt.content = MessageContent::Blocks(blocks);
}

/// When a session starts (`startup`, or `resume` when it carries on an earlier conversation).
/// Returns the hooks' context, for the session's first prompt.
pub(crate) async fn session_start(
    agent: &crate::agent::Agent,
    sink: &EventSink,
    cancel: &CancellationToken,
) -> Option<String> {
    let hooks = agent.config().hooks.as_ref()?;
    if !hooks.has(HookEvent::SessionStart) {
        return None;
    }
    let source = if agent.messages().is_empty() {
        "startup"
    } else {
        "resume"
    };
    hooks
        .session_start(&agent.hook_caller(), source, sink, cancel)
        .await
        .context_text()
}

/// When a session ends. Runs even after an interrupt (on a token of its own; each hook still
/// has its timeout), since that is when cleanup hooks matter most.
pub(crate) async fn session_end(agent: &crate::agent::Agent, reason: &str, sink: &EventSink) {
    let Some(hooks) = agent.config().hooks.as_ref() else {
        return;
    };
    if hooks.has(HookEvent::SessionEnd) {
        let cancel = CancellationToken::new();
        hooks
            .session_end(&agent.hook_caller(), reason, sink, &cancel)
            .await;
    }
}

/// Adds the session's start context to its first prompt.
pub(crate) fn with_context(mut prompt: Message, context: Option<String>) -> Message {
    if let Some(context) = context {
        add_text(&mut prompt, context);
    }
    prompt
}

/// The compaction engine's `PreCompact` slot, filled from the agent's hooks for one run: the
/// hooks see the trigger and the user's focus, and their output for the model joins the
/// summary instructions. (A hook cannot stop a compaction: the conversation would not fit.)
pub(crate) fn pre_compact_slot(
    hooks: std::sync::Arc<Hooks>,
    caller: Caller,
    sink: EventSink,
    cancel: CancellationToken,
) -> crate::compact::PreCompactHook {
    std::sync::Arc::new(move |input: crate::compact::PreCompactInput| {
        let (hooks, caller, sink, cancel) =
            (hooks.clone(), caller.clone(), sink.clone(), cancel.clone());
        Box::pin(async move {
            let verdict = hooks
                .pre_compact(
                    &caller,
                    input.trigger.as_str(),
                    input.custom_instructions.as_deref(),
                    &sink,
                    &cancel,
                )
                .await;
            verdict.context_text()
        })
    })
}
