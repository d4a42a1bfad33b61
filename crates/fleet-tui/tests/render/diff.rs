use super::support::*;
use fleet_tui::render::{diff, structured_patch};
use fleet_tui::theme::{Role, Theme};
use serde_json::json;

#[test]
fn an_edit_shows_numbered_signed_lines_with_dim_context() {
    let old = "fn a() {}\nfn b() {}\nfn c() {\n    old();\n}\nfn d() {}\n";
    let new = "fn a() {}\nfn b() {}\nfn c() {\n    new();\n    more();\n}\nfn d() {}\n";
    let theme = Theme::dark();
    let lines = diff("src/lib.rs", old, new, 80, &theme);
    insta::assert_snapshot!("diff_edit", text(&lines));
    let rows = plain(&lines);
    assert!(rows.contains(&"4 -     old();".to_string()), "{rows:?}");
    assert!(rows.contains(&"4 +     new();".to_string()));
    assert!(rows.contains(&"5 +     more();".to_string()));
    // The sign and text of a change carry its role; context is dim.
    let removed = lines
        .iter()
        .find(|l| plain(&[(*l).clone()])[0].contains("old()"))
        .expect("removed line");
    assert!(removed
        .spans
        .iter()
        .any(|s| s.style == theme.style(Role::DiffDelete) && s.content.contains("old()")));
    let context = &lines[0];
    assert!(context
        .spans
        .iter()
        .all(|s| s.style == theme.style(Role::Dim)));
}

#[test]
fn a_new_file_is_all_additions_numbered_from_one() {
    let lines = diff("notes.md", "", "first\nsecond\nthird", 80, &Theme::mono());
    assert_eq!(text(&lines), "1 + first\n2 + second\n3 + third");
}

#[test]
fn hunks_from_a_structured_patch_keep_the_files_line_numbers_and_a_separator() {
    let patch = json!([
        {"oldStart": 8, "oldLines": 2, "newStart": 8, "newLines": 2,
         "lines": [" keep", "-before", "+after"]},
        {"oldStart": 120, "oldLines": 1, "newStart": 120, "newLines": 2,
         "lines": [" tail", "+added", "\\ No newline at end of file"]}
    ]);
    let lines = structured_patch(&patch, 80, &Theme::mono()).expect("a patch");
    insta::assert_snapshot!("diff_structured_patch", text(&lines));
    assert_eq!(
        plain(&lines),
        [
            "  8   keep",
            "  9 - before",
            "  9 + after",
            "  ⋮",
            "120   tail",
            "121 + added",
        ]
    );
    assert!(structured_patch(&json!({"not": "a patch"}), 80, &Theme::mono()).is_none());
}

#[test]
fn a_long_changed_line_wraps_under_its_text() {
    let lines = diff(
        "a",
        "x\n",
        "a fairly long added line that wraps\n",
        20,
        &Theme::mono(),
    );
    assert_fits(&lines, 20);
    assert_eq!(
        text(&lines),
        "1 - x\n1 + a fairly long\n    added line that\n    wraps"
    );
}

#[test]
fn narrow_and_zero_widths_do_not_panic() {
    for width in [0, 1, 2, 5] {
        let _ = diff("a", "one\ntwo\n", "one\n三四五六\n", width, &Theme::dark());
    }
}
