//! The approval box on the whole screen, as an attacker would shape the call: a harmless
//! first line and the real command 120 blank lines below it, one line of 2000 characters,
//! a hundred lines, control characters. Whatever the terminal's height, the person sees the
//! end of the call, how much is hidden, and every answer; the keys scroll the call.
#![allow(clippy::unwrap_used)]

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use fleet_protocol::{AgentEvent, AgentRef, EventKind, SessionState, TaskStarted};
use fleet_tui::app::{App, UiOptions};
use fleet_tui::port::{
    Choice, PermissionAnswer, PermissionAsk, PickerKind, StatusUpdate, UiCommand, UiEvent,
};
use fleet_tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;
use tokio::sync::mpsc;

fn app() -> (App, mpsc::UnboundedReceiver<UiCommand>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = App::new(
        UiOptions {
            theme: Theme::mono(),
            status: StatusUpdate {
                model: Some("claude-sonnet-4-5".into()),
                permission_mode: Some(fleet_protocol::PermissionMode::Default),
                context_percent: Some(12),
                session_id: None,
            },
            ..Default::default()
        },
        tx,
    );
    (app, rx)
}

/// A working session with a background task: the working line and a pill take rows too.
fn busy(app: &mut App) {
    let main = AgentRef::main();
    let send = |app: &mut App, kind| {
        app.handle_ui_event(UiEvent::Agent(AgentEvent {
            agent: main.clone(),
            kind,
        }))
    };
    send(app, EventKind::SessionState(SessionState::Running));
    send(app, EventKind::TextDelta("Checking the tree.\n".into()));
    send(
        app,
        EventKind::TaskStarted(TaskStarted {
            task_id: "a1".into(),
            tool_use_id: "t2".into(),
            description: "map the crate".into(),
            subagent_type: "Explore".into(),
            prompt: "Map it".into(),
            model: "m".into(),
            is_backgrounded: true,
            spawn_depth: 1,
            task_type: "local_agent".into(),
            output_file: String::new(),
        }),
    );
}

fn ask_bash(app: &mut App, command: &str) {
    app.handle_ui_event(UiEvent::Permission(PermissionAsk {
        id: 1,
        agent: AgentRef::main(),
        tool: "Bash".into(),
        input: json!({ "command": command }),
        description: format!("Bash command `{}`", command.trim()),
        suggested_rule: Some("Bash(git status), Bash(touch /tmp/x)".into()),
        forwardable: false,
        change: None,
    }));
}

fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| app.draw(frame)).unwrap();
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

