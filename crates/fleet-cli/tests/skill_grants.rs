//! What loading a skill changes, end to end: its `allowed-tools` let calls run without asking
//! for the rest of the run (a user skill at once, a project skill only once the user approved
//! it in a file the repository cannot write), and its `model` is used for the following
//! requests.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, result_of, server, stderr, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

const ECHOER: &str = "---\nname: echoer\ndescription: Use to touch files\n\
allowed-tools: Bash(touch:*)\n---\nECHOER-BODY: touch the files you are asked to.\n";

fn write(root: &std::path::Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Touch a file before loading the skill, load it, touch another, finish.
fn echo_around_the_skill() -> Scenario {
    Scenario::queue([
        Rule::tool_use("Bash", json!({"command": "touch before.txt"})),
        Rule::tool_use("Skill", json!({"skill": "echoer"})),
        Rule::tool_use("Bash", json!({"command": "touch after.txt"})),
        Rule::text("DONE"),
    ])
}

/// The commands `dontAsk` refused in the run `out` reports.
fn refused_commands(out: &std::process::Output) -> Vec<String> {
    let lines = json_lines(out);
    let result = result_of(&lines);
    assert_eq!(result["result"], "DONE", "{result:#}\n{}", stderr(out));
    result["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_input"]["command"].as_str().unwrap().to_string())
        .collect()
}

const ARGS: [&str; 6] = [
    "-p",
    "echo around the skill",
    "--permission-mode",
    "dontAsk",
    "--output-format",
    "json",
];

#[tokio::test]
async fn a_user_skill_lets_its_tools_run_in_dont_ask_mode_once_loaded() {
    let project = Project::new(&[]);
    write(&project.home, ".claude/skills/echoer/SKILL.md", ECHOER);
    let server = server(echo_around_the_skill()).await;
    let out = project.run(&server, &ARGS, "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    // Refused before the skill was loaded, allowed after.
    assert_eq!(refused_commands(&out), ["touch before.txt"]);
    assert!(!project.repo.join("before.txt").exists());
    assert!(project.repo.join("after.txt").exists());
}

#[tokio::test]
async fn a_project_skill_grants_its_tools_only_once_the_user_approves_it() {
    // The repository approving its own skill in its shared settings counts for nothing.
    let project = Project::new(&[
        (".claude/skills/echoer/SKILL.md", ECHOER),
        (
            ".claude/settings.json",
            r#"{"enableAllProjectSkillTools": true, "enabledProjectSkillTools": ["echoer"]}"#,
        ),
    ]);
    let server = server(echo_around_the_skill().rules(echo_around_the_skill_again())).await;
    let out = project.run(&server, &ARGS, "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        refused_commands(&out),
        ["touch before.txt", "touch after.txt"]
    );
    // The model is told why.
    let told = server.requests()[2].body["messages"].to_string();
    assert!(told.contains("they were not granted"), "{told}");
    assert!(told.contains("enabledProjectSkillTools"), "{told}");

    // The user's own local settings approve it.
    write(
        &project.repo,
        ".claude/settings.local.json",
        r#"{"enabledProjectSkillTools": ["echoer"]}"#,
    );
    let out = project.run(&server, &ARGS, "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(refused_commands(&out), ["touch before.txt"]);
}

/// The same four replies for a second run on the same server.
fn echo_around_the_skill_again() -> Vec<Rule> {
    vec![
        Rule::tool_use("Bash", json!({"command": "touch before.txt"})).once(),
        Rule::tool_use("Skill", json!({"skill": "echoer"})).once(),
        Rule::tool_use("Bash", json!({"command": "touch after.txt"})).once(),
        Rule::text("DONE").once(),
    ]
}

#[tokio::test]
async fn a_skill_with_a_model_makes_the_next_requests_use_it() {
    let project = Project::new(&[]);
    write(
        &project.home,
        ".claude/skills/quick/SKILL.md",
        "---\nname: quick\ndescription: Use for quick jobs\nmodel: haiku\n---\nQUICK-BODY\n",
    );
    let server = server(Scenario::queue([
        Rule::tool_use("Skill", json!({"skill": "quick"})),
        Rule::text("DONE"),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &[
                "-p",
                "do it quickly",
                "--model",
                "sonnet",
                "--output-format",
                "json",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(models.len(), 2);
    assert!(models[0].as_str().unwrap().contains("sonnet"), "{models:?}");
    assert!(models[1].as_str().unwrap().contains("haiku"), "{models:?}");
}
