//! How an agent's children come into the tree, for both feeds: an Agent tool call is
//! remembered with its input, and the call's structured answer (`status`: `async_launched`,
//! `completed`, `failed`, `teammate_spawned`, `remote_launched`, as the runtime writes it)
//! names the child, its kind and, for background work, the task id that stops it. A
//! `<task-notification>` later says how a background task ended.

use fleet_protocol::{TaskNotification, TaskStatus};
use serde_json::Value;

use crate::api::{AgentKind, AgentState, Worktree};
use crate::hub::{is_terminal, new_node, teammate_name, AgentCall, SessionModel};

/// Longest error text kept on a node.
const ERROR_CHARS: usize = 500;

/// The tools that start agents (Claude Code's old name included).
pub(crate) fn is_agent_tool(name: &str) -> bool {
    matches!(name, "Agent" | "Task")
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

pub(crate) fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Agent `parent` called the Agent tool (`id`, with `input`).
pub(crate) fn agent_call(m: &mut SessionModel, parent: &str, id: &str, input: &Value) {
    let prompt = text(input, "prompt").map(str::to_owned);
    if let Some(prompt) = &prompt {
        m.prompts.insert(prompt.clone(), id.to_owned());
    }
    m.calls.insert(
        id.to_owned(),
        AgentCall {
            parent: parent.to_owned(),
            subagent_type: text(input, "subagent_type").map(str::to_owned),
            description: text(input, "description").map(str::to_owned),
            prompt,
        },
    );
}

/// The node of child `child_id`, tied to the Agent call `call_id` when that is known, and
/// given `kind` when one is said.
pub(crate) fn link_child(
    m: &mut SessionModel,
    child_id: &str,
    call_id: Option<&str>,
    kind: Option<AgentKind>,
    t_ms: u64,
) -> usize {
    let fresh = m.agents.find(child_id).is_none();
    let i = m.agents.ensure(child_id, || {
        new_node(child_id, kind.unwrap_or(AgentKind::Subagent), t_ms)
    });
    let call = call_id.and_then(|c| m.calls.get(c)).cloned();
    if let Some(prompt) = call.as_ref().and_then(|c| c.prompt.as_ref()) {
        m.prompts.remove(prompt);
    }
    let current = m.agents.at(i).node.clone();
    let wants_kind = kind.filter(|k| *k != current.kind && current.kind != AgentKind::Main);
    let wants_link = call.as_ref().is_some_and(|c| {
        current.parent_id.as_deref() != Some(c.parent.as_str())
            || (current.description.is_none() && c.description.is_some())
            || (current.agent_type == "subagent" && c.subagent_type.is_some())
    });
    if wants_kind.is_some() || wants_link {
        let node = &mut m.agents.edit(i).node;
        if let Some(kind) = wants_kind {
            node.kind = kind;
        }
        if let Some(call) = call {
            if call.parent != node.id {
                node.parent_id = Some(call.parent);
            }
            if node.description.is_none() {
                node.description = call.description;
            }
            if node.agent_type == "subagent" {
                if let Some(t) = call.subagent_type {
                    node.agent_type = t;
                }
            }
        }
    }
    if fresh {
        m.summary_changed();
    }
    i
}

/// The structured answer of tool call `call_id`: ties and updates the child it names.
pub(crate) fn tool_answer(m: &mut SessionModel, call_id: &str, record: &Value, t_ms: u64) {
    if let Some(worktree) = record.get("worktree").filter(|w| w.is_object()) {
        let owner = text(record, "agentId");
        add_worktree(m, worktree, owner);
    }
    let status = text(record, "status");
    match status {
        Some("async_launched" | "resumed") => {
            let Some(child) = text(record, "agentId") else {
                return;
            };
            let kind = if text(record, "agentType") == Some("fork") {
                AgentKind::Fork
            } else {
                AgentKind::Background
            };
            let i = link_child(m, child, Some(call_id), Some(kind), t_ms);
            let node = &m.agents.at(i).node;
            let wants = node.task_id.as_deref() != Some(child)
                || (node.agent_type == "subagent" && text(record, "agentType").is_some())
                || (node.description.is_none() && text(record, "description").is_some());
            if wants {
                let node = &mut m.agents.edit(i).node;
                node.task_id = Some(child.to_owned());
                if let Some(t) = text(record, "agentType").filter(|_| node.agent_type == "subagent")
                {
                    node.agent_type = t.to_owned();
                }
                if node.description.is_none() {
                    node.description = text(record, "description").map(str::to_owned);
                }
            }
            if is_terminal(m.agents.at(i).node.state) && status == Some("resumed") {
                m.agents.set_state(i, AgentState::Running, None);
            }
        }
        Some(done @ ("completed" | "failed")) => {
            let Some(child) = text(record, "agentId") else {
                return;
            };
            let i = link_child(m, child, Some(call_id), None, t_ms);
            // The call waited for it: a foreground child, which no task id stops.
            let node = &m.agents.at(i).node;
            if node.kind == AgentKind::Background || node.task_id.is_some() {
                let node = &mut m.agents.edit(i).node;
                if node.kind == AgentKind::Background {
                    node.kind = AgentKind::Subagent;
                }
                node.task_id = None;
            }
            if let Some(t) = text(record, "agentType") {
                if m.agents.at(i).node.agent_type == "subagent" {
                    m.agents.edit(i).node.agent_type = t.to_owned();
                }
            }
            if done == "failed" {
                let error = text(record, "result").map(|r| cut(r, ERROR_CHARS));
                m.agents.end(i, AgentState::Failed, t_ms, error);
            } else {
                m.agents.end(i, AgentState::Done, t_ms, None);
            }
            if let Some(ran) = record.get("duration_ms").and_then(Value::as_u64) {
                m.agents.ran_for(i, ran);
            }
        }
        Some("teammate_spawned") => {
            let (Some(member), Some(name), Some(team)) = (
                text(record, "agent_id"),
                text(record, "name"),
                text(record, "team_name"),
            ) else {
                return;
            };
            teammate(m, member, name, team, text(record, "agent_type"), t_ms);
            link_child(m, member, Some(call_id), Some(AgentKind::Teammate), t_ms);
        }
        Some("remote_launched") => {
            let Some(task) = text(record, "taskId") else {
                return;
            };
            let i = link_child(m, task, Some(call_id), Some(AgentKind::Remote), t_ms);
            if m.agents.at(i).node.task_id.is_none() {
                m.agents.edit(i).node.task_id = Some(task.to_owned());
            }
            if !m.has_remote_job(task) {
                m.remote_job_mut(task);
            }
        }
        _ => {}
    }
}

/// Teammate `name` of `team` is known as `member` (`name@team`): its node carries that id,
/// and its transcript id (`a<name>-…`) is an alias of it.
pub(crate) fn teammate(
    m: &mut SessionModel,
    member: &str,
    name: &str,
    team: &str,
    agent_type: Option<&str>,
    t_ms: u64,
) -> usize {
    m.mates.insert(name.to_owned(), member.to_owned());
    m.actions.message_member = true;
    let transcript_ids: Vec<String> = m
        .agents
        .nodes()
        .filter(|n| teammate_name(&n.id) == Some(name))
        .map(|n| n.id.clone())
        .collect();
    for old in transcript_ids {
        m.agents.rename(&old, member);
    }
    let i = m
        .agents
        .ensure(member, || new_node(member, AgentKind::Teammate, t_ms));
    let node = &m.agents.at(i).node;
    let wants = node.kind != AgentKind::Teammate
        || node.team_member.as_deref() != Some(member)
        || (node.agent_type == "subagent" && agent_type.is_some());
    if wants {
        let node = &mut m.agents.edit(i).node;
        node.kind = AgentKind::Teammate;
        node.team_member = Some(member.to_owned());
        node.task_id = Some(member.to_owned());
        if node.description.is_none() {
            node.description = Some(format!("{name} in {team}"));
        }
        if let Some(t) = agent_type.filter(|_| node.agent_type == "subagent") {
            node.agent_type = t.to_owned();
        }
    }
    i
}

/// A `<task-notification>`: how background task `note.task_id` ended.
pub(crate) fn notification(m: &mut SessionModel, note: &TaskNotification, t_ms: u64) {
    if let Some(json) = &note.worktree {
        if let Ok(worktree) = serde_json::from_str::<Value>(json) {
            add_worktree(m, &worktree, Some(&note.task_id));
        }
    }
    if m.has_remote_job(&note.task_id) {
        m.remote_job_mut(&note.task_id).state = note.status.as_str().to_owned();
    }
    let Some(i) = m.agents.find(&note.task_id) else {
        return;
    };
    match note.status {
        TaskStatus::Completed => m.agents.end(i, AgentState::Done, t_ms, None),
        TaskStatus::Failed => {
            let error = Some(cut(&note.result, ERROR_CHARS)).filter(|e| !e.is_empty());
            m.agents.end(i, AgentState::Failed, t_ms, error);
        }
        TaskStatus::Killed => {
            let why = Some(cut(&note.summary, ERROR_CHARS)).filter(|e| !e.is_empty());
            m.agents.end(i, AgentState::Killed, t_ms, why);
        }
        TaskStatus::Pending | TaskStatus::Running => return,
    }
    m.agents.ran_for(i, note.usage.duration_ms);
}

/// A task's final status by any of the words it is reported with: fleet's own vocabulary
/// ([`TaskStatus`]: `killed`) and Claude Code's (`stopped` in stream-json and its
/// notifications, `error`, `cancelled`).
pub(crate) fn status_word(word: &str) -> Option<TaskStatus> {
    let word = word.trim().to_ascii_lowercase();
    TaskStatus::parse(&word).or(match word.as_str() {
        "stopped" | "cancelled" | "canceled" | "interrupted" => Some(TaskStatus::Killed),
        "error" | "errored" => Some(TaskStatus::Failed),
        "success" | "done" => Some(TaskStatus::Completed),
        _ => None,
    })
}

/// Every `<task-notification>` in a user message's own text. One fleet did not write (no
/// `<usage>`, another status word) is still read for its task id and status.
pub(crate) fn notifications_in(text: &str) -> Vec<TaskNotification> {
    const OPEN: &str = fleet_protocol::notification::OPEN_TAG;
    const CLOSE: &str = fleet_protocol::notification::CLOSE_TAG;
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        let from = &rest[at..];
        found.extend(TaskNotification::parse(from).or_else(|| lenient(from)));
        let Some(end) = from.find(CLOSE) else {
            break;
        };
        rest = &from[end + CLOSE.len()..];
    }
    found
}

