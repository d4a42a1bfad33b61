//! The hub fed the events a live session emits (`attach_live`): nodes take the states the
//! events say, batches stay few however many agents change. Waits are bounded; nothing
//! asserts on time alone.

use crate::hub_common;

use std::path::Path;

use fleet_dashboard::api::{AgentKind, AgentState};
use fleet_dashboard::Hub;
use fleet_protocol::{
    AgentEvent, AgentRef, CommittedMessage, ContentBlock, EventKind, Message, ReplyMeta,
    ResultSubtype, Role, RunResult, TaskStarted, TaskStatus, Usage,
};
use hub_common::{agent, batch_where, WAIT};
use serde_json::json;

fn ev(agent: &AgentRef, kind: EventKind) -> AgentEvent {
    AgentEvent {
        agent: agent.clone(),
        kind,
    }
}

fn finished(subtype: ResultSubtype) -> EventKind {
    EventKind::Finished(RunResult {
        subtype,
        result: "over".into(),
        num_turns: 1,
        duration_ms: 1,
        duration_api_ms: 1,
        total_cost_usd: 0.0,
        usage: Usage::of(1, 1),
        model_usage: Default::default(),
        permission_denials: Vec::new(),
        stop_reason: None,
        api_error_status: None,
        session_id: "s1".into(),
        origin: None,
        tree: None,
        terminal_reason: None,
        structured_output: None,
    })
}

