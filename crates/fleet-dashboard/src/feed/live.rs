//! The live feed: a session started with `--dashboard` pushes each of its `AgentEvent`s here.
//!
//! [`LiveFeed::push`] runs on the session's own path, so it does no I/O and never waits: it
//! takes the session model's lock (held for a few field writes), marks what changed, and
//! queues the session for the next batch at most once per batch.

use std::sync::Arc;

use fleet_protocol::team::TeamEvent;
use fleet_protocol::{AgentEvent, ContentBlock, EventKind, Role, SessionState, TaskStatus};

use super::links;
use crate::api::{AgentKind, AgentState, TeamMember, TeamMessage, TeamTask};
use crate::hub::{new_node, now_ms, teammate_name, Inner, SessionModel, Shared};

/// Where a live session's events go. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct LiveFeed {
    shared: Shared,
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LiveFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveFeed").finish_non_exhaustive()
    }
}

impl LiveFeed {
    pub(crate) fn new(shared: Shared, inner: Arc<Inner>) -> Self {
        Self { shared, inner }
    }

    /// Applies one event of the session.
    pub fn push(&self, event: &AgentEvent) {
        let t = now_ms();
        let catalog = &self.inner.catalog;
        self.inner
            .edit(&self.shared, |m| apply(m, catalog, event, t));
    }

    /// Waits (at most two batch ticks) so that pages following the session receive the
    /// batch that shows its end before the process serving them exits. Returns at once when
    /// no page follows it.
    pub async fn let_pages_see_the_end(&self) {
        let watched = crate::hub::lock(&self.shared).watchers() > 0;
        if watched {
            tokio::time::sleep(crate::hub::TICK * 2).await;
        }
    }

    /// The session has ended: it is shown as ended, and agents still working are settled.
    pub fn ended(&self) {
        self.inner.edit(&self.shared, |m| {
            m.live.attached = false;
            m.live.store = false;
            m.live.ended_ms = Some(now_ms());
            m.actions.stop_task = false;
            m.actions.answer_permission = false;
            m.set_permissions(Vec::new());
            super::store::settle_ended(m);
            m.summary_changed();
        });
    }
}

