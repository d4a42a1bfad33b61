//! Events into cells. Each event lands in its agent's list (the main agent's, or the group
//! of the Agent call that started a subagent), and every change marks only the cell it
//! touched — and the cells that show it, up to the screen — as needing a new rendering.

use super::cell::{CellKind, ToolCall, ToolDone};
use super::group::first_line;
use super::{Loc, Owner, Transcript};
use fleet_protocol::{AgentEvent, AgentRef, ContentBlock, EventKind, HookNote, ToolResultEvent};
use serde_json::json;

impl Transcript {
    pub(super) fn apply_event(&mut self, event: &AgentEvent) {
        let agent = &event.agent;
        match &event.kind {
            EventKind::TextDelta(text) => {
                let owner = self.owner_of(agent);
                self.stream(&owner, text, false);
            }
            EventKind::ThinkingDelta(text) => {
                let owner = self.owner_of(agent);
                self.stream(&owner, text, true);
            }
            EventKind::AssistantBlock { block, usage, .. } => {
                let owner = self.owner_of(agent);
                self.counters(&owner).progress(usage);
                self.blocks_seen.insert(agent.agent_id.clone());
                self.block(&owner, block);
                self.touch_header(&owner);
            }
            EventKind::ToolResult(result) => self.tool_result(result),
            EventKind::MessageCommitted(committed) => {
                let owner = self.owner_of(agent);
                self.committed(&owner, agent, committed);
            }
            EventKind::Finished(result) => {
                let owner = self.owner_of(agent);
                self.close_open(&owner);
                if let (Owner::Main, Some(cost)) = (&owner, result.reported_cost_usd()) {
                    *self.main_cost.get_or_insert(0.0) += cost;
                }
                if result.is_error() {
                    let cell = match ended_by(result) {
                        Ending::Interrupted => CellKind::Notice {
                            level: crate::port::NoticeLevel::Info,
                            text: "Interrupted.".into(),
                        },
                        Ending::Failed(text) => CellKind::Error(text),
                    };
                    self.push(&owner, cell);
                }
            }
            EventKind::TaskStarted(task) => {
                let owner = self.owner_of(agent);
                let label = (task.subagent_type.as_str(), task.description.as_str());
                self.ensure_group(&task.tool_use_id, &owner, label);
                if let Some(group) = self.groups.get_mut(&task.tool_use_id) {
                    group.label(&task.subagent_type, &task.description);
                    group.task_id = Some(task.task_id.clone());
                    group.background |= task.is_backgrounded;
                }
                self.touch_call(&task.tool_use_id);
            }
            EventKind::TaskUpdated {
                task_id, status, ..
            } => {
                let call = self.groups.find(task_id).map(|g| g.tool_use_id.clone());
                if let Some(call) = call.filter(|_| status.is_terminal()) {
                    if let Some(group) = self.groups.get_mut(&call) {
                        group.outcome.status.get_or_insert(*status);
                    }
                    self.touch_call(&call);
                }
            }
            EventKind::TaskNotified(note) => {
                if let Some(group) = self.groups.get_mut(&note.tool_use_id) {
                    let outcome = &mut group.outcome;
                    outcome.status = Some(note.status);
                    outcome.total_tokens.get_or_insert(note.usage.total_tokens);
                    outcome.duration_ms.get_or_insert(note.usage.duration_ms);
                    if outcome.summary.is_empty() {
                        let answer = first_line(&note.result);
                        outcome.summary = if answer.is_empty() {
                            first_line(&note.summary)
                        } else {
                            answer
                        };
                    }
                    self.touch_call(&note.tool_use_id);
                }
            }
            EventKind::Retry {
                attempt,
                max_attempts,
                delay_ms,
                reason,
                ..
            } => {
                let owner = self.owner_of(agent);
                // What streamed before the failure is sent again from the start.
                self.drop_open(&owner);
                let text = format!(
                    "Retrying in {:.1}s (attempt {attempt}/{max_attempts}): {}",
                    *delay_ms as f64 / 1000.0,
                    first_line(reason)
                );
                self.push(&owner, CellKind::Warning(text));
            }
            EventKind::Waiting(report) => {
                let owner = self.owner_of(agent);
                let text = format!(
                    "Still waiting after {} s for {}",
                    report.waited_ms / 1000,
                    first_line(&report.waiting_for)
                );
                self.push(&owner, CellKind::Warning(text));
            }
            EventKind::ModelFallback { from, to, reason } => {
                let owner = self.owner_of(agent);
                let text = format!("Switched from {from} to {to}: {}", first_line(reason));
                self.push(&owner, CellKind::Warning(text));
            }
            EventKind::Hook(HookNote::HookResponse {
                hook_name,
                hook_event,
                output,
                outcome,
                ..
            }) if outcome == "error" => {
                let owner = self.owner_of(agent);
                let text = format!(
                    "Hook {hook_name} ({hook_event}) failed: {}",
                    first_line(output)
                );
                self.push(&owner, CellKind::Warning(text));
            }
            EventKind::CompactBoundary(_) => {
                let owner = self.owner_of(agent);
                self.push(&owner, CellKind::Compacted);
            }
            EventKind::PermissionDenied(denied) => {
                match self.tools.get(&denied.tool_use_id).cloned() {
                    Some(loc) => {
                        if let Some(CellKind::Tool(call)) = self.kind_mut(&loc) {
                            call.refused = Some(denied.message.clone());
                        }
                        self.touch(&loc.owner, loc.index);
                    }
                    None => {
                        let owner = self.owner_of(agent);
                        let text = format!("{} refused: {}", denied.tool_name, denied.message);
                        self.push(&owner, CellKind::Warning(text));
                    }
                }
            }
            EventKind::Approval {
                tool_use_id,
                waiting,
                ..
            } => {
                if let Some(loc) = self.tools.get(tool_use_id).cloned() {
                    if let Some(CellKind::Tool(call)) = self.kind_mut(&loc) {
                        call.waiting = *waiting;
                    }
                    self.touch(&loc.owner, loc.index);
                }
            }
            EventKind::Started(_) if agent.is_main() => {
                self.main_agent_id = Some(agent.agent_id.clone());
            }
            _ => {}
        }
    }

