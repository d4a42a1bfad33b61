//! The task board built from a scripted event stream, its footer pills and the task panel.

use crate::panes_support;

use crossterm::event::KeyCode;
use fleet_protocol::{
    AgentEvent, AgentRef, AgentUsage, BackgroundTask, CommittedMessage, ContentBlock, EventKind,
    Message, ReplyMeta, Role, TaskNotification, TaskStarted, TaskStatus, TaskUsage, TreeReport,
    Usage,
};
use fleet_tui::panes::pills;
use fleet_tui::panes::task_panel::{TaskPanel, TaskPanelAction};
use fleet_tui::panes::tasks::TaskBoard;
use fleet_tui::theme::Theme;
use panes_support::{ch, ctrl, draw, key, text, typed};
use std::time::{Duration, Instant};

fn main_event(kind: EventKind) -> AgentEvent {
    AgentEvent {
        agent: AgentRef::main(),
        kind,
    }
}

fn child(n: u32, kind: EventKind) -> AgentEvent {
    AgentEvent {
        agent: AgentRef::subagent(format!("agent-{n}"), format!("toolu_{n}"), "Explore", "x"),
        kind,
    }
}

fn started(n: u32, kind: &str, description: &str, background: bool) -> AgentEvent {
    main_event(EventKind::TaskStarted(TaskStarted {
        task_id: format!("task-{n}"),
        tool_use_id: format!("toolu_{n}"),
        description: description.into(),
        subagent_type: kind.into(),
        prompt: "go".into(),
        model: "sonnet".into(),
        is_backgrounded: background,
        spawn_depth: 1,
        task_type: "local_agent".into(),
        output_file: String::new(),
    }))
}

fn running_set(tasks: &[(u32, &str, &str)]) -> AgentEvent {
    main_event(EventKind::BackgroundTasksChanged(
        tasks
            .iter()
            .map(|(n, kind, description)| BackgroundTask {
                task_id: format!("task-{n}"),
                task_type: "local_agent".into(),
                subagent_type: kind.to_string(),
                description: description.to_string(),
            })
            .collect(),
    ))
}

/// One assistant reply of agent `n`, using `tokens` tokens.
fn turn(n: u32, tokens: u64) -> AgentEvent {
    child(
        n,
        EventKind::MessageCommitted(CommittedMessage {
            message: Message::with_blocks(Role::Assistant, vec![ContentBlock::text("ok")]),
            reply: Some(ReplyMeta {
                id: "msg".into(),
                model: "sonnet".into(),
                usage: Usage {
                    input_tokens: tokens - 10,
                    output_tokens: 10,
                    ..Usage::default()
                },
                stop_reason: None,
            }),
            tool_results: Vec::new(),
            mail_ids: Vec::new(),
        }),
    )
}

fn tool_results_message(n: u32) -> AgentEvent {
    child(
        n,
        EventKind::MessageCommitted(CommittedMessage {
            message: Message::user_text("results"),
            reply: None,
            tool_results: Vec::new(),
            mail_ids: Vec::new(),
        }),
    )
}

fn finished(n: u32, status: TaskStatus, tokens: u64, ms: u64) -> Vec<AgentEvent> {
    vec![
        main_event(EventKind::TaskUpdated {
            task_id: format!("task-{n}"),
            status,
            end_time_ms: Some(1),
        }),
        main_event(EventKind::TaskNotified(TaskNotification {
            task_id: format!("task-{n}"),
            tool_use_id: format!("toolu_{n}"),
            status,
            summary: "done".into(),
            result: "found it".into(),
            usage: TaskUsage {
                total_tokens: tokens,
                tool_uses: 3,
                duration_ms: ms,
                unreported_replies: 0,
            },
            output_file: String::new(),
            worktree: None,
        })),
    ]
}

