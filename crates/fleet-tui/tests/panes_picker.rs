//! The picker: filter as you type, move, choose, cancel, scroll.

use crate::panes_support;

use crossterm::event::KeyCode;
use fleet_tui::panes::picker::{Picked, Picker};
use fleet_tui::port::Choice;
use fleet_tui::theme::{Role, Theme};
use panes_support::{ch, draw, key, row_containing, text, typed};

fn sessions() -> Picker {
    let items = [
        (
            "s1",
            "fix the flaky retry test",
            "2 hours ago · 14 messages",
        ),
        ("s2", "add the task panel", "yesterday · 60 messages"),
        ("s3", "review the retry policy", "3 days ago · 8 messages"),
        ("s4", "write the release notes", "last week · 22 messages"),
        ("s5", "bump ratatui", "last week · 4 messages"),
    ];
    Picker::new(
        "Resume a session",
        items
            .iter()
            .map(|(id, label, detail)| Choice {
                id: id.to_string(),
                label: label.to_string(),
                detail: detail.to_string(),
            })
            .collect(),
    )
}

fn screen(picker: &Picker, width: u16, height: u16) -> String {
    text(&draw(width, height, |a, b| {
        picker.render(a, b, &Theme::mono())
    }))
}

#[test]
fn filtered_at_80_and_30_columns() {
    let mut picker = sessions();
    for k in typed("retry") {
        assert_eq!(picker.handle_key(k), None);
    }
    assert_eq!(picker.visible().len(), 2);
    let height = picker.height(20);
    let wide = screen(&picker, 80, height);
    assert!(wide.contains("filter: retry"), "{wide}");
    assert!(
        wide.contains("❯ fix the flaky retry test  2 hours ago · 14 messages"),
        "{wide}"
    );
    assert!(wide.contains("review the retry policy"), "{wide}");
    assert!(!wide.contains("bump ratatui"), "{wide}");
    assert!(wide.contains("1/2"), "{wide}");
    insta::assert_snapshot!("filtered_80", wide);
    insta::assert_snapshot!("filtered_30", screen(&picker, 30, height));
}

#[test]
fn the_selected_row_has_the_selected_role() {
    let mut picker = sessions();
    picker.handle_key(key(KeyCode::Down));
    let theme = Theme::dark();
    let buf = draw(60, picker.height(20), |a, b| picker.render(a, b, &theme));
    let y = row_containing(&buf, "add the task panel").expect("row");
    let x = (0..60)
        .find(|&x| buf[(x, y)].symbol() == "a")
        .expect("label start");
    assert_eq!(
        buf[(x, y)].style().add_modifier,
        theme.style(Role::Selected).add_modifier
    );
}

#[test]
fn filter_then_enter_chooses_and_esc_cancels() {
    let mut picker = sessions();
    for k in typed("notes") {
        picker.handle_key(k);
    }
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        Some(Picked::Chosen("s4".into()))
    );

    // Words match anywhere, in any case; Down moves within the filtered list.
    let mut picker = sessions();
    for k in typed("RETRY test") {
        picker.handle_key(k);
    }
    assert_eq!(picker.visible().len(), 1);
    let mut picker = sessions();
    for k in typed("retry") {
        picker.handle_key(k);
    }
    picker.handle_key(key(KeyCode::Down));
    picker.handle_key(key(KeyCode::Down));
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        Some(Picked::Chosen("s3".into()))
    );
    assert_eq!(
        picker.handle_key(key(KeyCode::Esc)),
        Some(Picked::Cancelled)
    );
}

#[test]
fn no_matches_is_said_and_enter_does_nothing() {
    let mut picker = sessions();
    for k in typed("zzz") {
        picker.handle_key(k);
    }
    let s = screen(&picker, 40, 8);
    assert!(s.contains("no matches"), "{s}");
    assert!(s.contains("0/0"), "{s}");
    assert_eq!(picker.handle_key(key(KeyCode::Enter)), None);
    // Backspace widens the filter again.
    for _ in 0..3 {
        picker.handle_key(key(KeyCode::Backspace));
    }
    assert_eq!(picker.visible().len(), 5);
}

#[test]
fn a_long_list_scrolls_and_pages() {
    let items = (1..=40)
        .map(|i| Choice {
            id: format!("m{i}"),
            label: format!("model {i}"),
            detail: String::new(),
        })
        .collect();
    let mut picker = Picker::new("Models", items);
    assert_eq!(picker.height(10), 10);
    // A render tells the picker its page: 10 rows - 2 borders - 1 filter row.
    screen(&picker, 40, 10);
    picker.handle_key(key(KeyCode::PageDown));
    let s = screen(&picker, 40, 10);
    assert!(s.contains("❯ model 8"), "{s}");
    assert!(!s.contains("model 1 "), "{s}");
    picker.handle_key(key(KeyCode::End));
    let s = screen(&picker, 40, 10);
    assert!(s.contains("❯ model 40"), "{s}");
    assert!(s.contains("40/40"), "{s}");
    picker.handle_key(key(KeyCode::PageUp));
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        Some(Picked::Chosen("m33".into()))
    );
    picker.handle_key(ch('x'));
    for (w, h) in [(0, 0), (1, 1), (2, 3), (5, 2)] {
        draw(w, h, |a, b| picker.render(a, b, &Theme::dark()));
    }
}
