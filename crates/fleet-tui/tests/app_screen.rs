//! The whole screen as a person sees it, at 80×24 and narrow: a prompt, streamed Markdown,
//! tool calls with folded results and a diff, a subagent grouped under its Agent call, a
//! background task's pill, the status line, and a subagent's permission question.
#![allow(clippy::unwrap_used)]

use fleet_protocol::{
    AgentEvent, AgentRef, CommittedMessage, ContentBlock, EventKind, Message, PermissionNote,
    SessionState, TaskStarted, ToolResultEvent, Usage,
};
use fleet_tui::app::{App, UiOptions};
use fleet_tui::port::{PermissionAsk, StatusUpdate, UiEvent};
use fleet_tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;
use tokio::sync::mpsc;

fn app() -> (App, mpsc::UnboundedReceiver<fleet_tui::UiCommand>) {
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

fn send(app: &mut App, agent: &AgentRef, kind: EventKind) {
    app.handle_ui_event(UiEvent::Agent(AgentEvent {
        agent: agent.clone(),
        kind,
    }));
}

fn tool_use(id: &str, name: &str, input: serde_json::Value) -> EventKind {
    EventKind::AssistantBlock {
        message_id: format!("msg-{id}"),
        model: "m".into(),
        block: ContentBlock::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            cache_control: None,
        },
        usage: Usage::default(),
    }
}

fn result(id: &str, name: &str, content: &str) -> EventKind {
    EventKind::ToolResult(ToolResultEvent {
        tool_use_id: id.into(),
        tool_name: name.into(),
        content: content.into(),
        is_error: false,
        structured: None,
        permission: PermissionNote {
            decision: fleet_protocol::PermissionDecision::Accept,
            reason_type: fleet_protocol::PermissionReasonType::Mode,
            rule: None,
        },
    })
}

fn session(app: &mut App) {
    let main = AgentRef::main();
    send(app, &main, EventKind::SessionState(SessionState::Running));
    send(
        app,
        &main,
        EventKind::MessageCommitted(CommittedMessage {
            message: Message::user_text("tidy the parser and map the crate"),
            reply: None,
            tool_results: Vec::new(),
            mail_ids: Vec::new(),
        }),
    );
    send(
        app,
        &main,
        EventKind::TextDelta("## Plan\n\n1. Read the parser\n2. Fix `parse_args`\n".into()),
    );
    send(
        app,
        &main,
        tool_use(
            "t1",
            "Edit",
            json!({"file_path": "src/parse.rs",
            "old_string": "let x = 1;", "new_string": "let x = 2;"}),
        ),
    );
    send(
        app,
        &main,
        result("t1", "Edit", "The file src/parse.rs has been updated."),
    );
    send(
        app,
        &main,
        tool_use(
            "t2",
            "Agent",
            json!({"subagent_type": "Explore",
            "description": "map the crate", "prompt": "Map it", "run_in_background": true}),
        ),
    );
    send(
        app,
        &main,
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
    let child = AgentRef::subagent("a1", "t2", "Explore", "map the crate");
    send(
        app,
        &child,
        tool_use("c1", "Grep", json!({"pattern": "fn main"})),
    );
    send(
        app,
        &child,
        result("c1", "Grep", "src/main.rs\nsrc/bin/x.rs"),
    );
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

/// The working line's clock moves; the snapshot keeps its words only.
fn without_clock(screen: &str) -> String {
    screen
        .lines()
        .map(|l| match l.find("Working…") {
            Some(at) => format!("{}Working… <t>{}", &l[..at.saturating_sub(4)], {
                let rest = &l[at..];
                rest.find(" · ").map_or("", |i| &rest[i..])
            }),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_working_session_at_80_by_24() {
    let (mut app, _rx) = app();
    session(&mut app);
    let text = without_clock(&screen(&mut app, 80, 24));
    insta::assert_snapshot!("session_80x24", text);
    assert!(text.contains("● Edit(src/parse.rs)"), "{text}");
    assert!(text.contains("Explore"), "{text}");
    assert!(
        text.contains("◇ Explore: map the crate"),
        "the pill:\n{text}"
    );
    assert!(text.contains("claude-sonnet-4-5"), "{text}");
    assert!(text.contains("esc to interrupt"), "{text}");
}

#[test]
fn a_working_session_at_40_columns() {
    let (mut app, _rx) = app();
    session(&mut app);
    let text = without_clock(&screen(&mut app, 40, 20));
    insta::assert_snapshot!("session_40x20", text);
    assert!(text.lines().all(|l| l.chars().count() <= 40));
}

#[test]
fn a_subagents_permission_question_replaces_the_input() {
    let (mut app, _rx) = app();
    session(&mut app);
    app.handle_ui_event(UiEvent::Permission(PermissionAsk {
        id: 1,
        agent: AgentRef::subagent("a1", "t2", "Explore", "map the crate"),
        tool: "Bash".into(),
        input: json!({"command": "rm -rf target"}),
        description: "Bash command `rm -rf target`".into(),
        suggested_rule: Some("Bash(rm:*)".into()),
        forwardable: false,
        change: None,
    }));
    let text = without_clock(&screen(&mut app, 80, 24));
    insta::assert_snapshot!("permission_80x24", text);
    assert!(text.contains("asked by Explore"), "{text}");
    assert!(text.contains("rm -rf target"), "{text}");
    assert!(
        !text.contains("for commands"),
        "the input is hidden meanwhile:\n{text}"
    );
}

/// An attacker's text — a file the model read, a command's output, the model's own reply, a
/// permission question's input — must not reach the terminal as escape sequences: a cell
/// holding ESC would let it retitle the window, write the clipboard (OSC 52) or paint over
/// the screen. Every cell drawn is free of control characters.
#[test]
fn escape_sequences_in_any_text_never_reach_the_terminal() {
    let (mut app, _rx) = app();
    let evil = "ok\u{1b}]52;c;cGF5bG9hZA==\u{7}\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\r done";
    let main = AgentRef::main();
    send(
        &mut app,
        &main,
        EventKind::TextDelta(format!("reply {evil}\n")),
    );
    send(
        &mut app,
        &main,
        tool_use("e1", "Bash", json!({"command": format!("echo {evil}")})),
    );
    send(&mut app, &main, result("e1", "Bash", evil));
    send(
        &mut app,
        &main,
        tool_use("e2", "Read", json!({"file_path": format!("x{evil}.rs")})),
    );
    app.handle_ui_event(UiEvent::Notice {
        level: fleet_tui::port::NoticeLevel::Error,
        text: evil.into(),
    });
    app.handle_ui_event(UiEvent::ShellDone {
        command: format!("cat {evil}"),
        output: evil.into(),
        exit_code: Some(1),
    });
    app.handle_ui_event(UiEvent::Permission(PermissionAsk {
        id: 9,
        agent: AgentRef::subagent("a9", "t9", evil, evil),
        tool: "Bash".into(),
        input: json!({"command": evil}),
        description: evil.into(),
        suggested_rule: Some(evil.into()),
        forwardable: false,
        change: None,
    }));
    for (w, h) in [(80, 40), (30, 40)] {
        let text = screen(&mut app, w, h);
        // The text is shown (its printable part), only the control characters are gone.
        assert!(text.contains("asked by"), "{text}");
        assert!(text.contains("pwned"), "{text}");
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|frame| app.draw(frame)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        for cell in buffer.content() {
            assert!(
                !cell.symbol().chars().any(char::is_control),
                "a control character reached the screen: {:?}",
                cell.symbol()
            );
        }
    }
}
