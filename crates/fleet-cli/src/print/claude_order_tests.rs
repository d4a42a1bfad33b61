//! The JSON printers follow Claude Code's line set and order where fleet's runtime reports
//! things differently: a fan-out's call → `task_started` → prompt per agent, a foreground
//! subagent's own messages left out, each Agent result right after its task's lines, the
//! Agent tool as `Task` in `init`, its result as text blocks, and in partial mode a `status`
//! line before each request and each block's `assistant` line before its stop.

#![allow(clippy::unwrap_used)]

use super::fixtures::*;
use super::PrintOptions;
use fleet_protocol::wire::StreamLine;
use fleet_protocol::{
    AgentEvent, AgentRef, AssistantMessage, BlockDelta, ContentBlock, EventKind, StreamEvent,
    TaskStatus,
};
use serde_json::{json, Value};

fn kinds(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let ty = l["type"].as_str().unwrap();
            let detail = match ty {
                "system" | "result" => l["subtype"].as_str(),
                "assistant" | "user" => l["message"]["content"][0]["type"].as_str(),
                "stream_event" => l["event"]["type"].as_str(),
                _ => None,
            };
            format!("{ty}/{}", detail.unwrap_or("-"))
        })
        .collect()
}

/// Two foreground subagents started from one reply, answering out of call order.
fn fan_out() -> Vec<AgentEvent> {
    let call = |n: u32| {
        block(
            "msg_1",
            ContentBlock::ToolUse {
                id: format!("toolu_{n}"),
                name: "Agent".into(),
                input: json!({"prompt": format!("Do {n}")}),
                cache_control: None,
            },
            10,
        )
    };
    let start = |n: u32| {
        let mut task = task_started();
        task.task_id = format!("child{n}");
        task.tool_use_id = format!("toolu_{n}");
        task.prompt = format!("Do {n}");
        task.is_backgrounded = false;
        main_event(EventKind::TaskStarted(task))
    };
    let child = |n: u32, kind: EventKind| AgentEvent {
        agent: AgentRef::subagent(
            format!("child{n}"),
            format!("toolu_{n}"),
            "general-purpose",
            "job",
        ),
        kind,
    };
    let done = |n: u32| {
        main_event(EventKind::TaskUpdated {
            task_id: format!("child{n}"),
            status: TaskStatus::Completed,
            end_time_ms: Some(1),
        })
    };
    let notified = |n: u32| {
        let mut note = notification(TaskStatus::Completed, "done");
        note.task_id = format!("child{n}");
        note.tool_use_id = format!("toolu_{n}");
        main_event(EventKind::TaskNotified(note))
    };
    vec![
        main_event(started()),
        main_event(call(0)),
        main_event(call(1)),
        start(0),
        start(1),
        child(1, block("msg_c1", ContentBlock::text("one"), 5)),
        done(1),
        notified(1),
        child(0, block("msg_c0", ContentBlock::text("zero"), 5)),
        done(0),
        notified(0),
        main_event(tool_result("toolu_0", "Agent", "zero", None)),
        main_event(tool_result("toolu_1", "Agent", "one", None)),
    ]
}

#[test]
fn a_fan_out_prints_each_call_with_its_task_and_prompt_and_each_result_with_its_task() {
    let lines = print_stream(&fan_out(), &PrintOptions::default());
    assert_eq!(
        kinds(&lines),
        [
            "system/init",
            "assistant/tool_use",
            "system/task_started",
            "user/text",
            "assistant/tool_use",
            "system/task_started",
            "user/text",
            "system/task_updated",
            "system/task_notification",
            "user/tool_result",
            "system/task_updated",
            "system/task_notification",
            "user/tool_result",
        ]
    );
    // The prompt is the subagent's first line; its own reply is not printed.
    assert_eq!(lines[3]["parent_tool_use_id"], "toolu_0");
    assert_eq!(lines[3]["agent_id"], "child0");
    assert_eq!(lines[3]["message"]["content"][0]["text"], "Do 0");
    assert!(lines
        .iter()
        .all(|l| l["type"] != "assistant" || l["parent_tool_use_id"].is_null()));
    // Each result right after its own task's lines, with the same run.
    assert_eq!(lines[8]["tool_use_id"], "toolu_0");
    assert_eq!(lines[9]["message"]["content"][0]["tool_use_id"], "toolu_0");
    assert_eq!(lines[7]["run_id"], lines[2]["run_id"]);
    // The Agent tool's result is a list of text blocks.
    assert_eq!(
        lines[9]["message"]["content"][0]["content"],
        json!([{"type": "text", "text": "zero"}])
    );
}