/// The task id and status of a notification [`TaskNotification::parse`] refused.
fn lenient(text: &str) -> Option<TaskNotification> {
    let body = &text[..text.find(fleet_protocol::notification::CLOSE_TAG)?];
    let element = |name: &str| {
        let open = format!("<{name}>");
        let start = body.find(&open)? + open.len();
        let end = start + body[start..].find(&format!("</{name}>"))?;
        Some(body[start..end].trim().to_owned())
    };
    let number = |name: &str| element(name).and_then(|n| n.parse::<u64>().ok());
    Some(TaskNotification {
        task_id: element("task-id")?,
        tool_use_id: element("tool-use-id").unwrap_or_default(),
        status: status_word(&element("status")?)?,
        summary: element("summary").unwrap_or_default(),
        result: element("result").unwrap_or_default(),
        usage: fleet_protocol::TaskUsage {
            total_tokens: number("total_tokens").unwrap_or(0),
            tool_uses: number("tool_uses").unwrap_or(0),
            duration_ms: number("duration_ms").unwrap_or(0),
            unreported_replies: 0,
        },
        output_file: element("output-file").unwrap_or_default(),
        worktree: None,
    })
}

fn add_worktree(m: &mut SessionModel, worktree: &Value, owner: Option<&str>) {
    let Some(path) = text(worktree, "path") else {
        return;
    };
    m.add_worktree(Worktree {
        path: path.to_owned(),
        branch: text(worktree, "branch").map(str::to_owned),
        agent_id: owner.map(str::to_owned),
    });
}