fn apply(m: &mut SessionModel, catalog: &fleet_model::Catalog, event: &AgentEvent, t: u64) {
    m.touch(t);
    let i = agent_of(m, event, t);
    // The node's id, cloned only by the events that keep it.
    let id = |m: &SessionModel| m.agents.at(i).node.id.clone();
    match &event.kind {
        EventKind::Started(info) => {
            if event.agent.is_main() {
                m.set_model(&info.model);
                if m.folder.is_empty() {
                    m.folder.clone_from(&info.cwd);
                }
            }
            m.agents.set_state(i, AgentState::WaitingForModel, None);
        }
        EventKind::TextDelta(_) | EventKind::ThinkingDelta(_) | EventKind::Stream(_) => {
            streaming(m, i);
        }
        EventKind::AssistantBlock { block, .. } => match block {
            ContentBlock::ToolUse {
                id: call,
                name,
                input,
                ..
            } => {
                if links::is_agent_tool(name) {
                    links::agent_call(m, &id(m), call, input);
                }
                m.agents.tool_started(i, call, name);
            }
            _ => streaming(m, i),
        },
        EventKind::ToolResult(result) => {
            m.agents.tool_finished(i, &result.tool_use_id);
            m.add_mark(&id(m), t, &result.tool_name, result.is_error);
            if let Some(record) = &result.structured {
                links::tool_answer(m, &result.tool_use_id, record, t);
            }
        }
        EventKind::MessageCommitted(committed) => {
            m.tick_transcript(&id(m));
            if let Some(reply) = &committed.reply {
                let usage = &reply.usage;
                let cost = if usage.is_reported() {
                    catalog.cost(&reply.model, usage)
                } else {
                    0.0
                };
                m.add_usage(i, usage.total_input(), usage.output_tokens, cost);
                if event.agent.is_main() {
                    m.set_model(&reply.model);
                }
            } else if committed.message.role == Role::User {
                let text = committed.message.text();
                for note in links::notifications_in(&text) {
                    links::notification(m, &note, t);
                }
                let prompt = committed.tool_results.is_empty()
                    && committed.message.tool_uses().next().is_none();
                if event.agent.is_main() && prompt && !text.contains('<') {
                    m.set_title(&text);
                }
            }
        }
        EventKind::Finished(result) => {
            if result.is_error() {
                let error = Some(links::cut(&result.result, 500));
                m.agents.end(i, AgentState::Failed, t, error);
            } else {
                m.agents.end(i, AgentState::Done, t, None);
            }
        }
        // A Bash command moved to the background is a task, not an agent.
        EventKind::TaskStarted(started) if started.task_type == "local_bash" => {}
        EventKind::TaskStarted(started) => {
            // Foreground (synchronous) children are announced as tasks too, for readers of
            // the stream, but only a backgrounded one can be stopped by its id; a foreground
            // child moved to the background is announced again, backgrounded.
            let kind = match (
                started.task_type.as_str(),
                started.subagent_type.as_str(),
                started.is_backgrounded,
            ) {
                ("remote_agent", _, _) => AgentKind::Remote,
                (_, "fork", _) => AgentKind::Fork,
                (_, _, true) => AgentKind::Background,
                (_, _, false) => AgentKind::Subagent,
            };
            let stoppable = started.is_backgrounded || kind == AgentKind::Remote;
            let child = links::link_child(
                m,
                &started.task_id,
                Some(&started.tool_use_id),
                Some(kind),
                t,
            );
            let node = &mut m.agents.edit(child).node;
            if stoppable {
                node.task_id = Some(started.task_id.clone());
            }
            if node.agent_type == "subagent" && !started.subagent_type.is_empty() {
                node.agent_type.clone_from(&started.subagent_type);
            }
            if node.description.is_none() && !started.description.is_empty() {
                node.description = Some(started.description.clone());
            }
            if kind == AgentKind::Remote {
                m.remote_job_mut(&started.task_id).state = "running".into();
            }
        }
        EventKind::TaskUpdated {
            task_id, status, ..
        } => {
            if m.has_remote_job(task_id) {
                m.remote_job_mut(task_id).state = status.as_str().to_owned();
            }
            if let Some(task) = m.agents.find(task_id) {
                match status {
                    TaskStatus::Completed => m.agents.end(task, AgentState::Done, t, None),
                    TaskStatus::Failed => m.agents.end(task, AgentState::Failed, t, None),
                    TaskStatus::Killed => m.agents.end(task, AgentState::Killed, t, None),
                    TaskStatus::Running | TaskStatus::Pending => {}
                }
            }
        }
        EventKind::TaskNotified(note) => links::notification(m, note, t),
        EventKind::Team(team) => team_event(m, team, t),
        EventKind::Approval {
            tool_name, waiting, ..
        } => {
            let state = if *waiting {
                AgentState::WaitingForApproval
            } else {
                AgentState::RunningTool
            };
            m.agents.set_state(i, state, Some(tool_name));
        }
        EventKind::SessionState(state) if event.agent.is_main() => match state {
            SessionState::Running => m.agents.set_state(i, AgentState::Running, None),
            SessionState::Idle => m.agents.set_state(i, AgentState::Idle, None),
        },
        _ => {}
    }
}

/// The node of the event's agent; a subagent seen for the first time is tied to the Agent
/// call that started it (`parent_tool_use_id`).
fn agent_of(m: &mut SessionModel, event: &AgentEvent, t: u64) -> usize {
    let agent = &event.agent;
    if agent.is_main() {
        return m
            .agents
            .ensure("main", || new_node("main", AgentKind::Main, t));
    }
    let id = agent.agent_id.as_str();
    if let Some(i) = m.agents.find(id) {
        return i;
    }
    if let Some(member) = teammate_name(id).and_then(|n| m.mates.get(n)).cloned() {
        m.agents.alias(id, &member);
        if let Some(i) = m.agents.find(id) {
            return i;
        }
    }
    let i = links::link_child(m, id, agent.parent_tool_use_id.as_deref(), None, t);
    if let Some(label) = &agent.subagent {
        let node = &mut m.agents.edit(i).node;
        if node.agent_type == "subagent" && !label.subagent_type.is_empty() {
            node.agent_type.clone_from(&label.subagent_type);
        }
        if node.description.is_none() && !label.description.is_empty() {
            node.description = Some(label.description.clone());
        }
    }
    i
}

