#![allow(clippy::unwrap_used)]
//! Which background tasks a transcript says were started and never reported, and the
//! conversation a crashed session resumes with: every call answered, notifications after the
//! calls they follow.

use crate::common;

use std::path::Path;

use common::{temp_store, user, write_session};
use fleet_protocol::{
    ContentBlock, Message, MessageContent, Role, TaskNotification, TaskStatus, TaskUsage,
};
use fleet_store::{LaunchKind, Transcript, TranscriptEntry, INTERRUPTED_TOOL_RESULT};
use serde_json::{json, Value};

/// An assistant turn calling the Agent tool (or another tool) once per id.
fn calling(calls: &[(&str, &str, Value)]) -> TranscriptEntry {
    let blocks = calls
        .iter()
        .map(|(id, tool, input)| ContentBlock::tool_use(*id, *tool, input.clone()))
        .collect();
    TranscriptEntry::message(Message::with_blocks(Role::Assistant, blocks))
}

fn launch_record(agent: &str, description: &str) -> Value {
    json!({
        "isAsync": true, "status": "async_launched", "agentId": agent,
        "agentType": "general-purpose", "description": description,
        "outputFile": format!("/fleet/subagents/agent-{agent}.jsonl"),
    })
}

/// The user turn answering `calls` with background launches, as the agent loop records it.
fn launched(calls: &[(&str, &str)]) -> TranscriptEntry {
    let blocks = calls
        .iter()
        .map(|(id, agent)| {
            ContentBlock::tool_result(*id, format!("Started background agent {agent}"), false)
        })
        .collect();
    let entry = TranscriptEntry::message(Message::with_blocks(Role::User, blocks));
    match calls {
        [(_, agent)] => entry.with_extra("toolUseResult", launch_record(agent, "job")),
        many => {
            let map: serde_json::Map<String, Value> = many
                .iter()
                .map(|(id, agent)| {
                    (
                        (*id).to_string(),
                        launch_record(agent, &format!("job {agent}")),
                    )
                })
                .collect();
            entry.with_extra("toolUseResults", Value::Object(map))
        }
    }
}

fn notified(task: &str, call: &str) -> TranscriptEntry {
    let note = TaskNotification {
        task_id: task.into(),
        tool_use_id: call.into(),
        status: TaskStatus::Completed,
        summary: "done".into(),
        result: "all good".into(),
        usage: TaskUsage::default(),
        output_file: String::new(),
        worktree: None,
    };
    user(&note.render()).meta()
}

fn agent_input(description: &str) -> Value {
    json!({"description": description, "prompt": "go", "run_in_background": true})
}

fn ids(path: &Path) -> Vec<(String, String)> {
    Transcript::load(path)
        .unwrap()
        .unreported_tasks()
        .into_iter()
        .map(|t| (t.task_id, t.tool_use_id))
        .collect()
}

#[test]
fn launches_without_a_notification_are_unreported_in_launch_order() {
    let (_dir, store) = temp_store();
    let path = write_session(
        &store,
        Path::new("/w"),
        vec![
            user("fan out"),
            calling(&[
                ("tu_1", "Agent", agent_input("one")),
                ("tu_2", "Agent", agent_input("two")),
                ("tu_3", "Agent", agent_input("three")),
            ]),
            launched(&[("tu_1", "a1"), ("tu_2", "a2"), ("tu_3", "a3")]),
            notified("a2", "tu_2"),
        ],
    );
    let tasks = Transcript::load(&path).unwrap().unreported_tasks();
    let found: Vec<(&str, &str)> = tasks
        .iter()
        .map(|t| (t.task_id.as_str(), t.tool_use_id.as_str()))
        .collect();
    assert_eq!(found, [("a1", "tu_1"), ("a3", "tu_3")]);
    assert_eq!(tasks[0].kind, LaunchKind::Agent);
    assert_eq!(tasks[0].description, "job a1");
    assert_eq!(tasks[0].agent_type.as_deref(), Some("general-purpose"));
    assert_eq!(
        tasks[0].output_file.as_deref(),
        Some(Path::new("/fleet/subagents/agent-a1.jsonl"))
    );
}

#[test]
fn a_single_launch_is_tied_to_its_call_and_a_quoted_notification_does_not_count() {
    let (_dir, store) = temp_store();
    // A file the model read quotes a notification of the task: that is not its report.
    let quoted = notified("a1", "tu_1").message.unwrap().text();
    let read = TranscriptEntry::message(Message::with_blocks(
        Role::User,
        vec![ContentBlock::tool_result("tu_r", quoted, false)],
    ));
    let path = write_session(
        &store,
        Path::new("/w"),
        vec![
            user("start one"),
            calling(&[("tu_1", "Agent", agent_input("one"))]),
            launched(&[("tu_1", "a1")]),
            calling(&[("tu_r", "Read", json!({"file_path": "/w/notes.txt"}))]),
            read,
        ],
    );
    assert_eq!(ids(&path), [("a1".to_string(), "tu_1".to_string())]);
}

