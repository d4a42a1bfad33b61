//! History: Up/Down browsing with the draft kept, the JSON-lines file, Ctrl+R search.

use crate::input_support;

use crossterm::event::KeyCode;
use fleet_tui::input::{Composer, ComposerAction, ComposerContext};
use input_support::*;
use std::path::PathBuf;

fn with_file(file: PathBuf) -> Composer {
    Composer::new(ComposerContext {
        cwd: PathBuf::from("."),
        history_file: Some(file),
        commands: Vec::new(),
    })
}

fn up(c: &mut Composer) -> String {
    assert_eq!(c.handle_key(key(KeyCode::Up)), ComposerAction::Handled);
    c.text()
}

fn down(c: &mut Composer) -> String {
    assert_eq!(c.handle_key(key(KeyCode::Down)), ComposerAction::Handled);
    c.text()
}

#[test]
fn up_and_down_browse_submissions_and_bring_the_draft_back() {
    let mut c = composer();
    submit(&mut c, "first");
    submit(&mut c, "!cargo test");
    submit(&mut c, "second");
    submit(&mut c, "second");
    type_text(&mut c, "half-typed");
    assert_eq!(up(&mut c), "second");
    assert_eq!(
        up(&mut c),
        "!cargo test",
        "the repeated prompt is kept once"
    );
    assert_eq!(up(&mut c), "first");
    assert_eq!(up(&mut c), "first", "nothing older: the oldest stays");
    assert_eq!(down(&mut c), "!cargo test");
    assert_eq!(down(&mut c), "second");
    assert_eq!(down(&mut c), "half-typed", "past the newest: the draft");
    assert_eq!(down(&mut c), "half-typed");
}

#[test]
fn an_edited_entry_becomes_the_new_draft() {
    let mut c = composer();
    submit(&mut c, "one");
    submit(&mut c, "two");
    up(&mut c);
    type_text(&mut c, "!");
    assert_eq!(up(&mut c), "two");
    assert_eq!(down(&mut c), "two!");
}

#[test]
fn history_is_kept_in_the_file_across_composers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("state").join("history.jsonl");
    let mut first = with_file(file.clone());
    submit(&mut first, "alpha\nwith two lines");
    submit(&mut first, "!ls");
    assert_eq!(
        submit(&mut first, "/cost"),
        ComposerAction::Command {
            name: "cost".into(),
            args: String::new()
        }
    );
    drop(first);

    // A corrupt line (a crash mid-write, a hand edit) is skipped, the rest still loads.
    let mut content = std::fs::read_to_string(&file).expect("history written");
    assert_eq!(content.lines().count(), 3);
    content.push_str("{not json\n");
    std::fs::write(&file, content).expect("write");

    let mut second = with_file(file.clone());
    assert_eq!(up(&mut second), "/cost");
    assert_eq!(up(&mut second), "!ls");
    assert_eq!(up(&mut second), "alpha\nwith two lines");
    second.clear();
    submit(&mut second, "beta");
    let written = std::fs::read_to_string(&file).expect("history");
    assert!(written.ends_with("{\"text\":\"beta\"}\n"), "{written}");
}

#[test]
fn only_the_last_500_entries_are_loaded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("history.jsonl");
    let lines: String = (0..600)
        .map(|i| format!("{{\"text\":\"p{i}\"}}\n"))
        .collect();
    std::fs::write(&file, lines).expect("write");
    let mut c = with_file(file);
    let mut oldest = String::new();
    for _ in 0..600 {
        oldest = up(&mut c);
    }
    assert_eq!(oldest, "p100");
}

#[test]
fn an_unwritable_history_file_does_not_stop_submitting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "").expect("write");
    let mut c = with_file(blocker.join("history.jsonl"));
    assert_eq!(
        submit(&mut c, "still works"),
        ComposerAction::Submit("still works".into())
    );
    assert_eq!(up(&mut c), "still works", "kept in memory");
}