    /// The list an agent's events land in; a subagent's group is made on its first event.
    pub(super) fn owner_of(&mut self, agent: &AgentRef) -> Owner {
        let Some(call) = &agent.parent_tool_use_id else {
            return Owner::Main;
        };
        let label = agent.subagent.as_deref().map_or(("", ""), |l| {
            (l.subagent_type.as_str(), l.description.as_str())
        });
        self.ensure_group(call, &Owner::Main, label);
        if let Some(group) = self.groups.get_mut(call) {
            if group.agent_id.is_empty() {
                group.agent_id = agent.agent_id.clone();
            }
            if let Some(label) = &agent.subagent {
                group.label(&label.subagent_type, &label.description);
            }
        }
        Owner::Group(call.clone())
    }

    /// Makes the group of Agent call `call`. When the call itself was never seen (a stream
    /// joined late), a stand-in call is put in `fallback`'s list so the group has a home.
    fn ensure_group(&mut self, call: &str, fallback: &Owner, (kind, description): (&str, &str)) {
        if self.groups.contains(call) {
            return;
        }
        self.groups.entry(call);
        match self.tools.get(call).cloned() {
            Some(loc) => {
                self.label_from_call(&loc);
                self.touch(&loc.owner, loc.index);
            }
            None => {
                let stand_in = ToolCall {
                    id: call.to_string(),
                    name: "Agent".into(),
                    input: json!({ "subagent_type": kind, "description": description }),
                    result: None,
                    refused: None,
                    waiting: false,
                };
                self.push(fallback, CellKind::Tool(stand_in));
            }
        }
    }

    /// An Agent call's input names the subagent's type and task.
    fn label_from_call(&mut self, loc: &Loc) {
        let Some(CellKind::Tool(call)) = self.list(&loc.owner).get(loc.index).map(|c| &c.kind)
        else {
            return;
        };
        let text = |name: &str| call.input.get(name).and_then(|v| v.as_str()).unwrap_or("");
        let (kind, description) = (
            text("subagent_type").to_string(),
            text("description").to_string(),
        );
        let background = call
            .input
            .get("run_in_background")
            .and_then(|v| v.as_bool())
            == Some(true);
        let id = call.id.clone();
        if let Some(group) = self.groups.get_mut(&id) {
            group.label(&kind, &description);
            group.background |= background;
        }
    }

