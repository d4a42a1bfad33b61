//! The `/agents new` form and the confirm box.

use crate::panes_support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fleet_tui::panes::agent_form::{AgentForm, FormResult};
use fleet_tui::panes::confirm::Confirm;
use fleet_tui::port::NewAgent;
use fleet_tui::theme::Theme;
use panes_support::{ch, ctrl, draw, key, text, typed};

fn form_screen(form: &AgentForm, width: u16) -> String {
    text(&draw(width, form.height(width), |a, b| {
        form.render(a, b, &Theme::mono())
    }))
}

fn type_into(form: &mut AgentForm, s: &str) {
    for k in typed(s) {
        assert_eq!(form.handle_key(k), None);
    }
}

#[test]
fn a_bad_name_and_missing_prompt_are_shown_not_submitted() {
    let mut form = AgentForm::new();
    type_into(&mut form, "Code Reviewer");
    form.handle_key(key(KeyCode::Tab));
    type_into(&mut form, "Reviews diffs before a commit");
    assert_eq!(form.handle_key(ctrl('s')), None);
    let wide = form_screen(&form, 80);
    assert!(
        wide.contains("✗ use lowercase letters, digits and hyphens"),
        "{wide}"
    );
    assert!(wide.contains("✗ a prompt is required"), "{wide}");
    assert!(!wide.contains("say when to use"), "{wide}");
    // The focus went back to the first field at fault.
    assert!(wide.contains("❯ Name"), "{wide}");
    insta::assert_snapshot!("form_errors_80", wide);
    insta::assert_snapshot!("form_errors_30", form_screen(&form, 30));
}

#[test]
fn a_filled_form_submits_from_the_last_row() {
    let mut form = AgentForm::new();
    type_into(&mut form, "code-reviewer");
    form.handle_key(key(KeyCode::Tab));
    type_into(&mut form, "Reviews diffs");
    form.handle_key(key(KeyCode::Enter));
    type_into(&mut form, "Read, Grep ,, Glob");
    form.handle_key(key(KeyCode::Down));
    form.handle_paste("You review code.\nBe brief.");
    form.handle_key(key(KeyCode::Tab));
    // On the scope row, Tab and space toggle the scope.
    form.handle_key(ch(' '));
    let screen = form_screen(&form, 80);
    assert!(screen.contains("( ) project  (•) user"), "{screen}");
    form.handle_key(key(KeyCode::Tab));
    assert_eq!(
        form.handle_key(key(KeyCode::Enter)),
        Some(FormResult::Done(NewAgent {
            name: "code-reviewer".into(),
            description: "Reviews diffs".into(),
            tools: "Read, Grep, Glob".into(),
            prompt: "You review code. Be brief.".into(),
            scope: "project".into(),
        }))
    );
}

#[test]
fn fields_move_back_and_forth_and_esc_cancels() {
    let mut form = AgentForm::new();
    type_into(&mut form, "x");
    form.handle_key(key(KeyCode::Tab));
    form.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    type_into(&mut form, "y");
    form.handle_key(key(KeyCode::Up));
    type_into(&mut form, "z");
    let screen = form_screen(&form, 80);
    assert!(screen.contains("❯ Name         xyz"), "{screen}");
    assert_eq!(
        form.handle_key(key(KeyCode::Esc)),
        Some(FormResult::Cancelled)
    );
    let empty = AgentForm::new();
    let screen = form_screen(&empty, 80);
    assert!(screen.contains("all tools"), "{screen}");
    for w in 0..5 {
        draw(w, 3, |a, b| empty.render(a, b, &Theme::dark()));
    }
}

#[test]
fn an_empty_form_names_every_required_field() {
    let mut form = AgentForm::new();
    for _ in 0..4 {
        form.handle_key(key(KeyCode::Tab));
    }
    assert_eq!(form.handle_key(key(KeyCode::Enter)), None);
    let screen = form_screen(&form, 80);
    assert!(screen.contains("✗ a name is required"), "{screen}");
    assert!(screen.contains("✗ say when to use this agent"), "{screen}");
    assert!(screen.contains("✗ a prompt is required"), "{screen}");
    // Typing in a field clears its message.
    type_into(&mut form, "ok");
    assert!(!form_screen(&form, 80).contains("a name is required"));
}

fn quit_question() -> Confirm {
    Confirm::new(
        "2 background tasks are running. Quit?",
        vec![
            ('s', "stop them and quit".into()),
            ('w', "wait for them".into()),
            ('c', "cancel".into()),
        ],
    )
}

#[test]
fn confirm_at_80_and_30_columns() {
    let confirm = quit_question();
    let render = |w: u16| {
        text(&draw(w, confirm.height(w), |a, b| {
            confirm.render(a, b, &Theme::mono())
        }))
    };
    let wide = render(80);
    assert!(
        wide.contains("(s) stop them and quit · (w) wait for them · (c) cancel"),
        "{wide}"
    );
    insta::assert_snapshot!("confirm_80", wide);
    let narrow = render(30);
    assert!(narrow.contains("❯ (s) stop them and quit"), "{narrow}");
    insta::assert_snapshot!("confirm_30", narrow);
}

#[test]
fn confirm_answers_by_letter_enter_and_esc() {
    assert_eq!(quit_question().handle_key(ch('w')), Some('w'));
    assert_eq!(quit_question().handle_key(ch('S')), Some('s'));
    assert_eq!(quit_question().handle_key(ch('q')), None);
    assert_eq!(quit_question().handle_key(key(KeyCode::Esc)), Some('c'));
    let mut c = quit_question();
    c.handle_key(key(KeyCode::Right));
    assert_eq!(c.handle_key(key(KeyCode::Enter)), Some('w'));
    let mut none = Confirm::new("?", Vec::new());
    assert_eq!(none.handle_key(key(KeyCode::Esc)), None);
    assert_eq!(none.handle_key(key(KeyCode::Enter)), None);
}
