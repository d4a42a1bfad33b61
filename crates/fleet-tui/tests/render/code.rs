use super::support::*;
use fleet_tui::render::{code, knows_language};
use fleet_tui::theme::{Role, Theme};
use ratatui::style::Color;

const RUST: &str =
    "fn main() {\n\tlet answer = 42; // the answer\n    println!(\"{answer}\");\n}\n";

fn coloured(lines: &[ratatui::text::Line<'_>]) -> usize {
    lines
        .iter()
        .flat_map(|l| &l.spans)
        .filter(|s| matches!(s.style.fg, Some(Color::Rgb(..))))
        .count()
}

#[test]
fn rust_is_highlighted_in_colour_and_plain_without() {
    let dark = code(RUST, "rust", &Theme::dark());
    assert!(coloured(&dark) >= 3, "keywords, numbers, strings: {dark:?}");
    let mono = code(RUST, "rust", &Theme::mono());
    assert_eq!(coloured(&mono), 0);
    assert!(mono
        .iter()
        .flat_map(|l| &l.spans)
        .all(|s| s.style.fg.is_none()));
    // Same text either way, the tab expanded to the next stop of four.
    let expected =
        "fn main() {\n    let answer = 42; // the answer\n    println!(\"{answer}\");\n}";
    assert_eq!(text(&dark), expected);
    assert_eq!(text(&mono), expected);
}

#[test]
fn light_and_dark_use_different_colours() {
    let dark = code(RUST, "rs", &Theme::dark());
    let light = code(RUST, "rs", &Theme::light());
    let colours = |lines: &[ratatui::text::Line<'_>]| {
        lines
            .iter()
            .flat_map(|l| &l.spans)
            .filter_map(|s| s.style.fg)
            .collect::<Vec<_>>()
    };
    assert!(!colours(&light).is_empty());
    assert_ne!(colours(&dark), colours(&light));
}

#[test]
fn languages_come_from_fence_info_names_and_extensions() {
    for lang in [
        "rust",
        "rs",
        "rust,ignore",
        "py",
        "python",
        "sh",
        "bash",
        "json",
        "src/main.rs",
        "yml",
        "js",
    ] {
        assert!(knows_language(lang), "{lang}");
    }
    assert!(!knows_language(""));
    assert!(!knows_language("no-such-language"));
}

#[test]
fn an_unknown_language_is_plain_code() {
    let theme = Theme::dark();
    let lines = code("a\tb\nc", "no-such-language", &theme);
    assert_eq!(text(&lines), "a   b\nc");
    for line in &lines {
        for span in &line.spans {
            assert_eq!(line.style.patch(span.style), theme.style(Role::Code));
        }
    }
}

#[test]
fn toml_has_a_grammar_of_its_own() {
    assert!(knows_language("toml"));
    assert!(knows_language("Cargo.toml"));
    let source = "[package]\nname = \"fleet\" # the crate\nversion = 3\nok = true\n";
    let lines = code(source, "toml", &Theme::dark());
    assert_eq!(text(&lines), source.trim_end());
    // Header, key, string, comment, number and boolean each stand out from plain text.
    let fg = |needle: &str| {
        lines
            .iter()
            .flat_map(|l| &l.spans)
            .find(|s| s.content.contains(needle))
            .and_then(|s| s.style.fg)
    };
    for needle in ["[package]", "name", "\"fleet\"", "# the crate", "3", "true"] {
        assert!(
            matches!(fg(needle), Some(Color::Rgb(..))),
            "{needle} has no colour: {lines:?}"
        );
    }
    assert_ne!(fg("name"), fg("\"fleet\""));
}
