#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

fn can_use_tool(id: &str, tool: &str, input: Value) -> Value {
    json!({"type": "control_request", "request_id": id, "request": {
        "subtype": "can_use_tool", "tool_name": tool, "input": input}})
}

fn result(text: &str, is_error: bool) -> Value {
    json!({"type": "result", "subtype": "success", "is_error": is_error, "result": text,
           "duration_ms": 1234, "total_cost_usd": 0.25,
           "usage": {"input_tokens": 100, "output_tokens": 20,
                     "cache_creation_input_tokens": 3, "cache_read_input_tokens": 7}})
}

/// The `behavior` and `message` of the answer written for request `id`.
fn answer(steps: &[Step], id: &str) -> (String, Option<String>, Value) {
    for step in steps {
        if let Step::Write(line) = step {
            let line = line.to_value();
            let response = &line["response"];
            if response["request_id"] == id {
                let body = &response["response"];
                return (
                    body["behavior"].as_str().unwrap().to_string(),
                    body["message"].as_str().map(str::to_string),
                    body["updatedPermissions"].clone(),
                );
            }
        }
    }
    panic!("no answer to {id} in {steps:?}");
}

fn ending(steps: &[Step]) -> Ending {
    steps
        .iter()
        .find_map(|s| match s {
            Step::End(e) => Some(e.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no ending in {steps:?}"))
}

#[test]
fn the_opening_is_initialize_then_the_prompt() {
    let lines: Vec<Value> = Driver::opening("fix the bug")
        .iter()
        .map(StdinLine::to_value)
        .collect();
    // The bytes the worker has always written.
    assert_eq!(
        Driver::opening("x")[0].to_json(),
        r#"{"type":"control_request","request_id":"fleet_worker_init","request":{"subtype":"initialize"}}"#
    );
    assert_eq!(
        Driver::opening("x")[1].to_json(),
        r#"{"type":"user","message":{"role":"user","content":"x"}}"#
    );
    assert_eq!(lines[0]["type"], "control_request");
    assert_eq!(lines[0]["request"]["subtype"], "initialize");
    assert_eq!(lines[1]["type"], "user");
    assert_eq!(lines[1]["message"]["content"], "fix the bug");
}

#[test]
fn an_agent_job_ends_at_its_first_result_with_the_text_and_usage() {
    let mut driver = Driver::new(JobKind::Agent);
    let assistant = json!({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "looking"},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "Grep", "input": {}}]}});
    assert!(driver.on_line(&assistant).is_empty());
    let steps = driver.on_line(&result("all fixed", false));
    assert_eq!(steps[0], Step::CloseStdin);
    let end = ending(&steps);
    assert_eq!(end.state, TaskState::Completed);
    assert_eq!(end.result.as_deref(), Some("all fixed"));
    assert!(end.branch);
    assert_eq!(driver.usage.tool_uses, 2);
    assert_eq!(driver.usage.total_tokens, 130);
    assert_eq!(driver.usage.duration_ms, 1234);
    assert_eq!(driver.usage.cost_usd, Some(0.25));
    assert!(driver.done());
    // Later lines (a second result) change nothing.
    assert!(driver.on_line(&result("again", false)).is_empty());
}

#[test]
fn an_error_result_fails_the_job_and_a_missing_cost_stays_unknown() {
    let mut driver = Driver::new(JobKind::Agent);
    let mut line = result("API error", true);
    line.as_object_mut().unwrap().remove("total_cost_usd");
    let end = ending(&driver.on_line(&line));
    assert_eq!(end.state, TaskState::Failed);
    assert_eq!(driver.usage.cost_usd, None);
}

#[test]
fn a_subagents_result_does_not_end_the_job() {
    let mut driver = Driver::new(JobKind::Agent);
    let mut line = result("sub done", false);
    line["parent_tool_use_id"] = json!("toolu_1");
    assert!(driver.on_line(&line).is_empty());
    assert!(!driver.done());
}

#[test]
fn an_agent_jobs_questions_are_denied_saying_no_one_can_answer() {
    let mut driver = Driver::new(JobKind::Agent);
    let steps = driver.on_line(&can_use_tool("q1", "Bash", json!({"command": "rm -rf x"})));
    let (behavior, message, _) = answer(&steps, "q1");
    assert_eq!(behavior, "deny");
    assert!(message
        .unwrap()
        .contains("No one can answer permission questions on a remote worker"));
}

#[test]
fn stop_kills_an_agent_job_and_records_it_killed() {
    let mut driver = Driver::new(JobKind::Agent);
    let steps = driver.on_control(Control::Stop);
    assert_eq!(steps[0], Step::Kill);
    let end = ending(&steps);
    assert_eq!(end.state, TaskState::Killed);
    assert!(!end.branch);
}

#[test]
fn a_process_that_dies_without_a_result_fails_with_its_stderr() {
    let mut driver = Driver::new(JobKind::Agent);
    let tail = vec!["Error: no API key".to_string()];
    let end = ending(&driver.on_exit("exit status: 1", &tail));
    assert_eq!(end.state, TaskState::Failed);
    let text = end.result.unwrap();
    assert!(
        text.contains("ended without a result (exit status: 1)"),
        "{text}"
    );
    assert!(text.contains("Error: no API key"), "{text}");
}

