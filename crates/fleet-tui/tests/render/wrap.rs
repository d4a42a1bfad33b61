use super::support::*;
use fleet_tui::render::{truncate, truncate_left, wrap, wrap_prefixed};
use ratatui::style::{Style, Stylize};
use ratatui::text::{Line, Span};

#[test]
fn words_wrap_at_spaces_and_keep_their_styles() {
    let line = Line::from(vec![
        Span::raw("plain words then "),
        Span::styled("bold words", Style::new().bold()),
        Span::raw(" end"),
    ]);
    let lines = wrap(vec![line], 12);
    assert_eq!(plain(&lines), ["plain words", "then bold", "words end"]);
    let bold: Vec<_> = lines
        .iter()
        .flat_map(|l| &l.spans)
        .filter(|s| s.style == Style::new().bold())
        .map(|s| s.content.to_string())
        .collect();
    assert_eq!(bold, ["bold", "words"]);
}

#[test]
fn wide_characters_are_measured_in_cells() {
    // Each CJK character and the emoji take two cells.
    let line = Line::from("漢字かな交じり文 and 🦀🦀 crabs");
    let lines = wrap(vec![line], 10);
    assert_fits(&lines, 10);
    insta::assert_snapshot!("wrap_wide", text(&lines));
    assert_eq!(plain(&lines), ["漢字かな交", "じり文 and", "🦀🦀 crabs"]);
}

#[test]
fn a_word_longer_than_the_width_is_split_and_nothing_is_lost() {
    let lines = wrap(vec![Line::from("ab supercalifragilistic cd")], 6);
    assert_eq!(plain(&lines), ["ab", "superc", "alifra", "gilist", "ic cd"]);
}

#[test]
fn a_word_spanning_two_styles_stays_whole() {
    let line = Line::from(vec![
        Span::raw("xx "),
        Span::raw("ab").bold(),
        Span::raw("cd ef"),
    ]);
    assert_eq!(plain(&wrap(vec![line], 5)), ["xx", "abcd", "ef"]);
}

#[test]
fn leading_indentation_is_kept_and_empty_lines_stay() {
    let lines = wrap(
        vec![Line::from("    indented text here"), Line::from("")],
        12,
    );
    assert_eq!(plain(&lines), ["    indented", "text here", ""]);
}

#[test]
fn tiny_widths_never_panic_and_width_zero_changes_nothing() {
    let line = Line::from("漢字 a 🦀b");
    assert_eq!(wrap(vec![line.clone()], 0), vec![line.clone()]);
    let one = wrap(vec![line.clone()], 1);
    assert_eq!(plain(&one).concat(), "漢字a🦀b");
    for width in 1..6 {
        let _ = wrap(vec![line.clone()], width);
        let _ = wrap_prefixed(line.clone(), width, &[Span::raw("• ")], &[Span::raw("  ")]);
    }
}

#[test]
fn a_prefix_hangs_over_the_wrapped_rows() {
    let rows = wrap_prefixed(
        Line::from("one two three four"),
        10,
        &[Span::raw("• ")],
        &[Span::raw("  ")],
    );
    assert_eq!(plain(&rows), ["• one two", "  three", "  four"]);
}

#[test]
fn truncation_counts_cells_and_marks_the_cut() {
    assert_eq!(truncate("hello world", 8), "hello w…");
    assert_eq!(truncate("short", 8), "short");
    assert_eq!(truncate("漢字漢字", 5), "漢字…");
    assert_eq!(truncate("anything", 0), "");
    assert_eq!(
        truncate_left("/very/long/path/to/file.rs", 12),
        "…/to/file.rs"
    );
}
