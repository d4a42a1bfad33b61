//! Typing, moving, deleting, and what Enter turns the text into.

use crate::input_support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fleet_tui::input::ComposerAction;
use input_support::*;

#[test]
fn typing_then_enter_submits_the_text_and_empties_the_box() {
    let mut c = composer();
    assert!(c.is_empty());
    assert_eq!(
        submit(&mut c, "hello world"),
        ComposerAction::Submit("hello world".into())
    );
    assert!(c.is_empty());
}

#[test]
fn shift_enter_alt_enter_and_backslash_enter_insert_newlines() {
    let mut c = composer();
    type_text(&mut c, "one");
    c.handle_key(shift(KeyCode::Enter));
    type_text(&mut c, "two");
    c.handle_key(alt(KeyCode::Enter));
    type_text(&mut c, "three\\");
    assert_eq!(c.handle_key(enter()), ComposerAction::Handled);
    type_text(&mut c, "four");
    assert_eq!(c.text(), "one\ntwo\nthree\nfour");
    assert_eq!(
        c.handle_key(enter()),
        ComposerAction::Submit("one\ntwo\nthree\nfour".into())
    );
}

#[test]
fn bang_slash_and_plain_text_become_different_actions() {
    let mut c = composer();
    assert_eq!(
        submit(&mut c, "!ls -la"),
        ComposerAction::Shell("ls -la".into())
    );
    // Past the command name the popup is closed, so Enter submits what was typed.
    assert_eq!(
        submit(&mut c, "/compact keep the tests"),
        ComposerAction::Command {
            name: "compact".into(),
            args: "keep the tests".into()
        }
    );
    assert_eq!(
        submit(&mut c, "/frobnicate"),
        ComposerAction::Command {
            name: "frobnicate".into(),
            args: String::new()
        }
    );
    assert_eq!(
        submit(&mut c, "/usr/bin/env is odd"),
        ComposerAction::Submit("/usr/bin/env is odd".into())
    );
    assert_eq!(
        submit(&mut c, "trailing  \n"),
        ComposerAction::Submit("trailing".into())
    );
}

#[test]
fn empty_or_blank_input_sends_nothing() {
    let mut c = composer();
    assert_eq!(c.handle_key(enter()), ComposerAction::Handled);
    assert_eq!(submit(&mut c, "   "), ComposerAction::Handled);
    assert!(c.is_empty());
}

#[test]
fn keys_the_composer_does_not_use_are_left_to_the_app() {
    let mut c = composer();
    type_text(&mut c, "draft");
    for event in [
        key(KeyCode::Esc),
        ctrl('c'),
        ctrl('d'),
        ctrl('b'),
        ctrl('o'),
        ctrl('t'),
        key(KeyCode::BackTab),
        KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT),
        key(KeyCode::PageUp),
        key(KeyCode::PageDown),
        key(KeyCode::Tab),
    ] {
        assert_eq!(c.handle_key(event), ComposerAction::Unhandled, "{event:?}");
    }
    assert_eq!(c.text(), "draft", "unhandled keys leave the text alone");
}

#[test]
fn word_and_line_editing_keys() {
    let mut c = composer();
    type_text(&mut c, "one two three");
    c.handle_key(ctrl('w'));
    assert_eq!(c.text(), "one two ");
    c.handle_key(ctrl('a'));
    type_text(&mut c, ">");
    assert_eq!(c.text(), ">one two ");
    c.handle_key(alt(KeyCode::Right));
    c.handle_key(ctrl('k'));
    assert_eq!(c.text(), ">one");
    c.handle_key(alt(KeyCode::Left));
    c.handle_key(key(KeyCode::Delete));
    assert_eq!(c.text(), "one");
    c.handle_key(key(KeyCode::End));
    type_text(&mut c, "\nsecond line");
    c.handle_key(ctrl('u'));
    assert_eq!(c.text(), "one\n", "Ctrl+U stops at the line start");
    c.handle_key(key(KeyCode::Backspace));
    c.handle_key(key(KeyCode::Home));
    c.handle_key(ctrl('e'));
    type_text(&mut c, "!");
    assert_eq!(c.text(), "one!");
}

#[test]
fn wide_characters_and_emoji_move_and_delete_whole() {
    let mut c = composer();
    type_text(&mut c, "日本語");
    c.handle_key(key(KeyCode::Left));
    c.handle_key(key(KeyCode::Backspace));
    assert_eq!(c.text(), "日語");
    // The cursor sits after 日 (two columns) past the two-column prompt.
    assert_eq!(input_support::screen(&c, 80).1, Some((4, 0)));
    c.clear();
    c.handle_paste("ok 👍🏽");
    c.handle_key(key(KeyCode::Backspace));
    assert_eq!(c.text(), "ok ");
}

#[test]
fn up_and_down_move_between_lines_before_reaching_history() {
    let mut c = composer();
    submit(&mut c, "older prompt");
    type_text(&mut c, "first\nsecond");
    c.handle_key(key(KeyCode::Up));
    type_text(&mut c, "X");
    assert_eq!(c.text(), "firstX\nsecond", "Up moved to the first line");
    c.handle_key(key(KeyCode::Down));
    c.handle_key(key(KeyCode::Down));
    assert_eq!(
        c.text(),
        "firstX\nsecond",
        "Down on the last line had no newer entry"
    );
    c.handle_key(key(KeyCode::Up));
    c.handle_key(key(KeyCode::Up));
    assert_eq!(
        c.text(),
        "older prompt",
        "Up on the first line reached history"
    );
}

#[test]
fn up_and_down_follow_wrapped_rows() {
    let mut c = composer();
    type_text(&mut c, "aaaa bbbb cccc dddd");
    // At 12 columns there are ten for text after "> ": it wraps at the blank.
    let (rows, cursor) = input_support::screen(&c, 12);
    assert_eq!(rows, ["> aaaa bbbb", "  cccc dddd"]);
    assert_eq!(cursor, Some((11, 1)));
    c.handle_key(key(KeyCode::Up));
    type_text(&mut c, "#");
    assert_eq!(c.text(), "aaaa bbbb# cccc dddd", "Up kept the column");
    c.handle_key(key(KeyCode::Home));
    c.handle_key(key(KeyCode::Down));
    type_text(&mut c, "@");
    // "aaaa bbbb# " no longer fits ten columns: the rows are now
    // "aaaa " / "bbbb# " / "cccc dddd", and Down from the start lands on the second.
    assert_eq!(
        c.text(),
        "aaaa @bbbb# cccc dddd",
        "Down went to the row below"
    );
}

#[test]
fn the_composer_can_live_in_shared_state() {
    fn shareable<T: Send + Sync>() {}
    shareable::<fleet_tui::input::Composer>();
}