fn block(block: ContentBlock) -> EventKind {
    EventKind::AssistantBlock {
        message_id: "msg".into(),
        model: "claude-sonnet-4-5".into(),
        block,
        usage: Usage::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_events_give_nodes_their_states() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = Hub::open(dir.path().join("home")).expect("open");
    let feed = hub.attach_live("s1", Path::new("/work/app"), Some("claude-sonnet-4-5"));
    let mut rx = hub.subscribe("s1").expect("subscribe");
    let main = AgentRef::main();
    feed.push(&ev(
        &main,
        block(ContentBlock::tool_use(
            "tu1",
            "Agent",
            json!({"description": "scan", "subagent_type": "Explore", "prompt": "p"}),
        )),
    ));
    let child = AgentRef::subagent("a1", "tu1", "Explore", "scan");
    feed.push(&ev(
        &child,
        block(ContentBlock::tool_use(
            "tu9",
            "Bash",
            json!({"command": "ls"}),
        )),
    ));
    let batch = batch_where(&mut rx, |b| agent(b, "a1").is_some()).await;
    let node = agent(&batch, "a1").expect("a1");
    assert_eq!(node.parent_id.as_deref(), Some("main"));
    assert_eq!(node.state, AgentState::RunningTool);
    assert_eq!(node.tool.as_deref(), Some("Bash"));
    assert_eq!(node.agent_type, "Explore");

    feed.push(&ev(
        &child,
        EventKind::Approval {
            tool_use_id: "tu9".into(),
            tool_name: "Bash".into(),
            waiting: true,
        },
    ));
    batch_where(&mut rx, |b| {
        agent(b, "a1").is_some_and(|n| n.state == AgentState::WaitingForApproval)
    })
    .await;
    feed.push(&ev(
        &child,
        EventKind::MessageCommitted(CommittedMessage {
            message: Message::with_blocks(Role::Assistant, vec![ContentBlock::text("done")]),
            reply: Some(ReplyMeta {
                id: "m1".into(),
                model: "claude-sonnet-4-5".into(),
                usage: Usage::of(1000, 100),
                stop_reason: None,
            }),
            tool_results: Vec::new(),
            mail_ids: Vec::new(),
        }),
    ));
    feed.push(&ev(&child, finished(ResultSubtype::Success)));
    let batch = batch_where(&mut rx, |b| {
        agent(b, "a1").is_some_and(|n| n.state == AgentState::Done)
    })
    .await;
    let node = agent(&batch, "a1").expect("a1");
    assert_eq!(
        (node.input_tokens, node.output_tokens, node.turns),
        (1000, 100, 1)
    );
    assert!(node.cost_usd > 0.0);

    // A background agent: stoppable by its task id, then killed.
    feed.push(&ev(
        &main,
        EventKind::TaskStarted(TaskStarted {
            task_id: "a2".into(),
            tool_use_id: "tu2".into(),
            description: "watch the logs".into(),
            subagent_type: "general-purpose".into(),
            prompt: "p".into(),
            model: "m".into(),
            is_backgrounded: true,
            spawn_depth: 1,
            task_type: "local_agent".into(),
            output_file: String::new(),
        }),
    ));
    let batch = batch_where(&mut rx, |b| agent(b, "a2").is_some()).await;
    let node = agent(&batch, "a2").expect("a2");
    assert_eq!(node.kind, AgentKind::Background);
    assert_eq!(node.task_id.as_deref(), Some("a2"));
    feed.push(&ev(
        &main,
        EventKind::TaskUpdated {
            task_id: "a2".into(),
            status: TaskStatus::Killed,
            end_time_ms: None,
        },
    ));
    batch_where(&mut rx, |b| {
        agent(b, "a2").is_some_and(|n| n.state == AgentState::Killed)
    })
    .await;

    // A teammate, then the main agent failing.
    feed.push(&ev(
        &main,
        EventKind::Team(fleet_protocol::TeamEvent::TeammateSpawned {
            team: "crew".into(),
            name: "alpha".into(),
            agent_id: "alpha@crew".into(),
            agent_type: "general-purpose".into(),
            model: "m".into(),
            color: "blue".into(),
            resumed: false,
        }),
    ));
    feed.push(&ev(&main, finished(ResultSubtype::ErrorDuringExecution)));
    let batch = batch_where(&mut rx, |b| {
        agent(b, "main").is_some_and(|n| n.state == AgentState::Failed)
    })
    .await;
    assert!(batch.teams.iter().any(|t| t.name == "crew"));
    let snapshot = hub.snapshot("s1").expect("snapshot");
    let mate = snapshot
        .agents
        .iter()
        .find(|a| a.id == "alpha@crew")
        .expect("teammate");
    assert_eq!(mate.kind, AgentKind::Teammate);
    assert_eq!(mate.team_member.as_deref(), Some("alpha@crew"));
    assert!(snapshot.actions.stop_task);
    assert_eq!(
        snapshot.session.state,
        fleet_dashboard::api::SessionState::Live
    );

    feed.ended();
    let batch = batch_where(&mut rx, |b| {
        b.session
            .as_ref()
            .is_some_and(|s| s.state == fleet_dashboard::api::SessionState::Ended)
    })
    .await;
    assert_eq!(
        agent(&batch, "alpha@crew").map(|n| n.state),
        Some(AgentState::Done),
        "a teammate still working when the session ends is settled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_events_make_a_bounded_number_of_batches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = Hub::open(dir.path().join("home")).expect("open");
    let feed = hub.attach_live("big", Path::new("/work/app"), None);
    let mut rx = hub.subscribe("big").expect("subscribe");
    let started = std::time::Instant::now();
    for n in 0..10_000 {
        let child = AgentRef::subagent(format!("a{n}"), format!("tu{n}"), "Explore", "x");
        feed.push(&ev(
            &child,
            block(ContentBlock::tool_use(format!("t{n}"), "Read", json!({}))),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    let mut batches = 0u64;
    tokio::time::timeout(WAIT, async {
        while seen.len() < 10_000 {
            match rx.recv().await {
                Ok(batch) => {
                    batches += 1;
                    for a in &batch.agents {
                        if a.id != "main" {
                            seen.insert(a.id.clone());
                        }
                    }
                }
                Err(e) => panic!("receiving batches: {e}"),
            }
        }
    })
    .await
    .expect("every agent arrives in a batch");
    // One batch per 200 ms tick at most, however many agents changed (plus the first, which
    // goes out at once): the bound grows with the time taken, so load cannot break it.
    let ticks = started.elapsed().as_millis() as u64 / 200;
    assert!(
        batches <= ticks + 2,
        "{batches} batches for 10,000 events over {ticks} ticks"
    );
    assert!(batches < 100, "{batches} batches for 10,000 events");
}

#[test]
fn the_hub_and_a_live_feed_can_be_shared_across_threads() {
    fn shared<T: Clone + Send + Sync + 'static>() {}
    shared::<Hub>();
    shared::<fleet_dashboard::LiveFeed>();
}

fn task_started(id: &str, subagent_type: &str, task_type: &str, backgrounded: bool) -> EventKind {
    EventKind::TaskStarted(TaskStarted {
        task_id: id.into(),
        tool_use_id: format!("tu-{id}"),
        description: format!("job {id}"),
        subagent_type: subagent_type.into(),
        prompt: "p".into(),
        model: "m".into(),
        is_backgrounded: backgrounded,
        spawn_depth: 1,
        task_type: task_type.into(),
        output_file: String::new(),
    })
}

fn node(hub: &Hub, id: &str) -> Option<fleet_dashboard::api::AgentNode> {
    hub.snapshot("s1")?.agents.into_iter().find(|a| a.id == id)
}

/// The runtime announces a fan-out's foreground children as tasks too (`is_backgrounded:
/// false`), but only `run_in_background` agents, forks and agents moved to the background can
/// be stopped by their task id.
#[test]
fn only_backgrounded_tasks_are_background_and_stoppable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = Hub::open(dir.path().join("home")).expect("open");
    let feed = hub.attach_live("s1", Path::new("/work/app"), None);
    let main = AgentRef::main();
    feed.push(&ev(
        &main,
        task_started("fg", "general-purpose", "local_agent", false),
    ));
    feed.push(&ev(
        &main,
        task_started("bg", "general-purpose", "local_agent", true),
    ));
    feed.push(&ev(&main, task_started("fk", "fork", "local_agent", true)));
    feed.push(&ev(&main, task_started("sh", "", "local_bash", true)));
    let fg = node(&hub, "fg").expect("foreground child");
    assert_eq!((fg.kind, fg.task_id), (AgentKind::Subagent, None));
    assert_eq!(fg.description.as_deref(), Some("job fg"));
    let bg = node(&hub, "bg").expect("background child");
    assert_eq!(
        (bg.kind, bg.task_id.as_deref()),
        (AgentKind::Background, Some("bg"))
    );
    let fork = node(&hub, "fk").expect("fork");
    assert_eq!(
        (fork.kind, fork.task_id.as_deref()),
        (AgentKind::Fork, Some("fk"))
    );
    assert!(
        node(&hub, "sh").is_none(),
        "a shell task is not an agent of the tree"
    );
    // The foreground child's own events and its answer keep it a subagent.
    let child = AgentRef::subagent("fg", "tu-fg", "general-purpose", "job fg");
    feed.push(&ev(&child, finished(ResultSubtype::Success)));
    let fg = node(&hub, "fg").expect("foreground child");
    assert_eq!(
        (fg.kind, fg.task_id, fg.state),
        (AgentKind::Subagent, None, AgentState::Done)
    );
    // Moved to the background by the user (Ctrl+B): announced again, now stoppable.
    feed.push(&ev(
        &main,
        task_started("fg2", "general-purpose", "local_agent", false),
    ));
    feed.push(&ev(
        &main,
        task_started("fg2", "general-purpose", "local_agent", true),
    ));
    let moved = node(&hub, "fg2").expect("moved child");
    assert_eq!(
        (moved.kind, moved.task_id.as_deref()),
        (AgentKind::Background, Some("fg2"))
    );
}

/// TaskStop: the task is killed, its notification says so, and only then the stopped run
/// ends with an error ("interrupted"), which must not turn `killed` into `failed`.
#[test]
fn a_stopped_background_agent_stays_killed_when_its_run_ends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = Hub::open(dir.path().join("home")).expect("open");
    let feed = hub.attach_live("s1", Path::new("/work/app"), None);
    let main = AgentRef::main();
    feed.push(&ev(
        &main,
        task_started("bg", "general-purpose", "local_agent", true),
    ));
    let child = AgentRef::subagent("bg", "tu-bg", "general-purpose", "job bg");
    feed.push(&ev(&child, block(ContentBlock::text("working"))));
    feed.push(&ev(
        &main,
        EventKind::TaskUpdated {
            task_id: "bg".into(),
            status: TaskStatus::Killed,
            end_time_ms: None,
        },
    ));
    feed.push(&ev(&child, finished(ResultSubtype::ErrorDuringExecution)));
    let bg = node(&hub, "bg").expect("stopped child");
    assert_eq!(bg.state, AgentState::Killed, "{bg:?}");
    assert!(bg.ended_ms.is_some());
}

/// Team frames are shown by their type with words for people, never as JSON: the runtime's
/// event names the frame's type, and raw frame text is described too.
#[test]
fn team_frames_arrive_as_kinds_with_readable_summaries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = Hub::open(dir.path().join("home")).expect("open");
    let feed = hub.attach_live("s1", Path::new("/work/app"), None);
    let main = AgentRef::main();
    let mail = |text: &str, summary: Option<&str>| {
        EventKind::Team(fleet_protocol::TeamEvent::TeamMessage {
            team: "crew".into(),
            from: "alpha".into(),
            to: "team-lead".into(),
            summary: summary.map(str::to_owned),
            text: text.into(),
        })
    };
    feed.push(&ev(&main, mail("idle_notification", None)));
    feed.push(&ev(&main, mail("shutdown_request", None)));
    feed.push(&ev(
        &main,
        mail(
            r#"{"type":"idle_notification","from":"alpha","timestamp":"2026-12-01T17:00:00.000Z","idleReason":"available","result":"Notes written"}"#,
            None,
        ),
    ));
    feed.push(&ev(
        &main,
        mail(
            r#"{"type":"plan_approval_response","requestId":"plan_approval-1@alpha@crew","approved":false,"feedback":"Add tests","timestamp":"2026-12-01T17:00:00.000Z"}"#,
            None,
        ),
    ));
    feed.push(&ev(&main, mail("the parser is done", Some("parser done"))));
    let snapshot = hub.snapshot("s1").expect("snapshot");
    let crew = snapshot
        .teams
        .iter()
        .find(|t| t.name == "crew")
        .expect("team");
    let seen: Vec<(&str, &str)> = crew
        .messages
        .iter()
        .map(|m| (m.kind.as_str(), m.summary.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("idle_notification", "idle"),
            ("shutdown_request", "shutdown requested"),
            ("idle_notification", "idle: Notes written"),
            ("plan_approval_response", "plan rejected: Add tests"),
            ("message", "parser done"),
        ]
    );
}
