//! Issue 33 ("What a new user meets"), the terminal UI's part, end to end in a real terminal
//! (tmux, as in `tui.rs`): the session opens with a header; what was said stays in the
//! terminal's scrollback after exit, with how to resume it; a signal's exit status is the
//! shell's `128 + n`; an interrupt and a refused key are said for people; a background
//! agent's pill says what it waits for; cancelling the quit question leaves no stale hint.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::tmux;

use common::{server, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use tmux::Tmux;

const SIZE: (u16, u16) = (80, 24);
const CHILD: &str = "running as a subagent";

/// fleet's exit status, and the terminal given back (canonical mode, echo, normal screen,
/// cursor shown).
fn assert_exit(term: &Tmux, status: u8) {
    let after = term.after_exit();
    assert!(
        after.starts_with(&format!("exit={status}\n")),
        "fleet's exit: {after}"
    );
    assert!(after.contains(" icanon"), "still in raw mode: {after}");
    assert!(after.contains(" echo "), "echo still off: {after}");
    assert_eq!(term.format("#{alternate_on}"), "0", "alternate screen kept");
    assert_eq!(term.format("#{cursor_flag}"), "1", "cursor still hidden");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_conversation_and_how_to_resume_it_stay_in_the_scrollback() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("REPLY-ONE").when_last_user_contains("first-question")
    ]))
    .await;
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    // The first screen says where fleet works, with what, and where help is.
    let first = term.wait_for("for commands");
    assert!(first.contains("✻ fleet"), "{first}");
    assert!(
        first.contains(&project.repo.display().to_string()),
        "{first}"
    );
    assert!(first.contains("permission mode default"), "{first}");
    assert!(first.contains("/help for help"), "{first}");
    term.type_text("first-question");
    term.keys(&["Enter"]);
    term.wait_for("REPLY-ONE");
    term.type_text("/exit");
    term.keys(&["Enter"]);
    assert_exit(&term, 0);

    let kept = term.scrollback();
    assert!(kept.contains("› first-question"), "{kept}");
    assert!(kept.contains("REPLY-ONE"), "{kept}");
    assert!(kept.contains("✻ fleet"), "{kept}");
    let id = kept
        .split("Resume with: fleet -r ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no resume line in:\n{kept}"))
        .to_string();
    assert!(kept.contains("fleet -c"), "{kept}");
    drop(term);

    // The id it printed opens the conversation again.
    let again = Tmux::start(&project, &server, &["-r", &id], SIZE, &[]);
    let screen = again.wait_for("REPLY-ONE");
    assert!(screen.contains("first-question"), "{screen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_restores_the_terminal_and_exits_143() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("hi")])).await;
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    term.wait_for("for commands");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &term.fleet_pid()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_exit(&term, 143);
}

#[tokio::test(flavor = "multi_thread")]
async fn esc_says_interrupted_in_plain_words() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("TOO-LATE")
        .when_last_user_contains("slow-question")
        .delay_ms(120_000)]))
    .await;
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    term.wait_for("for commands");
    term.type_text("slow-question");
    term.keys(&["Enter"]);
    term.wait_for("esc to interrupt");
    term.keys(&["Escape"]);
    let screen = term.wait_for("Interrupted.");
    assert!(!screen.contains("error_during_execution"), "{screen}");
    assert!(!screen.contains("the run was cancelled"), "{screen}");
    assert!(!screen.contains("TOO-LATE"), "{screen}");
    // Ctrl+D on the empty input quits; the scrollback keeps the interrupted turn.
    term.keys(&["C-d"]);
    assert_exit(&term, 0);
    let kept = term.scrollback();
    assert!(kept.contains("› slow-question"), "{kept}");
    assert!(kept.contains("Interrupted."), "{kept}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_names_the_variable_and_how_to_set_it() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("never seen")
        .fault_status(401)
        .fault_message("invalid x-api-key")]))
    .await;
    let term = Tmux::start(&project, &server, &[], (120, 30), &[]);
    term.wait_for("for commands");
    term.type_text("hello");
    term.keys(&["Enter"]);
    let screen = term.wait_for("HTTP 401");
    assert!(screen.contains("ANTHROPIC_API_KEY"), "{screen}");
    assert!(screen.contains("export"), "{screen}");
    assert!(!screen.contains("error_during_execution"), "{screen}");
    term.type_text("/exit");
    term.keys(&["Enter"]);
    assert_exit(&term, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_agent_waits_for_the_model_and_a_cancelled_quit_leaves_no_hint() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([
        // The child's reply is held: its pill stays on "waiting for model".
        Rule::text("CHILD-DONE")
            .when_system_contains(CHILD)
            .delay_ms(120_000),
        Rule::text("MAIN-GOES-ON").when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "slow helper", "prompt": "Do the slow thing",
                   "subagent_type": "general-purpose", "run_in_background": true}),
        )
        .when_last_user_contains("start-work"),
    ]))
    .await;
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    term.wait_for("for commands");
    term.type_text("start-work");
    term.keys(&["Enter"]);
    term.wait_for("MAIN-GOES-ON");
    let screen = term.wait_for("waiting for model");
    assert!(!screen.contains("starting"), "{screen}");

    term.keys(&["C-c"]);
    term.wait_for("again to quit");
    term.keys(&["C-c"]);
    term.wait_for("Quit?");
    term.keys(&["c"]);
    term.wait_until("the question and the hint gone", |s| {
        !s.contains("Quit?") && !s.contains("again to quit") && s.contains("for commands")
    });

    term.keys(&["C-c"]);
    term.wait_for("again to quit");
    term.keys(&["C-c"]);
    term.wait_for("Quit?");
    term.keys(&["s"]);
    assert_exit(&term, 0);
}