#[test]
fn a_background_agent_from_start_to_its_pill_leaving() {
    let mut board = TaskBoard::new();
    // The registry announces the running set before the task itself.
    board.apply(&running_set(&[(1, "Explore", "map the crate")]));
    board.apply(&started(1, "Explore", "map the crate", true));
    assert_eq!(board.running_background(), 1);
    assert_eq!(pills::height(&board), 1);

    board.apply(&turn(1, 1000));
    board.apply(&tool_results_message(1));
    board.apply(&turn(1, 500));
    board.apply(&turn(1, 300));
    // The main agent's own turns count for no task.
    board.apply(&main_event(turn(1, 50).kind));
    let task = board.get("task-1").expect("task-1");
    assert_eq!((task.turns, task.tokens), (3, 1800));
    assert_eq!(task.agent_id.as_deref(), Some("agent-1"));
    let pill = text(&draw(80, 1, |a, b| {
        pills::render(&board, a, b, &Theme::mono())
    }));
    assert_eq!(pill, "◇ Explore: map the crate · 3 turns");

    for e in finished(1, TaskStatus::Completed, 2000, 75_000) {
        board.apply(&e);
    }
    board.apply(&running_set(&[]));
    board.apply(&main_event(EventKind::TreeTotals(TreeReport {
        agents: vec![AgentUsage {
            agent_id: "agent-1".into(),
            agent_type: "Explore".into(),
            parent_agent_id: None,
            depth: 1,
            model: "sonnet".into(),
            status: "completed".into(),
            num_turns: 3,
            tool_uses: 3,
            usage: Usage::default(),
            cost_usd: Some(0.0123),
            served_model: None,
            usage_unreported_replies: 0,
        }],
        ..TreeReport::default()
    })));
    let task = board.get("task-1").expect("task-1");
    assert_eq!(task.status, "completed");
    assert_eq!(task.tokens, 2000);
    assert_eq!(board.cost_usd("task-1"), Some(0.0123));
    assert_eq!(board.elapsed("task-1"), Some(Duration::from_secs(75)));
    assert_eq!(board.running_background(), 0);
    // Finished, it stays in the footer until the next prompt.
    let pill = text(&draw(80, 1, |a, b| {
        pills::render(&board, a, b, &Theme::mono())
    }));
    assert_eq!(pill, "◆ Explore: map the crate · done");

    board.acknowledge_finished();
    assert_eq!(pills::height(&board), 0);
    let empty = text(&draw(80, 1, |a, b| {
        pills::render(&board, a, b, &Theme::mono())
    }));
    assert_eq!(empty, "");
}

#[test]
fn foreground_children_are_not_ended_by_the_running_set() {
    let mut board = TaskBoard::new();
    board.apply(&started(1, "Plan", "design it", false));
    board.apply(&running_set(&[]));
    assert_eq!(board.get("task-1").expect("task").status, "running");
    assert_eq!(board.running(), 1);
    assert_eq!(board.running_background(), 0);
    assert_eq!(pills::height(&board), 0, "a foreground child has no pill");

    // Ctrl+B: it joins the running set and becomes a background task.
    board.apply(&running_set(&[(1, "Plan", "design it")]));
    assert_eq!(board.running_background(), 1);
    // Leaving the set without a report: it ended; the report, when it comes, wins.
    board.apply(&running_set(&[]));
    assert_eq!(board.running_background(), 0);
    for e in finished(1, TaskStatus::Failed, 10, 1000) {
        board.apply(&e);
    }
    assert_eq!(board.get("task-1").expect("task").status, "failed");
}

#[test]
fn a_final_state_is_never_undone() {
    let mut board = TaskBoard::new();
    board.apply(&started(1, "Explore", "x", true));
    for e in finished(1, TaskStatus::Killed, 10, 1000) {
        board.apply(&e);
    }
    board.apply(&main_event(EventKind::TaskUpdated {
        task_id: "task-1".into(),
        status: TaskStatus::Completed,
        end_time_ms: None,
    }));
    assert_eq!(board.get("task-1").expect("task").status, "killed");
}

