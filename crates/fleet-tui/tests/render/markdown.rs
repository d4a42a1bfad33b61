use super::support::*;
use fleet_tui::render::markdown;
use fleet_tui::theme::Theme;
use ratatui::style::{Color, Modifier};

/// A document with one of everything the renderer knows.
pub const RICH: &str = include_str!("rich.md");

#[test]
fn a_rich_document_at_80_columns() {
    let lines = markdown(RICH, 80, &Theme::dark());
    assert_fits(&lines, 80);
    let shown = text(&lines);
    assert!(shown.contains("# Plan for the renderer"), "{shown}");
    assert!(shown.contains("1. Parse the text with pulldown-cmark."));
    assert!(shown.contains("   ◦ a quote adds a bar"));
    assert!(shown.contains("• [x] tables"));
    assert!(shown.contains("│ • and a list in it"));
    assert!(shown.contains("a link (https://example.com/docs)"));
    // An autolink's text is its url: not repeated.
    assert!(!shown.contains("(https://example.com)"));
    assert!(shown.contains("Read │   120 │ summary"));
    insta::assert_snapshot!("markdown_rich_80", screen(&lines, 80));
}

#[test]
fn a_rich_document_at_30_columns_without_colour() {
    let lines = markdown(RICH, 30, &Theme::mono());
    assert_fits(&lines, 30);
    for line in &lines {
        for span in &line.spans {
            assert_eq!(span.style.fg, None, "no colour under NO_COLOR: {span:?}");
        }
    }
    let shown = text(&lines);
    // Without colour, inline code keeps its backticks.
    assert!(shown.contains("`inline code`"), "{shown}");
    // A wrapped item's text hangs under the item's text, not under its number.
    assert!(
        shown.contains("1. Parse the text with\n   pulldown-cmark."),
        "{shown}"
    );
    insta::assert_snapshot!("markdown_rich_30_mono", screen(&lines, 30));
}

#[test]
fn a_streaming_open_fence_shows_the_code_so_far() {
    let partial = "Here is the fix:\n\n```rust\nfn main() {\n    let answer = 4";
    let lines = markdown(partial, 40, &Theme::dark());
    let rows = plain(&lines);
    assert_eq!(
        rows.last().map(String::as_str),
        Some("      let answer = 4")
    );
    let highlighted = lines
        .iter()
        .flat_map(|l| &l.spans)
        .any(|s| matches!(s.style.fg, Some(Color::Rgb(..))));
    assert!(highlighted, "the open block is highlighted as Rust");
    insta::assert_snapshot!("markdown_streaming_open_fence", text(&lines));
}

#[test]
fn every_prefix_of_a_rich_document_renders_without_panicking() {
    let extra = "\n\n* item\n  1. deep `co\n\n> > nested\n\n| a | b |\n|---|\n| 1 | 2 | 3 |\n\n**bold _it\n\n[x](";
    let doc = format!("{RICH}{extra}");
    for (count, (end, _)) in doc.char_indices().enumerate() {
        let prefix = &doc[..end];
        for width in [0, 1, 2, 7, 30] {
            let _ = markdown(prefix, width, &Theme::mono());
        }
        // Highlighting costs more: check it on a sample of the prefixes.
        if count % 16 == 0 {
            let lines = markdown(prefix, 80, &Theme::dark());
            assert_fits(&lines, 80);
        }
    }
}

#[test]
fn inline_styles_are_carried_by_modifiers() {
    let lines = markdown(
        "**strong** *em* ~~gone~~ [link](https://x.dev)",
        80,
        &Theme::mono(),
    );
    let spans: Vec<_> = lines.iter().flat_map(|l| &l.spans).collect();
    let find = |text: &str| {
        spans
            .iter()
            .find(|s| s.content == text)
            .unwrap_or_else(|| panic!("no span {text:?} in {spans:?}"))
    };
    assert!(find("strong").style.add_modifier.contains(Modifier::BOLD));
    assert!(find("em").style.add_modifier.contains(Modifier::ITALIC));
    assert!(find("gone")
        .style
        .add_modifier
        .contains(Modifier::CROSSED_OUT));
    assert!(find("link")
        .style
        .add_modifier
        .contains(Modifier::UNDERLINED));
    assert_eq!(
        text(&lines),
        "strong em gone link (https://x.dev)",
        "the url follows text that differs from it"
    );
}

#[test]
fn tight_lists_have_no_blank_rows_and_loose_ones_do() {
    let tight = text(&markdown("- one\n- two", 80, &Theme::mono()));
    assert_eq!(tight, "• one\n• two");
    let loose = text(&markdown("- one\n\n- two", 80, &Theme::mono()));
    assert_eq!(loose, "• one\n\n• two");
    let ordered = text(&markdown("7. seven\n8. eight", 80, &Theme::mono()));
    assert_eq!(ordered, "7. seven\n8. eight");
}

#[test]
fn a_table_too_wide_becomes_one_record_per_row() {
    let table =
        "| Tool | What it shows |\n|---|---|\n| Read | a count of lines |\n| Bash | the tail |";
    let lines = markdown(table, 20, &Theme::mono());
    assert_fits(&lines, 20);
    insta::assert_snapshot!("markdown_table_narrow", text(&lines));
    assert!(text(&lines).starts_with("• Tool: Read\n  What it shows: a"));
}

#[test]
fn a_heading_keeps_its_marker_and_a_rule_spans_the_width() {
    let lines = markdown("## Steps\n\n---", 12, &Theme::mono());
    assert_eq!(text(&lines), "## Steps\n\n────────────");
    let heading = &lines[0].spans[0];
    assert!(heading.style.add_modifier.contains(Modifier::BOLD));
}

#[test]
fn a_long_code_line_wraps_under_its_own_indentation() {
    let doc = "```\nfn f() {\n    let value = one + two + three;\n}\n```";
    let lines = markdown(doc, 24, &Theme::mono());
    assert_fits(&lines, 24);
    assert_eq!(
        text(&lines),
        "  fn f() {\n      let value = one +\n      two + three;\n  }"
    );
}

#[test]
fn an_empty_item_while_streaming_shows_its_bullet() {
    let lines = markdown("- first\n- ", 30, &Theme::mono());
    assert_eq!(text(&lines), "• first\n•");
}