/// The working line's spinner and clock move; the snapshot keeps the rest.
fn steady(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.contains("Working…") {
                "<working>"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn press(app: &mut App, code: KeyCode) {
    app.handle_terminal_event(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// Every answer of the question, by number and letter, in full or compact form.
fn assert_answers(text: &str) {
    for answer in ["1. Yes (y)", "(a)", "3. No (n)", "(f)"] {
        assert!(text.contains(answer), "answer {answer} missing:\n{text}");
    }
}

/// The screens a command hidden below blank lines was seen on, from a roomy terminal down to
/// one that leaves the box three rows.
#[test]
fn a_command_below_120_blank_lines_is_seen_with_every_answer() {
    let command = format!("git status{}touch /tmp/x", "\n".repeat(120));
    for height in [24, 10] {
        let (mut app, _rx) = app();
        busy(&mut app);
        ask_bash(&mut app, &command);
        let text = screen(&mut app, 80, height);
        assert!(text.contains("$ git status"), "{height} rows:\n{text}");
        assert!(text.contains("> touch /tmp/x"), "{height} rows:\n{text}");
        assert!(
            text.contains("(119 blank lines)"),
            "the collapse is stated at {height} rows:\n{text}"
        );
        assert_answers(&text);
        insta::assert_snapshot!(format!("blank_run_80x{height}"), steady(&text));
    }
    // However short the terminal, the end of the command and every answer stay.
    for height in 4..=30 {
        for width in [80, 40] {
            let (mut app, _rx) = app();
            busy(&mut app);
            ask_bash(&mut app, &command);
            let text = screen(&mut app, width, height);
            assert!(text.contains("touch /tmp/x"), "{width}×{height}:\n{text}");
            assert_answers(&text);
        }
    }
}

#[test]
fn the_tail_of_a_2000_character_line_is_on_screen() {
    let command = format!("echo {} ; touch /tmp/END", "x".repeat(2000));
    for height in [24, 10] {
        let (mut app, _rx) = app();
        busy(&mut app);
        ask_bash(&mut app, &command);
        let text = screen(&mut app, 80, height);
        // Word wrap may put the path on a row of its own; both words are there.
        assert!(text.contains("; touch"), "{height} rows:\n{text}");
        assert!(text.contains("/tmp/END"), "{height} rows:\n{text}");
        assert!(text.contains("$ echo"), "{height} rows:\n{text}");
        assert!(text.contains("more lines …"), "{height} rows:\n{text}");
        assert!(text.contains("PgUp/PgDn scroll"), "{height} rows:\n{text}");
        assert_answers(&text);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        insta::assert_snapshot!(format!("long_line_80x{height}"), steady(&text));
    }
}

#[test]
fn page_keys_scroll_the_command_and_its_end_stays() {
    let command: Vec<String> = (0..100).map(|i| format!("echo L{i:03}")).collect();
    let (mut app, mut rx) = app();
    busy(&mut app);
    ask_bash(&mut app, &command.join("\n"));
    let first = screen(&mut app, 80, 24);
    assert!(first.contains("$ echo L000"), "{first}");
    assert!(first.contains("> echo L099"), "{first}");
    assert!(!first.contains("L050"), "{first}");
    assert!(!first.contains("lines above"), "{first}");

    for _ in 0..8 {
        press(&mut app, KeyCode::PageDown);
    }
    let down = screen(&mut app, 80, 24);
    assert!(
        !down.contains("L000"),
        "scrolled away from the top:\n{down}"
    );
    assert!(down.contains("lines above …"), "{down}");
    assert!(down.contains("> echo L099"), "the end stays:\n{down}");
    assert_answers(&down);

    press(&mut app, KeyCode::End);
    let bottom = screen(&mut app, 80, 24);
    assert!(
        !bottom.contains("more lines …"),
        "nothing hidden below:\n{bottom}"
    );
    let shown: Vec<usize> = (0..100)
        .filter(|i| bottom.contains(&format!("echo L{i:03}")))
        .collect();
    assert_eq!(shown.last(), Some(&99));
    assert!(
        shown.windows(2).all(|w| w[1] == w[0] + 1),
        "one unbroken run to the end: {shown:?}\n{bottom}"
    );

    press(&mut app, KeyCode::PageUp);
    assert_ne!(screen(&mut app, 80, 24), bottom, "PgUp moves back up");
    press(&mut app, KeyCode::Home);
    assert_eq!(
        screen(&mut app, 80, 24),
        first,
        "Home is the first view again"
    );
    assert!(rx.try_recv().is_err(), "scrolling answers nothing");

    press(&mut app, KeyCode::Char('n'));
    assert!(matches!(
        rx.try_recv(),
        Ok(UiCommand::Answer {
            answer: PermissionAnswer::Deny,
            ..
        })
    ));
}

/// Escape sequences in the command are shown as escapes in the box, not obeyed and not
/// silently dropped (dropping `\r` would glue two commands into what reads as one word).
#[test]
fn control_characters_in_the_command_are_shown_as_escapes() {
    let (mut app, _rx) = app();
    ask_bash(
        &mut app,
        "ls\rrm -rf ~ \u{1b}[2K\u{1b}]0;t\u{7} cat \u{202e}hs.x\u{202c} git\u{a0}x",
    );
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains(r"$ ls\rrm -rf ~ \e[2K\e]0;t\x07 cat \u{202e}hs.x\u{202c} git\u{a0}x"),
        "{text}"
    );
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|frame| app.draw(frame)).unwrap();
    for cell in terminal.backend().buffer().content() {
        assert!(!cell.symbol().chars().any(char::is_control));
    }
}

/// The question takes the keys before an open picker, so it is drawn over the picker: Enter
/// meant for the picker must not approve a question the person cannot see.
#[test]
fn a_question_arriving_over_a_picker_is_what_the_screen_shows() {
    let (mut app, _rx) = app();
    app.handle_ui_event(UiEvent::Choices {
        kind: PickerKind::Models,
        items: vec![Choice {
            id: "m-1".into(),
            label: "some model".into(),
            detail: String::new(),
        }],
    });
    assert!(screen(&mut app, 80, 24).contains("some model"));
    ask_bash(&mut app, "rm -rf build");
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("$ rm -rf build"), "{text}");
    assert_answers(&text);
}
