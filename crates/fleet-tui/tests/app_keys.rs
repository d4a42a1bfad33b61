//! The app's key handling, seen from the driver's side: which command each key or slash
//! command sends, and which pane takes the keys. No terminal: events go straight in and the
//! commands come out of the channel.
#![allow(clippy::unwrap_used)]

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use fleet_protocol::{AgentEvent, AgentRef, EventKind, PermissionMode, SessionState, TaskStarted};
use fleet_tui::app::{App, UiExit, UiOptions};
use fleet_tui::port::{
    Choice, PermissionAnswer, PermissionAsk, PickerKind, RuleEdit, StatusUpdate, UiCommand, UiEvent,
};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;
use tokio::sync::mpsc;

struct Harness {
    app: App,
    commands: mpsc::UnboundedReceiver<UiCommand>,
}

fn harness_with(options: UiOptions) -> Harness {
    let (tx, rx) = mpsc::unbounded_channel();
    Harness {
        app: App::new(options, tx),
        commands: rx,
    }
}

fn harness() -> Harness {
    harness_with(UiOptions {
        status: StatusUpdate {
            model: Some("claude-test".into()),
            permission_mode: Some(PermissionMode::Default),
            ..Default::default()
        },
        ..Default::default()
    })
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

impl Harness {
    fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.app.handle_terminal_event(key(KeyCode::Char(c)));
        }
    }

    fn enter(&mut self, text: &str) {
        self.type_text(text);
        self.app.handle_terminal_event(key(KeyCode::Enter));
    }

    fn sent(&mut self) -> Vec<UiCommand> {
        let mut all = Vec::new();
        while let Ok(command) = self.commands.try_recv() {
            all.push(command);
        }
        all
    }

    fn main_event(&mut self, kind: EventKind) {
        self.app.handle_ui_event(UiEvent::Agent(AgentEvent {
            agent: AgentRef::main(),
            kind,
        }));
    }

    fn screen(&mut self, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| self.app.draw(frame)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        let mut out = String::new();
        for y in 0..buffer.area.height {
            for x in 0..buffer.area.width {
                out.push_str(buffer[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }
}

#[test]
fn enter_submits_the_prompt_and_shows_it_queued_until_taken_up() {
    let mut h = harness();
    h.enter("fix the bug");
    assert_eq!(h.sent(), vec![UiCommand::Submit("fix the bug".into())]);
    assert!(h.screen(80, 24).contains("queued: fix the bug"));
    h.main_event(EventKind::MessageCommitted(
        fleet_protocol::CommittedMessage {
            message: fleet_protocol::Message::user_text("fix the bug"),
            reply: None,
            tool_results: Vec::new(),
            mail_ids: Vec::new(),
        },
    ));
    assert!(!h.screen(80, 24).contains("queued: fix the bug"));
}

#[test]
fn the_initial_prompt_is_sent_at_once() {
    let mut h = harness_with(UiOptions {
        initial_prompt: Some("hello there".into()),
        ..Default::default()
    });
    assert_eq!(h.sent(), vec![UiCommand::Submit("hello there".into())]);
}

#[test]
fn esc_interrupts_only_a_running_turn() {
    let mut h = harness();
    // The session announces itself before anything is asked: that is not work.
    h.main_event(EventKind::Started(fleet_protocol::SessionInfo {
        session_id: "s".into(),
        cwd: "/r".into(),
        model: "m".into(),
        tools: Vec::new(),
        permission_mode: PermissionMode::Default,
        additional_directories: Vec::new(),
        agents: Vec::new(),
        mcp_servers: Vec::new(),
        skills: Vec::new(),
    }));
    assert!(!h.screen(80, 24).contains("Working"));
    h.app.handle_terminal_event(key(KeyCode::Esc));
    assert!(h.sent().is_empty(), "nothing runs, nothing to interrupt");
    h.main_event(EventKind::SessionState(SessionState::Running));
    assert!(h.screen(80, 24).contains("esc to interrupt"));
    h.app.handle_terminal_event(key(KeyCode::Esc));
    assert_eq!(h.sent(), vec![UiCommand::Interrupt]);
    h.main_event(EventKind::SessionState(SessionState::Idle));
    assert!(!h.screen(80, 24).contains("esc to interrupt"));
}

#[test]
fn ctrl_c_clears_the_input_then_quits_on_the_second_press() {
    let mut h = harness();
    h.type_text("half a thought");
    h.app.handle_terminal_event(ctrl('c'));
    assert!(h.sent().is_empty());
    assert!(!h.screen(80, 24).contains("half a thought"));
    h.app.handle_terminal_event(ctrl('c'));
    assert!(
        h.app.take_exit().is_none(),
        "one press on an empty input only warns"
    );
    assert!(h.screen(80, 24).contains("again to quit"));
    h.app.handle_terminal_event(ctrl('c'));
    assert_eq!(
        h.app.take_exit(),
        Some(UiExit::Quit {
            stop_background: true
        })
    );
    assert_eq!(
        h.sent(),
        vec![UiCommand::Quit {
            stop_background: true
        }]
    );
}

fn background_task(h: &mut Harness) {
    h.main_event(EventKind::TaskStarted(TaskStarted {
        task_id: "task-1".into(),
        tool_use_id: "toolu_1".into(),
        description: "map the crate".into(),
        subagent_type: "Explore".into(),
        prompt: "map it".into(),
        model: "claude-test".into(),
        is_backgrounded: true,
        spawn_depth: 1,
        task_type: "local_agent".into(),
        output_file: String::new(),
    }));
}

#[test]
fn quitting_with_background_tasks_asks_whether_to_stop_them() {
    let mut h = harness();
    background_task(&mut h);
    h.enter("/exit");
    assert!(h.app.take_exit().is_none(), "asks first");
    h.app.handle_terminal_event(key(KeyCode::Char('c')));
    assert!(h.app.take_exit().is_none(), "cancelled");
    h.enter("/exit");
    h.app.handle_terminal_event(key(KeyCode::Char('w')));
    assert_eq!(
        h.app.take_exit(),
        Some(UiExit::Quit {
            stop_background: false
        })
    );
}

/// Issue 33: cancelling the quit question leaves no "Press Ctrl+C again" behind.
#[test]
fn cancelling_the_quit_question_clears_the_ctrl_c_hint() {
    let mut h = harness();
    background_task(&mut h);
    h.app.handle_terminal_event(ctrl('c'));
    assert!(h.screen(80, 24).contains("again to quit"));
    h.app.handle_terminal_event(ctrl('c'));
    assert!(h.screen(80, 24).contains("Quit?"), "asks first");
    h.app.handle_terminal_event(key(KeyCode::Char('c')));
    let screen = h.screen(80, 24);
    assert!(!screen.contains("Quit?"), "{screen}");
    assert!(!screen.contains("again to quit"), "{screen}");
    // And a single Ctrl+C after it starts the double press afresh.
    h.app.handle_terminal_event(ctrl('c'));
    assert!(h.app.take_exit().is_none());
}

/// Issue 33: a background agent with no reply yet says what it waits for.
#[test]
fn a_background_agent_without_a_reply_waits_for_the_model() {
    let mut h = harness();
    background_task(&mut h);
    let screen = h.screen(80, 24);
    assert!(screen.contains("· waiting for model"), "{screen}");
    assert!(!screen.contains("starting"), "{screen}");
}

/// Issue 33: the task panel takes the rows its tasks need, not twelve, so a task's
/// transcript viewed above it keeps the screen.
#[test]
fn the_task_panel_reserves_no_empty_rows() {
    let mut h = harness();
    background_task(&mut h);
    h.app.handle_terminal_event(ctrl('t'));
    let screen = h.screen(80, 24);
    let rows: Vec<&str> = screen.lines().collect();
    let top = rows.iter().position(|r| r.contains("Tasks")).unwrap();
    let bottom = rows.iter().rposition(|r| r.contains("Esc close")).unwrap();
    // The frame's top, one task, the keys: nothing empty between.
    assert_eq!(bottom - top, 2, "{screen}");
}

/// Issue 33: the session opens with a header naming the folder, model, mode and help, and
/// the conversation is what is left in the scrollback at exit.
#[test]
fn the_header_opens_the_transcript_and_the_scrollback_keeps_the_conversation() {
    let mut h = harness_with(UiOptions {
        cwd: "/home/ann/src/app".into(),
        home: Some("/home/ann".into()),
        status: StatusUpdate {
            model: Some("claude-test".into()),
            permission_mode: Some(PermissionMode::Default),
            ..Default::default()
        },
        ..Default::default()
    });
    let screen = h.screen(80, 24);
    assert!(screen.contains("✻ fleet · ~/src/app"), "{screen}");
    assert!(
        screen.contains("model claude-test · permission mode default · /help for help"),
        "{screen}"
    );
    h.enter("what is it");
    h.main_event(EventKind::MessageCommitted(
        fleet_protocol::CommittedMessage {
            message: fleet_protocol::Message::user_text("what is it"),
            reply: None,
            tool_results: Vec::new(),
            mail_ids: Vec::new(),
        },
    ));
    h.main_event(EventKind::TextDelta("THE-ANSWER".into()));
    let text: Vec<String> = h
        .app
        .scrollback(80)
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    let text = text.join("\n");
    assert!(text.starts_with("✻ fleet · ~/src/app"), "{text}");
    assert!(text.contains("› what is it"), "{text}");
    assert!(text.contains("THE-ANSWER"), "{text}");
}

fn ask(id: u64) -> PermissionAsk {
    PermissionAsk {
        id,
        agent: AgentRef::subagent("agent-7", "toolu_9", "Explore", "map the crate"),
        tool: "Bash".into(),
        input: json!({"command": "touch x"}),
        description: "Bash command `touch x`".into(),
        suggested_rule: Some("Bash(touch:*)".into()),
        forwardable: false,
        change: None,
    }
}

#[test]
fn a_permission_question_takes_the_keys_until_answered() {
    let mut h = harness();
    h.app.handle_ui_event(UiEvent::Permission(ask(4)));
    h.app.handle_ui_event(UiEvent::Permission(ask(5)));
    h.type_text("y");
    assert_eq!(
        h.sent(),
        vec![UiCommand::Answer {
            id: 4,
            answer: PermissionAnswer::AllowOnce
        }]
    );
    // The second question is next; withdrawn, it goes away unanswered.
    h.app
        .handle_ui_event(UiEvent::PermissionWithdrawn { id: 5 });
    h.enter("after");
    assert_eq!(h.sent(), vec![UiCommand::Submit("after".into())]);
}

#[test]
fn shift_tab_asks_for_the_next_permission_mode() {
    let mut h = harness();
    h.app.handle_terminal_event(key(KeyCode::BackTab));
    assert_eq!(
        h.sent(),
        vec![UiCommand::SetPermissionMode(PermissionMode::AcceptEdits)]
    );
    h.app.handle_ui_event(UiEvent::Status(StatusUpdate {
        permission_mode: Some(PermissionMode::Plan),
        ..Default::default()
    }));
    h.app.handle_terminal_event(key(KeyCode::BackTab));
    assert_eq!(
        h.sent(),
        vec![UiCommand::SetPermissionMode(PermissionMode::Default)]
    );
}

#[test]
fn slash_commands_become_commands_for_the_driver() {
    let mut h = harness();
    h.enter("/model");
    h.enter("/compact keep the API notes");
    h.enter("/permissions allow Bash(ls:*)");
    h.enter("/permissions remove deny Read(.env)");
    h.enter("/resume");
    h.enter("/mcp");
    h.enter("/clear");
    assert_eq!(
        h.sent(),
        vec![
            UiCommand::SetModel(None),
            UiCommand::Compact(Some("keep the API notes".into())),
            UiCommand::EditRule(Some(RuleEdit {
                kind: "allow".into(),
                rule: "Bash(ls:*)".into(),
                remove: false
            })),
            UiCommand::EditRule(Some(RuleEdit {
                kind: "deny".into(),
                rule: "Read(.env)".into(),
                remove: true
            })),
            UiCommand::Resume(None),
            UiCommand::McpStatus,
            UiCommand::Clear,
        ]
    );
}

#[test]
fn a_picker_of_choices_answers_with_the_chosen_id() {
    let mut h = harness();
    h.app.handle_ui_event(UiEvent::Choices {
        kind: PickerKind::Sessions,
        items: vec![
            Choice {
                id: "s-1".into(),
                label: "first session".into(),
                detail: "today".into(),
            },
            Choice {
                id: "s-2".into(),
                label: "second".into(),
                detail: "yesterday".into(),
            },
        ],
    });
    h.app.handle_terminal_event(key(KeyCode::Enter));
    assert_eq!(h.sent(), vec![UiCommand::Resume(Some("s-1".into()))]);
    // Closed: keys reach the composer again.
    h.enter("next");
    assert_eq!(h.sent(), vec![UiCommand::Submit("next".into())]);
}

#[test]
fn a_custom_command_sends_its_file_with_the_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully.\n",
    )
    .unwrap();
    let mut h = harness_with(UiOptions {
        cwd: dir.path().to_path_buf(),
        ..Default::default()
    });
    h.enter("/review src/lib.rs");
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let UiCommand::Submit(prompt) = &sent[0] else {
        panic!("{sent:?}")
    };
    assert!(prompt.contains("Review src/lib.rs carefully."), "{prompt}");
    assert!(!prompt.contains("description:"), "{prompt}");
}

#[test]
fn permissions_mode_sends_the_mode_and_an_unknown_one_names_the_valid_ones() {
    let mut h = harness();
    h.enter("/permissions mode acceptEdits");
    h.enter("/permissions mode PLAN");
    assert_eq!(
        h.sent(),
        vec![
            UiCommand::SetPermissionMode(PermissionMode::AcceptEdits),
            UiCommand::SetPermissionMode(PermissionMode::Plan),
        ]
    );
    h.enter("/permissions mode auto");
    assert!(h.sent().is_empty(), "an unknown mode is not sent");
    let screen = h.screen(120, 24);
    assert!(
        screen.contains("unknown permission mode `auto`"),
        "{screen}"
    );
    assert!(
        screen.contains("default, acceptEdits, plan, bypassPermissions, dontAsk"),
        "{screen}"
    );
}

#[test]
fn an_unknown_command_is_said_and_nothing_is_sent() {
    let mut h = harness();
    h.enter("/frobnicate");
    assert!(h.sent().is_empty());
    assert!(h.screen(80, 24).contains("Unknown command /frobnicate"));
}

#[test]
fn ctrl_b_asks_to_move_the_foreground_work_to_the_background() {
    let mut h = harness();
    h.app.handle_terminal_event(ctrl('b'));
    assert_eq!(h.sent(), vec![UiCommand::Background]);
}

#[test]
fn any_size_draws_without_panicking() {
    let mut h = harness();
    background_task(&mut h);
    h.app.handle_ui_event(UiEvent::Permission(ask(1)));
    for (w, hgt) in [(80, 24), (30, 10), (1, 1), (2, 40), (200, 3)] {
        h.screen(w, hgt);
    }
}
