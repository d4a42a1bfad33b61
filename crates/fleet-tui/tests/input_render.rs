//! How the composer looks at 80 and 30 columns, with and without a popup, and that no width
//! or height makes it panic.

use crate::input_support;

use crossterm::event::KeyCode;
use fleet_tui::input::commands::builtin;
use fleet_tui::input::MAX_TEXT_ROWS;
use fleet_tui::theme::Theme;
use input_support::*;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

#[test]
fn empty_box_shows_the_placeholder() {
    let c = composer();
    insta::assert_snapshot!("empty_80", snapshot(&c, 80));
    insta::assert_snapshot!("empty_30", snapshot(&c, 30));
    assert_eq!(
        lines(&c, 80),
        ["> Type a message · / for commands · @ for files · ! for shell"]
    );
    assert_eq!(lines(&c, 30), ["> Type a message · / for comm…"]);
    assert_eq!(screen(&c, 80).1, Some((2, 0)));
}

#[test]
fn command_popup_at_80_and_30_columns() {
    let mut c = composer();
    type_text(&mut c, "/");
    assert_eq!(c.height(80), 1 + 8, "eight commands shown at most");
    insta::assert_snapshot!("commands_80", snapshot(&c, 80));
    insta::assert_snapshot!("commands_30", snapshot(&c, 30));
    let narrow = lines(&c, 30);
    assert!(narrow[1].starts_with("› /help"), "{narrow:#?}");
    assert!(narrow
        .iter()
        .all(|l| unicode_width::UnicodeWidthStr::width(l.as_str()) <= 30));
    // Moving past the eighth scrolls the list so the selection stays in view.
    for _ in 0..9 {
        c.handle_key(key(KeyCode::Down));
    }
    let rows = lines(&c, 80);
    assert!(
        rows.last().is_some_and(|r| r.starts_with("› /mcp")),
        "{rows:#?}"
    );
}

#[test]
fn file_popup_at_80_and_30_columns() {
    let dir = tempfile::tempdir().expect("tempdir");
    for path in [
        "src/lib.rs",
        "src/input/complete/fuzzy_matching_for_paths.rs",
    ] {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, "").expect("write");
    }
    let mut c = composer_in(dir.path());
    type_text(&mut c, "read @s");
    for _ in 0..2_000 {
        if !c.is_indexing() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    insta::assert_snapshot!("files_80", snapshot(&c, 80));
    insta::assert_snapshot!("files_30", snapshot(&c, 30));
    assert_eq!(
        lines(&c, 30),
        [
            "> read @s",
            "› src/lib.rs",
            "  src/input/complete/fuzzy_ma…"
        ]
    );
}

#[test]
fn wrapped_text_with_wide_characters() {
    let mut c = composer();
    type_text(
        &mut c,
        "日本語のテキストと English words 🎉 mixed\nsecond line",
    );
    insta::assert_snapshot!("wide_30", snapshot(&c, 30));
    let (rows, cursor) = screen(&c, 30);
    assert_eq!(rows[0], "> 日本語のテキストと English");
    assert!(rows
        .iter()
        .all(|l| unicode_width::UnicodeWidthStr::width(l.as_str()) <= 30));
    assert_eq!(rows.last().map(String::as_str), Some("  second line"));
    assert_eq!(cursor, Some((13, rows.len() as u16 - 1)));
}

#[test]
fn search_line_at_80_and_30_columns() {
    let mut c = composer();
    submit(
        &mut c,
        "explain the borrow checker error in src/input/keys.rs please",
    );
    c.handle_key(ctrl('r'));
    type_text(&mut c, "borrow");
    insta::assert_snapshot!("search_80", snapshot(&c, 80));
    insta::assert_snapshot!("search_30", snapshot(&c, 30));
}

#[test]
fn tall_text_stops_growing_and_scrolls_to_the_cursor() {
    let mut c = composer();
    let text: String = (1..=30).map(|i| format!("row {i}\n")).collect();
    type_text(&mut c, text.trim_end());
    assert_eq!(c.height(80), MAX_TEXT_ROWS as u16);
    let (rows, cursor) = screen(&c, 80);
    assert_eq!(rows.first().map(String::as_str), Some("  row 21"));
    assert_eq!(rows.last().map(String::as_str), Some("  row 30"));
    assert_eq!(cursor, Some((8, 9)));
    for _ in 0..29 {
        c.handle_key(key(KeyCode::Up));
    }
    let (rows, cursor) = screen(&c, 80);
    assert_eq!(rows.first().map(String::as_str), Some("> row 1"));
    assert_eq!(cursor.map(|(_, y)| y), Some(0));
}

#[test]
fn tiny_areas_do_not_panic() {
    let mut c = composer();
    c.set_commands(builtin());
    type_text(&mut c, "/c 日本 🎉");
    c.handle_key(key(KeyCode::Home));
    c.handle_key(key(KeyCode::Right));
    for width in 0..6u16 {
        for height in 0..4u16 {
            let area = Rect::new(0, 0, width, height);
            let mut buf = Buffer::empty(area);
            let cursor = c.render(area, &mut buf, &Theme::dark());
            if let Some((x, y)) = cursor {
                assert!(
                    x < width.max(1) && y < height.max(1),
                    "{width}x{height}: {x},{y}"
                );
            }
        }
        let _ = c.height(width);
    }
}
