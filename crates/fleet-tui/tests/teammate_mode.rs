//! A pane teammate's screen: the header naming it (at 80 and 30 columns, coloured and
//! mono), mail on the whole screen, and the permission prompt's fifth answer, which hands
//! the question to the lead.
#![allow(clippy::unwrap_used)]

use crate::panes_support;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use fleet_protocol::team::render::for_teammate;
use fleet_protocol::{AgentEvent, AgentRef, CommittedMessage, EventKind, MailEntry, Message};
use fleet_tui::app::{App, UiOptions};
use fleet_tui::panes::permission::PermissionPrompt;
use fleet_tui::panes::teammate;
use fleet_tui::port::{
    PermissionAnswer, PermissionAsk, StatusUpdate, TeammateIdentity, UiCommand, UiEvent,
};
use fleet_tui::theme::Theme;
use panes_support::{draw, text};
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;
use serde_json::json;
use tokio::sync::mpsc;

fn alpha() -> TeammateIdentity {
    TeammateIdentity {
        name: "alpha".into(),
        team: "session-1a2b3c4d".into(),
        color: "blue".into(),
        agent_type: "general-purpose".into(),
    }
}

fn header(identity: &TeammateIdentity, width: u16, theme: &Theme) -> ratatui::buffer::Buffer {
    draw(width, 1, |area, buf| {
        teammate::render(identity, area, buf, theme)
    })
}

#[test]
fn the_header_at_80_columns_names_the_teammate_its_team_type_and_lead() {
    let screen = text(&header(&alpha(), 80, &Theme::mono()));
    insta::assert_snapshot!("header_80", screen);
    assert_eq!(
        screen,
        "● alpha · teammate in session-1a2b3c4d · general-purpose · lead: team-lead"
    );
}

#[test]
fn the_header_at_30_columns_keeps_the_name_and_the_mode() {
    let screen = text(&header(&alpha(), 30, &Theme::mono()));
    insta::assert_snapshot!("header_30", screen);
    assert_eq!(screen, "● alpha · teammate in session…");
    // In between, the lead goes first, then the agent type.
    let mid = text(&header(&alpha(), 60, &Theme::mono()));
    assert_eq!(
        mid,
        "● alpha · teammate in session-1a2b3c4d · general-purpose"
    );
    let less = text(&header(&alpha(), 45, &Theme::mono()));
    assert_eq!(less, "● alpha · teammate in session-1a2b3c4d");
    for width in [0, 1, 2, 5, 9] {
        let row = text(&header(&alpha(), width, &Theme::mono()));
        assert!(row.chars().count() <= usize::from(width), "{row:?}");
    }
}

#[test]
fn the_name_is_in_the_teammates_colour_and_bold_without_colour() {
    let buf = header(&alpha(), 80, &Theme::dark());
    assert_eq!(buf[(2, 0)].symbol(), "a");
    assert_eq!(buf[(2, 0)].fg, Color::LightBlue);
    assert_eq!(buf[(0, 0)].fg, Color::LightBlue, "the dot too");
    let purple = TeammateIdentity {
        color: "purple".into(),
        ..alpha()
    };
    assert_eq!(
        header(&purple, 80, &Theme::dark())[(2, 0)].fg,
        Color::Magenta
    );
    let mono = header(&alpha(), 80, &Theme::mono());
    assert_eq!(mono[(2, 0)].fg, Color::Reset);
    assert!(mono[(2, 0)].modifier.contains(Modifier::BOLD));
    // A colour fleet does not know: bold, no colour, and the words are the same.
    let odd = TeammateIdentity {
        color: "chartreuse".into(),
        ..alpha()
    };
    let buf = header(&odd, 80, &Theme::dark());
    assert_eq!(buf[(2, 0)].fg, Color::Reset);
    assert!(text(&buf).starts_with("● alpha · teammate in"));
}

#[test]
fn control_characters_in_an_identity_are_inert() {
    let evil = TeammateIdentity {
        name: "al\u{1b}]0;pwned\u{7}pha".into(),
        team: "t\neam".into(),
        ..alpha()
    };
    let buf = header(&evil, 80, &Theme::dark());
    assert!(buf
        .content()
        .iter()
        .all(|c| !c.symbol().chars().any(char::is_control)));
    assert!(text(&buf).contains("t eam"), "{}", text(&buf));
}

struct Pane {
    app: App,
    commands: mpsc::UnboundedReceiver<UiCommand>,
}

fn pane() -> Pane {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut app = App::new(
        UiOptions {
            theme: Theme::mono(),
            status: StatusUpdate {
                model: Some("claude-sonnet-4-5".into()),
                permission_mode: Some(fleet_protocol::PermissionMode::Default),
                ..Default::default()
            },
            ..Default::default()
        },
        tx,
    );
    app.handle_ui_event(UiEvent::Identity(alpha()));
    Pane { app, commands: rx }
}

