//! `fleet agents list` and `fleet agents validate`, run as the real binary in a temporary
//! repository with its own HOME and fleet home.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, Project, SCRUBBED};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn agent_file(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nYou are {name}.\n")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Runs `fleet args…` in `dir` with the project's HOME and fleet home and no developer
/// settings from the environment.
fn fleet_in(project: &Project, dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args(args)
        .current_dir(dir)
        .env("HOME", &project.home)
        .env("FLEET_HOME", &project.fleet_home);
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet")
}

fn fleet(project: &Project, args: &[&str]) -> Output {
    fleet_in(project, &project.repo, args)
}

fn list_json(out: &Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_str::<Value>(&stdout(out))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The entry for `name` that is (or is not) shadowed.
fn entry<'a>(list: &'a [Value], name: &str, shadowed: bool) -> &'a Value {
    list.iter()
        .find(|e| e["name"] == name && e["shadowed"] == shadowed)
        .unwrap_or_else(|| panic!("no {name} (shadowed: {shadowed}) in {list:#?}"))
}

#[test]
fn precedence_fleet_over_claude_over_user_over_builtin() {
    let project = Project::new(&[
        (".fleet/agents/a.md", &agent_file("a", "project fleet")),
        (".claude/agents/a.md", &agent_file("a", "project claude")),
        (".claude/agents/b.md", &agent_file("b", "project claude")),
    ]);
    write(
        &project.fleet_home.join("agents/c.md"),
        &agent_file("c", "user fleet"),
    );
    write(
        &project.fleet_home.join("agents/b.md"),
        &agent_file("b", "user fleet"),
    );
    write(
        &project.home.join(".claude/agents/d.md"),
        &agent_file("d", "user claude"),
    );
    write(
        &project.home.join(".claude/agents/c.md"),
        &agent_file("c", "user claude"),
    );
    write(
        &project.home.join(".claude/agents/plan.md"),
        &agent_file("Plan", "user plan"),
    );

    let list = list_json(&fleet(&project, &["agents", "list", "--json"]));
    let winner = |name: &str| entry(&list, name, false)["description"].clone();
    assert_eq!(winner("a"), "project fleet");
    assert_eq!(winner("b"), "project claude");
    assert_eq!(winner("c"), "user fleet");
    assert_eq!(winner("d"), "user claude");
    assert_eq!(winner("Plan"), "user plan");
    assert_eq!(entry(&list, "a", false)["source"], "project");
    assert_eq!(entry(&list, "c", false)["source"], "user");
    assert_eq!(entry(&list, "Plan", true)["source"], "built-in");
    assert_eq!(entry(&list, "a", true)["description"], "project claude");
    assert_eq!(
        entry(&list, "c", false)["path"],
        project.fleet_home.join("agents/c.md").display().to_string()
    );

    let table = fleet(&project, &["agents", "list"]);
    let text = stdout(&table);
    let (main, hidden) = text.split_once("shadowed").unwrap();
    assert!(main
        .lines()
        .any(|l| l.starts_with("a ") && l.contains(".fleet/agents/a.md")));
    let plan_line = hidden.lines().find(|l| l.starts_with("Plan")).unwrap();
    assert!(plan_line.contains("built-in"), "{plan_line}");
    assert!(plan_line.contains("shadowed by user"), "{plan_line}");
}

#[test]
fn nearest_project_folder_wins() {
    let project = Project::new(&[
        (".claude/agents/x.md", &agent_file("x", "root")),
        ("pkg/.claude/agents/x.md", &agent_file("x", "pkg")),
        ("pkg/src/lib.rs", ""),
    ]);
    let from_src = fleet_in(
        &project,
        &project.repo.join("pkg/src"),
        &["agents", "list", "--json"],
    );
    assert_eq!(
        entry(&list_json(&from_src), "x", false)["description"],
        "pkg"
    );
    let with_cwd_flag = fleet(&project, &["agents", "list", "--json", "--cwd", "pkg"]);
    assert_eq!(
        entry(&list_json(&with_cwd_flag), "x", false)["description"],
        "pkg"
    );
    let from_root = fleet(&project, &["agents", "list", "--json"]);
    assert_eq!(
        entry(&list_json(&from_root), "x", false)["description"],
        "root"
    );
}

#[test]
fn broken_file_is_skipped_with_a_warning_naming_file_and_line() {
    let project = Project::new(&[
        (".claude/agents/good.md", &agent_file("good", "works")),
        (
            ".claude/agents/broken.md",
            "---\nname: broken\n---\nno description\n",
        ),
        (
            ".claude/agents/odd.md",
            "---\nname: odd\ndescription: d\nmaxTurns: lots\n---\nP\n",
        ),
    ]);
    let out = fleet(&project, &["agents", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let names: Vec<String> = stdout(&out)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(names.contains(&"good".to_string()));
    assert!(names.contains(&"odd".to_string()));
    assert!(!names.contains(&"broken".to_string()));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "warning: {}:1: description is missing",
            project.path(".claude/agents/broken.md")
        )),
        "{err}"
    );
    assert!(err.contains(&format!(
        "warning: {}:4: maxTurns must be a positive whole number, found \"lots\"; ignored",
        project.path(".claude/agents/odd.md")
    )));
}