fn three_tasks() -> TaskBoard {
    let mut board = TaskBoard::new();
    let t0 = Instant::now();
    board.pin_clock(t0);
    board.apply(&started(1, "Explore", "map the crate", true));
    board.apply(&started(
        2,
        "general-purpose",
        "write the release notes",
        true,
    ));
    board.apply(&started(3, "Plan", "design the cache", true));
    for _ in 0..3 {
        board.apply(&turn(1, 1200));
    }
    board.apply(&turn(2, 400));
    for e in finished(3, TaskStatus::Completed, 5_400, 95_000) {
        board.apply(&e);
    }
    board.pin_clock(t0 + Duration::from_secs(42));
    board
}

#[test]
fn pills_with_three_tasks_at_80_and_30_columns() {
    let board = three_tasks();
    let wide = text(&draw(80, 1, |a, b| {
        pills::render(&board, a, b, &Theme::mono())
    }));
    // All three fit once their labels are cut alike; the counters are never cut.
    assert!(wide.starts_with("◇ Explore: map"), "{wide}");
    assert!(wide.contains("· 3 turns  ◇ general-purpo"), "{wide}");
    assert!(wide.contains("· 1 turn  ◆ Plan"), "{wide}");
    assert!(wide.ends_with("· done"), "{wide}");
    assert!(!wide.contains("more"), "{wide}");
    insta::assert_snapshot!("pills_80", wide);
    let narrow = text(&draw(30, 1, |a, b| {
        pills::render(&board, a, b, &Theme::mono())
    }));
    assert!(narrow.ends_with("+2 more"), "{narrow}");
    assert!(narrow.starts_with("◇ Explore"), "{narrow}");
    insta::assert_snapshot!("pills_30", narrow);
    for width in 0..4 {
        draw(width, 1, |a, b| pills::render(&board, a, b, &Theme::dark()));
    }
}

#[test]
fn the_task_panel_at_80_and_30_columns() {
    let board = three_tasks();
    let mut panel = TaskPanel::new();
    panel.handle_key(key(KeyCode::Down), &board);
    let wide = text(&draw(80, 8, |a, b| {
        panel.render(a, b, &board, &Theme::mono())
    }));
    assert!(wide.contains("Tasks · 2 running"), "{wide}");
    assert!(
        wide.contains("❯ ◇ general-purpose  write the release notes"),
        "{wide}"
    );
    assert!(wide.contains("3 turns · 3.6k tok · 42s"), "{wide}");
    assert!(wide.contains("1m 35s · completed"), "{wide}");
    insta::assert_snapshot!("panel_80", wide);
    insta::assert_snapshot!(
        "panel_30",
        text(&draw(30, 8, |a, b| panel.render(
            a,
            b,
            &board,
            &Theme::mono()
        )))
    );
}

#[test]
fn the_task_panel_views_stops_and_messages() {
    let board = three_tasks();
    let mut panel = TaskPanel::new();
    assert_eq!(
        panel.handle_key(key(KeyCode::Enter), &board),
        Some(TaskPanelAction::View("task-1".into()))
    );
    assert_eq!(
        panel.handle_key(ch('x'), &board),
        Some(TaskPanelAction::Stop("task-1".into()))
    );
    // The finished one cannot be stopped: the panel says why instead.
    panel.handle_key(key(KeyCode::End), &board);
    assert_eq!(panel.handle_key(key(KeyCode::Delete), &board), None);
    let screen = text(&draw(60, 8, |a, b| {
        panel.render(a, b, &board, &Theme::mono())
    }));
    assert!(
        screen.contains("That task is already completed."),
        "{screen}"
    );

    panel.handle_key(key(KeyCode::Up), &board);
    assert_eq!(panel.handle_key(ch('m'), &board), None);
    for k in typed("also check docs") {
        assert_eq!(panel.handle_key(k, &board), None);
    }
    let screen = text(&draw(60, 9, |a, b| {
        panel.render(a, b, &board, &Theme::mono())
    }));
    assert!(screen.contains("Message to general-purpose:"), "{screen}");
    assert!(screen.contains("> also check docs"), "{screen}");
    insta::assert_snapshot!("panel_message_60", screen);
    assert_eq!(
        panel.handle_key(key(KeyCode::Enter), &board),
        Some(TaskPanelAction::Message {
            task_id: "task-2".into(),
            text: "also check docs".into()
        })
    );
    // Esc leaves the message field first, then the panel.
    panel.handle_key(ch('m'), &board);
    panel.handle_paste("never sent");
    assert_eq!(panel.handle_key(key(KeyCode::Esc), &board), None);
    assert_eq!(
        panel.handle_key(key(KeyCode::Esc), &board),
        Some(TaskPanelAction::Close)
    );
    assert_eq!(
        panel.handle_key(ctrl('t'), &board),
        Some(TaskPanelAction::Close)
    );
}

