//! The terminal UI end to end, in a real terminal: tmux runs `fleet` (no `-p`) against the
//! fake model server; keys go in with `send-keys` and the screen is read with
//! `capture-pane`. Each test has its own tmux server, so they run side by side.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::tmux;

use common::{server, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use std::time::Duration;
use tmux::Tmux;

const SIZE: (u16, u16) = (80, 24);
const CHILD: &str = "running as a subagent";

fn pids_running(pattern: &str) -> Vec<String> {
    let out = std::process::Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The pane's terminal after fleet left: raw mode off (canonical input and echo back on),
/// the alternate screen left, the cursor shown.
fn assert_restored(term: &Tmux) {
    assert_restored_after(term, 0);
}

/// Like [`assert_restored`], after fleet exited with `status` (143 for SIGTERM).
fn assert_restored_after(term: &Tmux, status: u8) {
    let after = term.after_exit();
    assert!(
        after.starts_with(&format!("exit={status}\n")),
        "fleet's exit: {after}"
    );
    assert!(after.contains(" icanon"), "still in raw mode: {after}");
    assert!(after.contains(" echo "), "echo still off: {after}");
    assert_eq!(
        term.format("#{alternate_on}"),
        "0",
        "alternate screen not left"
    );
    assert_eq!(term.format("#{cursor_flag}"), "1", "cursor still hidden");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_is_answered_in_markdown_and_quitting_restores_the_terminal() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text(
        "## Findings\n\n- the **answer** is `42`\n- ANSWER-LINE\n",
    )
    .when_last_user_contains("what is it")]))
    .await;
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    term.wait_for("for commands");
    term.type_text("what is it");
    term.keys(&["Enter"]);
    let screen = term.wait_for("ANSWER-LINE");
    assert!(
        screen.contains("what is it"),
        "the prompt is shown:\n{screen}"
    );
    assert!(
        !screen.contains("**answer**"),
        "Markdown is rendered, not shown raw:\n{screen}"
    );
    term.keys(&["C-c"]);
    term.wait_for("again to quit");
    term.keys(&["C-c"]);
    assert_restored(&term);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_permission_prompt_allows_once_then_denies() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("MODEL-SAW-REFUSAL").when_tool_result_contains("refused"),
        Rule::text("WROTE-IT").when_tool_result(true),
        Rule::tool_use(
            "Write",
            json!({"file_path": project.path("first.txt"), "content": "one\n"}),
        )
        .when_last_user_contains("make-first"),
        Rule::tool_use(
            "Write",
            json!({"file_path": project.path("second.txt"), "content": "two\n"}),
        )
        .when_last_user_contains("make-second"),
    ]))
    .await;
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    term.wait_for("for commands");
    term.type_text("make-first");
    term.keys(&["Enter"]);
    term.wait_for("1. Yes");
    term.keys(&["1"]);
    term.wait_for("WROTE-IT");
    assert_eq!(project.read("first.txt"), "one\n");

    term.type_text("make-second");
    term.keys(&["Enter"]);
    term.wait_for("1. Yes");
    term.keys(&["3"]);
    term.wait_for("MODEL-SAW-REFUSAL");
    assert!(!project.repo.join("second.txt").exists());
    term.type_text("/exit");
    term.keys(&["Enter"]);
    assert_restored(&term);
}

