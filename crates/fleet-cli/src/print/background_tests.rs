//! The JSON printers on a session with a background subagent, checked against Claude Code's
//! reference output for the same session (`cc-stream-json-background.jsonl`): the same line
//! types in the same order, each with the reference's keys (`run_id` included: the printer
//! names each task's run), and the results held to the end with the tree's final figures.

#![allow(clippy::unwrap_used)]

use super::fixtures::*;
use super::{JsonPrinter, PrintOptions, Printer, StreamJsonPrinter};
use fleet_protocol::{AgentEvent, AgentRef, EventKind, TaskStatus};
use serde_json::{json, Value};

fn stream(events: &[AgentEvent]) -> Vec<Value> {
    let buf = SharedBuf::default();
    let mut printer = StreamJsonPrinter::new(Box::new(buf.clone()), &PrintOptions::default());
    for event in events {
        printer.event(event).unwrap();
    }
    printer.finish().unwrap();
    buf.json_lines()
}

fn json_doc(events: &[AgentEvent], verbose: bool) -> Value {
    let buf = SharedBuf::default();
    let options = PrintOptions {
        verbose,
        ..PrintOptions::default()
    };
    let mut printer = JsonPrinter::new(Box::new(buf.clone()), &options);
    for event in events {
        printer.event(event).unwrap();
    }
    printer.finish().unwrap();
    let lines = buf.json_lines();
    assert_eq!(lines.len(), 1, "json writes one document");
    lines.into_iter().next().unwrap()
}

/// `(type, subtype)` for system lines and results, `(type, first block type)` for messages,
/// and whether the line is a subagent's.
fn shape(line: &Value) -> (String, String, bool) {
    let kind = line["type"].as_str().unwrap();
    let detail = match kind {
        "system" | "result" => &line["subtype"],
        _ => &line["message"]["content"][0]["type"],
    };
    let from_child = line.get("parent_tool_use_id").is_some_and(|p| !p.is_null());
    (kind.into(), detail.as_str().unwrap().into(), from_child)
}

const MESSAGE: [&str; 6] = [
    "type",
    "message",
    "parent_tool_use_id",
    "session_id",
    "uuid",
    "timestamp",
];
const CHILD_MESSAGE: [&str; 9] = [
    "type",
    "message",
    "parent_tool_use_id",
    "agent_id",
    "session_id",
    "uuid",
    "timestamp",
    "subagent_type",
    "task_description",
];
const TOOL_RESULT: [&str; 8] = [
    "type",
    "message",
    "parent_tool_use_id",
    "session_id",
    "uuid",
    "timestamp",
    "tool_use_result",
    "tool_result_meta",
];
const TASKS_CHANGED: [&str; 5] = ["type", "subtype", "tasks", "uuid", "session_id"];
pub(super) const TASK_STARTED: [&str; 13] = [
    "type",
    "subtype",
    "task_id",
    "run_id",
    "tool_use_id",
    "description",
    "subagent_type",
    "is_backgrounded",
    "spawn_depth",
    "task_type",
    "prompt",
    "uuid",
    "session_id",
];
const TASK_UPDATED: [&str; 7] = [
    "type",
    "subtype",
    "task_id",
    "run_id",
    "patch",
    "uuid",
    "session_id",
];
const TASK_NOTIFICATION: [&str; 12] = [
    "type",
    "subtype",
    "task_id",
    "run_id",
    "tool_use_id",
    "status",
    "output_file",
    "summary",
    "summary_is_report",
    "usage",
    "uuid",
    "session_id",
];

#[test]
fn background_session_prints_the_reference_lines_in_order() {
    let lines = stream(&background_session());
    let shapes: Vec<_> = lines.iter().map(shape).collect();
    let expected = [
        ("system", "init", false),
        ("assistant", "tool_use", false),
        ("system", "background_tasks_changed", false),
        ("system", "task_started", false),
        ("user", "tool_result", false),
        ("assistant", "text", false),
        ("assistant", "text", true),
        ("system", "task_updated", false),
        ("system", "task_notification", false),
        ("system", "background_tasks_changed", false),
        ("system", "init", false),
        ("assistant", "text", false),
        ("result", "success", false),
        ("result", "success", false),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), *c))
        .collect();
    assert_eq!(shapes, expected);
    for line in &lines {
        assert_eq!(line["session_id"], SESSION, "{line}");
    }
}

