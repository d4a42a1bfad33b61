//! Steering a running session through its `SessionControls`, against the fake model server:
//! interrupting a turn, switching the model, changing the permission mode and rules, reading
//! the context usage.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_protocol::{AgentEvent, EventKind, Message, ResultSubtype, RunResult};
use fleet_runtime::controls::{ControlError, ControlOptions, SessionControls};
use fleet_runtime::{Session, SessionHandle};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use fleet_tools::permissions::PermissionMode;
use fleet_tools::ToolPool;
use serde_json::json;
use std::path::Path;
use tokio::sync::mpsc;

/// A session whose prompts the test sends one at a time, with its controls.
struct Live {
    handle: SessionHandle,
    prompts: mpsc::Sender<Message>,
    controls: SessionControls,
    server: FakeModelServer,
}

async fn live(scenario: Scenario, dir: &Path, mode: PermissionMode) -> Live {
    let server = server(scenario).await;
    let controls = SessionControls::new(ControlOptions {
        project_dir: Some(dir.to_path_buf()),
        ..ControlOptions::default()
    });
    let mut config = fleet_runtime::AgentConfig::new(
        "claude-sonnet-4-5",
        ToolPool::builtin(),
        permissions(dir, mode),
    );
    config.controls = Some(controls.clone());
    let agent = agent_with(&server, dir, config);
    let (prompts, rx) = mpsc::channel(4);
    Live {
        handle: Session::spawn(agent, rx),
        prompts,
        controls,
        server,
    }
}

impl Live {
    /// Sends `prompt` and returns the run's result and every event up to it.
    async fn ask(&mut self, prompt: &str) -> (RunResult, Vec<AgentEvent>) {
        self.prompts.send(Message::user_text(prompt)).await.unwrap();
        self.until_finished().await
    }

    async fn until_finished(&mut self) -> (RunResult, Vec<AgentEvent>) {
        let mut events = Vec::new();
        while let Some(event) = fleet_testkit::within(
            fleet_testkit::WAIT,
            "the session's next event",
            self.handle.recv(),
        )
        .await
        {
            if let EventKind::Finished(result) = &event.kind {
                let result = result.clone();
                events.push(event);
                return (result, events);
            }
            events.push(event);
        }
        panic!("the session ended before the run finished: {events:?}");
    }

