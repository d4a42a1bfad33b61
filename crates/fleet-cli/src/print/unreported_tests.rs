//! Usage a server never reported, as every printer shows it: `null` in JSON (never zeros and
//! never a cost made up), "usage not reported" in text, and the count of the replies that
//! reported nothing when only some did.

#![allow(clippy::unwrap_used)]

use super::fixtures::*;
use super::PrintOptions;
use fleet_protocol::{
    AgentEvent, EventKind, ModelUsage, ResultSubtype, RunResult, TaskStatus, TreeReport, Usage,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const LOCAL: &str = "qwen2.5-coder";
const SERVED: &str = "qwen2.5-coder:7b-instruct-q4_K_M";

/// A run of a local model whose `replies` replies reported nothing, and whose `reported`
/// replies reported `input` tokens in all.
fn local_run(unreported: u64, reported: u64, input: u64) -> RunResult {
    let mut entry = ModelUsage {
        served_model: Some(SERVED.into()),
        context_window: 32_768,
        max_output_tokens: 4_096,
        ..ModelUsage::default()
    };
    let mut usage = Usage::default();
    for _ in 0..unreported {
        entry.add_reply(&Usage::unreported(), 0.0);
    }
    for _ in 0..reported {
        let reply = Usage {
            input_tokens: input / reported,
            output_tokens: 1,
            ..Usage::default()
        };
        entry.add_reply(&reply, 0.0);
        usage += &reply;
    }
    usage.unreported = reported == 0;
    let mut model_usage = BTreeMap::new();
    model_usage.insert(LOCAL.to_string(), entry);
    RunResult {
        total_cost_usd: 0.0,
        usage,
        model_usage,
        ..run_result(ResultSubtype::Success, "DONE")
    }
}

fn result_line(result: RunResult) -> Value {
    let lines = print_stream(
        &[main_event(EventKind::Finished(result))],
        &PrintOptions::default(),
    );
    lines.into_iter().find(|l| l["type"] == "result").unwrap()
}

#[test]
fn a_run_whose_replies_reported_nothing_has_null_usage_and_cost() {
    let line = result_line(local_run(3, 0, 0));
    assert_eq!(line["usage"], Value::Null);
    assert_eq!(line["total_cost_usd"], Value::Null);
    let entry = &line["modelUsage"][LOCAL];
    assert_eq!(entry["inputTokens"], Value::Null);
    assert_eq!(entry["outputTokens"], Value::Null);
    assert_eq!(entry["costUSD"], Value::Null);
    assert_eq!(entry["servedModel"], SERVED);
    assert_eq!(entry["usageUnreportedReplies"], 3);
    assert_eq!(line["usage_unreported_replies"], 3);
}

#[test]
fn a_run_where_some_replies_reported_sums_those_and_counts_the_rest() {
    let line = result_line(local_run(2, 1, 500));
    assert_eq!(line["usage"]["input_tokens"], 500);
    // A local model that reported usage is free, as before.
    assert_eq!(line["total_cost_usd"], json!(0.0));
    assert_eq!(line["modelUsage"][LOCAL]["inputTokens"], 500);
    assert_eq!(line["modelUsage"][LOCAL]["usageUnreportedReplies"], 2);
    assert_eq!(line["usage_unreported_replies"], 2);
}

#[test]
fn a_run_that_reported_everything_has_no_new_keys() {
    let line = result_line(run_result(ResultSubtype::Success, "DONE"));
    assert!(line.get("usage_unreported_replies").is_none());
    let entry = line["modelUsage"][MODEL].as_object().unwrap();
    assert!(!entry.contains_key("usageUnreportedReplies"));
    assert!(!entry.contains_key("servedModel"));
}

#[test]
fn the_trees_cost_is_null_when_no_reply_of_it_reported() {
    let mut tree = TreeReport::default();
    let mut entry = ModelUsage::default();
    entry.add_reply(&Usage::unreported(), 0.0);
    tree.model_usage.insert(LOCAL.into(), entry);
    tree.subagent_stats.spawned = 1;
    let mut result = local_run(1, 0, 0);
    result.tree = Some(tree);
    let line = result_line(result);
    assert_eq!(line["total_cost_usd"], Value::Null);
    assert!(line["usage_by_agent"].is_array());
}

#[test]
fn a_task_notification_of_a_task_that_reported_nothing_has_null_tokens() {
    let mut note = notification(TaskStatus::Completed, "ok");
    note.usage.total_tokens = 0;
    note.usage.unreported_replies = 2;
    let events: [AgentEvent; 1] = [main_event(EventKind::TaskNotified(note))];
    let lines = print_stream(&events, &PrintOptions::default());
    let line = lines
        .iter()
        .find(|l| l["subtype"] == "task_notification")
        .unwrap();
    assert_eq!(line["usage"]["total_tokens"], Value::Null);
    assert_eq!(line["usage"]["usage_unreported_replies"], 2);
    let plain = print_stream(
        &[main_event(EventKind::TaskNotified(notification(
            TaskStatus::Completed,
            "ok",
        )))],
        &PrintOptions::default(),
    );
    let usage = plain[0]["usage"].as_object().unwrap();
    assert_eq!(usage["total_tokens"], 7309);
    assert!(!usage.contains_key("usage_unreported_replies"));
}