#[test]
fn each_line_has_the_reference_keys_in_order() {
    let lines = stream(&background_session());
    let expected: [(usize, &[&str]); 9] = [
        (1, &MESSAGE),
        (2, &TASKS_CHANGED),
        (3, &TASK_STARTED),
        (4, &TOOL_RESULT),
        (5, &MESSAGE),
        (6, &CHILD_MESSAGE),
        (7, &TASK_UPDATED),
        (8, &TASK_NOTIFICATION),
        (9, &TASKS_CHANGED),
    ];
    for (index, want) in expected {
        assert_eq!(keys(&lines[index]), want, "line {}", index + 1);
    }
    assert_eq!(
        keys(&lines[2]["tasks"][0]),
        [
            "task_id",
            "run_id",
            "task_type",
            "subagent_type",
            "description"
        ]
    );
    assert_eq!(keys(&lines[7]["patch"]), ["status", "end_time"]);
    assert_eq!(
        keys(&lines[8]["usage"]),
        ["total_tokens", "tool_uses", "duration_ms"]
    );
}

#[test]
fn task_lines_carry_the_tasks_facts() {
    let lines = stream(&background_session());
    let run_id = lines[2]["tasks"][0]["run_id"].clone();
    assert!(run_id.is_string(), "{run_id}");
    assert_eq!(
        lines[2]["tasks"],
        json!([{ "task_id": CHILD, "run_id": run_id, "task_type": "local_agent",
                 "subagent_type": "general-purpose", "description": "background job" }])
    );
    let started = &lines[3];
    // One run: every task line names the same one.
    for line in lines.iter().filter(|l| l.get("task_id").is_some()) {
        assert_eq!(line["run_id"], run_id, "{line}");
    }
    assert_eq!(started["task_id"], CHILD);
    assert_eq!(started["tool_use_id"], "toolu_bg1");
    assert_eq!(started["is_backgrounded"], true);
    assert_eq!(started["spawn_depth"], 1);
    assert_eq!(started["prompt"], "Do BGTASK-1 and report");
    assert_eq!(
        lines[7]["patch"],
        json!({ "status": "completed", "end_time": 1_796_045_302_825_u64 })
    );
    let note = &lines[8];
    assert_eq!(note["status"], "completed");
    assert_eq!(
        note["summary"], "CHILD-RESULT-42",
        "a completed task reports"
    );
    assert_eq!(note["summary_is_report"], true);
    assert_eq!(note["output_file"], OUTPUT_FILE);
    assert_eq!(
        note["usage"],
        json!({ "total_tokens": 7309, "tool_uses": 0, "duration_ms": 104 })
    );
    assert_eq!(lines[9]["tasks"], json!([]));
}

#[test]
fn a_failed_task_has_no_report_and_a_running_one_no_end_time() {
    let events = [
        main_event(EventKind::TaskUpdated {
            task_id: CHILD.into(),
            status: TaskStatus::Running,
            end_time_ms: None,
        }),
        main_event(EventKind::TaskNotified(notification(
            TaskStatus::Failed,
            "API error 529: Overloaded",
        ))),
    ];
    let lines = stream(&events);
    assert_eq!(lines[0]["patch"], json!({ "status": "running" }));
    assert_eq!(lines[1]["status"], "failed");
    assert_eq!(lines[1]["summary"], "Agent \"background job\" failed");
    assert_eq!(lines[1]["summary_is_report"], false);
}

#[test]
fn a_subagents_own_task_lines_name_it_at_the_end() {
    let nested = AgentEvent {
        agent: AgentRef::subagent("b0b0b0", "toolu_x", "Explore", "scan"),
        kind: EventKind::BackgroundTasksChanged(vec![background_task()]),
    };
    let line = &stream(&[nested])[0];
    assert_eq!(
        keys(line)[TASKS_CHANGED.len()..],
        ["parent_tool_use_id", "agent_id"]
    );
    assert_eq!(line["agent_id"], "b0b0b0");
}

