//! Teams from the store: `teams/<team>/config.json` (the roster, [`TeamStore`]), each member's
//! inbox under `teams/<team>/inboxes/` ([`Mailbox::all`]) and the task list under
//! `tasks/<team>/<id>.json` (fleet-store's [`Task`]). A team belongs to the session that leads
//! it (`leadSessionId`); teams of sessions the hub does not know are left out.

use fleet_store::tasklist::{Task, TaskState};
use fleet_store::{Mailbox, MemberStatus, TeamConfig, TeamStore};

use super::links;
use crate::api::{AgentState, Team, TeamMember, TeamMessage, TeamTask};
use crate::hub::{now_ms, Inner};

/// Messages kept per team (the contract's bound): the newest.
pub(crate) const MAX_MESSAGES: usize = 500;

pub(crate) fn scan_all(inner: &Inner) {
    let teams = TeamStore::new(&inner.home);
    match teams.list() {
        Ok(configs) => {
            for config in configs {
                apply(inner, &config);
            }
        }
        Err(err) => tracing::debug!("dashboard: listing teams: {err}"),
    }
}

/// Re-reads team `name` (its config, inboxes or task list changed).
pub(crate) fn refresh(inner: &Inner, name: &str) {
    match TeamStore::new(&inner.home).load(name) {
        Ok(config) => apply(inner, &config),
        Err(err) => tracing::debug!("dashboard: reading team {name}: {err}"),
    }
}

fn apply(inner: &Inner, config: &TeamConfig) {
    let Some(shared) = inner.session(&config.lead_session_id) else {
        return;
    };
    let store = TeamStore::new(&inner.home);
    let members: Vec<TeamMember> = config
        .members
        .iter()
        .map(|m| TeamMember {
            name: m.name.clone(),
            agent_id: Some(m.agent_id.clone()),
            agent_type: Some(m.agent_type.clone()).filter(|t| !t.is_empty()),
            status: status_name(m.status).to_owned(),
            color: m.color.clone(),
            backend: Some(m.backend.as_str().to_owned()),
        })
        .collect();
    let inboxes = store.inboxes_dir(&config.name);
    let mut messages = Vec::new();
    for member in &config.members {
        let Ok(mailbox) = Mailbox::open(&inboxes, &member.name) else {
            continue;
        };
        match mailbox.all() {
            Ok(entries) => messages.extend(entries.into_iter().map(|e| {
                let (kind, summary) = match super::frames::describe(&e.text) {
                    Some(frame) => frame,
                    None => (
                        "message".to_owned(),
                        e.summary
                            .clone()
                            .unwrap_or_else(|| links::cut(&e.text, 200)),
                    ),
                };
                TeamMessage {
                    kind,
                    summary,
                    t_ms: parse_ms(&e.timestamp),
                    id: e.msg_id,
                    from: e.from,
                    to: member.name.clone(),
                    read: e.read,
                }
            })),
            Err(err) => tracing::debug!("dashboard: inbox of {}: {err}", member.name),
        }
    }
    messages.sort_by(|a, b| a.t_ms.cmp(&b.t_ms).then_with(|| a.id.cmp(&b.id)));
    if messages.len() > MAX_MESSAGES {
        messages.drain(..messages.len() - MAX_MESSAGES);
    }
    let tasks = read_tasks(&inner.home.root().join("tasks").join(&config.name));
    let team = Team {
        name: config.name.clone(),
        members,
        messages,
        tasks,
    };
    inner.edit(&shared, |m| {
        let t = now_ms();
        if !m.live.attached {
            let mates = config
                .members
                .iter()
                .filter(|member| member.agent_id != config.lead_agent_id);
            for member in mates {
                let i = links::teammate(
                    m,
                    &member.agent_id,
                    &member.name,
                    &config.name,
                    Some(&member.agent_type)
                        .filter(|t| !t.is_empty())
                        .map(String::as_str),
                    t,
                );
                if let Some(transcript) = &member.transcript_id {
                    m.agents.alias(transcript, &member.agent_id);
                }
                match member.status {
                    MemberStatus::Idle => m.agents.set_state(i, AgentState::Idle, None),
                    MemberStatus::Stopped => m.agents.end(i, AgentState::Done, t, None),
                    MemberStatus::Active => {}
                }
            }
        }
        m.actions.message_member = true;
        let known = m.teams().find(|t| t.name == team.name);
        if known != Some(&team) {
            let name = team.name.clone();
            *m.team_mut(&name) = team;
        }
    });
}

fn status_name(status: MemberStatus) -> &'static str {
    match status {
        MemberStatus::Active => "active",
        MemberStatus::Idle => "idle",
        MemberStatus::Stopped => "stopped",
    }
}

pub(crate) fn parse_ms(timestamp: &str) -> u64 {
    humantime::parse_rfc3339_weak(timestamp)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0))
}

/// The task list, read without its lock (files are replaced whole), by id.
fn read_tasks(dir: &std::path::Path) -> Vec<TeamTask> {
    let Ok(paths) = super::store::list_dir(dir) else {
        return Vec::new();
    };
    let mut tasks: Vec<Task> = paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| std::fs::read(p).ok())
        .filter_map(|bytes| serde_json::from_slice::<Task>(&bytes).ok())
        .collect();
    tasks.sort_by_key(|t| t.id.parse::<u64>().unwrap_or(u64::MAX));
    tasks
        .into_iter()
        .map(|t| TeamTask {
            status: match t.status {
                TaskState::Pending => "pending",
                TaskState::InProgress => "in_progress",
                TaskState::Completed => "completed",
            }
            .to_owned(),
            id: t.id,
            subject: t.subject,
            owner: t.owner,
            blocked_by: t.blocked_by,
        })
        .collect()
}
