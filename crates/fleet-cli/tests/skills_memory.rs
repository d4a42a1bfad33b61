//! Skills, agent memory and effort, as a user of `fleet -p` meets them: skills listed in the
//! system prompt and loaded through the Skill tool, skills preloaded by an agent file, an
//! agent that remembers a fact from one session to the next through its MEMORY.md, and
//! effort sent as a thinking budget only to models that take it.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{result_of, server, stderr, stdout, Project};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::{json, Value};

const CHILD: &str = "running as a subagent";

const GREET: &str = "---\nname: greet\ndescription: Use when asked to greet someone\n\
allowed-tools: Bash(python3 *)\n---\nGREET-BODY: greet $ARGUMENTS with scripts/hello.py\n";

fn bodies(server: &FakeModelServer) -> Vec<Value> {
    server.requests().into_iter().map(|r| r.body).collect()
}

fn system_of(body: &Value) -> String {
    body["system"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .map(|b| b["text"].as_str().unwrap_or_default().to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn write_home_file(project: &Project, rel: &str, text: &str) {
    let path = project.home.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn skills_are_listed_and_loaded_through_the_skill_tool() {
    let project = Project::new(&[(".claude/skills/greet/SKILL.md", GREET)]);
    write_home_file(
        &project,
        ".claude/skills/broken/SKILL.md",
        "no frontmatter here\n",
    );
    write_home_file(
        &project,
        ".claude/skills/deploy/SKILL.md",
        "---\ndescription: Use to ship a release\n---\nDEPLOY-BODY\n",
    );
    let server = server(Scenario::with_rules([
        Rule::text("GREETED").when_tool_result_contains("GREET-BODY: greet Ada with"),
        Rule::tool_use("Skill", json!({"skill": "greet", "args": "Ada"}))
            .when_system_contains("- greet: Use when asked to greet someone")
            .when_tool_result(false),
    ]))
    .await;
    let (out, lines) = project.stream_json(&server, "say hi to Ada", &[]).await;
    assert_eq!(result_of(&lines)["result"], "GREETED", "{}", stderr(&out));
    // The init line names them, as Claude Code's does.
    assert_eq!(lines[0]["skills"], json!(["greet", "deploy"]));

    // The broken skill is named in a warning; the others still load.
    let broken = project.home.join(".claude/skills/broken/SKILL.md");
    assert!(
        stderr(&out).contains(&broken.display().to_string()),
        "{}",
        stderr(&out)
    );
    let requests = bodies(&server);
    let first = &requests[0];
    assert!(tool_names(first).contains(&"Skill".to_string()));
    let system = system_of(first);
    assert!(
        system.contains("- deploy: Use to ship a release"),
        "{system}"
    );
    // Only the listing is in the prompt, not the instructions.
    assert!(!system.contains("GREET-BODY"), "{system}");

    // The tool's result carries the body, the arguments and the skill's folder.
    let result = requests[1]["messages"].to_string();
    let folder = project.repo.join(".claude/skills/greet");
    assert!(result.contains(&folder.display().to_string()), "{result}");
    assert!(result.contains("Bash(python3 *)"), "{result}");
}

#[tokio::test]
async fn an_agent_file_preloads_its_skills_and_unknown_names_are_warned_about() {
    let agent = "---\nname: greeter\ndescription: Greets people\nskills: [greet, no-such-skill]\n\
---\nYou greet people.\n";
    let project = Project::new(&[
        (".claude/skills/greet/SKILL.md", GREET),
        (".claude/agents/greeter.md", agent),
    ]);
    let server = server(Scenario::with_rules([
        Rule::text("CHILD-DONE").when_system_contains(CHILD),
        Rule::text("MAIN-DONE").when_tool_result_contains("CHILD-DONE"),
        Rule::tool_use(
            "Agent",
            json!({"description": "greet", "prompt": "greet Bob", "subagent_type": "greeter"}),
        )
        .when_tool_result(false),
    ]))
    .await;
    let out = project.run(&server, &["-p", "greet Bob"], "").await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out).trim(), "MAIN-DONE");

    let child = bodies(&server)
        .into_iter()
        .find(|b| system_of(b).contains(CHILD))
        .unwrap();
    let system = system_of(&child);
    assert!(system.contains("GREET-BODY: greet"), "{system}");
    let own = system.find("You greet people.").unwrap();
    assert!(own < system.find("GREET-BODY").unwrap());

    let warnings = stderr(&out);
    let file = project.repo.join(".claude/agents/greeter.md");
    let warning = warnings
        .lines()
        .find(|l| l.contains("no-such-skill"))
        .unwrap_or_else(|| panic!("{warnings}"));
    assert!(warning.contains(&file.display().to_string()), "{warning}");
}

#[tokio::test]
async fn an_agent_remembers_a_fact_across_sessions_through_its_memory() {
    let agent = "---\nname: notes\ndescription: Keeps notes\nmemory: project\n\
tools: Read, Write, Edit\n---\nYou keep notes.\n";
    let project = Project::new(&[(".claude/agents/notes.md", agent)]);
    let memory = project.repo.join(".claude/agent-memory/notes/MEMORY.md");
    let fact = "- The secret word is PLUM-7";
    let server = server(Scenario::with_rules([
        // Second session: the fact is in the child's prompt.
        Rule::text("RECALLED PLUM-7")
            .when_system_contains(CHILD)
            .when_system_contains("The secret word is PLUM-7"),
        // First session: the child finds its memory empty and writes the fact there.
        Rule::tool_use(
            "Write",
            json!({"file_path": memory.display().to_string(), "content": format!("{fact}\n")}),
        )
        .when_system_contains("is empty so far")
        .when_tool_result(false),
        Rule::text("STORED").when_system_contains(CHILD),
        Rule::text("MAIN-DONE").when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "notes", "prompt": "the word", "subagent_type": "notes"}),
        )
        .when_tool_result(false),
    ]))
    .await;

    let first = project.run(&server, &["-p", "remember the word"], "").await;
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(
        std::fs::read_to_string(&memory).unwrap(),
        format!("{fact}\n")
    );
    // The write needed no permission: nothing was refused.
    let results: Vec<String> = bodies(&server)
        .iter()
        .map(|b| b["messages"].to_string())
        .collect();
    assert!(results.iter().all(|m| !m.contains("denied")), "{results:?}");
    assert!(results.iter().any(|m| m.contains("STORED")));

    let before = server.request_count();
    let second = project
        .run(&server, &["-p", "what was the word?"], "")
        .await;
    assert!(second.status.success(), "{}", stderr(&second));
    let child = bodies(&server)
        .into_iter()
        .skip(before)
        .find(|b| system_of(b).contains(CHILD))
        .unwrap();
    let system = system_of(&child);
    assert!(system.contains(fact), "{system}");
    assert!(system.contains(&memory.display().to_string()));
    let main_last = bodies(&server).last().unwrap()["messages"].to_string();
    assert!(main_last.contains("RECALLED PLUM-7"), "{main_last}");
}

