//! The terminal UI's approval box for an Edit shows the change it would make, in a real
//! terminal (tmux, as in `tui.rs`): the file's line numbers, `-` for removed lines and `+` for
//! added ones, in the theme's red and green; answering yes makes exactly that change.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::tmux;

use common::{server, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use tmux::Tmux;

#[tokio::test(flavor = "multi_thread")]
async fn the_approval_box_shows_an_edits_diff_with_line_numbers() {
    if !tmux::available() {
        return;
    }
    let text: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let project = Project::new(&[("notes.txt", &text)]);
    let path = project.path("notes.txt");
    let server = server(Scenario::with_rules([
        Rule::text("EDIT-DONE").when_tool_result_contains("has been updated"),
        Rule::tool_use(
            "Edit",
            json!({"file_path": path, "old_string": "line 20\n",
                   "new_string": "LINE TWENTY\nline 20 and a half\n"}),
        )
        .when_tool_result_contains("line 39"),
        Rule::tool_use("Read", json!({ "file_path": path })).when_last_user_contains("edit-it"),
    ]))
    .await;
    let term = Tmux::start(&project, &server, &[], (80, 24), &[]);
    term.wait_for("for commands");
    term.type_text("edit-it");
    term.keys(&["Enter"]);
    let screen = term.wait_for("1. Yes");
    assert!(
        screen.contains("Edit: 2 lines added, 1 removed"),
        "{screen}"
    );
    assert!(screen.contains("notes.txt"), "{screen}");
    assert!(screen.contains("17   line 17"), "{screen}");
    assert!(screen.contains("20 - line 20"), "{screen}");
    assert!(screen.contains("20 + LINE TWENTY"), "{screen}");
    assert!(screen.contains("21 + line 20 and a half"), "{screen}");
    assert!(screen.contains("22   line 21"), "{screen}");
    assert!(!screen.contains("Edit to "), "{screen}");
    // The theme's colours: removed lines red, added ones green.
    let coloured = term.run(&["capture-pane", "-e", "-p"]);
    assert!(coloured.contains("\u{1b}[38;5;1m- line 20"), "{coloured:?}");
    assert!(
        coloured.contains("\u{1b}[38;5;2m+ LINE TWENTY"),
        "{coloured:?}"
    );
    term.keys(&["1"]);
    term.wait_for("EDIT-DONE");
    assert!(project
        .read("notes.txt")
        .contains("line 19\nLINE TWENTY\nline 20 and a half\nline 21\n"));
    term.type_text("/exit");
    term.keys(&["Enter"]);
    term.after_exit();
}
