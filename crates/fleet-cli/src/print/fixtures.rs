//! Hand-built event streams and writers for the printer tests: the basic session mirrors the
//! reference run of Claude Code (read a file, edit it, `cat` it, answer), the background
//! session its run with one background subagent.

#![allow(clippy::unwrap_used)]

use fleet_protocol::{
    AgentEvent, AgentRef, AgentUsage, BackgroundTask, CommittedMessage, ContentBlock, EventKind,
    Message, ModelUsage, PermissionNote, ReplyMeta, RequestedModes, ResultSubtype, Role, RunOrigin,
    RunResult, SessionInfo, SubagentStats, TaskNotification, TaskStarted, TaskStatus, TaskUsage,
    ToolResultEvent, TreeReport, Usage,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

/// What the stream-json printer writes for `events`, line by line.
pub fn print_stream(events: &[AgentEvent], options: &super::PrintOptions) -> Vec<Value> {
    use super::Printer;
    let buf = SharedBuf::default();
    let mut printer = super::StreamJsonPrinter::new(Box::new(buf.clone()), options);
    for event in events {
        printer.event(event).unwrap();
    }
    printer.finish().unwrap();
    buf.json_lines()
}

/// An object's keys, in order.
pub fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

pub const SESSION: &str = "ef1686cf-4df8-48d2-be93-7acb2be3671a";
pub const MODEL: &str = "claude-opus-5-5";
pub const CHILD: &str = "a77ebf272c1e7395d";
pub const OUTPUT_FILE: &str = "/home/user/.fleet/tasks/a77ebf272c1e7395d.jsonl";

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
        agent: AgentRef::subagent(CHILD, "toolu_bg1", "general-purpose", "background job"),
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
            stop_reason: Some(fleet_protocol::StopReason::ToolUse),
        }),
        tool_results: Vec::new(),
        mail_ids: Vec::new(),
    })
}

