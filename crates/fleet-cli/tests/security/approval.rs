//! With a person at a terminal, a call that needs approval is asked about — here through a
//! real pseudo-terminal made by util-linux `script` — and the answer decides whether it runs.

use crate::common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `fleet -p go --verbose` on a terminal, typing `typed`; `None` when this machine has no
/// `script` to make the terminal.
async fn on_terminal(
    project: &Project,
    server: &fleet_testkit::FakeModelServer,
    typed: &str,
) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` is not installed");
        return None;
    }
    let fleet = env!("CARGO_BIN_EXE_fleet");
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &format!("{fleet} -p go --verbose"), "/dev/null"]);
    project.environment(&mut cmd, server);
    let typed = typed.to_string();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(typed.as_bytes())
            .unwrap();
        fleet_testkit::wait_output(child, fleet_testkit::WAIT, "fleet at a terminal")
    })
    .await
    .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn scenario_for(command: &str) -> Scenario {
    Scenario::queue([
        Rule::tool_use("Bash", json!({ "command": command })),
        Rule::text("finished"),
    ])
}

fn scenario() -> Scenario {
    scenario_for("touch made.txt && echo ran-for-real")
}

/// The question as the person saw it: from `? ` to `allow?`, with the terminal's line ends.
fn question(screen: &str) -> &str {
    let start = screen.find("? Bash").expect("a question was asked");
    let end = start + screen[start..].find("allow?").expect("the question ends");
    &screen[start..end]
}

#[tokio::test]
async fn yes_at_the_prompt_runs_the_call() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(scenario()).await;
    let Some(screen) = on_terminal(&project, &server, "y\n").await else {
        return;
    };
    assert!(
        screen.contains("Bash wants to run:\r\n  │ touch made.txt && echo ran-for-real\r\n"),
        "{screen}"
    );
    assert!(
        screen.contains("ran-for-real\r\n") || screen.contains("⎿ ran-for-real"),
        "{screen}"
    );
    let second = server.requests()[1].body["messages"][2]["content"][0].clone();
    assert_eq!(second["content"], "ran-for-real", "{second}");
}

#[tokio::test]
async fn no_at_the_prompt_refuses_the_call() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(scenario()).await;
    let Some(screen) = on_terminal(&project, &server, "n\n").await else {
        return;
    };
    assert!(screen.contains("allow?"), "{screen}");
    let second = server.requests()[1].body["messages"][2]["content"][0].clone();
    assert_eq!(second["is_error"], true, "{second}");
    assert!(
        second["content"].as_str().unwrap().contains("refused"),
        "{second}"
    );
}

#[tokio::test]
async fn escape_codes_in_a_command_are_shown_not_obeyed() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let forged = "touch pwned #\u{1b}[2K\u{1b}[G? Bash wants to run 'ls -la'\u{7}\r";
    let server = server(scenario_for(forged)).await;
    let Some(screen) = on_terminal(&project, &server, "n\n").await else {
        return;
    };
    assert!(
        !screen.contains('\u{1b}') && !screen.contains('\u{7}'),
        "nothing from the command reached the terminal raw: {screen:?}"
    );
    let asked = question(&screen);
    assert!(
        asked.contains("  │ touch pwned #\\e[2K\\e[G? Bash wants to run 'ls -la'\\x07\\r\r\n"),
        "{asked:?}"
    );
    assert!(asked.contains("control characters"), "{asked}");
    assert!(!project.repo.join("pwned").exists());
}

#[tokio::test]
async fn a_long_command_is_shown_whole_with_its_tail() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let command = format!(
        "echo {} && touch TAIL-RUNS-UNSEEN.txt",
        "harmless-words ".repeat(32)
    );
    assert!(command.chars().count() >= 500, "{}", command.len());
    let server = server(scenario_for(&command)).await;
    let Some(screen) = on_terminal(&project, &server, "n\n").await else {
        return;
    };
    let asked = question(&screen);
    let rows: Vec<&str> = asked
        .split("\r\n")
        .skip(1)
        .filter(|r| !r.trim().is_empty())
        .collect();
    assert!(rows.len() > 1, "wrapped over several rows: {asked}");
    assert!(rows.iter().all(|r| r.starts_with("  │ ")), "{asked}");
    assert!(rows.iter().all(|r| r.chars().count() <= 80), "{asked}");
    let shown: String = rows.iter().filter_map(|r| r.strip_prefix("  │ ")).collect();
    assert_eq!(shown, command);
    assert!(!project.repo.join("TAIL-RUNS-UNSEEN.txt").exists());
}

/// "Always allow" on a compound line stores one exact rule per command it runs: the same
/// command later runs unasked, but a line adding anything to it — another command, a
/// substitution — is asked about again.
#[tokio::test]
async fn always_on_a_compound_command_allows_exactly_its_parts() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::queue([
        Rule::tool_use("Bash", json!({"command": "touch b.txt && git add b.txt"})),
        Rule::tool_use("Bash", json!({"command": "git add b.txt"})),
        Rule::tool_use("Bash", json!({"command": "git add b.txt; touch pwned-1"})),
        Rule::tool_use(
            "Bash",
            json!({"command": "git add $(touch pwned-2; echo b.txt)"}),
        ),
        Rule::tool_use("Bash", json!({"command": "git add b.txt && touch pwned-3"})),
        Rule::text("finished"),
    ]))
    .await;
    let Some(screen) = on_terminal(&project, &server, "a\nn\nn\nn\n").await else {
        return;
    };
    assert!(
        screen.contains("`Bash(touch b.txt)`, `Bash(git add b.txt)`"),
        "{screen}"
    );
    assert_eq!(screen.matches("wants to run").count(), 4, "{screen}");
    // The substitution makes a word unknown: no exact rule could cover it, so only "once".
    assert!(screen.contains("allow once?"), "{screen}");
    for marker in ["pwned-1", "pwned-2", "pwned-3"] {
        assert!(!project.repo.join(marker).exists(), "{marker}\n{screen}");
    }
    assert_eq!(project.git(&["diff", "--cached", "--name-only"]), "b.txt\n");
    // The second call ran without a question: its result is not a refusal.
    let second = server.requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"][0]
        .clone();
    assert_ne!(second["is_error"], true, "{second}");
}