    /// A text or thinking delta: added to the open cell of its kind, or opening one.
    fn stream(&mut self, owner: &Owner, text: &str, thinking: bool) {
        if let Some(index) = self.open_last(owner, thinking) {
            if let Some(
                CellKind::Assistant { text: held, .. } | CellKind::Thinking { text: held, .. },
            ) = self.list_mut(owner).get_mut(index).map(|c| &mut c.kind)
            {
                held.push_str(text);
            }
            self.touch(owner, index);
            return;
        }
        self.close_open(owner);
        let kind = if thinking {
            CellKind::Thinking {
                text: text.to_string(),
                open: true,
            }
        } else {
            CellKind::Assistant {
                text: text.to_string(),
                open: true,
            }
        };
        self.push(owner, kind);
    }

    /// A complete content block: it settles the cell its deltas opened, or adds one when the
    /// provider sent no deltas. A tool call seen before (its committed copy) is not added twice.
    pub(super) fn block(&mut self, owner: &Owner, block: &ContentBlock) {
        match block {
            ContentBlock::Text { text, .. } => self.settle(owner, text, false),
            ContentBlock::Thinking { thinking, .. } => self.settle(owner, thinking, true),
            ContentBlock::RedactedThinking { .. } => self.settle(owner, "", true),
            ContentBlock::ToolUse {
                id, name, input, ..
            } => {
                if self.tools.contains_key(id) {
                    return;
                }
                self.close_open(owner);
                let call = ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    result: None,
                    refused: None,
                    waiting: false,
                };
                self.push(owner, CellKind::Tool(call));
                if self.groups.contains(id) {
                    if let Some(loc) = self.tools.get(id).cloned() {
                        self.label_from_call(&loc);
                    }
                }
            }
            _ => {}
        }
    }

    fn settle(&mut self, owner: &Owner, full: &str, thinking: bool) {
        if let Some(index) = self.open_last(owner, thinking) {
            if let Some(CellKind::Assistant { text, open } | CellKind::Thinking { text, open }) =
                self.list_mut(owner).get_mut(index).map(|c| &mut c.kind)
            {
                *text = full.to_string();
                *open = false;
            }
            self.touch(owner, index);
            return;
        }
        if !thinking && full.trim().is_empty() {
            return;
        }
        self.close_open(owner);
        let text = full.to_string();
        let kind = if thinking {
            CellKind::Thinking { text, open: false }
        } else {
            CellKind::Assistant { text, open: false }
        };
        self.push(owner, kind);
    }

    /// A tool call's result, folded in under the call; an Agent call's result also ends its
    /// group (unless it only says a background agent was launched).
    fn tool_result(&mut self, result: &ToolResultEvent) {
        let Some(loc) = self.tools.get(&result.tool_use_id).cloned() else {
            return;
        };
        self.set_result(
            &loc,
            ToolDone {
                content: result.content.clone(),
                structured: result.structured.clone(),
                is_error: result.is_error,
            },
        );
    }

    pub(super) fn set_result(&mut self, loc: &Loc, done: ToolDone) {
        let id = match self.kind_mut(loc) {
            Some(CellKind::Tool(call)) => call.id.clone(),
            _ => return,
        };
        if let Some(group) = self.groups.get_mut(&id) {
            group.finish_from_result(&done.content, done.structured.as_deref(), done.is_error);
        }
        if let Some(CellKind::Tool(call)) = self.kind_mut(loc) {
            call.result = Some(done);
        }
        self.touch(&loc.owner, loc.index);
    }
}

/// How a run that ended with an error is told to a person.
enum Ending {
    /// Esc, Ctrl+C or a stop: the person did it, so it is no failure.
    Interrupted,
    /// What went wrong, in one line.
    Failed(String),
}

/// The runtime's result text for a cancelled run (`Interrupted: the run was cancelled.`)
/// starts with this.
const INTERRUPTED: &str = "Interrupted";

fn ended_by(result: &fleet_protocol::RunResult) -> Ending {
    use fleet_protocol::ResultSubtype;
    let why = first_line(&result.result);
    match result.subtype {
        ResultSubtype::ErrorDuringExecution if why.starts_with(INTERRUPTED) => Ending::Interrupted,
        // The text says what happened; the subtype's name adds nothing a person reads.
        ResultSubtype::ErrorDuringExecution => Ending::Failed(why),
        _ => Ending::Failed(format!("{}: {why}", result.subtype.as_str())),
    }
}
