//! Bracketed paste: large text collapsed to one atomic token, inlined again on submit.

use crate::input_support;

use crossterm::event::KeyCode;
use fleet_tui::input::ComposerAction;
use input_support::*;

fn log_lines(n: usize, eol: &str) -> String {
    (1..=n).map(|i| format!("line {i}{eol}")).collect()
}

#[test]
fn a_240_line_paste_is_shown_collapsed_and_submitted_whole() {
    let mut c = composer();
    type_text(&mut c, "see: ");
    c.handle_paste(&log_lines(240, "\r\n"));
    type_text(&mut c, " why?");
    assert_eq!(lines(&c, 80), ["> see: [pasted 240 lines] why?"]);
    assert_eq!(c.height(80), 1, "the box does not grow with the paste");
    let expected = format!("see: {} why?", log_lines(240, "\n"));
    assert_eq!(c.handle_key(enter()), ComposerAction::Submit(expected));
}

#[test]
fn backspace_removes_the_token_whole() {
    let mut c = composer();
    type_text(&mut c, "a ");
    c.handle_paste(&log_lines(50, "\n"));
    c.handle_key(key(KeyCode::Backspace));
    assert_eq!(c.text(), "a ");
    assert_eq!(lines(&c, 80), ["> a"]);
}

#[test]
fn the_cursor_steps_over_a_token_and_ctrl_w_takes_it_whole() {
    let mut c = composer();
    let pasted = log_lines(20, "\n");
    c.handle_paste(&pasted);
    type_text(&mut c, "x");
    c.handle_key(key(KeyCode::Left));
    c.handle_key(key(KeyCode::Left));
    type_text(&mut c, "y");
    assert_eq!(c.text(), format!("y{pasted}x"));
    c.handle_key(key(KeyCode::Right));
    c.handle_key(ctrl('w'));
    assert_eq!(c.text(), "yx", "the token went whole, not word by word");
}

#[test]
fn later_pastes_are_numbered_and_long_lines_count_characters() {
    let mut c = composer();
    c.handle_paste(&log_lines(240, "\n"));
    c.handle_paste(&log_lines(120, "\n"));
    c.handle_paste(&"x".repeat(1500));
    assert_eq!(
        lines(&c, 80),
        ["> [pasted 240 lines][pasted #2 120 lines][pasted #3 1,500 chars]"]
    );
}

#[test]
fn small_pastes_go_in_as_they_are_with_line_breaks_normalised() {
    let mut c = composer();
    c.handle_paste("fn main() {\r\n    run();\r\n}");
    assert_eq!(c.text(), "fn main() {\n    run();\n}");
    assert_eq!(lines(&c, 80), ["> fn main() {", "      run();", "  }"]);
}
