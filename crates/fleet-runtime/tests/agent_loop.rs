//! The agent loop against the fake model server: turns, parallel read-only calls, bad input,
//! unknown tools, limits, API errors and cancellation.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_protocol::{ContentBlock, EventKind, ResultSubtype};
use fleet_testkit::{Rule, Scenario};
use fleet_tools::permissions::PermissionMode;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::{Barrier, Notify};

#[tokio::test]
async fn read_only_calls_of_one_reply_run_together_and_answer_in_order() {
    let server = server(Scenario::queue([
        Rule::tool_use("Rendezvous", json!({"name": "a"}))
            .then_tool_use("Rendezvous", json!({"name": "b"}))
            .then_tool_use("Rendezvous", json!({"name": "c"})),
        Rule::text("all met"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let tool = Arc::new(Rendezvous {
        barrier: Arc::new(Barrier::new(3)),
    });
    let agent = agent(&server, dir.path(), vec![tool], PermissionMode::Default);
    let (events, agent) = run(agent, "go").await;

    let result = result(&events);
    assert_eq!(result.subtype, ResultSubtype::Success, "{}", result.result);
    assert_eq!(result.result, "all met");
    assert_eq!(result.num_turns, 2);
    let contents: Vec<_> = tool_results(&events)
        .into_iter()
        .map(|r| (r.1, r.2))
        .collect();
    assert_eq!(
        contents,
        vec![
            ("met:a".to_string(), false),
            ("met:b".to_string(), false),
            ("met:c".to_string(), false)
        ],
        "each call met the others, so all three ran at once"
    );
    // The second request carried the three results in one user message, in call order.
    let second = &server.requests()[1].body;
    let results = second["messages"][2]["content"].as_array().unwrap();
    let order: Vec<_> = results
        .iter()
        .map(|b| b["content"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["met:a", "met:b", "met:c"]);
    assert_eq!(agent.messages().len(), 4);
}

#[tokio::test]
async fn bad_input_and_unknown_tools_become_error_results_and_the_loop_goes_on() {
    let server = server(Scenario::queue([
        Rule::tool_use("Counter", json!({"times": "three"})).then_tool_use("Teleport", json!({})),
        Rule::tool_use("Counter", json!({"times": 3})),
        Rule::text("counted"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(
        &server,
        dir.path(),
        vec![Arc::new(Counter)],
        PermissionMode::BypassPermissions,
    );
    let (events, _) = run(agent, "count").await;

    let results = tool_results(&events);
    assert_eq!(results.len(), 3);
    assert!(results[0].2, "bad input is an error result");
    assert!(
        results[0].1.contains("InputValidationError"),
        "{}",
        results[0].1
    );
    assert!(
        results[0].1.contains("times"),
        "names the field: {}",
        results[0].1
    );
    assert!(results[1].2);
    assert!(
        results[1].1.contains("No such tool available: Teleport"),
        "{}",
        results[1].1
    );
    assert!(
        results[1].1.contains("Counter"),
        "lists the real tools: {}",
        results[1].1
    );
    assert_eq!(
        results[2],
        (results[2].0.clone(), "counted to 3".into(), false)
    );
    assert_eq!(result(&events).subtype, ResultSubtype::Success);
    assert_eq!(result(&events).num_turns, 3);
}

#[tokio::test]
async fn max_turns_stops_after_answering_the_last_calls() {
    let server = server(Scenario::with_rules([Rule::tool_use(
        "Counter",
        json!({"times": 1}),
    )]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(
        dir.path(),
        vec![Arc::new(Counter)],
        PermissionMode::BypassPermissions,
    );
    config.stop.max_turns = Some(2);
    let agent = agent_with(&server, dir.path(), config);
    let (events, agent) = run(agent, "loop forever").await;
    let result = result(&events);
    assert_eq!(result.subtype, ResultSubtype::ErrorMaxTurns);
    assert!(result.is_error());
    assert_eq!(result.num_turns, 2);
    assert_eq!(server.request_count(), 2);
    // prompt, reply, results, reply, results: nothing left unanswered.
    assert_eq!(agent.messages().len(), 5);
    assert!(matches!(
        agent.messages()[4].blocks()[0],
        ContentBlock::ToolResult { .. }
    ));
}

#[tokio::test]
async fn an_api_error_ends_the_run_with_its_status() {
    let server = server(Scenario::with_rules([Rule::text("x")
        .fault_status(400)
        .fault_message("prompt is too long")]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(&server, dir.path(), vec![], PermissionMode::Default);
    let (events, _) = run(agent, "hi").await;
    let result = result(&events);
    assert_eq!(result.subtype, ResultSubtype::ErrorDuringExecution);
    assert_eq!(result.api_error_status, Some(400));
    assert!(
        result.result.contains("prompt is too long"),
        "{}",
        result.result
    );
}

#[tokio::test]
async fn cancelling_during_a_tool_answers_every_call_and_stops() {
    let server = server(Scenario::queue([
        Rule::tool_use("Hang", json!({})).then_tool_use("Counter", json!({"times": 1}))
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let started = Arc::new(Notify::new());
    let agent = agent(
        &server,
        dir.path(),
        vec![
            Arc::new(Hang {
                started: started.clone(),
            }),
            Arc::new(Counter),
        ],
        PermissionMode::BypassPermissions,
    );
    let mut handle =
        fleet_runtime::Session::spawn_one(agent, fleet_protocol::Message::user_text("hang"));
    started.notified().await;
    handle.cancel.cancel();
    let mut events = Vec::new();
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        handle.events.recv(),
    )
    .await
    {
        events.push(event);
    }
    let agent = handle.task.await.unwrap();
    let results = tool_results(&events);
    assert_eq!(results.len(), 2, "every call is answered");
    assert!(results.iter().all(|r| r.2), "both are errors: {results:?}");
    assert!(results[0].1.contains("cancelled"), "{}", results[0].1);
    assert_eq!(result(&events).subtype, ResultSubtype::ErrorDuringExecution);
    let last = agent.messages().last().unwrap();
    assert_eq!(last.blocks().len(), 2, "the conversation stays valid");
}

#[tokio::test]
async fn default_mode_refuses_changing_tools_without_a_prompt_and_reports_it() {
    let server = server(Scenario::queue([
        Rule::tool_use("Counter", json!({"times": 2})),
        Rule::text("could not count"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(
        &server,
        dir.path(),
        vec![Arc::new(Counter)],
        PermissionMode::Default,
    );
    let (events, _) = run(agent, "count").await;
    let results = tool_results(&events);
    assert!(results[0].2);
    assert!(results[0].1.contains("needs approval"), "{}", results[0].1);
    let result = result(&events);
    assert_eq!(result.subtype, ResultSubtype::Success);
    assert_eq!(result.permission_denials.len(), 1);
    assert_eq!(result.permission_denials[0].tool_name, "Counter");
    assert_eq!(result.permission_denials[0].tool_input, json!({"times": 2}));
}

#[tokio::test]
async fn events_come_in_stream_order_with_usage_and_cost() {
    let server = server(Scenario::queue([
        Rule::text("thinking about it").then_tool_use("Counter", json!({"times": 1})),
        Rule::text("done"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(
        &server,
        dir.path(),
        vec![Arc::new(Counter)],
        PermissionMode::BypassPermissions,
    );
    let (events, _) = run(agent, "go").await;
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Started(_) => Some("started"),
            EventKind::AssistantBlock { block, .. } => Some(block.type_name()),
            EventKind::ToolResult(_) => Some("result"),
            EventKind::MessageCommitted(c) => Some(if c.reply.is_some() {
                "commit-reply"
            } else {
                "commit"
            }),
            EventKind::Finished(_) => Some("finished"),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "started",
            "commit",
            "text",
            "tool_use",
            "commit-reply",
            "result",
            "commit",
            "text",
            "commit-reply",
            "finished"
        ]
    );
    assert!(events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::TextDelta(_))));
    let result = result(&events);
    assert!(result.usage.total_input() > 0, "{:?}", result.usage);
    assert!(result.total_cost_usd > 0.0);
    assert!(result.model_usage.contains_key("claude-sonnet-4-5"));
}

/// Approves only `Counter` calls that count to 1, and remembers what it was asked.
struct OnlyOnes {
    asked: std::sync::Mutex<Vec<serde_json::Value>>,
}

impl fleet_runtime::Approver for OnlyOnes {
    fn approve<'a>(
        &'a self,
        request: fleet_runtime::ApprovalRequest<'a>,
    ) -> fleet_runtime::approval::ApprovalFuture<'a> {
        self.asked.lock().unwrap().push(request.input.clone());
        let yes = request.tool == "Counter" && request.input["times"] == 1;
        Box::pin(async move { yes.into() })
    }
}

#[tokio::test]
async fn ask_decisions_go_to_the_approver_when_there_is_one() {
    let server = server(Scenario::queue([
        Rule::tool_use("Counter", json!({"times": 1}))
            .then_tool_use("Counter", json!({"times": 2})),
        Rule::text("done"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let approver = Arc::new(OnlyOnes {
        asked: Default::default(),
    });
    let mut config = config(dir.path(), vec![Arc::new(Counter)], PermissionMode::Default);
    config.tools.approver = Some(approver.clone());
    let agent = agent_with(&server, dir.path(), config);
    let (events, _) = run(agent, "count").await;

    let results = tool_results(&events);
    assert_eq!(results[0].1, "counted to 1");
    assert!(!results[0].2);
    assert!(results[1].2);
    assert!(results[1].1.contains("refused"), "{}", results[1].1);
    assert_eq!(
        *approver.asked.lock().unwrap(),
        vec![json!({"times": 1}), json!({"times": 2})]
    );
    let denials = &result(&events).permission_denials;
    assert_eq!(denials.len(), 1);
    assert_eq!(denials[0].tool_input, json!({"times": 2}));
}

/// What the stream says around approvals, for the SDKs: the session runs, each asked call
/// waits and stops waiting, a refused one is reported as denied just before its result, and
/// the session goes idle after the run's end.
#[tokio::test]
async fn approvals_and_refusals_are_events_and_the_session_frames_its_run() {
    use fleet_protocol::SessionState;
    let server = server(Scenario::queue([
        Rule::tool_use("Counter", json!({"times": 1}))
            .then_tool_use("Counter", json!({"times": 2})),
        Rule::text("done"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), vec![Arc::new(Counter)], PermissionMode::Default);
    config.tools.approver = Some(Arc::new(OnlyOnes {
        asked: Default::default(),
    }));
    let agent = agent_with(&server, dir.path(), config);
    let (events, _) = run(agent, "count").await;
    let seen: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SessionState(SessionState::Running) => Some("running".into()),
            EventKind::SessionState(SessionState::Idle) => Some("idle".into()),
            EventKind::Approval {
                waiting, tool_name, ..
            } => Some(format!("{tool_name} waiting={waiting}")),
            EventKind::PermissionDenied(d) => {
                assert!(d.message.contains("refused"), "{}", d.message);
                assert_eq!(d.reason_type, fleet_protocol::PermissionReasonType::User);
                Some(format!("denied {}", d.tool_name))
            }
            EventKind::ToolResult(r) => Some(format!("result error={}", r.is_error)),
            EventKind::Finished(_) => Some("finished".into()),
            _ => None,
        })
        .collect();
    assert_eq!(
        seen,
        [
            "running",
            "Counter waiting=true",
            "Counter waiting=false",
            "result error=false",
            "Counter waiting=true",
            "Counter waiting=false",
            "denied Counter",
            "result error=true",
            "finished",
            "idle"
        ]
    );
}

#[tokio::test]
async fn a_reply_that_breaks_off_or_brings_bad_tool_json_is_asked_for_again() {
    let server = server(Scenario::queue([
        Rule::text("a long answer that will be cut").drop_after_events(4),
        Rule::tool_use("Counter", json!({"times": 1})).malformed_tool_json(),
        Rule::tool_use("Counter", json!({"times": 1})),
        Rule::text("counted"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(
        &server,
        dir.path(),
        vec![Arc::new(Counter)],
        PermissionMode::BypassPermissions,
    );
    let (events, agent) = run(agent, "count").await;
    let result = result(&events);
    assert_eq!(result.subtype, ResultSubtype::Success, "{}", result.result);
    assert_eq!(result.result, "counted");
    let retries: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Retry {
                attempt, reason, ..
            } => Some((*attempt, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert!(
        retries[1].1.contains("Counter"),
        "names the bad call: {retries:?}"
    );
    assert_eq!(server.request_count(), 4);
    // Nothing of the broken replies reached the conversation.
    assert_eq!(agent.messages().len(), 4);
}

#[tokio::test]
async fn a_reply_that_keeps_breaking_ends_the_run_with_the_error() {
    let server = server(Scenario::with_rules([
        Rule::text("cut again and again").drop_after_events(4)
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(&server, dir.path(), vec![], PermissionMode::Default);
    let (events, agent) = run(agent, "hi").await;
    let result = result(&events);
    assert_eq!(result.subtype, ResultSubtype::ErrorDuringExecution);
    assert!(result.result.contains("API error"), "{}", result.result);
    assert_eq!(server.request_count(), 3, "three tries, then the error");
    assert_eq!(agent.messages().len(), 1, "only the prompt");
}

/// A tool whose permission inputs cannot be worked out: `access` panics, before the tool's own
/// (guarded) run, as the `watch --interval` slice once did inside the Bash check.
struct PanicsInCheck;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PanicsInCheckInput {}

impl fleet_tools::TypedTool for PanicsInCheck {
    type Input = PanicsInCheckInput;
    const NAME: &'static str = "PanicsInCheck";
    const READ_ONLY: bool = false;

    fn description(&self) -> String {
        "Panics while its call is checked.".into()
    }

    fn access(
        &self,
        _input: &PanicsInCheckInput,
        _ctx: &fleet_tools::ToolContext,
    ) -> fleet_tools::Access {
        panic!("a bug in the permission check")
    }

    async fn run(
        &self,
        _input: PanicsInCheckInput,
        _ctx: &fleet_tools::ToolContext,
    ) -> Result<fleet_tools::ToolOutput, fleet_tools::ToolError> {
        Ok(fleet_tools::ToolOutput::text("ran"))
    }
}

#[tokio::test]
async fn a_panic_while_a_call_is_checked_is_an_error_result_and_the_run_goes_on() {
    let server = server(Scenario::queue([
        Rule::tool_use("PanicsInCheck", json!({})),
        Rule::text("carried on"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(
        &server,
        dir.path(),
        vec![Arc::new(PanicsInCheck)],
        PermissionMode::BypassPermissions,
    );
    let (events, _) = run(agent, "go").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "the call got exactly one answer");
    assert!(results[0].2, "{results:?}");
    assert!(results[0].1.contains("internal error"), "{}", results[0].1);
    let result = result(&events);
    assert_eq!(result.subtype, ResultSubtype::Success);
    assert_eq!(result.result, "carried on");
}