#[test]
fn results_wait_for_the_end_and_share_the_final_tree() {
    let events = background_session();
    let buf = SharedBuf::default();
    let mut printer = StreamJsonPrinter::new(Box::new(buf.clone()), &PrintOptions::default());
    for event in &events {
        printer.event(event).unwrap();
    }
    assert!(
        buf.json_lines().iter().all(|l| l["type"] != "result"),
        "no result before finish"
    );
    printer.finish().unwrap();
    printer.finish().unwrap();
    let lines = buf.json_lines();
    assert_eq!(lines.len(), 14, "a second finish prints nothing more");
    let (first, last) = (&lines[12], &lines[13]);

    assert_eq!(first["result"], "MAIN-WAITING");
    assert_eq!(last["result"], "MAIN-SAW-NOTIFICATION");
    assert_eq!(
        (&first["result_index"], &last["result_index"]),
        (&json!(0), &json!(1))
    );
    assert!(first.get("origin").is_none());
    // Claude Code's `producer` and `runId` (the run the task lines named), fleet's task ids.
    assert_eq!(
        last["origin"],
        json!({ "kind": "task-notification", "producer": "session-task",
                "runId": lines[3]["run_id"], "task_ids": [CHILD] })
    );
    // Each run's usage is its own; the tree's figures are the final ones on both.
    assert_eq!(first["usage"]["input_tokens"], 25284);
    assert_eq!(last["usage"]["input_tokens"], 13152);
    assert_eq!(first["num_turns"], 2);
    for result in [first, last] {
        assert_eq!(result["total_cost_usd"], 0.18374);
        assert_eq!(result["modelUsage"][MODEL]["inputTokens"], 45735);
        assert_eq!(result["modelUsage"][MODEL]["costUSD"], 0.18374);
        assert_eq!(result["subagent_stats"]["completed"], 1);
        assert_eq!(result["usage_by_agent"][1]["status"], "completed");
    }
}

#[test]
fn subagent_stats_has_exactly_the_reference_object() {
    let lines = stream(&background_session());
    let stats = &lines[13]["subagent_stats"];
    assert_eq!(
        stats,
        &json!({
            "spawned": 1,
            "requested": { "background": 1, "foreground": 0, "unset": 0 },
            "started_in_background": 1,
            "max_depth": 1,
            "spawned_by_subagents": 0,
            "completed": 1,
            "failed": 0,
            "killed": { "parent": 0, "user": 0, "system": 0 },
            "refused": { "depth_limit": 0, "concurrency_limit": 0, "budget": 0 },
            "by_type": { "general-purpose": 1 },
        })
    );
    assert_eq!(
        keys(stats),
        [
            "spawned",
            "requested",
            "started_in_background",
            "max_depth",
            "spawned_by_subagents",
            "completed",
            "failed",
            "killed",
            "refused",
            "by_type"
        ]
    );
}

#[test]
fn usage_by_agent_lists_every_agent_of_the_tree() {
    let lines = stream(&background_session());
    let agents = lines[13]["usage_by_agent"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    assert_eq!(
        keys(&agents[1]),
        [
            "agent_id",
            "agent_type",
            "parent_agent_id",
            "depth",
            "model",
            "status",
            "num_turns",
            "tool_uses",
            "usage",
            "cost_usd"
        ]
    );
    assert_eq!(agents[0]["agent_id"], "main");
    assert_eq!(agents[0]["depth"], 0);
    assert_eq!(agents[1]["agent_id"], CHILD);
    assert_eq!(agents[1]["parent_agent_id"], "main");
    assert_eq!(agents[1]["usage"]["input_tokens"], 7299);
}

#[test]
fn a_later_result_without_a_tree_keeps_the_last_tree_seen() {
    let mut later = run_result(fleet_protocol::ResultSubtype::Success, "again");
    later.tree = None;
    let events = [
        main_event(EventKind::Finished(main_run("first", 10, None, tree(true)))),
        main_event(EventKind::Finished(later)),
    ];
    let lines = stream(&events);
    assert_eq!(lines[1]["result"], "again");
    assert_eq!(lines[1]["total_cost_usd"], 0.18374);
    assert_eq!(lines[1]["subagent_stats"]["spawned"], 1);
}

#[test]
fn json_prints_the_last_result_with_the_tree_fields() {
    let result = json_doc(&background_session(), false);
    assert_eq!(result["type"], "result");
    assert_eq!(result["result"], "MAIN-SAW-NOTIFICATION");
    assert_eq!(result["result_index"], 1);
    assert_eq!(result["origin"]["task_ids"], json!([CHILD]));
    assert_eq!(result["total_cost_usd"], 0.18374);
    assert_eq!(result["subagent_stats"]["spawned"], 1);
    assert_eq!(result["usage_by_agent"].as_array().unwrap().len(), 2);
}

#[test]
fn verbose_json_holds_every_line_with_all_results_last() {
    let all = json_doc(&background_session(), true);
    let all = all.as_array().unwrap();
    let streamed = stream(&background_session());
    let shapes: Vec<_> = all.iter().map(shape).collect();
    let want: Vec<_> = streamed.iter().map(shape).collect();
    assert_eq!(shapes, want, "the same objects as stream-json");
    assert_eq!(all[12]["result_index"], 0);
    assert_eq!(all[13]["result_index"], 1);
}
