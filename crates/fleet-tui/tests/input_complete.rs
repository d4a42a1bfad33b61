//! `@` path completion over a real folder, and `/` command completion.

use crate::input_support;

use crossterm::event::KeyCode;
use fleet_tui::input::{Composer, ComposerAction};
use input_support::*;
use std::path::Path;

fn write(root: &Path, path: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, "x").expect("write");
}

/// A small repository: sources, an ignored build folder and file, hidden files.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), "target/\nsecret.rs\n").expect("gitignore");
    for path in [
        "src/lib.rs",
        "src/main.rs",
        "src/label/bars.rs",
        "docs/library-rules.md",
        "Cargo.toml",
        "secret.rs",
        "target/debug/lib.rs",
        ".hidden/lbrs.rs",
        ".claude/commands/review.md",
    ] {
        write(root, path);
    }
    dir
}

/// Waits (bounded) for the background walk, then answers the rows drawn.
fn popup_rows(c: &Composer, width: u16) -> Vec<String> {
    for _ in 0..2_000 {
        if !c.is_indexing() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(!c.is_indexing(), "the file index never finished");
    lines(c, width).into_iter().skip(1).collect()
}

#[test]
fn at_completion_is_fuzzy_gitignore_aware_and_skips_hidden_files() {
    let repo = repo();
    let mut c = composer_in(repo.path());
    type_text(&mut c, "look at @lbrs");
    let rows = popup_rows(&c, 80);
    assert_eq!(
        rows.first().map(String::as_str),
        Some("› src/lib.rs"),
        "{rows:#?}"
    );
    assert!(
        rows.iter().any(|r| r.contains("src/label/bars.rs")),
        "{rows:#?}"
    );
    for absent in ["target/", "secret.rs", ".hidden"] {
        assert!(
            !rows.iter().any(|r| r.contains(absent)),
            "{absent}: {rows:#?}"
        );
    }
    assert_eq!(c.handle_key(key(KeyCode::Tab)), ComposerAction::Handled);
    assert_eq!(c.text(), "look at @src/lib.rs ");
    assert_eq!(lines(&c, 80), ["> look at @src/lib.rs"], "the popup closed");
}

#[test]
fn claude_folder_is_indexed_and_ignored_files_are_not() {
    let repo = repo();
    let mut c = composer_in(repo.path());
    type_text(&mut c, "@review");
    assert_eq!(popup_rows(&c, 80), ["› .claude/commands/review.md"]);
    c.clear();
    type_text(&mut c, "@secret");
    assert_eq!(popup_rows(&c, 80), ["  no matching files"]);
}

#[test]
fn arrows_select_enter_accepts_and_esc_closes_without_interrupting() {
    let repo = repo();
    let mut c = composer_in(repo.path());
    type_text(&mut c, "@src");
    let rows = popup_rows(&c, 80);
    assert!(rows.len() >= 3, "{rows:#?}");
    let second = rows[1].trim_start().to_string();
    c.handle_key(key(KeyCode::Down));
    assert_eq!(lines(&c, 80)[2], format!("› {second}"));
    assert_eq!(
        c.handle_key(enter()),
        ComposerAction::Handled,
        "Enter accepted, not sent"
    );
    assert_eq!(c.text(), format!("@{second} "));

    type_text(&mut c, "@Carg");
    popup_rows(&c, 80);
    assert_eq!(c.handle_key(key(KeyCode::Esc)), ComposerAction::Handled);
    assert_eq!(lines(&c, 80).len(), 1, "popup closed");
    type_text(&mut c, "o");
    assert_eq!(lines(&c, 80).len(), 1, "stays closed for the same word");
    assert_eq!(c.handle_key(key(KeyCode::Esc)), ComposerAction::Unhandled);
}

#[test]
fn slash_co_offers_compact_and_cost() {
    let mut c = composer();
    type_text(&mut c, "/co");
    let rows = lines(&c, 80);
    assert_eq!(rows.len(), 3, "{rows:#?}");
    assert!(
        rows[1].starts_with("› /compact [instructions]"),
        "{rows:#?}"
    );
    assert!(rows[1].contains("Summarise the conversation"), "{rows:#?}");
    assert!(rows[2].starts_with("  /cost"), "{rows:#?}");
    assert_eq!(c.handle_key(key(KeyCode::Tab)), ComposerAction::Handled);
    assert_eq!(c.text(), "/compact ");
    type_text(&mut c, "keep tests");
    assert_eq!(
        c.handle_key(enter()),
        ComposerAction::Command {
            name: "compact".into(),
            args: "keep tests".into()
        }
    );
}

#[test]
fn enter_in_the_command_popup_runs_the_selection_or_the_exact_name() {
    let mut c = composer();
    type_text(&mut c, "/co");
    c.handle_key(key(KeyCode::Down));
    assert_eq!(
        c.handle_key(enter()),
        ComposerAction::Command {
            name: "cost".into(),
            args: String::new()
        }
    );
    assert!(c.is_empty());
    type_text(&mut c, "/exit");
    assert_eq!(
        c.handle_key(enter()),
        ComposerAction::Command {
            name: "exit".into(),
            args: String::new()
        }
    );
    // Fuzzy: "prm" is permissions.
    type_text(&mut c, "/prm");
    assert!(lines(&c, 80)[1].starts_with("› /permissions"));
}

#[test]
fn at_inside_a_word_or_slash_later_in_the_text_opens_nothing() {
    let mut c = composer();
    type_text(&mut c, "mail me@example.com about a/b");
    assert_eq!(lines(&c, 80).len(), 1);
    assert!(!c.is_indexing());
}