pub fn tool_result(id: &str, name: &str, content: &str, structured: Option<Value>) -> EventKind {
    EventKind::ToolResult(ToolResultEvent {
        tool_use_id: id.into(),
        tool_name: name.into(),
        content: content.into(),
        is_error: false,
        structured: structured.map(std::sync::Arc::new),
        permission: PermissionNote {
            decision: fleet_protocol::PermissionDecision::Accept,
            reason_type: fleet_protocol::PermissionReasonType::Mode,
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
        permission_mode: fleet_protocol::PermissionMode::AcceptEdits,
        additional_directories: Vec::new(),
        agents: Vec::new(),
        mcp_servers: Vec::new(),
        skills: Vec::new(),
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
        stop_reason: Some(fleet_protocol::StopReason::EndTurn),
        api_error_status: None,
        session_id: SESSION.into(),
        origin: None,
        tree: None,
        terminal_reason: None,
        structured_output: None,
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

pub fn background_task() -> BackgroundTask {
    BackgroundTask {
        task_id: CHILD.into(),
        task_type: "local_agent".into(),
        subagent_type: "general-purpose".into(),
        description: "background job".into(),
    }
}

pub fn task_started() -> TaskStarted {
    TaskStarted {
        task_id: CHILD.into(),
        tool_use_id: "toolu_bg1".into(),
        description: "background job".into(),
        subagent_type: "general-purpose".into(),
        prompt: "Do BGTASK-1 and report".into(),
        model: MODEL.into(),
        is_backgrounded: true,
        spawn_depth: 1,
        task_type: "local_agent".into(),
        output_file: OUTPUT_FILE.into(),
    }
}

pub fn notification(status: TaskStatus, result: &str) -> TaskNotification {
    TaskNotification {
        task_id: CHILD.into(),
        tool_use_id: "toolu_bg1".into(),
        status,
        summary: format!("Agent \"background job\" {status}"),
        result: result.into(),
        usage: TaskUsage {
            total_tokens: 7309,
            tool_uses: 0,
            duration_ms: 104,
            unreported_replies: 0,
        },
        output_file: OUTPUT_FILE.into(),
        worktree: None,
    }
}

fn agent_usage(id: &str, kind: &str, parent: Option<&str>, status: &str, input: u64) -> AgentUsage {
    AgentUsage {
        agent_id: id.into(),
        agent_type: kind.into(),
        parent_agent_id: parent.map(Into::into),
        depth: u32::from(parent.is_some()),
        model: MODEL.into(),
        status: status.into(),
        num_turns: 1,
        tool_uses: 0,
        usage: usage(input),
        cost_usd: Some(input as f64 * 4e-6),
        served_model: None,
        usage_unreported_replies: 0,
    }
}

/// The tree as a result reports it; `child_done` false gives the figures of an earlier
/// result, while the child was still running.
pub fn tree(child_done: bool) -> TreeReport {
    let (input, cost) = if child_done {
        (45735, 0.18374)
    } else {
        (25284, 0.10114)
    };
    let mut model_usage = BTreeMap::new();
    model_usage.insert(
        MODEL.to_string(),
        ModelUsage {
            input_tokens: input,
            output_tokens: 40,
            cost_usd: cost,
            context_window: 1_000_000,
            max_output_tokens: 128_000,
            ..ModelUsage::default()
        },
    );
    let child_status = if child_done { "completed" } else { "running" };
    TreeReport {
        total_cost_usd: cost,
        model_usage,
        subagent_stats: SubagentStats {
            spawned: 1,
            requested: RequestedModes {
                background: 1,
                ..RequestedModes::default()
            },
            started_in_background: 1,
            max_depth: 1,
            completed: u64::from(child_done),
            by_type: [("general-purpose".to_string(), 1)].into(),
            ..SubagentStats::default()
        },
        agents: vec![
            agent_usage("main", "main", None, "completed", input - 7299),
            agent_usage(CHILD, "general-purpose", Some("main"), child_status, 7299),
        ],
    }
}

/// A main run's result as the session reports it: its own usage, the tree so far.
pub fn main_run(text: &str, input: u64, origin: Option<RunOrigin>, tree: TreeReport) -> RunResult {
    RunResult {
        num_turns: if origin.is_some() { 1 } else { 2 },
        usage: usage(input),
        total_cost_usd: input as f64 * 4e-6,
        origin,
        tree: Some(tree),
        ..run_result(ResultSubtype::Success, text)
    }
}

/// The reference background session: the main agent starts one background subagent, answers
/// while it runs, and answers again when its notification arrives. `stream-json` prints the
/// reference's 14 lines for it.
pub fn background_session() -> Vec<AgentEvent> {
    let spawn = tool_use(
        "toolu_bg1",
        "Agent",
        json!({
            "description": "background job",
            "prompt": "Do BGTASK-1 and report",
            "subagent_type": "general-purpose",
            "run_in_background": true,
        }),
    );
    let launched = json!({
        "isAsync": true, "status": "async_launched", "agentId": CHILD,
        "description": "background job", "prompt": "Do BGTASK-1 and report",
        "outputFile": OUTPUT_FILE,
    });
    let note = notification(TaskStatus::Completed, "CHILD-RESULT-42");
    let origin = RunOrigin {
        kind: "task-notification".into(),
        task_ids: vec![CHILD.into()],
    };
    let text = |s: &str| ContentBlock::text(s);
    let reply = |s: &str, id: &str| {
        committed(
            Message::with_blocks(Role::Assistant, vec![text(s)]),
            Some(id),
        )
    };
    vec![
        main_event(started()),
        main_event(committed(
            Message::user_text("Start a background job"),
            None,
        )),
        main_event(block("msg_1", spawn.clone(), 12471)),
        main_event(committed(
            Message::with_blocks(Role::Assistant, vec![spawn]),
            Some("msg_1"),
        )),
        main_event(EventKind::BackgroundTasksChanged(vec![background_task()])),
        main_event(EventKind::TaskStarted(task_started())),
        main_event(tool_result(
            "toolu_bg1",
            "Agent",
            "Started in the background.",
            Some(launched),
        )),
        main_event(committed(
            results_message("toolu_bg1", "Started in the background."),
            None,
        )),
        sub_event(started()),
        sub_event(committed(
            Message::user_text("Do BGTASK-1 and report"),
            None,
        )),
        main_event(EventKind::TextDelta("MAIN-WAITING".into())),
        main_event(block("msg_2", text("MAIN-WAITING"), 12813)),
        main_event(reply("MAIN-WAITING", "msg_2")),
        main_event(EventKind::Finished(main_run(
            "MAIN-WAITING",
            25284,
            None,
            tree(false),
        ))),
        sub_event(block("msg_3", text("CHILD-RESULT-42"), 7299)),
        sub_event(reply("CHILD-RESULT-42", "msg_3")),
        sub_event(EventKind::Finished(run_result(
            ResultSubtype::Success,
            "CHILD-RESULT-42",
        ))),
        main_event(EventKind::TaskUpdated {
            task_id: CHILD.into(),
            status: TaskStatus::Completed,
            end_time_ms: Some(1_796_045_302_825),
        }),
        main_event(EventKind::TaskNotified(note.clone())),
        main_event(EventKind::BackgroundTasksChanged(Vec::new())),
        main_event(started()),
        main_event(committed(Message::user_text(note.render()), None)),
        main_event(EventKind::TextDelta("MAIN-SAW-NOTIFICATION".into())),
        main_event(block("msg_4", text("MAIN-SAW-NOTIFICATION"), 13152)),
        main_event(reply("MAIN-SAW-NOTIFICATION", "msg_4")),
        main_event(EventKind::Finished(main_run(
            "MAIN-SAW-NOTIFICATION",
            13152,
            Some(origin),
            tree(true),
        ))),
    ]
}