#[tokio::test(flavor = "multi_thread")]
async fn esc_stops_the_turn_but_not_a_background_agent() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let sleeper = "sleep 37.25";
    let server = server(Scenario::with_rules([
        Rule::text("CHILD-DONE")
            .when_system_contains(CHILD)
            .delay_ms(4000),
        Rule::text("MAIN-SAW-NOTIFICATION").when_last_user_contains("<task-notification>"),
        Rule::tool_use("Bash", json!({"command": sleeper, "timeout": 600000}))
            .when_tool_result_contains("Started background agent"),
        Rule::text("AFTER-INTERRUPT").when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "slow helper", "prompt": "Do the slow thing",
                   "subagent_type": "general-purpose", "run_in_background": true}),
        )
        .when_last_user_contains("start-work"),
    ]))
    .await;
    let term = Tmux::start(
        &project,
        &server,
        &["--allowedTools", "Bash(sleep:*)"],
        SIZE,
        &[],
    );
    term.wait_for("for commands");
    term.type_text("start-work");
    term.keys(&["Enter"]);
    term.wait_for("sleep 37.25");
    let started = std::time::Instant::now();
    while pids_running(sleeper).is_empty() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!pids_running(sleeper).is_empty(), "the command never ran");
    term.keys(&["Escape"]);
    term.wait_until("the sleep killed", |_| pids_running(sleeper).is_empty());
    // The UI still takes keys while the background agent works.
    term.type_text("still-here");
    term.wait_for("still-here");
    term.wait_for("MAIN-SAW-NOTIFICATION");
    term.keys(&["C-u"]);
    term.type_text("/exit");
    term.keys(&["Enter"]);
    assert_restored(&term);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_b_moves_a_running_subagent_to_the_background() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("CHILD-DONE")
            .when_system_contains(CHILD)
            .delay_ms(5000),
        Rule::text("MAIN-SAW-NOTIFICATION").when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-GOES-ON").when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "slow helper", "prompt": "Do the slow thing",
                   "subagent_type": "general-purpose"}),
        )
        .when_last_user_contains("start-work"),
    ]))
    .await;
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    term.wait_for("for commands");
    term.type_text("start-work");
    term.keys(&["Enter"]);
    term.wait_for("ctrl+b");
    term.keys(&["C-b"]);
    // The model goes on before the child is done, then hears from it.
    let screen = term.wait_for("MAIN-GOES-ON");
    assert!(!screen.contains("MAIN-SAW-NOTIFICATION"), "{screen}");
    term.wait_for("MAIN-SAW-NOTIFICATION");
    term.type_text("/exit");
    term.keys(&["Enter"]);
    assert_restored(&term);
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_picks_an_earlier_session_and_shows_its_history() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("ANSWER-ONE").when_last_user_contains("first-session"),
        Rule::text("ANSWER-TWO").when_last_user_contains("second-question"),
    ]))
    .await;
    let first = Tmux::start(&project, &server, &["first-session please"], SIZE, &[]);
    first.wait_for("ANSWER-ONE");
    first.type_text("/exit");
    first.keys(&["Enter"]);
    first.after_exit();
    drop(first);

    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    term.wait_for("for commands");
    term.type_text("/resume");
    term.keys(&["Enter"]);
    term.wait_for("first-session please");
    term.keys(&["Enter"]);
    term.wait_for("ANSWER-ONE");
    term.type_text("second-question");
    term.keys(&["Enter"]);
    term.wait_for("ANSWER-TWO");
    // The model got the earlier conversation with the new question.
    let requests = server.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("ANSWER-ONE"), "{last}");
    term.type_text("/exit");
    term.keys(&["Enter"]);
    assert_restored(&term);

    // `-c` opens the latest session with its history on screen.
    let again = Tmux::start(&project, &server, &["-c"], SIZE, &[]);
    again.wait_for("ANSWER-TWO");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_screen_follows_a_resize() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let long = "WORDS ".repeat(30);
    let server = server(Scenario::with_rules([Rule::text(format!(
        "{long}END-OF-ANSWER"
    ))]))
    .await;
    let term = Tmux::start(&project, &server, &["tell me"], SIZE, &[]);
    term.wait_for("END-OF-ANSWER");
    term.resize(40, 15);
    let screen = term.wait_until("a 40-column layout", |s| {
        s.contains("END-OF-ANSWER") && s.lines().all(|l| l.chars().count() <= 40)
    });
    assert!(screen.lines().count() <= 15, "{screen}");
    term.resize(100, 30);
    term.wait_for("END-OF-ANSWER");
    let pid = term.format("#{pane_pid}");
    // SIGTERM to fleet (the pane's shell's child) restores the terminal too.
    let fleet = std::process::Command::new("pgrep")
        .args(["-P", &pid])
        .output()
        .unwrap();
    let fleet = String::from_utf8_lossy(&fleet.stdout).trim().to_string();
    assert!(!fleet.is_empty(), "no fleet process under the pane");
    std::process::Command::new("kill")
        .args(["-TERM", &fleet])
        .status()
        .unwrap();
    assert_restored_after(&term, 143);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_repository_is_asked_about_once_and_the_answer_is_remembered() {
    if !tmux::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("hook-ran");
    let settings = json!({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": format!("touch {}", marker.display())}]}]}});
    let mut project = Project::with_settings(&settings);
    project.trusted = false;
    let server = server(Scenario::with_rules([Rule::text("hi")])).await;

    // Not now: the session opens without the repository's hook.
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    let question = term.wait_for("Trust it?");
    assert!(question.contains("hooks (SessionStart)"), "{question}");
    term.type_text("n");
    term.keys(&["Enter"]);
    term.wait_for("for commands");
    assert!(!marker.exists(), "the hook ran without trust");
    term.keys(&["C-c"]);
    term.wait_for("again to quit");
    term.keys(&["C-c"]);
    assert_restored(&term);

    // Trust: remembered in the user's store, and the hook runs.
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    term.wait_for("Trust it?");
    term.type_text("y");
    term.keys(&["Enter"]);
    term.wait_for("for commands");
    let store = std::fs::read_to_string(project.fleet_home.join("trust.json")).unwrap();
    assert!(
        store.contains(&project.repo.display().to_string()),
        "{store}"
    );
    term.keys(&["C-c"]);
    term.wait_for("again to quit");
    term.keys(&["C-c"]);
    assert_restored(&term);
    assert!(marker.exists(), "the trusted hook did not run");

    // Asked once: the next start goes straight in.
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    let screen = term.wait_for("for commands");
    assert!(!screen.contains("Trust it?"), "{screen}");
    term.keys(&["C-c"]);
    term.wait_for("again to quit");
    term.keys(&["C-c"]);
    assert_restored(&term);
}

/// Issue 30, item 5: a command hidden 120 blank lines below `git status`. The approval box
/// shows the `touch`, says how many blank lines it collapsed and keeps every answer, at 24
/// rows and at 10; `n` refuses it and nothing runs.
#[tokio::test(flavor = "multi_thread")]
async fn the_approval_box_shows_a_command_hidden_below_blank_lines() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let target = project.path("PWNED");
    let command = format!("git status{}touch {target}", "\n".repeat(120));
    let server = server(Scenario::with_rules([
        Rule::text("MODEL-SAW-REFUSAL").when_tool_result_contains("refused"),
        Rule::tool_use("Bash", json!({ "command": command })).when_last_user_contains("check-tree"),
    ]))
    .await;
    let term = Tmux::start(&project, &server, &[], SIZE, &[]);
    term.wait_for("for commands");
    term.type_text("check-tree");
    term.keys(&["Enter"]);
    let screen = term.wait_for("1. Yes");
    assert!(screen.contains("$ git status"), "{screen}");
    assert!(screen.contains("(119 blank lines)"), "{screen}");
    assert!(screen.contains(&format!("> touch {target}")), "{screen}");
    assert!(screen.contains("No (n)"), "{screen}");
    term.resize(80, 10);
    term.wait_until("the whole question in 10 rows", |s| {
        s.lines().count() <= 10
            && s.contains(&format!("touch {target}"))
            && s.contains("1. Yes (y)")
            && s.contains("No (n)")
    });
    term.keys(&["n"]);
    term.resize(80, 24);
    term.wait_for("MODEL-SAW-REFUSAL");
    assert!(
        !project.repo.join("PWNED").exists(),
        "the hidden command ran"
    );
    term.type_text("/exit");
    term.keys(&["Enter"]);
    assert_restored(&term);
}