    fn models_sent(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

/// Whether process `pid` is gone (or a zombie nobody has reaped yet, which runs nothing).
fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

async fn wait_for_file(path: &Path) -> String {
    let what = format!("a whole line in {}", path.display());
    fleet_testkit::wait_for_async(fleet_testkit::WAIT, &what, || {
        std::fs::read_to_string(path)
            .ok()
            .filter(|text| text.ends_with('\n'))
    })
    .await
}

#[tokio::test]
async fn an_interrupt_kills_the_running_bash_and_the_session_answers_the_next_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = Scenario::with_rules([
        Rule::text("SECOND-ANSWER").when_last_user_contains("SECOND"),
        Rule::tool_use(
            "Bash",
            json!({"command": "sleep 30 & echo $! > sleep.pid; wait", "description": "sleep"}),
        )
        .when_last_user_contains("FIRST"),
    ]);
    let mut live = live(scenario, dir.path(), PermissionMode::BypassPermissions).await;
    assert!(!live.controls.interrupt(), "nothing runs yet");

    live.prompts
        .send(Message::user_text("FIRST"))
        .await
        .unwrap();
    let pid: i32 = wait_for_file(&dir.path().join("sleep.pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    assert!(!process_gone(pid), "the sleep runs");
    assert!(live.controls.is_running());
    assert!(live.controls.interrupt());

    let (result, events) = live.until_finished().await;
    assert_eq!(result.subtype, ResultSubtype::ErrorDuringExecution);
    assert!(result.is_error());
    let bash = tool_results(&events);
    assert_eq!(bash.len(), 1, "{bash:?}");
    assert!(bash[0].2, "the cancelled call's result is an error");
    // The turn's tools die with it; the process group goes at once, reaping may lag.
    fleet_testkit::wait_until_async(fleet_testkit::WAIT, "the interrupted sleep to die", || {
        process_gone(pid)
    })
    .await;
    assert!(!live.controls.interrupt(), "the turn is over");

    let (second, _) = live.ask("SECOND").await;
    assert_eq!(second.subtype, ResultSubtype::Success, "{second:?}");
    assert_eq!(second.result, "SECOND-ANSWER");
    // The history went with it: the call, its error result, then the new prompt.
    let last = live.server.last_request().unwrap();
    let messages = last.body["messages"].as_array().unwrap();
    let text = serde_json::to_string(messages).unwrap();
    assert!(
        text.contains("FIRST") && text.contains("sleep 30"),
        "{text}"
    );
    assert!(text.contains("\"is_error\":true"), "{text}");
    assert!(messages.last().unwrap().to_string().contains("SECOND"));
}

#[tokio::test]
async fn set_model_changes_the_model_of_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let mut live = live(
        Scenario::with_rules([Rule::text("OK")]),
        dir.path(),
        PermissionMode::Default,
    )
    .await;
    live.ask("one").await;
    let haiku = live.controls.set_model(Some("haiku")).unwrap();
    assert!(haiku.starts_with("claude-haiku"), "{haiku}");
    assert_eq!(live.controls.model().as_deref(), Some(haiku.as_str()));
    live.ask("two").await;
    assert_eq!(live.controls.set_model(None).unwrap(), "claude-sonnet-4-5");
    live.ask("three").await;
    assert_eq!(
        live.models_sent(),
        ["claude-sonnet-4-5", haiku.as_str(), "claude-sonnet-4-5"]
    );
    assert!(matches!(
        live.controls.set_model(Some(" ")),
        Err(ControlError::EmptyModel)
    ));
}

fn write_scenario(dir: &Path) -> Scenario {
    let file = dir.join("out.txt");
    Scenario::with_rules([
        Rule::text("WROTE").when_tool_result(true),
        Rule::tool_use("Write", json!({"file_path": file, "content": "hello\n"})),
    ])
}

#[tokio::test]
async fn accept_edits_set_while_running_lets_a_refused_write_through() {
    let dir = tempfile::tempdir().unwrap();
    let mut live = live(
        write_scenario(dir.path()),
        dir.path(),
        PermissionMode::Default,
    )
    .await;
    let (refused, _) = live.ask("write it").await;
    assert_eq!(refused.permission_denials.len(), 1, "{refused:?}");
    assert!(!dir.path().join("out.txt").exists());

    assert!(matches!(
        live.controls
            .set_permission_mode(PermissionMode::BypassPermissions),
        Err(ControlError::BypassNotAllowed)
    ));
    live.controls
        .set_permission_mode(PermissionMode::AcceptEdits)
        .unwrap();
    assert_eq!(
        live.controls.permission_mode(),
        Some(PermissionMode::AcceptEdits)
    );
    let (allowed, _) = live.ask("write it again").await;
    assert!(allowed.permission_denials.is_empty(), "{allowed:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "hello\n"
    );
}

#[tokio::test]
async fn a_session_allow_rule_lets_a_write_through_and_a_local_one_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let mut live = live(
        write_scenario(dir.path()),
        dir.path(),
        PermissionMode::Default,
    )
    .await;
    let (refused, _) = live.ask("write it").await;
    assert_eq!(refused.permission_denials.len(), 1);

    // One bad update in the list: nothing applies.
    let bad = live.controls.apply_permission_update_values(&[
        json!({"type": "addRules", "rules": [{"toolName": "Write"}], "behavior": "allow"}),
        json!({"type": "setMode", "mode": "sideways"}),
    ]);
    assert!(
        matches!(bad, Err(ControlError::InvalidUpdate(_))),
        "{bad:?}"
    );
    let (still, _) = live.ask("write it").await;
    assert_eq!(still.permission_denials.len(), 1);

    live.controls
        .apply_permission_update_values(&[json!({
            "type": "addRules",
            "rules": [{"toolName": "Write", "ruleContent": "/out.txt"}],
            "behavior": "allow",
            "destination": "session"
        })])
        .unwrap();
    let (allowed, _) = live.ask("write it").await;
    assert!(allowed.permission_denials.is_empty(), "{allowed:?}");
    assert!(dir.path().join("out.txt").exists());
    assert!(
        !dir.path().join(".claude").exists(),
        "session rules stay in memory"
    );

    live.controls
        .apply_permission_update_values(&[json!({
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
            "behavior": "allow",
            "destination": "localSettings"
        })])
        .unwrap();
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["permissions"]["allow"], json!(["Bash(npm test)"]));
}