#[test]
fn subagent_messages_can_be_asked_for() {
    let mut encoder = super::encode::Encoder::new(None, false).with_subagent_messages(true);
    let lines: Vec<StreamLine> = fan_out().iter().flat_map(|e| encoder.encode(e)).collect();
    let said = lines
        .iter()
        .filter(|l| matches!(l, StreamLine::Assistant(a) if a.parent_tool_use_id.is_some()))
        .count();
    assert_eq!(said, 2, "{lines:#?}");
}

#[test]
fn init_lists_the_agent_tool_as_task() {
    let mut info = match started() {
        EventKind::Started(info) => info,
        _ => unreachable!(),
    };
    info.tools.push("Agent".into());
    let lines = print_stream(
        &[main_event(EventKind::Started(info))],
        &PrintOptions::default(),
    );
    assert_eq!(lines[0]["tools"], json!(["Bash", "Edit", "Read", "Task"]));
}

#[test]
fn partial_mode_prints_status_then_each_block_before_its_stop() {
    let stream = |event: StreamEvent| main_event(EventKind::Stream(event));
    let events = vec![
        main_event(started()),
        stream(StreamEvent::MessageStart {
            message: AssistantMessage::empty("msg_1", MODEL),
        }),
        stream(StreamEvent::ContentBlockStart {
            index: 0,
            content_block: ContentBlock::text(""),
        }),
        stream(StreamEvent::ContentBlockDelta {
            index: 0,
            delta: BlockDelta::TextDelta { text: "hel".into() },
        }),
        stream(StreamEvent::ContentBlockDelta {
            index: 0,
            delta: BlockDelta::TextDelta { text: "lo".into() },
        }),
        stream(StreamEvent::ContentBlockStop { index: 0 }),
        stream(StreamEvent::MessageStop),
        // The runtime's own event for the block comes once the reply is complete.
        main_event(block("msg_1", ContentBlock::text("hello"), 3)),
    ];
    let options = PrintOptions {
        include_partial_messages: true,
        ..PrintOptions::default()
    };
    let lines = print_stream(&events, &options);
    assert_eq!(
        kinds(&lines),
        [
            "system/init",
            "system/status",
            "stream_event/message_start",
            "stream_event/content_block_start",
            "stream_event/content_block_delta",
            "stream_event/content_block_delta",
            "assistant/text",
            "stream_event/content_block_stop",
            "stream_event/message_stop",
        ]
    );
    assert_eq!(lines[1]["status"], "requesting");
    assert_eq!(lines[6]["message"]["content"][0]["text"], "hello");
}

#[test]
fn every_line_reads_back_as_a_known_wire_line() {
    let mut events = fan_out();
    events.extend(background_session());
    for line in print_stream(&events, &PrintOptions::default()) {
        let text = line.to_string();
        let parsed: StreamLine = serde_json::from_str(&text).unwrap();
        assert!(!matches!(parsed, StreamLine::Unknown(_)), "{text}");
        assert_eq!(serde_json::to_value(&parsed).unwrap(), line, "{text}");
    }
}

/// A foreground subagent's own foreground helper: its lines are released by the subagent's
/// tool result even though that result itself is not printed.
#[test]
fn a_nested_foreground_task_is_not_held_to_the_end() {
    let outer = AgentRef::subagent("child0", "toolu_0", "general-purpose", "job");
    let mut nested = task_started();
    nested.task_id = "grandchild".into();
    nested.tool_use_id = "toolu_g".into();
    nested.is_backgrounded = false;
    nested.spawn_depth = 2;
    let mut outer_task = task_started();
    outer_task.task_id = "child0".into();
    outer_task.tool_use_id = "toolu_0".into();
    outer_task.is_backgrounded = false;
    let mut note = notification(TaskStatus::Completed, "deep");
    note.task_id = "grandchild".into();
    note.tool_use_id = "toolu_g".into();
    let by_outer = |kind: EventKind| AgentEvent {
        agent: outer.clone(),
        kind,
    };
    let mut encoder = super::encode::Encoder::new(None, false);
    let mut printed = Vec::new();
    for event in [
        main_event(EventKind::TaskStarted(outer_task)),
        by_outer(EventKind::TaskStarted(nested)),
        by_outer(EventKind::TaskNotified(note)),
        by_outer(tool_result("toolu_g", "Agent", "deep", None)),
    ] {
        printed.push(encoder.encode(&event).len());
    }
    // started + prompt, started + prompt, held, then the notification alone.
    assert_eq!(printed, [2, 2, 0, 1]);
    assert!(encoder.release_held().is_empty());
}