#[test]
fn an_empty_panel_says_so() {
    let board = TaskBoard::new();
    let mut panel = TaskPanel::new();
    assert_eq!(panel.handle_key(key(KeyCode::Enter), &board), None);
    assert_eq!(panel.handle_key(ch('x'), &board), None);
    let screen = text(&draw(40, 5, |a, b| {
        panel.render(a, b, &board, &Theme::mono())
    }));
    assert!(screen.contains("No tasks yet."), "{screen}");
    for (w, h) in [(0, 0), (1, 1), (2, 2), (3, 9)] {
        draw(w, h, |a, b| panel.render(a, b, &board, &Theme::dark()));
    }
}

fn team(event: fleet_protocol::TeamEvent) -> AgentEvent {
    main_event(EventKind::Team(event))
}

#[test]
fn teammates_are_tasks_that_idle_and_leave() {
    use fleet_protocol::TeamEvent;
    let mut board = TaskBoard::new();
    board.apply(&team(TeamEvent::TeammateSpawned {
        team: "docs".into(),
        name: "alice".into(),
        agent_id: "alice@docs".into(),
        agent_type: "researcher".into(),
        model: "sonnet".into(),
        color: "blue".into(),
        resumed: false,
    }));
    // A teammate's own events count by its agent id.
    let mut reply = turn(9, 700);
    reply.agent = AgentRef::subagent("alice@docs", "toolu_team", "researcher", "alice");
    board.apply(&reply);
    // Registry updates never list teammates; that says nothing about them.
    board.apply(&running_set(&[]));
    let pill = text(&draw(80, 1, |a, b| {
        pills::render(&board, a, b, &Theme::mono())
    }));
    assert_eq!(pill, "◇ researcher: alice · 1 turn");

    board.apply(&team(TeamEvent::TeammateIdle {
        team: "docs".into(),
        name: "alice".into(),
        agent_id: "alice@docs".into(),
        summary: None,
    }));
    assert_eq!(board.running_background(), 1);
    let pill = text(&draw(80, 1, |a, b| {
        pills::render(&board, a, b, &Theme::mono())
    }));
    assert_eq!(pill, "◇ researcher: alice · idle");

    board.apply(&team(TeamEvent::TeammateTerminated {
        team: "docs".into(),
        name: "alice".into(),
        agent_id: "alice@docs".into(),
        reason: "shutdown".into(),
    }));
    assert_eq!(board.running_background(), 0);
    let pill = text(&draw(80, 1, |a, b| {
        pills::render(&board, a, b, &Theme::mono())
    }));
    assert_eq!(pill, "◆ researcher: alice · done");
}

#[test]
fn a_failed_and_a_stopped_task_say_so_in_words() {
    let mut board = TaskBoard::new();
    board.apply(&started(1, "Explore", "a", true));
    board.apply(&started(2, "Plan", "b", true));
    for e in finished(1, TaskStatus::Failed, 1, 1)
        .into_iter()
        .chain(finished(2, TaskStatus::Killed, 1, 1))
    {
        board.apply(&e);
    }
    let pill = text(&draw(80, 1, |a, b| {
        pills::render(&board, a, b, &Theme::mono())
    }));
    assert_eq!(pill, "◆ Explore: a · failed  ◆ Plan: b · stopped");
}
