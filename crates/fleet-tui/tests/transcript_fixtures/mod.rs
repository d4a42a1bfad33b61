//! Events made by hand, and a transcript drawn into a buffer read back as text.
#![allow(dead_code)]

use fleet_protocol::{
    AgentEvent, AgentRef, CommittedMessage, ContentBlock, EventKind, Message, PermissionNote,
    ReplyMeta, Role, TaskNotification, TaskStarted, TaskStatus, TaskUsage, ToolResultEvent, Usage,
};
use fleet_tui::theme::Theme;
use fleet_tui::transcript::Transcript;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::{json, Value};
use std::sync::Arc;

pub fn main(kind: EventKind) -> AgentEvent {
    AgentEvent {
        agent: AgentRef::main(),
        kind,
    }
}

/// A subagent `agent` started by Agent call `call`.
pub fn sub(agent: &str, call: &str, kind: EventKind) -> AgentEvent {
    AgentEvent {
        agent: AgentRef::subagent(agent, call, "Explore", "map the crate"),
        kind,
    }
}

pub fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    }
}

pub fn delta(text: &str) -> EventKind {
    EventKind::TextDelta(text.to_string())
}

pub fn block(block: ContentBlock) -> EventKind {
    EventKind::AssistantBlock {
        message_id: "msg_1".into(),
        model: "claude-test".into(),
        block,
        usage: usage(0, 0),
    }
}

pub fn text_block(text: &str) -> EventKind {
    block(ContentBlock::text(text))
}

pub fn tool_use(id: &str, name: &str, input: Value) -> EventKind {
    block(ContentBlock::tool_use(id, name, input))
}

pub fn tool_result(id: &str, name: &str, content: &str, is_error: bool) -> EventKind {
    tool_result_with(id, name, content, is_error, None)
}

pub fn tool_result_with(
    id: &str,
    name: &str,
    content: &str,
    is_error: bool,
    structured: Option<Value>,
) -> EventKind {
    EventKind::ToolResult(ToolResultEvent {
        tool_use_id: id.into(),
        tool_name: name.into(),
        content: content.into(),
        is_error,
        structured: structured.map(Arc::new),
        permission: PermissionNote {
            decision: fleet_protocol::PermissionDecision::Accept,
            reason_type: fleet_protocol::PermissionReasonType::Mode,
            rule: None,
        },
    })
}

pub fn prompt(text: &str) -> EventKind {
    EventKind::MessageCommitted(CommittedMessage {
        message: Message::user_text(text),
        reply: None,
        tool_results: Vec::new(),
        mail_ids: Vec::new(),
    })
}

/// An assistant reply committed with `usage`, holding `blocks`.
pub fn reply(blocks: Vec<ContentBlock>, usage: Usage) -> EventKind {
    EventKind::MessageCommitted(CommittedMessage {
        message: Message::with_blocks(Role::Assistant, blocks),
        reply: Some(ReplyMeta {
            id: "msg_1".into(),
            model: "claude-test".into(),
            usage,
            stop_reason: Some(fleet_protocol::StopReason::EndTurn),
        }),
        tool_results: Vec::new(),
        mail_ids: Vec::new(),
    })
}

pub fn task_started(task: &str, call: &str, background: bool) -> EventKind {
    EventKind::TaskStarted(TaskStarted {
        task_id: task.into(),
        tool_use_id: call.into(),
        description: "map the crate".into(),
        subagent_type: "Explore".into(),
        prompt: "Map the crate.".into(),
        model: "claude-test".into(),
        is_backgrounded: background,
        spawn_depth: 1,
        task_type: "local_agent".into(),
        output_file: String::new(),
    })
}

pub fn notification(task: &str, call: &str) -> TaskNotification {
    TaskNotification {
        task_id: task.into(),
        tool_use_id: call.into(),
        status: TaskStatus::Completed,
        summary: "Agent \"map the crate\" completed".into(),
        result: "The crate has three modules.".into(),
        usage: TaskUsage {
            total_tokens: 4321,
            tool_uses: 2,
            duration_ms: 3200,
            unreported_replies: 0,
        },
        output_file: String::new(),
        worktree: None,
    }
}

/// The transcript drawn into a `width` × `height` buffer, one string per row with the
/// trailing blanks cut.
pub fn rows(t: &mut Transcript, width: u16, height: u16) -> Vec<String> {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    t.render(area, &mut buf, &Theme::mono());
    buffer_rows(&buf)
}

pub fn buffer_rows(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (0..area.height)
        .map(|y| {
            let row: String = (0..area.width)
                .map(|x| buf[(area.x + x, area.y + y)].symbol().to_string())
                .collect();
            row.trim_end().to_string()
        })
        .collect()
}

pub fn screen(t: &mut Transcript, width: u16, height: u16) -> String {
    rows(t, width, height).join("\n")
}

pub fn apply_all(t: &mut Transcript, events: impl IntoIterator<Item = AgentEvent>) {
    for event in events {
        t.apply(&event);
    }
}

pub fn read_input(path: &str) -> Value {
    json!({ "file_path": path })
}