#[test]
fn ultraplan_reject_then_approve_then_execute_to_completion() {
    let mut driver = Driver::new(JobKind::Ultraplan);
    // Questions before a plan are refused.
    let steps = driver.on_line(&can_use_tool("q0", "Bash", json!({"command": "ls"})));
    assert_eq!(answer(&steps, "q0").0, "deny");

    let steps = driver.on_line(&can_use_tool(
        "p1",
        "ExitPlanMode",
        json!({"plan": "Plan A"}),
    ));
    assert_eq!(steps, vec![Step::PlanReady("Plan A".into())]);
    // A decision not meant for now (a reply) is ignored while the plan waits.
    assert!(driver
        .on_control(Control::Reply { text: "hi".into() })
        .is_empty());

    let steps = driver.on_control(Control::Reject {
        feedback: "use fewer files".into(),
    });
    let (behavior, message, _) = answer(&steps, "p1");
    assert_eq!(behavior, "deny");
    assert_eq!(message.as_deref(), Some("use fewer files"));
    assert!(steps.contains(&Step::State(TaskState::Running)));

    let steps = driver.on_line(&can_use_tool(
        "p2",
        "ExitPlanMode",
        json!({"plan": "Plan B"}),
    ));
    assert_eq!(steps, vec![Step::PlanReady("Plan B".into())]);
    let steps = driver.on_control(Control::Approve);
    let (behavior, _, updates) = answer(&steps, "p2");
    assert_eq!(behavior, "allow");
    assert_eq!(
        updates,
        json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])
    );
    assert!(steps.contains(&Step::State(TaskState::Executing)));

    // Executing on a worker whose maximum is acceptEdits (the default): a question that
    // reaches the worker is still denied, the approval widened the mode to acceptEdits only.
    let steps = driver.on_line(&can_use_tool("b1", "Bash", json!({"command": "curl x"})));
    assert_eq!(answer(&steps, "b1").1.as_deref(), Some(NO_ONE_TO_ASK));
    let end = ending(&driver.on_line(&result("done", false)));
    assert_eq!(end.state, TaskState::Completed);
    assert!(end.branch);
}

#[test]
fn an_approval_allows_everything_only_on_a_worker_whose_maximum_is_bypass() {
    let approve = |max: PermissionMode| {
        let mut driver = Driver::new(JobKind::Ultraplan).with_max_mode(max);
        driver.on_line(&can_use_tool("p1", "ExitPlanMode", json!({"plan": "P"})));
        let steps = driver.on_control(Control::Approve);
        let mode = answer(&steps, "p1").2[0]["mode"].clone();
        let steps = driver.on_line(&can_use_tool("w1", "Bash", json!({"command": "x"})));
        (mode, answer(&steps, "w1").0)
    };
    assert_eq!(
        approve(PermissionMode::BypassPermissions),
        (json!("acceptEdits"), "allow".to_string())
    );
    assert_eq!(
        approve(PermissionMode::AcceptEdits),
        (json!("acceptEdits"), "deny".to_string())
    );
    assert_eq!(
        approve(PermissionMode::Default),
        (json!("default"), "deny".to_string())
    );
}

#[test]
fn ultraplan_teleport_hands_the_plan_back_and_archives() {
    let mut driver = Driver::new(JobKind::Ultraplan);
    driver.on_line(&can_use_tool(
        "p1",
        "ExitPlanMode",
        json!({"plan": "The plan"}),
    ));
    let steps = driver.on_control(Control::Teleport);
    let (behavior, message, _) = answer(&steps, "p1");
    assert_eq!(behavior, "deny");
    assert!(message.unwrap().contains("taken to the person's terminal"));
    assert!(steps.contains(&Step::Kill));
    let end = ending(&steps);
    assert_eq!(end.state, TaskState::Archived);
    assert_eq!(end.result.as_deref(), Some("The plan"));
}

#[test]
fn ultraplan_idle_after_a_result_without_a_plan_then_a_reply_goes_on() {
    let mut driver = Driver::new(JobKind::Ultraplan);
    // An approval replayed from an earlier delivery, before any plan, is ignored.
    assert!(driver.on_control(Control::Approve).is_empty());
    let steps = driver.on_line(&result("Which module?", false));
    assert_eq!(steps, vec![Step::State(TaskState::Idle)]);
    let steps = driver.on_control(Control::Reply {
        text: "the parser".into(),
    });
    assert_eq!(
        steps[0],
        Step::Write(StdinLine::Prompt("the parser".into()))
    );
    assert_eq!(steps[1], Step::State(TaskState::Running));
    // Stop puts the session away.
    let end = ending(&driver.on_control(Control::Stop));
    assert_eq!(end.state, TaskState::Archived);
}

#[test]
fn the_processs_other_requests_are_refused_by_an_error_answer_and_the_job_goes_on() {
    let mut driver = Driver::new(JobKind::Agent);
    let error_to = |steps: &[Step], id: &str| {
        let [Step::Write(line)] = steps else {
            panic!("{steps:?}")
        };
        let line = line.to_value();
        assert_eq!(line["response"]["subtype"], "error", "{line}");
        assert_eq!(line["response"]["request_id"], id, "{line}");
        line["response"]["error"].as_str().unwrap().to_string()
    };
    let hook = json!({"type": "control_request", "request_id": "h1", "request": {
        "subtype": "hook_callback", "callback_id": "hook_0", "input": {}}});
    let text = error_to(&driver.on_line(&hook), "h1");
    assert!(text.contains("only can_use_tool"), "{text}");
    let unknown = json!({"type": "control_request", "request_id": "u1",
                         "request": {"subtype": "elicitation"}});
    error_to(&driver.on_line(&unknown), "u1");
    let shapeless = json!({"type": "control_request", "request_id": "s1", "request": {}});
    let text = error_to(&driver.on_line(&shapeless), "s1");
    assert!(text.contains("subtype"), "{text}");
    // The answer to the worker's own `initialize` asks nothing.
    let init_answer = json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": "fleet_worker_init", "response": {}}});
    assert!(driver.on_line(&init_answer).is_empty());
    assert!(!driver.done());
    let end = ending(&driver.on_line(&result("done", false)));
    assert_eq!(end.state, TaskState::Completed);
}
