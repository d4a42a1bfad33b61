//! The Ultraplan pill in the footer: its three phases as a person reads them, beside the
//! background task pills, and gone once the session ends.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use fleet_protocol::{AgentEvent, AgentRef, EventKind, TaskStarted};
use fleet_tui::app::{App, UiOptions};
use fleet_tui::panes::ultraplan::UltraplanPill;
use fleet_tui::port::{StatusUpdate, UiCommand, UiEvent};
use fleet_tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use tokio::sync::mpsc;

fn app() -> App {
    app_and_commands().0
}

fn app_and_commands() -> (App, mpsc::UnboundedReceiver<UiCommand>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = App::new(
        UiOptions {
            theme: Theme::mono(),
            status: StatusUpdate {
                model: Some("claude-sonnet-4-5".into()),
                permission_mode: Some(fleet_protocol::PermissionMode::Default),
                context_percent: Some(3),
                session_id: None,
            },
            ..Default::default()
        },
        tx,
    );
    (app, rx)
}

fn enter(app: &mut App, text: &str) {
    let key = |code| Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
    for c in text.chars() {
        app.handle_terminal_event(key(KeyCode::Char(c)));
    }
    app.handle_terminal_event(key(KeyCode::Enter));
}

fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal.draw(|frame| app.draw(frame)).expect("draw");
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut row = String::new();
        for x in 0..buffer.area.width {
            row.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// The footer row: the line above the status line.
fn footer(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    lines[lines.len() - 2].to_string()
}

#[test]
fn the_three_pills() {
    let cases = [
        (UltraplanPill::Running, "pill_running", "◇ ultraplan"),
        (
            UltraplanPill::NeedsInput,
            "pill_needs_input",
            "◇ ultraplan needs your input",
        ),
        (UltraplanPill::Ready, "pill_ready", "◆ ultraplan ready"),
    ];
    for (pill, name, words) in cases {
        let mut app = app();
        app.handle_ui_event(UiEvent::Ultraplan(Some(pill)));
        let text = screen(&mut app, 60, 8);
        insta::assert_snapshot!(name, text);
        assert_eq!(footer(&text), words, "{text}");
    }
}

#[test]
fn beside_a_background_task_and_gone_when_the_session_ends() {
    let mut app = app();
    app.handle_ui_event(UiEvent::Agent(AgentEvent {
        agent: AgentRef::main(),
        kind: EventKind::TaskStarted(TaskStarted {
            task_id: "task-1".into(),
            tool_use_id: "toolu_1".into(),
            description: "map the crate".into(),
            subagent_type: "Explore".into(),
            prompt: "go".into(),
            model: "sonnet".into(),
            is_backgrounded: true,
            spawn_depth: 1,
            task_type: "local_agent".into(),
            output_file: String::new(),
        }),
    }));
    app.handle_ui_event(UiEvent::Ultraplan(Some(UltraplanPill::Ready)));
    let text = screen(&mut app, 70, 8);
    insta::assert_snapshot!("pill_beside_a_task", text);
    let row = footer(&text);
    assert!(
        row.starts_with("◆ ultraplan ready  ◇ Explore: map the crate"),
        "{row}"
    );

    app.handle_ui_event(UiEvent::Ultraplan(None));
    let row = footer(&screen(&mut app, 70, 8));
    assert!(!row.contains("ultraplan"), "{row}");
    assert!(row.starts_with("◇ Explore: map the crate"), "{row}");
}

#[test]
fn the_slash_command_goes_to_the_driver_and_a_taken_prompt_leaves_the_queue() {
    let (mut app, mut commands) = app_and_commands();
    enter(&mut app, "/ultraplan migrate the store");
    let sent = commands.try_recv().expect("a command");
    assert_eq!(
        sent,
        UiCommand::Submit("/ultraplan migrate the store".into())
    );
    assert!(screen(&mut app, 60, 8).contains("queued: /ultraplan migrate the store"));
    app.handle_ui_event(UiEvent::PromptTaken("/ultraplan migrate the store".into()));
    assert!(!screen(&mut app, 60, 8).contains("queued:"));

    enter(&mut app, "/ultraplan");
    assert!(
        commands.try_recv().is_err(),
        "nothing to plan: nothing sent"
    );
    assert!(screen(&mut app, 60, 8).contains("/ultraplan <what to plan>"));
}