#[tokio::test]
async fn context_usage_grows_after_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = Scenario::with_rules([Rule::text("A reply.").input_tokens(40_000)]);
    let mut live = live(scenario, dir.path(), PermissionMode::Default).await;
    let before = live.controls.context_usage().unwrap();
    assert!(before.api_usage.is_none());
    assert_eq!(before.model, "claude-sonnet-4-5");
    let tools = before
        .categories
        .iter()
        .find(|c| c.id == "system_tools")
        .unwrap();
    assert!(tools.tokens > 0, "{before:?}");

    live.ask("hello there").await;
    let after = live.controls.context_usage().unwrap();
    assert_eq!(after.api_usage.as_ref().unwrap().input_tokens, 40_000);
    assert!(
        after.total_tokens > before.total_tokens + 30_000,
        "{after:?}"
    );
    assert!(after.percentage > before.percentage);
    let rows: u64 = after.categories.iter().map(|c| c.tokens).sum();
    assert_eq!(rows, after.max_tokens);
    assert!(after.message_breakdown.user_message_tokens > 0);
}

/// Answers yes, and like an SDK `can_use_tool` answer with `updatedPermissions`, grants an
/// allow rule for the tool it was asked about.
struct GrantingApprover {
    controls: SessionControls,
    asked: std::sync::atomic::AtomicUsize,
}

impl fleet_runtime::Approver for GrantingApprover {
    fn approve<'a>(
        &'a self,
        request: fleet_runtime::ApprovalRequest<'a>,
    ) -> fleet_runtime::approval::ApprovalFuture<'a> {
        self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let granted = self.controls.apply_permission_update_values(&[json!({
            "type": "addRules",
            "rules": [{"toolName": request.tool}],
            "behavior": "allow",
            "destination": "session"
        })]);
        Box::pin(async move { granted.is_ok().into() })
    }
}

#[tokio::test]
async fn a_rule_granted_while_answering_covers_the_next_call_of_the_same_reply() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    let server = server(Scenario::with_rules([
        Rule::text("DONE").when_tool_result(true),
        Rule::tool_use("Write", json!({"file_path": a, "content": "a\n"}))
            .then_tool_use("Write", json!({"file_path": b, "content": "b\n"})),
    ]))
    .await;
    let controls = SessionControls::new(ControlOptions::default());
    let approver = std::sync::Arc::new(GrantingApprover {
        controls: controls.clone(),
        asked: Default::default(),
    });
    let mut config = config(dir.path(), Vec::new(), PermissionMode::Default);
    config.tools.pool = ToolPool::builtin();
    config.tools.approver = Some(approver.clone());
    config.controls = Some(controls);
    let (events, _) = run(agent_with(&server, dir.path(), config), "write both").await;
    assert_eq!(result(&events).result, "DONE");
    assert!(a.exists() && b.exists());
    assert_eq!(
        approver.asked.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the second Write ran on the granted rule"
    );
}
