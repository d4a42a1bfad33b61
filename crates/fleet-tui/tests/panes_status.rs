//! The status line in each permission mode, at 80 and 30 columns, and its hint.

use crate::panes_support;

use fleet_protocol::PermissionMode;
use fleet_tui::panes::status::{self, Status};
use fleet_tui::theme::Theme;
use panes_support::{draw, text};

fn status(mode: PermissionMode) -> Status {
    Status {
        model: "claude-sonnet-4-5-20250929".into(),
        permission_mode: Some(mode),
        context_percent: Some(42),
        cost_usd: 0.0123,
        usage_unreported: false,
        running_agents: 2,
        hint: None,
    }
}

fn row(status: &Status, width: u16) -> String {
    text(&draw(width, 1, |a, b| {
        status::render(status, a, b, &Theme::mono())
    }))
}

#[test]
fn every_mode_at_80_and_30_columns() {
    let mut all = Vec::new();
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
    ] {
        let s = status(mode);
        let mode = mode.as_str();
        for width in [80, 30] {
            let line = row(&s, width);
            assert!(
                unicode_width::UnicodeWidthStr::width(line.as_str()) <= usize::from(width),
                "{line}"
            );
            all.push(format!("{mode:>17} @{width}: {line}"));
        }
    }
    insta::assert_snapshot!(all.join("\n"));
}

#[test]
fn wide_shows_everything_in_order() {
    let line = row(&status(PermissionMode::AcceptEdits), 110);
    assert!(
        line.starts_with("claude-sonnet-4-5-20250929 · ⏵⏵ accept edits on (shift+tab to cycle)")
    );
    assert!(
        line.ends_with("ctx 42% · $0.0123 · 2 agents running"),
        "{line}"
    );
}

#[test]
fn the_model_goes_short_before_the_mode_or_the_figures() {
    let line = row(&status(PermissionMode::Plan), 60);
    assert!(line.contains("⏸ plan mode on"), "{line}");
    assert!(line.ends_with("ctx 42% · $0.0123 · 2 agents"), "{line}");
    assert!(line.starts_with("claude-sonn… · "), "{line}");
    // At 80 the model is cut and the figures are whole.
    let line = row(&status(PermissionMode::Plan), 80);
    assert!(line.starts_with("claude-sonn… · ⏸ plan mode on"), "{line}");
    assert!(
        line.ends_with("ctx 42% · $0.0123 · 2 agents running"),
        "{line}"
    );
    // Narrower still: the model is gone, the mode's marker stays.
    let line = row(&status(PermissionMode::Plan), 30);
    assert!(!line.contains("claude"), "{line}");
    assert!(line.contains('⏸'), "{line}");
}

#[test]
fn unknowns_are_skipped_and_the_hint_replaces_the_right_side() {
    let mut s = Status {
        model: "sonnet".into(),
        permission_mode: Some(PermissionMode::Default),
        ..Status::default()
    };
    assert_eq!(row(&s, 40), "sonnet · ⏵ default mode");
    s.context_percent = Some(10);
    s.running_agents = 1;
    s.hint = Some("Ctrl+C again to quit".into());
    let line = row(&s, 60);
    assert!(line.ends_with("Ctrl+C again to quit"), "{line}");
    assert!(!line.contains("ctx"), "{line}");
    for width in 0..3 {
        draw(width, 1, |a, b| status::render(&s, a, b, &Theme::dark()));
    }
}

#[test]
fn a_session_whose_server_reported_no_usage_says_so_rather_than_look_free() {
    let s = Status {
        cost_usd: 0.0,
        usage_unreported: true,
        ..status(PermissionMode::Default)
    };
    assert!(
        row(&s, 100).contains("usage not reported"),
        "{}",
        row(&s, 100)
    );
    let known = Status {
        cost_usd: 0.0,
        ..status(PermissionMode::Default)
    };
    assert!(!row(&known, 100).contains("not reported"));
}
