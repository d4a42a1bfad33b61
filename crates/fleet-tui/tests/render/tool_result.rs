use super::support::*;
use fleet_tui::render::{tool_result, ToolResultView};
use fleet_tui::theme::{Role, Theme};
use serde_json::{json, Value};

fn view<'a>(
    tool: &'a str,
    input: &'a Value,
    content: &'a str,
    structured: Option<&'a Value>,
) -> ToolResultView<'a> {
    ToolResultView {
        tool,
        input,
        content,
        structured,
        is_error: false,
        expanded: false,
        width: 80,
    }
}

#[test]
fn bash_shows_the_tail_of_its_output_and_a_failing_exit_code() {
    let stdout: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let structured = json!({
        "stdout": stdout, "stderr": "error: test failed\n", "interrupted": false, "exitCode": 101
    });
    let input = json!({"command": "cargo test"});
    let mut v = view("Bash", &input, "ignored when structured", Some(&structured));
    v.is_error = true;
    let theme = Theme::dark();
    let lines = tool_result(v, &theme);
    insta::assert_snapshot!("tool_result_bash_failed", text(&lines));
    assert_eq!(
        plain(&lines),
        [
            "  ⎿ … +8 lines (ctrl+o to expand)",
            "    line 9",
            "    line 10",
            "    line 11",
            "    line 12",
            "    error: test failed",
            "    Exit code 101",
        ]
    );
    let exit = lines.last().expect("an exit line");
    assert_eq!(exit.style, theme.style(Role::Error));

    v.expanded = true;
    assert_eq!(tool_result(v, &theme).len(), 14);
}

#[test]
fn bash_output_is_cleaned_of_escapes_and_carriage_returns() {
    let structured = json!({"stdout": "\u{1b}[32mok\u{1b}[0m\t1\nprogress 10%\rprogress 100%\n", "stderr": "", "exitCode": 0});
    let input = json!({"command": "x"});
    let lines = tool_result(view("Bash", &input, "", Some(&structured)), &Theme::mono());
    assert_eq!(text(&lines), "  ⎿ ok  1\n    progress 100%");
}

#[test]
fn read_is_a_count_not_the_file() {
    let structured = json!({"type": "text", "file": {"filePath": "src/lib.rs", "content": "…", "numLines": 120, "startLine": 1, "totalLines": 300}});
    let input = json!({"file_path": "src/lib.rs"});
    let lines = tool_result(
        view("Read", &input, "     1\tfn main() {}", Some(&structured)),
        &Theme::mono(),
    );
    assert_eq!(text(&lines), "  ⎿ Read 120 lines");
    let bare = tool_result(
        view("Read", &input, "     1\ta\n     2\tb\n", None),
        &Theme::mono(),
    );
    assert_eq!(text(&bare), "  ⎿ Read 2 lines");
}

#[test]
fn an_edit_shows_its_diff_from_the_structured_patch() {
    let input =
        json!({"file_path": "src/lib.rs", "old_string": "old();", "new_string": "new();\nmore();"});
    let structured = json!({
        "filePath": "src/lib.rs", "oldString": "old();", "newString": "new();\nmore();",
        "originalFile": "…",
        "structuredPatch": [{"oldStart": 40, "oldLines": 3, "newStart": 40, "newLines": 4,
            "lines": [" fn c() {", "-    old();", "+    new();", "+    more();", " }"]}]
    });
    let lines = tool_result(
        view(
            "Edit",
            &input,
            "The file src/lib.rs has been updated.",
            Some(&structured),
        ),
        &Theme::mono(),
    );
    insta::assert_snapshot!("tool_result_edit", text(&lines));
    assert_eq!(
        plain(&lines),
        [
            "  ⎿ Added 2 lines, removed 1 line",
            "    40   fn c() {",
            "    41 -     old();",
            "    41 +     new();",
            "    42 +     more();",
            "    43   }",
        ]
    );
    // Without a structured result, the input's strings give the diff.
    let bare = tool_result(view("Edit", &input, "ok", None), &Theme::mono());
    assert_eq!(
        text(&bare),
        "  ⎿ Added 2 lines, removed 1 line\n    1 - old();\n    1 + new();\n    2 + more();"
    );
}

