//! Committed messages into cells: the person's prompt, team mail (one cell per
//! `<teammate-message>`, see `crate::mail`), `<task-notification>`s, and replies
//! that arrived without deltas or blocks (a provider that does not stream, or a resumed
//! session's history). What the live events already showed is not shown twice.

use super::cell::{CellKind, NotificationLine, ToolDone};
use super::{Owner, Transcript};
use crate::mail::{is_reminders_only, parse_delivery, Letter};
use fleet_protocol::notification::OPEN_TAG;
use fleet_protocol::{
    AgentRef, CommittedMessage, ContentBlock, Message, Role, TaskNotification, ToolResultContent,
};

impl Transcript {
    pub(super) fn committed(
        &mut self,
        owner: &Owner,
        agent: &AgentRef,
        committed: &CommittedMessage,
    ) {
        match committed.message.role {
            Role::Assistant => {
                if let Some(reply) = &committed.reply {
                    self.counters_commit(owner, &reply.usage);
                }
                let seen = self.blocks_seen.remove(&agent.agent_id);
                self.assistant_message(owner, &committed.message, seen);
                self.touch_header(owner);
            }
            Role::User => {
                let mail = !committed.mail_ids.is_empty();
                self.user_message(owner, &committed.message, mail);
            }
        }
    }

    /// An assistant reply. When its blocks came as events (`seen`), only tool calls not met
    /// yet are added; otherwise every block is.
    pub(super) fn assistant_message(&mut self, owner: &Owner, message: &Message, seen: bool) {
        for block in message.blocks() {
            let is_call = matches!(block, ContentBlock::ToolUse { .. });
            if !seen || is_call {
                self.block(owner, &block);
            }
        }
        self.close_open(owner);
    }

    /// A user message: a prompt (only a main-agent message holding no tool results: a
    /// subagent's first message is its task, which its Agent line already says), team mail
    /// (one cell per letter, the `<system-reminder>`s beside it hidden), task notifications,
    /// and tool results not yet shown (a resumed history).
    pub(super) fn user_message(&mut self, owner: &Owner, message: &Message, mail: bool) {
        let blocks = message.blocks();
        let has_results = blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult { .. }));
        let deliveries: Vec<Option<Vec<Letter>>> = blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text, .. } if *owner == Owner::Main && !has_results => {
                    parse_delivery(text)
                }
                _ => None,
            })
            .collect();
        let delivered = deliveries.iter().any(Option::is_some);
        for (block, letters) in blocks.iter().zip(deliveries) {
            if let Some(letters) = letters {
                for letter in letters {
                    self.push(owner, CellKind::Mail(letter));
                }
                continue;
            }
            match block {
                ContentBlock::Text { text, .. } if TaskNotification::is_notification(text) => {
                    for note in notifications(text) {
                        self.push(owner, CellKind::Notification(note));
                    }
                }
                ContentBlock::Text { text, .. } => {
                    if *owner != Owner::Main || has_results || text.trim().is_empty() {
                        continue;
                    }
                    if delivered && is_reminders_only(text) {
                        continue;
                    }
                    let kind = if mail {
                        CellKind::Notice {
                            level: crate::port::NoticeLevel::Info,
                            text: format!("✉ {}", text.trim()),
                        }
                    } else {
                        CellKind::Prompt(text.clone())
                    };
                    self.push(owner, kind);
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                    ..
                } => self.result_block(tool_use_id, content.as_ref(), is_error.unwrap_or(false)),
                _ => {}
            }
        }
    }

    /// A `tool_result` block for a call whose result no event brought.
    fn result_block(&mut self, id: &str, content: Option<&ToolResultContent>, is_error: bool) {
        let Some(loc) = self.tools.get(id).cloned() else {
            return;
        };
        let shown = matches!(
            self.list(&loc.owner).get(loc.index).map(|c| &c.kind),
            Some(CellKind::Tool(call)) if call.result.is_some()
        );
        if shown {
            return;
        }
        let content = match content {
            None => String::new(),
            Some(ToolResultContent::Text(text)) => text.clone(),
            Some(ToolResultContent::Blocks(blocks)) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        };
        self.set_result(
            &loc,
            ToolDone {
                content,
                structured: None,
                is_error,
            },
        );
    }

    fn counters_commit(&mut self, owner: &Owner, usage: &fleet_protocol::Usage) {
        match owner {
            Owner::Main => self.main.commit(usage),
            Owner::Group(call) => self.groups.entry(call).counters.commit(usage),
        }
    }
}

/// Every notification in a message's text (several tasks may report in one message).
fn notifications(text: &str) -> Vec<NotificationLine> {
    text.match_indices(OPEN_TAG)
        .filter_map(|(at, _)| TaskNotification::parse(&text[at..]))
        .map(|n| NotificationLine {
            tool_use_id: n.tool_use_id,
            task_id: n.task_id,
            status: n.status,
            summary: n.summary,
        })
        .collect()
}
