//! `WorktreeCreate` / `WorktreeRemove` hooks own an isolated agent's worktree, end to end: the
//! create hook replaces `git worktree add` (it prints the folder it made), the agent works
//! there, and the remove hook is handed `worktree_path` when the agent ends. A failing hook,
//! or one printing a path that is not an absolute folder, fails the Agent call with a reason.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, result_of, server, stderr, tool_result_texts, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::path::Path;

fn project_with_hooks(hooks: Value) -> Project {
    Project::with_settings(&json!({ "hooks": hooks }))
}

fn command(text: &str) -> Value {
    json!([{"hooks": [{"type": "command", "command": text}]}])
}

/// The main agent starts one isolated child, which writes where it works into `where.txt`.
fn scenario() -> Scenario {
    Scenario::with_rules([
        Rule::text("CHILD-DONE")
            .when_marker("HOOKED-CHILD")
            .when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "pwd > where.txt"})).when_marker("HOOKED-CHILD"),
        Rule::text("MAIN-DONE").when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "isolated", "prompt": "HOOKED-CHILD: work",
                   "isolation": "worktree"}),
        ),
    ])
}

const ARGS: [&str; 7] = [
    "-p",
    "isolate",
    "--permission-mode",
    "bypassPermissions",
    "--output-format",
    "stream-json",
    "--verbose",
];

#[tokio::test]
async fn a_worktree_create_hook_makes_the_worktree_and_the_remove_hook_gets_its_path() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let b = base.display();
    let create = format!(
        "name=$(sed -n 's/.*\"name\":\"\\([^\"]*\\)\".*/\\1/p'); mkdir -p {b}/$name && \
         echo 'making a worktree' && echo {b}/$name"
    );
    let remove = format!("cat > {b}/removed.json");
    let project = project_with_hooks(json!({
        "WorktreeCreate": command(&create),
        "WorktreeRemove": command(&remove),
    }));
    let server = server(scenario()).await;
    let out = project.run(&server, &ARGS, "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(result_of(&lines)["result"], "MAIN-DONE", "{lines:#?}");

    // The child worked in the folder the hook made, not in the checkout.
    let made: Vec<_> = std::fs::read_dir(&base)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let worktree = &made[0];
    assert!(worktree
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("agent-"));
    let wrote = std::fs::read_to_string(worktree.join("where.txt")).unwrap();
    assert_eq!(Path::new(wrote.trim()), worktree.as_path());
    assert!(!project.repo.join("where.txt").exists());
    // fleet made no git worktree or branch of its own.
    let branches = project.git(&["branch", "--format=%(refname:short)"]);
    assert!(!branches.contains("fleet/"), "{branches}");

    // The remove hook was told which folder, and fleet left the folder to it.
    let removed: Value =
        serde_json::from_str(&std::fs::read_to_string(base.join("removed.json")).unwrap()).unwrap();
    assert_eq!(removed["hook_event_name"], "WorktreeRemove");
    assert_eq!(removed["worktree_path"], worktree.display().to_string());
    assert!(worktree.exists());
}

#[tokio::test]
async fn a_failing_or_wrong_worktree_create_hook_fails_the_agent_call() {
    let cases = [
        (
            "echo 'no space left' >&2; exit 1",
            "exited with 1: no space left",
        ),
        (
            "echo relative/wt",
            "relative/wt\\\", which is not an absolute path",
        ),
        ("echo /nonexistent/fleet-wt", "which does not exist"),
        ("true", "printed no path"),
    ];
    for (hook, reason) in cases {
        let project = project_with_hooks(json!({"WorktreeCreate": command(hook)}));
        let server = server(scenario()).await;
        let out = project.run(&server, &ARGS, "").await;
        assert!(out.status.success(), "{}", stderr(&out));
        let lines = json_lines(&out);
        let texts = tool_result_texts(&lines, |l| l["parent_tool_use_id"].is_null());
        assert_eq!(texts.len(), 1, "{lines:#?}");
        assert!(
            texts[0].contains("Cannot give the agent its own worktree")
                && texts[0].contains(reason),
            "{hook}: {}",
            texts[0]
        );
        // The child never started.
        let child_requests = server
            .requests()
            .iter()
            .filter(|r| r.body.to_string().contains("HOOKED-CHILD: work"))
            .filter(|r| r.body["messages"].as_array().is_some_and(|m| m.len() == 1))
            .count();
        assert_eq!(child_requests, 0, "{hook}");
    }
}
