use fleet_tui::render::tool_label;
use serde_json::json;
use unicode_width::UnicodeWidthStr;

fn label(tool: &str, input: serde_json::Value) -> String {
    tool_label(tool, &input, 80)
}

#[test]
fn every_built_in_tool_has_a_short_label() {
    let labels = [
        label("Read", json!({"file_path": "src/lib.rs"})),
        label(
            "Read",
            json!({"file_path": "src/lib.rs", "offset": 10, "limit": 31}),
        ),
        label("Read", json!({"file_path": "src/lib.rs", "offset": 200})),
        label("Write", json!({"file_path": "notes.md", "content": "x"})),
        label(
            "Edit",
            json!({"file_path": "src/app.rs", "old_string": "a", "new_string": "b"}),
        ),
        label("MultiEdit", json!({"file_path": "src/app.rs", "edits": []})),
        label(
            "Bash",
            json!({"command": "cargo test", "description": "Run the tests"}),
        ),
        label("Bash", json!({"command": "cd crates\ncargo build\n"})),
        label("Grep", json!({"pattern": "fn main", "path": "src"})),
        label("Grep", json!({"pattern": "TODO", "glob": "*.rs"})),
        label("Grep", json!({"pattern": "TODO"})),
        label("Glob", json!({"pattern": "**/*.rs"})),
        label("Glob", json!({"pattern": "*.toml", "path": "crates"})),
        label(
            "WebFetch",
            json!({"url": "https://docs.rs/ratatui", "prompt": "summarise"}),
        ),
        label("WebSearch", json!({"query": "ratatui wrap"})),
        label(
            "Agent",
            json!({"subagent_type": "Explore", "description": "map the crate", "prompt": "…"}),
        ),
        label(
            "Agent",
            json!({"description": "fix the bug", "prompt": "…"}),
        ),
        label("TaskStop", json!({"task_id": "a1b2c3"})),
        label("TaskOutput", json!({"task_id": "a1b2c3", "block": true})),
        label("SendMessage", json!({"to": "researcher", "message": "hi"})),
        label(
            "TaskCreate",
            json!({"subject": "Write docs", "description": "all of them"}),
        ),
        label("ExitPlanMode", json!({})),
        label(
            "mcp__github__create_issue",
            json!({"repo": "fleet", "title": "Bug"}),
        ),
        label("mcp__files__read__all", json!({"limit": 3})),
        label("Mystery", json!({"count": 3, "what": "first\nsecond"})),
    ];
    insta::assert_snapshot!("tool_labels", labels.join("\n"));
    assert_eq!(
        labels,
        [
            "Read(src/lib.rs)",
            "Read(src/lib.rs:10-40)",
            "Read(src/lib.rs:200-)",
            "Write(notes.md)",
            "Edit(src/app.rs)",
            "MultiEdit(src/app.rs)",
            "Bash(cargo test)",
            "Bash(cd crates … +1 line)",
            "Grep(\"fn main\" in src)",
            "Grep(\"TODO\" in *.rs)",
            "Grep(\"TODO\")",
            "Glob(**/*.rs)",
            "Glob(*.toml in crates)",
            "WebFetch(https://docs.rs/ratatui)",
            "WebSearch(ratatui wrap)",
            "Agent(Explore: map the crate)",
            "Agent(fix the bug)",
            "TaskStop(a1b2c3)",
            "TaskOutput(a1b2c3)",
            "SendMessage(to: researcher)",
            "TaskCreate(Write docs)",
            "ExitPlanMode",
            "github · create_issue(fleet)",
            "files · read__all",
            "Mystery(first)",
        ]
    );
}

#[test]
fn a_long_path_loses_its_start_and_a_long_command_its_end() {
    let path = "/home/someone/projects/fleet/crates/fleet-tui/src/render/tool_label.rs";
    let read = tool_label(
        "Read",
        &json!({"file_path": path, "offset": 1, "limit": 20}),
        40,
    );
    assert_eq!(read, "Read(…tui/src/render/tool_label.rs:1-20)");
    assert_eq!(read.width(), 40);
    let bash = tool_label(
        "Bash",
        &json!({"command": "cargo nextest run -p fleet-tui --no-fail-fast -- render"}),
        30,
    );
    assert_eq!(bash, "Bash(cargo nextest run -p fl…)");
    assert_eq!(bash.width(), 30);
}

#[test]
fn labels_fit_any_max_in_cells() {
    let input = json!({"command": "echo 漢字漢字漢字漢字 🦀🦀🦀"});
    for max in 0..40 {
        let label = tool_label("Bash", &input, max);
        assert!(label.width() <= max, "{label:?} wider than {max}");
    }
    assert_eq!(tool_label("Bash", &input, 5), "Bash");
}