impl Pane {
    fn screen(&mut self, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| self.app.draw(frame)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        let mut rows = Vec::new();
        for y in 0..buffer.area.height {
            let row: String = (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect();
            rows.push(row.trim_end().to_string());
        }
        rows.join("\n")
    }

    fn mail(&mut self, entries: &[MailEntry]) {
        self.app.handle_ui_event(UiEvent::Agent(AgentEvent {
            agent: AgentRef::main(),
            kind: EventKind::MessageCommitted(CommittedMessage {
                message: Message::user_text(for_teammate(entries)),
                reply: None,
                tool_results: Vec::new(),
                mail_ids: vec!["m1".into()],
            }),
        }));
    }

    fn key(&mut self, code: KeyCode) {
        self.app
            .handle_terminal_event(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    fn sent(&mut self) -> Vec<UiCommand> {
        let mut all = Vec::new();
        while let Ok(command) = self.commands.try_recv() {
            all.push(command);
        }
        all
    }
}

fn lead_says(text: &str) -> MailEntry {
    MailEntry::new("team-lead", text, "2026-12-01T17:00:00.000Z", "m1")
        .with_summary(Some("hello".into()))
}

#[test]
fn a_teammates_screen_has_its_header_on_top_and_mail_as_mail() {
    let mut p = pane();
    p.mail(&[lead_says("Write notes on the parser.")]);
    let screen = p.screen(80, 12);
    insta::assert_snapshot!("pane_80x12", screen);
    let first = screen.lines().next().unwrap();
    assert!(
        first.starts_with("● alpha · teammate in session-1a2b3c4d"),
        "{screen}"
    );
    assert!(screen.contains("✉ team-lead · hello"), "{screen}");
    assert!(
        screen.contains("claude-sonnet-4-5"),
        "the status line stays:\n{screen}"
    );
    let narrow = p.screen(30, 12);
    assert!(narrow.lines().all(|l| l.chars().count() <= 30), "{narrow}");
    assert!(narrow.starts_with("● alpha · teammate in"), "{narrow}");
}

#[test]
fn without_an_identity_there_is_no_header() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut app = App::new(UiOptions::default(), tx);
    let mut terminal = Terminal::new(TestBackend::new(80, 6)).unwrap();
    terminal.draw(|frame| app.draw(frame)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    assert!(buffer.content().iter().all(|c| c.symbol() != "●"));
    assert!(app.identity().is_none());
}

#[test]
fn mail_arriving_does_not_take_up_a_queued_prompt() {
    let mut p = pane();
    p.app.handle_terminal_event(Event::Key(KeyEvent::new(
        KeyCode::Char('x'),
        KeyModifiers::NONE,
    )));
    p.key(KeyCode::Enter);
    assert_eq!(p.sent(), vec![UiCommand::Submit("x".into())]);
    p.mail(&[lead_says("more work")]);
    let screen = p.screen(80, 14);
    assert!(screen.contains("queued: x"), "{screen}");
}

fn forwardable(forwardable: bool) -> PermissionAsk {
    PermissionAsk {
        id: 3,
        agent: AgentRef::main(),
        tool: "Bash".into(),
        input: json!({"command": "rm -rf build"}),
        description: "Bash command `rm -rf build`".into(),
        suggested_rule: Some("Bash(rm:*)".into()),
        forwardable,
        change: None,
    }
}

fn prompt_text(ask: PermissionAsk, width: u16) -> String {
    let prompt = PermissionPrompt::new(ask);
    let height = prompt.height(width);
    text(&draw(width, height, |area, buf| {
        prompt.render(area, buf, &Theme::mono())
    }))
}

#[test]
fn a_forwardable_question_offers_to_ask_the_lead() {
    let screen = prompt_text(forwardable(true), 80);
    insta::assert_snapshot!("permission_forwardable_80", screen);
    assert!(
        screen.contains("5. Ask team-lead (their answer comes back by mail) (l)"),
        "{screen}"
    );
    let narrow = prompt_text(forwardable(true), 30);
    insta::assert_snapshot!("permission_forwardable_30", narrow);
    assert!(narrow.contains("5. Ask team-lead"), "{narrow}");
}

#[test]
fn a_question_that_cannot_be_forwarded_has_four_answers() {
    let screen = prompt_text(forwardable(false), 80);
    assert!(screen.contains("4. No, and tell the model"), "{screen}");
    assert!(!screen.contains("5."), "{screen}");
    assert!(!screen.contains("team-lead"), "{screen}");
}

#[test]
fn five_or_l_or_the_fifth_row_answers_ask_lead() {
    let ask_lead = vec![UiCommand::Answer {
        id: 3,
        answer: PermissionAnswer::AskLead,
    }];
    for keys in [
        vec![KeyCode::Char('5')],
        vec![KeyCode::Char('l')],
        vec![KeyCode::Down; 4]
            .into_iter()
            .chain([KeyCode::Enter])
            .collect(),
    ] {
        let mut p = pane();
        p.app
            .handle_ui_event(UiEvent::Permission(forwardable(true)));
        for code in keys.clone() {
            p.key(code);
        }
        assert_eq!(p.sent(), ask_lead, "{keys:?}");
    }
}

#[test]
fn without_forwarding_five_and_l_do_nothing() {
    let mut p = pane();
    p.app
        .handle_ui_event(UiEvent::Permission(forwardable(false)));
    p.key(KeyCode::Char('5'));
    p.key(KeyCode::Char('l'));
    assert_eq!(p.sent(), Vec::new());
    p.key(KeyCode::Char('n'));
    assert_eq!(
        p.sent(),
        vec![UiCommand::Answer {
            id: 3,
            answer: PermissionAnswer::Deny
        }]
    );
}