#[test]
fn validate_reports_each_file_and_sets_the_exit_status() {
    let project = Project::new(&[
        (".claude/agents/good.md", &agent_file("good", "works")),
        (".claude/agents/team/dup.md", &agent_file("good", "again")),
        ("more/other.md", &agent_file("other", "elsewhere")),
        ("more/broken.md", "---\nname: b\ndescription: d\n"),
    ]);
    let out = fleet(&project, &["agents", "validate"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains(&format!(
        "ok  {} (good)",
        project.path(".claude/agents/good.md")
    )));
    assert!(text.contains(&format!(
        "warning {}: agent \"good\" is already defined by",
        project.path(".claude/agents/team/dup.md")
    )));
    assert!(!text.contains("other.md"), "only the folders fleet loads");

    let out = fleet(&project, &["agents", "validate", "more"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    // Paths are shown as they were given.
    assert!(text.contains("error more/broken.md:1: the frontmatter opened here is never closed"));
    assert!(text.contains("ok  more/other.md (other)"));

    let one_file = fleet(&project, &["agents", "validate", "more/other.md"]);
    assert_eq!(one_file.status.code(), Some(0));
    let missing = fleet(&project, &["agents", "validate", "nowhere.md"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stdout(&missing).contains("error nowhere.md: no such file or folder"));
}

#[test]
fn validate_warns_about_a_bad_name_and_an_unknown_tool_and_strict_fails_on_warnings() {
    let project = Project::new(&[
        (
            ".claude/agents/bad.md",
            "---\n\
             name: Bad Name\n\
             description: Checks things\n\
             tools: Read, Frobnicate, Bash(git *), Agent(Explore), mcp__db__query\n\
             ---\n\
             You check things.\n",
        ),
        (".claude/agents/good.md", &agent_file("good-one", "works")),
    ]);
    let out = fleet(&project, &["agents", "validate"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "warnings alone pass: {text}");
    let file = project.path(".claude/agents/bad.md");
    let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("warning ")).collect();
    assert_eq!(
        warnings.len(),
        2,
        "one warning each, nothing for the good file: {text}"
    );
    assert!(
        warnings[0].starts_with(&format!("warning {file}:2: name \"Bad Name\" has spaces")),
        "{text}"
    );
    assert!(
        warnings[0].contains("use lowercase letters, digits and hyphens, e.g. `name: bad-name`"),
        "{text}"
    );
    assert!(
        warnings[1].starts_with(&format!(
            "warning {file}:4: unknown tool \"Frobnicate\" (known: "
        )),
        "{text}"
    );
    for known in ["Read", "Bash", "Agent", "SendMessage", "Skill"] {
        assert!(warnings[1].contains(known), "{known} is listed: {text}");
    }
    // `Bash(git *)`, `Agent(Explore)` and an MCP tool are not unknown tools.
    assert!(
        !text.contains("\"Bash\"") && !text.contains("mcp__db"),
        "{text}"
    );
    assert!(text.contains(&format!("ok  {file} (Bad Name)")), "{text}");

    let strict = fleet(&project, &["agents", "validate", "--strict"]);
    assert_eq!(strict.status.code(), Some(1), "{}", stdout(&strict));
    assert_eq!(
        stdout(&strict),
        text,
        "--strict says the same, only the status differs"
    );
    let good = fleet(
        &project,
        &["agents", "validate", "--strict", ".claude/agents/good.md"],
    );
    assert_eq!(good.status.code(), Some(0), "{}", stdout(&good));
}

#[test]
fn json_shape_and_command_line_agents() {
    let project = Project::new(&[(
        ".fleet/agents/r.md",
        "---\nname: reviewer\ndescription: files\ntools: Read, Bash(git *)\ndisallowedTools: Write\n\
         model: sonnet\npermissionMode: plan\nmaxTurns: 9\nbackground: true\nisolation: worktree\n\
         ---\nReview.\n",
    )]);
    let cli = r#"{"helper": {"description": "from the flag", "prompt": "Help."}}"#;
    let list = list_json(&fleet(
        &project,
        &["agents", "list", "--json", "--agents", cli],
    ));
    let keys: Vec<&str> = list[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "source",
            "path",
            "model",
            "tools",
            "disallowedTools",
            "permissionMode",
            "maxTurns",
            "effort",
            "skills",
            "memory",
            "background",
            "isolation",
            "shadowed"
        ]
    );
    let helper = entry(&list, "helper", false);
    assert_eq!(
        (&helper["source"], &helper["path"]),
        (&"cli".into(), &Value::Null)
    );
    let reviewer = entry(&list, "reviewer", false);
    assert_eq!(
        reviewer["tools"],
        serde_json::json!(["Read", "Bash(git *)"])
    );
    assert_eq!(reviewer["disallowedTools"], serde_json::json!(["Write"]));
    assert_eq!(reviewer["model"], "sonnet");
    assert_eq!(reviewer["permissionMode"], "plan");
    assert_eq!(reviewer["maxTurns"], 9);
    assert_eq!(reviewer["background"], true);
    assert_eq!(reviewer["isolation"], "worktree");
    let general = entry(&list, "general-purpose", false);
    assert_eq!(
        (&general["tools"], &general["model"]),
        (&Value::Null, &"inherit".into())
    );
    let verification = entry(&list, "verification", false);
    assert_eq!(
        verification["disallowedTools"],
        serde_json::json!(["Agent", "Edit", "Write"])
    );

    let bad = fleet(
        &project,
        &["agents", "list", "--agents", r#"{"x": {"prompt": "p"}}"#],
    );
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains(r#"--agents: agent "x": description is missing"#));
}