#[test]
fn ctrl_r_finds_older_matches_and_enter_takes_one() {
    let mut c = composer();
    for prompt in ["cargo build", "git status", "cargo test --all", "ls"] {
        submit(&mut c, prompt);
    }
    type_text(&mut c, "draft");
    assert_eq!(c.handle_key(ctrl('r')), ComposerAction::Handled);
    type_text(&mut c, "cargo");
    let rows = lines(&c, 80);
    assert_eq!(
        rows.last().map(String::as_str),
        Some("search: cargo → cargo test --all")
    );
    assert_eq!(c.handle_key(ctrl('r')), ComposerAction::Handled);
    assert_eq!(
        lines(&c, 80).last().map(String::as_str),
        Some("search: cargo → cargo build")
    );
    // No older match: the one found stays.
    c.handle_key(ctrl('r'));
    assert_eq!(
        lines(&c, 80).last().map(String::as_str),
        Some("search: cargo → cargo build")
    );
    assert_eq!(
        c.handle_key(enter()),
        ComposerAction::Handled,
        "Enter accepts, not submits"
    );
    assert_eq!(c.text(), "cargo build");
    assert_eq!(lines(&c, 80), ["> cargo build"], "the search line is gone");
}

#[test]
fn ctrl_r_esc_restores_the_text_and_a_miss_says_so() {
    let mut c = composer();
    submit(&mut c, "git status");
    type_text(&mut c, "draft");
    c.handle_key(ctrl('r'));
    type_text(&mut c, "zzz");
    assert_eq!(
        lines(&c, 80).last().map(String::as_str),
        Some("search: zzz (no match)")
    );
    c.handle_key(key(KeyCode::Backspace));
    c.handle_key(key(KeyCode::Backspace));
    c.handle_key(key(KeyCode::Backspace));
    type_text(&mut c, "STAT");
    assert_eq!(
        lines(&c, 80).last().map(String::as_str),
        Some("search: STAT → git status"),
        "case is ignored"
    );
    assert_eq!(c.handle_key(key(KeyCode::Esc)), ComposerAction::Handled);
    assert_eq!(c.text(), "draft");
    assert_eq!(c.handle_key(key(KeyCode::Esc)), ComposerAction::Unhandled);
}

#[test]
fn during_search_moves_take_the_match_and_app_keys_pass_through() {
    let mut c = composer();
    submit(&mut c, "cargo build");
    submit(&mut c, "ls");
    c.handle_key(ctrl('r'));
    type_text(&mut c, "carg");
    assert_eq!(
        c.handle_key(ctrl('b')),
        ComposerAction::Unhandled,
        "Ctrl+B is the app's"
    );
    assert!(lines(&c, 80)
        .last()
        .is_some_and(|l| l.starts_with("search: carg")));
    c.handle_key(key(KeyCode::Left));
    type_text(&mut c, "!");
    assert_eq!(c.text(), "cargo buil!d");

    c.clear();
    c.handle_key(ctrl('r'));
    type_text(&mut c, "ls");
    assert_eq!(c.handle_key(key(KeyCode::Up)), ComposerAction::Handled);
    assert_eq!(c.text(), "ls", "Up took the match, not an older entry");
    assert_eq!(lines(&c, 80), ["> ls"]);

    c.handle_key(ctrl('r'));
    assert_eq!(
        c.handle_key(ctrl('c')),
        ComposerAction::Unhandled,
        "Ctrl+C reaches the app"
    );
    assert_eq!(lines(&c, 80), ["> ls"], "and the search is over");
}

/// A pasted secret in a prompt must not become readable by other users of the machine.
#[test]
fn the_history_file_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("history.jsonl");
    let mut c = with_file(file.clone());
    submit(&mut c, "token sk-secret");
    let mode = std::fs::metadata(&file)
        .expect("written")
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "history mode {mode:o}");
}
