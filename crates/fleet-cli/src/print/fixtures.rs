//! Hand-built event streams and writers for the printer tests: the basic session mirrors the
//! reference run of Claude Code (read a file, edit it, `cat` it, answer).

#![allow(clippy::unwrap_used)]

use fleet_protocol::{
    AgentEvent, AgentRef, CommittedMessage, ContentBlock, EventKind, Message, ModelUsage,
    PermissionNote, ReplyMeta, ResultSubtype, Role, RunResult, SessionInfo, ToolResultEvent, Usage,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

pub const SESSION: &str = "ef1686cf-4df8-48d2-be93-7acb2be3671a";
pub const MODEL: &str = "claude-opus-5-5";

/// A writer the test keeps a handle on after giving the printer its own.
#[derive(Clone, Default)]
pub struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl SharedBuf {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    /// Every line, parsed; panics on a line that is not JSON.
    pub fn json_lines(&self) -> Vec<Value> {
        self.text()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A reader that went away: every write fails as a closed pipe does.
pub struct ClosedPipe;

impl Write for ClosedPipe {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    }

    fn flush(&mut self) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

pub fn main_event(kind: EventKind) -> AgentEvent {
    AgentEvent {
        agent: AgentRef::main(),
        kind,
    }
}

pub fn sub_event(kind: EventKind) -> AgentEvent {
    AgentEvent {
        agent: AgentRef::subagent(
            "a77ebf272c1e7395d",
            "toolu_bg1",
            "general-purpose",
            "background job",
        ),
        kind,
    }
}

pub fn usage(input: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: 1,
        ..Usage::default()
    }
}

pub fn block(id: &str, block: ContentBlock, input: u64) -> EventKind {
    EventKind::AssistantBlock {
        message_id: id.into(),
        model: MODEL.into(),
        block,
        usage: usage(input),
    }
}

pub fn committed(message: Message, reply_id: Option<&str>) -> EventKind {
    EventKind::MessageCommitted(CommittedMessage {
        message,
        reply: reply_id.map(|id| ReplyMeta {
            id: id.into(),
            model: MODEL.into(),
            usage: usage(1),
            stop_reason: Some("tool_use".into()),
        }),
        tool_results: Vec::new(),
    })
}

pub fn tool_result(id: &str, name: &str, content: &str, structured: Option<Value>) -> EventKind {
    EventKind::ToolResult(ToolResultEvent {
        tool_use_id: id.into(),
        tool_name: name.into(),
        content: content.into(),
        is_error: false,
        structured,
        permission: PermissionNote {
            decision: "accept".into(),
            reason_type: "mode".into(),
            rule: None,
        },
    })
}

pub fn started() -> EventKind {
    EventKind::Started(SessionInfo {
        session_id: SESSION.into(),
        cwd: "/home/user/project".into(),
        model: MODEL.into(),
        tools: vec!["Bash".into(), "Edit".into(), "Read".into()],
        permission_mode: "acceptEdits".into(),
        additional_directories: Vec::new(),
    })
}

pub fn run_result(subtype: ResultSubtype, result: &str) -> RunResult {
    let mut model_usage = BTreeMap::new();
    model_usage.insert(
        MODEL.to_string(),
        ModelUsage {
            input_tokens: 50363,
            output_tokens: 40,
            cost_usd: 0.202252,
            context_window: 1_000_000,
            max_output_tokens: 128_000,
            ..ModelUsage::default()
        },
    );
    RunResult {
        subtype,
        result: result.into(),
        num_turns: 4,
        duration_ms: 247,
        duration_api_ms: 83,
        total_cost_usd: 0.202252,
        usage: Usage {
            input_tokens: 50363,
            output_tokens: 40,
            ..Usage::default()
        },
        model_usage,
        permission_denials: Vec::new(),
        stop_reason: Some("end_turn".into()),
        api_error_status: None,
        session_id: SESSION.into(),
        origin: None,
        tree: None,
    }
}

fn tool_use(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::tool_use(id, name, input)
}

fn results_message(id: &str, content: &str) -> Message {
    Message::with_blocks(
        Role::User,
        vec![ContentBlock::tool_result(id, content, false)],
    )
}

/// The reference basic session: 21 events, of which `stream-json` prints 10 lines.
pub fn basic_session() -> Vec<AgentEvent> {
    let path = "/home/user/project/hello.txt";
    let read = tool_use("toolu_r1", "Read", json!({ "file_path": path }));
    let edit = tool_use(
        "toolu_e1",
        "Edit",
        json!({ "file_path": path, "old_string": "world", "new_string": "fleet" }),
    );
    let bash = tool_use(
        "toolu_b1",
        "Bash",
        json!({ "command": "cat hello.txt", "description": "show file" }),
    );
    let kinds = vec![
        started(),
        committed(Message::user_text("Change world to fleet"), None),
        EventKind::TextDelta("Reading ".into()),
        EventKind::TextDelta("the file.".into()),
        block("msg_1", ContentBlock::text("Reading the file."), 12470),
        block("msg_1", read.clone(), 12470),
        committed(
            Message::with_blocks(
                Role::Assistant,
                vec![ContentBlock::text("Reading the file."), read],
            ),
            Some("msg_1"),
        ),
        tool_result(
            "toolu_r1",
            "Read",
            "1\thello world\n2\t",
            Some(json!({ "type": "text", "file": { "filePath": path, "numLines": 2 } })),
        ),
        committed(results_message("toolu_r1", "1\thello world\n2\t"), None),
        block("msg_2", edit.clone(), 12537),
        committed(
            Message::with_blocks(Role::Assistant, vec![edit]),
            Some("msg_2"),
        ),
        tool_result(
            "toolu_e1",
            "Edit",
            "The file was updated.",
            Some(json!({ "filePath": path, "oldString": "world", "newString": "fleet" })),
        ),
        committed(results_message("toolu_e1", "The file was updated."), None),
        block("msg_3", bash.clone(), 12645),
        committed(
            Message::with_blocks(Role::Assistant, vec![bash]),
            Some("msg_3"),
        ),
        tool_result(
            "toolu_b1",
            "Bash",
            "hello fleet",
            Some(json!({ "stdout": "hello fleet", "stderr": "", "interrupted": false })),
        ),
        committed(results_message("toolu_b1", "hello fleet"), None),
        EventKind::TextDelta("DONE: hello fleet".into()),
        block("msg_4", ContentBlock::text("DONE: hello fleet"), 12711),
        committed(
            Message::with_blocks(
                Role::Assistant,
                vec![ContentBlock::text("DONE: hello fleet")],
            ),
            Some("msg_4"),
        ),
        EventKind::Finished(run_result(ResultSubtype::Success, "DONE: hello fleet")),
    ];
    kinds.into_iter().map(main_event).collect()
}