/// The model is writing: `running`, unless a tool or an approval is what the agent waits on.
fn streaming(m: &mut SessionModel, i: usize) {
    if matches!(
        m.agents.at(i).node.state,
        AgentState::WaitingForModel | AgentState::Idle
    ) {
        m.agents.set_state(i, AgentState::Running, None);
    }
}

fn team_event(m: &mut SessionModel, event: &TeamEvent, t: u64) {
    m.actions.message_member = true;
    match event {
        TeamEvent::TeamCreated { team, .. } => {
            m.team_mut(team);
        }
        TeamEvent::TeammateSpawned {
            team,
            name,
            agent_id,
            agent_type,
            color,
            ..
        } => {
            let i = links::teammate(m, agent_id, name, team, Some(agent_type), t);
            m.agents.set_state(i, AgentState::Running, None);
            let member = TeamMember {
                name: name.clone(),
                agent_id: Some(agent_id.clone()),
                agent_type: Some(agent_type.clone()),
                status: "active".into(),
                color: Some(color.clone()).filter(|c| !c.is_empty()),
                backend: None,
            };
            let members = &mut m.team_mut(team).members;
            match members.iter_mut().find(|x| x.name == *name) {
                Some(known) => {
                    known.status = member.status;
                    known.agent_id = member.agent_id;
                }
                None => members.push(member),
            }
        }
        TeamEvent::TeammateIdle {
            team,
            name,
            agent_id,
            ..
        } => {
            member_status(m, team, name, "idle");
            if let Some(i) = m.agents.find(agent_id) {
                m.agents.set_state(i, AgentState::Idle, None);
            }
        }
        TeamEvent::TeammateTerminated {
            team,
            name,
            agent_id,
            ..
        } => {
            member_status(m, team, name, "stopped");
            if let Some(i) = m.agents.find(agent_id) {
                m.agents.end(i, AgentState::Done, t, None);
            }
        }
        TeamEvent::TeamMessage {
            team,
            from,
            to,
            summary,
            text,
        } => {
            // The runtime names a frame by its type in `text` (the frame itself stays in the
            // inbox, which the store feed reads); raw frame JSON is described all the same.
            let (kind, said) = match super::frames::describe(text) {
                Some(frame) => frame,
                None if frame_type_name(text) => (text.clone(), super::frames::by_type(text)),
                None => ("message".to_owned(), links::cut(text, 200)),
            };
            let summary = match summary {
                Some(summary) if kind == "message" => summary.clone(),
                _ => said,
            };
            let messages = &mut m.team_mut(team).messages;
            messages.push(TeamMessage {
                id: format!("live-{t}-{}", messages.len()),
                from: from.clone(),
                to: to.clone(),
                kind,
                summary,
                t_ms: t,
                read: false,
            });
            if messages.len() > super::teams::MAX_MESSAGES {
                messages.remove(0);
            }
        }
        TeamEvent::TaskListUpdated {
            team,
            task_id,
            subject,
            action,
            status,
            owner,
        } => {
            let tasks = &mut m.team_mut(team).tasks;
            let at = tasks.iter().position(|x| x.id == *task_id);
            match (action.as_str(), at) {
                ("deleted", Some(at)) => {
                    tasks.remove(at);
                }
                ("deleted", None) => {}
                (_, Some(at)) => {
                    tasks[at].subject.clone_from(subject);
                    tasks[at].status.clone_from(status);
                    tasks[at].owner.clone_from(owner);
                }
                (_, None) => tasks.push(TeamTask {
                    id: task_id.clone(),
                    subject: subject.clone(),
                    status: status.clone(),
                    owner: owner.clone(),
                    blocked_by: Vec::new(),
                }),
            }
        }
        TeamEvent::TeamSummary { team, members } => {
            for member in members {
                member_status(m, team, &member.name, &member.status);
            }
        }
        TeamEvent::MailRefused { .. } | TeamEvent::TeamDeleted { .. } => {}
    }
}

/// Whether `text` is a frame type's name alone (`idle_notification`), as the runtime's
/// `TeamMessage` event gives it for a frame.
fn frame_type_name(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        && text.contains('_')
        && fleet_protocol::team::frames::frame_type(&format!(r#"{{"type":"{text}"}}"#)).is_some()
}

fn member_status(m: &mut SessionModel, team: &str, name: &str, status: &str) {
    if let Some(member) = m.team_mut(team).members.iter_mut().find(|x| x.name == name) {
        status.clone_into(&mut member.status);
    }
}