#[test]
fn a_compaction_writing_the_launch_again_does_not_bring_back_a_reported_task() {
    let (_dir, store) = temp_store();
    let path = write_session(
        &store,
        Path::new("/w"),
        vec![
            user("start"),
            calling(&[("tu_1", "Agent", agent_input("one"))]),
            launched(&[("tu_1", "a1")]),
            notified("a1", "tu_1"),
            TranscriptEntry::system(fleet_store::COMPACT_BOUNDARY, "Conversation compacted"),
            user("summary of the conversation").with_extra("isCompactSummary", true),
            calling(&[("tu_1", "Agent", agent_input("one"))]),
            launched(&[("tu_1", "a1")]),
        ],
    );
    assert!(ids(&path).is_empty());
}

#[test]
fn an_agent_resumed_by_a_message_owes_a_notification_again_and_shells_count_too() {
    let (_dir, store) = temp_store();
    let resumed = TranscriptEntry::message(Message::with_blocks(
        Role::User,
        vec![ContentBlock::tool_result("tu_s", "resumed", false)],
    ))
    .with_extra(
        "toolUseResult",
        json!({"success": true, "status": "resumed", "agentId": "a1", "name": "scout"}),
    );
    let moved = TranscriptEntry::message(Message::with_blocks(
        Role::User,
        vec![ContentBlock::tool_result("tu_b", "moved", false)],
    ))
    .with_extra(
        "toolUseResult",
        json!({"backgroundTaskId": "b77", "outputFile": "/fleet/tasks/b77.output"}),
    );
    let path = write_session(
        &store,
        Path::new("/w"),
        vec![
            user("start"),
            calling(&[("tu_1", "Agent", agent_input("one"))]),
            launched(&[("tu_1", "a1")]),
            notified("a1", "tu_1"),
            calling(&[(
                "tu_s",
                "SendMessage",
                json!({"to": "scout", "message": "more"}),
            )]),
            resumed,
            calling(&[(
                "tu_b",
                "Bash",
                json!({"command": "make test", "description": "run the tests"}),
            )]),
            moved,
        ],
    );
    let tasks = Transcript::load(&path).unwrap().unreported_tasks();
    assert_eq!(tasks.len(), 2, "{tasks:?}");
    assert_eq!(
        (tasks[0].task_id.as_str(), tasks[0].tool_use_id.as_str()),
        ("a1", "tu_s")
    );
    assert_eq!(tasks[0].description, "scout");
    assert_eq!(tasks[1].kind, LaunchKind::Shell);
    assert_eq!(tasks[1].description, "run the tests");
}

/// Every `tool_use` answered in the very next message, and every `tool_result` answering a
/// call of the message before: what the Messages API demands of a conversation.
fn assert_pairs_valid(messages: &[Message]) {
    let mut pending: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let results: Vec<String> = message
            .blocks()
            .into_iter()
            .filter_map(|b| match b {
                ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id),
                _ => None,
            })
            .collect();
        for id in &pending {
            assert!(results.contains(id), "message {i}: call {id} unanswered");
        }
        for id in &results {
            assert!(
                pending.contains(id),
                "message {i}: result {id} answers nothing"
            );
        }
        pending = match message.role {
            Role::Assistant => message.tool_uses().map(|t| t.id.to_owned()).collect(),
            Role::User => Vec::new(),
        };
    }
    assert!(
        pending.is_empty(),
        "the last calls are unanswered: {pending:?}"
    );
}

#[test]
fn a_session_killed_mid_call_resumes_with_the_call_answered_before_the_notifications() {
    // The process died while the model's second round of calls ran; the resume then wrote
    // the interrupted notification and the user's next prompt.
    let (_dir, store) = temp_store();
    let path = write_session(
        &store,
        Path::new("/w"),
        vec![
            user("start"),
            calling(&[("tu_1", "Agent", agent_input("one"))]),
            launched(&[("tu_1", "a1")]),
            calling(&[
                ("tu_2", "Bash", json!({"command": "sleep 100"})),
                ("tu_3", "Agent", agent_input("two")),
            ]),
            notified("a1", "tu_1"),
            user("next"),
        ],
    );
    let loaded = Transcript::load(&path).unwrap();
    let messages = loaded.messages();
    assert_pairs_valid(&messages);
    let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::User,
            Role::User
        ]
    );
    let MessageContent::Blocks(answers) = &messages[4].content else {
        panic!("the synthetic answers are blocks: {:?}", messages[4]);
    };
    for (block, id) in answers.iter().zip(["tu_2", "tu_3"]) {
        assert_eq!(
            block,
            &ContentBlock::tool_result(id, INTERRUPTED_TOOL_RESULT, true)
        );
    }
    assert!(TaskNotification::is_notification(&messages[5].text()));
    assert_eq!(messages[6].text(), "next");
    // The call that never answered started no task the transcript knows of.
    assert!(loaded.unreported_tasks().is_empty());
}
