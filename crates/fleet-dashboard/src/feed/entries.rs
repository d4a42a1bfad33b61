//! What one transcript line says about its agent, for the store feed.
//!
//! The state is read off the conversation's shape: a user line (a prompt, or tool results)
//! means the model is asked next (`waiting_for_model`); an assistant line with tool calls
//! means those tools run (`running_tool`, the oldest unanswered shown) until their results
//! come; an assistant line without tool calls ends a turn: a subagent is `done`, the main
//! agent and teammates `idle` (they wait for the next prompt or mail).

use fleet_protocol::{ContentBlock, MessageContent, Role, Usage};
use fleet_store::{EntryKind, TranscriptEntry};
use serde_json::Value;

use super::links;
use crate::api::{AgentKind, AgentState};
use crate::hub::{is_terminal, new_node, now_ms, teammate_name, SessionModel};

/// Applies one line of agent `agent_id`'s transcript (`main` for the session's own).
pub(crate) fn apply(
    m: &mut SessionModel,
    catalog: &fleet_model::Catalog,
    agent_id: &str,
    entry: &TranscriptEntry,
) {
    let t = entry
        .time()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or_else(now_ms, |d| u64::try_from(d.as_millis()).unwrap_or(0));
    m.touch(t);
    if m.folder.is_empty() && !entry.cwd.is_empty() {
        m.folder.clone_from(&entry.cwd);
    }
    if let Some(member) = teammate_name(agent_id)
        .and_then(|n| m.mates.get(n))
        .cloned()
    {
        m.agents.alias(agent_id, &member);
    }
    let fresh = m.agents.find(agent_id).is_none();
    let i = m
        .agents
        .ensure(agent_id, || new_node(agent_id, AgentKind::Subagent, t));
    if fresh {
        m.summary_changed();
    }
    // A line from before the agent's end (its parent's transcript, read first, already said
    // how it ended) counts its usage and calls but leaves its state alone.
    let past = agent_id != "main" && m.agents.ended_by(i, t);
    if agent_id != "main" {
        m.agents.own_line(i, t);
        if !past {
            m.agents.forget_past_calls(i);
        }
    }
    let Some(message) = &entry.message else {
        return;
    };
    let line = Line {
        i,
        agent_id,
        t,
        past,
    };
    match (&entry.kind, message.role) {
        (EntryKind::User, Role::User) => user(m, &line, entry, &message.content),
        (EntryKind::Assistant, Role::Assistant) => {
            assistant(m, catalog, &line, entry, &message.content)
        }
        _ => {}
    }
}

/// The line being applied: whose, when, and whether it is from before the agent's end.
struct Line<'a> {
    i: usize,
    agent_id: &'a str,
    t: u64,
    past: bool,
}

fn user(m: &mut SessionModel, line: &Line<'_>, entry: &TranscriptEntry, content: &MessageContent) {
    let Line { i, agent_id, t, .. } = *line;
    let mut texts: Vec<&str> = Vec::new();
    let mut answered = false;
    match content {
        MessageContent::Text(text) => texts.push(text),
        MessageContent::Blocks(blocks) => {
            for block in blocks {
                match block {
                    ContentBlock::Text { text, .. } => texts.push(text),
                    ContentBlock::ToolResult {
                        tool_use_id,
                        is_error,
                        ..
                    } => {
                        answered = true;
                        let tool = if line.past {
                            m.agents.forget_call(i, tool_use_id)
                        } else {
                            m.agents.tool_finished(i, tool_use_id)
                        };
                        let id = m.agents.at(i).node.id.clone();
                        if let Some(tool) = tool {
                            m.add_mark(&id, t, &tool, is_error.unwrap_or(false));
                        }
                        if let Some(record) = structured(entry, tool_use_id) {
                            links::tool_answer(m, tool_use_id, record, t);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    for text in &texts {
        for note in links::notifications_in(text) {
            links::notification(m, &note, t);
        }
    }
    let text = texts.join("\n");
    if !answered && !entry.is_meta() && !text.trim().is_empty() {
        if agent_id == "main" {
            m.set_title(&text);
        } else if let Some(call) = m.prompts.get(text.as_str()).cloned() {
            // A running sync child: its caller hears back only when it ends.
            links::link_child(m, agent_id, Some(&call), None, t);
        }
    }
    if !answered && !line.past {
        m.agents.set_state(i, AgentState::WaitingForModel, None);
    }
}

/// The structured answer of call `id` in a user line: `toolUseResult` when the line answers
/// one call, `toolUseResults` keyed by call id when it answers several.
fn structured<'a>(entry: &'a TranscriptEntry, id: &str) -> Option<&'a Value> {
    if let Some(many) = entry.extra.get("toolUseResults").and_then(Value::as_object) {
        return many.get(id);
    }
    entry.extra.get("toolUseResult")
}

fn assistant(
    m: &mut SessionModel,
    catalog: &fleet_model::Catalog,
    line: &Line<'_>,
    entry: &TranscriptEntry,
    content: &MessageContent,
) {
    let Line { i, agent_id, t, .. } = *line;
    let model = entry.extra.get("model").and_then(Value::as_str);
    if agent_id == "main" {
        if let Some(model) = model {
            m.set_model(model);
        }
    }
    let usage = entry
        .extra
        .get("usage")
        .and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok())
        .unwrap_or_else(Usage::unreported);
    let cost = match (model, usage.is_reported()) {
        (Some(model), true) => catalog.cost(model, &usage),
        _ => 0.0,
    };
    m.add_usage(i, usage.total_input(), usage.output_tokens, cost);
    let mut called = false;
    if let MessageContent::Blocks(blocks) = content {
        let id = m.agents.at(i).node.id.clone();
        for block in blocks {
            if let ContentBlock::ToolUse {
                id: call,
                name,
                input,
                ..
            } = block
            {
                called = true;
                if links::is_agent_tool(name) {
                    links::agent_call(m, &id, call, input);
                }
                if line.past {
                    m.agents.past_call(i, call, name);
                } else {
                    m.agents.tool_started(i, call, name);
                }
            }
        }
    }
    if !called && !line.past {
        turn_ended(m, i, t);
    }
}

/// A reply without tool calls: the agent's turn is over.
pub(crate) fn turn_ended(m: &mut SessionModel, i: usize, t: u64) {
    let node = &m.agents.at(i).node;
    if is_terminal(node.state) {
        return;
    }
    match node.kind {
        AgentKind::Main | AgentKind::Teammate => m.agents.set_state(i, AgentState::Idle, None),
        _ => m.agents.end(i, AgentState::Done, t, None),
    }
}