fn thinking_of(body: &Value) -> Option<(u64, u64)> {
    let budget = body.get("thinking")?["budget_tokens"].as_u64()?;
    Some((budget, body["max_tokens"].as_u64().unwrap()))
}

#[tokio::test]
async fn effort_is_a_thinking_budget_for_models_that_take_it() {
    let agent = "---\nname: deep\ndescription: Thinks hard\neffort: medium\n---\nThink.\n";
    let project = Project::new(&[(".claude/agents/deep.md", agent)]);
    let server = server(Scenario::with_rules([
        Rule::text("CHILD-DONE").when_system_contains(CHILD),
        Rule::text("DONE").when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "deep", "prompt": "think", "subagent_type": "deep"}),
        )
        .when_marker("DELEGATE")
        .when_tool_result(false),
        Rule::text("DONE"),
    ]))
    .await;

    // --effort on a thinking model: sent as a thinking budget, max_tokens above it.
    let out = project
        .run(
            &server,
            &[
                "-p",
                "hi",
                "--model",
                "claude-sonnet-4-5",
                "--effort",
                "high",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let body = server.last_request().unwrap().body;
    assert_eq!(body["thinking"]["type"], "enabled");
    assert_eq!(thinking_of(&body), Some((31_999, 64_000)));

    // The same on a model without extended thinking: dropped.
    let out = project
        .run(
            &server,
            &[
                "-p",
                "hi",
                "--model",
                "claude-3-5-haiku-20241022",
                "--effort",
                "high",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let body = server.last_request().unwrap().body;
    assert!(body.get("thinking").is_none(), "{body}");

    // The settings key, and a definition's own effort for its subagent.
    std::fs::write(
        project.repo.join(".claude/settings.json"),
        r#"{"effort": "low"}"#,
    )
    .unwrap();
    let before = server.request_count();
    let out = project
        .run(
            &server,
            &["-p", "DELEGATE", "--model", "claude-sonnet-4-5"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let run: Vec<Value> = bodies(&server).into_iter().skip(before).collect();
    let (child, main): (Vec<&Value>, Vec<&Value>) =
        run.iter().partition(|b| system_of(b).contains(CHILD));
    assert_eq!(thinking_of(main[0]), Some((4_000, 64_000)));
    assert_eq!(thinking_of(child[0]), Some((10_000, 64_000)));

    // A bad value is an error naming its flag.
    let out = project
        .run(&server, &["-p", "hi", "--effort", "lots"], "")
        .await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("lots"), "{}", stderr(&out));

    // `fleet agents list` shows it.
    let out = project.run(&server, &["agents", "list"], "").await;
    let listing = stdout(&out);
    let line = listing.lines().find(|l| l.starts_with("deep ")).unwrap();
    assert!(line.contains("medium"), "{listing}");
    assert!(listing.lines().next().unwrap().contains("EFFORT"));
}