#[test]
fn a_new_file_shows_its_first_lines() {
    let content: String = (1..=14).map(|i| format!("row {i}\n")).collect();
    let input = json!({"file_path": "notes.md", "content": content});
    let structured = json!({"type": "create", "filePath": "notes.md", "content": content, "structuredPatch": [], "originalFile": null});
    let lines = tool_result(
        view("Write", &input, "File created", Some(&structured)),
        &Theme::mono(),
    );
    insta::assert_snapshot!("tool_result_write_new", text(&lines));
    let rows = plain(&lines);
    assert_eq!(rows[0], "  ⎿ Wrote 14 lines");
    assert_eq!(rows[1], "     1 + row 1");
    assert_eq!(
        rows.last().map(String::as_str),
        Some("    … +4 lines (ctrl+o to expand)")
    );
}

#[test]
fn errors_are_red_and_folded() {
    let content: String = (1..=10).map(|i| format!("problem {i}\n")).collect();
    let input = json!({"file_path": "x"});
    let mut v = view("Edit", &input, &content, None);
    v.is_error = true;
    let theme = Theme::dark();
    let lines = tool_result(v, &theme);
    assert_eq!(lines.len(), 7);
    assert_eq!(plain(&lines)[0], "  ⎿ problem 1");
    assert_eq!(plain(&lines)[6], "    … +4 lines (ctrl+o to expand)");
    assert_eq!(lines[0].style, theme.style(Role::Error));
}

#[test]
fn searches_report_what_they_found() {
    let input = json!({"pattern": "TODO"});
    let files = json!({"mode": "files_with_matches", "numFiles": 3, "filenames": ["a", "b", "c"]});
    let lines = tool_result(
        view("Grep", &input, "a\nb\nc", Some(&files)),
        &Theme::mono(),
    );
    assert_eq!(text(&lines), "  ⎿ Found 3 files");
    let glob = json!({"filenames": ["a"], "numFiles": 1, "truncated": false});
    let lines = tool_result(view("Glob", &input, "a", Some(&glob)), &Theme::mono());
    assert_eq!(text(&lines), "  ⎿ Found 1 file");
}

#[test]
fn anything_else_is_folded_to_four_lines_and_expands() {
    let content: String = (1..=9).map(|i| format!("out {i}\n")).collect();
    let input = json!({});
    let mut v = view("Mystery", &input, &content, None);
    let folded = tool_result(v, &Theme::mono());
    assert_eq!(
        plain(&folded),
        [
            "  ⎿ out 1",
            "    out 2",
            "    out 3",
            "    out 4",
            "    … +5 lines (ctrl+o to expand)"
        ]
    );
    v.expanded = true;
    assert_eq!(tool_result(v, &Theme::mono()).len(), 9);
    let agent = tool_result(
        view(
            "Agent",
            &input,
            "\nThe crate has three layers.\nMore detail.",
            None,
        ),
        &Theme::mono(),
    );
    assert_eq!(text(&agent), "  ⎿ The crate has three layers.");
}

#[test]
fn every_result_fits_a_narrow_width() {
    let long = "a very long line of output that must wrap somewhere sensible ".repeat(3);
    let input = json!({"old_string": long, "new_string": "x"});
    for width in [0u16, 1, 5, 30] {
        for tool in ["Bash", "Edit", "Write", "Read", "Agent", "Other"] {
            let mut v = view(tool, &input, &long, None);
            v.width = width;
            let lines = tool_result(v, &Theme::dark());
            if width >= 30 {
                assert_fits(&lines, usize::from(width));
            }
        }
    }
}
