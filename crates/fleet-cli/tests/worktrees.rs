//! Worktree isolation end to end: the real binary against the fake model server in temp git
//! repositories. Isolated children work in their own worktrees on their own branches, made
//! from the caller's HEAD; what they change is kept, what they leave unchanged is removed, and
//! the caller's checkout is never touched.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, server, stderr, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

const MAIN: &str = "WT-MAIN";

fn isolated(marker: &str) -> Value {
    json!({"description": format!("isolated {marker}"), "prompt": marker, "isolation": "worktree"})
}

/// The structured results of the main agent's Agent calls, in order.
fn agent_results(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "user" && l["parent_tool_use_id"].is_null())
        .filter_map(|l| l.get("tool_use_result").cloned())
        .filter(|r| r.get("agentId").is_some())
        .collect()
}

fn branches(project: &Project) -> Vec<String> {
    project
        .git(&["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_string)
        .filter(|b| b.starts_with("fleet/"))
        .collect()
}

fn run_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "-p",
        "WT-MAIN: isolate",
        "--permission-mode",
        "bypassPermissions",
        "--output-format",
        "stream-json",
        "--verbose",
    ];
    args.extend_from_slice(extra);
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_isolated_children_edit_one_file_on_two_branches_and_the_checkout_is_untouched() {
    let project = Project::new(&[("greet.txt", "hello\n")]);
    let before = std::fs::read(project.repo.join("greet.txt")).unwrap();
    let index_before = std::fs::read(project.repo.join(".git/index")).unwrap();
    let server = server(Scenario::with_rules([
        Rule::text("EDITED-A").when_marker("EDIT-A").when_tool_result(true),
        Rule::tool_use(
            "Bash",
            json!({"command": "printf 'hello from A\\n' > greet.txt && git -c user.name=a -c user.email=a@x commit -qam 'A edits'"}),
        )
        .when_marker("EDIT-A")
        .when_tool_result(false),
        Rule::text("EDITED-B").when_marker("EDIT-B").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "printf 'hello from B\\n' > greet.txt"}))
            .when_marker("EDIT-B")
            .when_tool_result(false),
        Rule::text("LOOKED").when_marker("LOOK-ONLY").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "cat greet.txt"}))
            .when_marker("LOOK-ONLY")
            .when_tool_result(false),
        Rule::text("UNTRACKED").when_marker("NEW-FILE").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "printf 'notes\\n' > notes.txt"}))
            .when_marker("NEW-FILE")
            .when_tool_result(false),
        Rule::text("MAIN-DONE").when_marker(MAIN).when_tool_result(true),
        Rule::tool_use("Agent", isolated("EDIT-A"))
            .then_tool_use("Agent", isolated("EDIT-B"))
            .then_tool_use("Agent", isolated("LOOK-ONLY"))
            .then_tool_use("Agent", isolated("NEW-FILE"))
            .when_marker(MAIN)
            .when_tool_result(false),
    ]))
    .await;
    let out = project.run_with_env(&server, &run_args(&[]), &[]).await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "{}\n{lines:#?}", stderr(&out));
    let results = agent_results(&lines);
    assert_eq!(results.len(), 4, "{results:#?}");
    let (a, b, look, new) = (&results[0], &results[1], &results[2], &results[3]);

    // A committed, B left its edit uncommitted: both kept, on their own branches.
    assert_eq!(a["worktree"]["commits"], 1, "{a:#}");
    assert_eq!(a["worktree"]["changed_files"], json!(["greet.txt"]));
    assert_eq!(b["worktree"]["commits"], 0, "{b:#}");
    assert_eq!(b["worktree"]["uncommitted"], true);
    let a_path = a["worktree"]["path"].as_str().unwrap();
    let b_path = b["worktree"]["path"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(format!("{a_path}/greet.txt")).unwrap(),
        "hello from A\n"
    );
    assert_eq!(
        std::fs::read_to_string(format!("{b_path}/greet.txt")).unwrap(),
        "hello from B\n"
    );
    assert!(a_path.starts_with(&project.fleet_home.join("worktrees").display().to_string()));
    let head = project.git(&["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(
        a["worktree"]["base_commit"], head,
        "made from the caller's HEAD"
    );
    // The child that only looked left nothing; the one that left an untracked file is kept.
    assert!(look["worktree"].is_null(), "{look:#}");
    assert_eq!(new["worktree"]["uncommitted"], true, "{new:#}");
    assert_eq!(new["worktree"]["changed_files"], json!(["notes.txt"]));
    let kept = branches(&project);
    assert_eq!(
        kept.len(),
        3,
        "A, B and the untracked file's branches: {kept:?}"
    );

    // The caller's checkout: same bytes, same index, nothing new.
    assert_eq!(
        std::fs::read(project.repo.join("greet.txt")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read(project.repo.join(".git/index")).unwrap(),
        index_before
    );
    assert_eq!(project.git(&["status", "--porcelain"]), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_base_is_the_callers_head_even_with_a_commit_origin_lacks() {
    let origin = Project::new(&[("greet.txt", "hello\n")]);
    let project = Project::new(&[]);
    project.git(&[
        "remote",
        "add",
        "origin",
        &origin.repo.display().to_string(),
    ]);
    project.git(&["fetch", "-q", "origin"]);
    project.git(&["reset", "-q", "--hard", "origin/main"]);
    std::fs::write(project.repo.join("local.txt"), "only here\n").unwrap();
    project.git(&["add", "."]);
    project.git(&["commit", "-q", "-m", "local only"]);
    let head = project.git(&["rev-parse", "HEAD"]).trim().to_string();
    let server = server(Scenario::with_rules([
        Rule::text("SAW")
            .when_marker("SEE-LOCAL")
            .when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "printf 'x\\n' >> local.txt"}))
            .when_marker("SEE-LOCAL")
            .when_tool_result(false),
        Rule::text("MAIN-DONE")
            .when_marker(MAIN)
            .when_tool_result(true),
        Rule::tool_use("Agent", isolated("SEE-LOCAL"))
            .when_marker(MAIN)
            .when_tool_result(false),
    ]))
    .await;
    let out = project.run_with_env(&server, &run_args(&[]), &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = agent_results(&json_lines(&out));
    let worktree = &results[0]["worktree"];
    assert_eq!(worktree["base_commit"], head, "{worktree:#}");
    let path = worktree["path"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(format!("{path}/local.txt")).unwrap(),
        "only here\nx\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_isolated_children_in_one_reply_all_get_worktrees() {
    let project = Project::new(&[("greet.txt", "hello\n")]);
    let mut main = Rule::tool_use("Agent", isolated("FIFTY-0"));
    for i in 1..50 {
        main = main.then_tool_use("Agent", isolated(&format!("FIFTY-{i}")));
    }
    let server = server(Scenario::with_rules([
        Rule::text("MAIN-DONE")
            .when_marker(MAIN)
            .when_tool_result(true),
        main.when_marker(MAIN).when_tool_result(false),
        Rule::text("CHILD-DONE"),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &run_args(&[]),
            &[("FLEET_MAX_CONCURRENT_SUBAGENTS", "100")],
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = agent_results(&lines);
    assert_eq!(results.len(), 50);
    assert!(
        results
            .iter()
            .all(|r| r["status"] == "completed" && r["worktree"].is_null()),
        "every child ran, changed nothing, and its worktree went: {results:#?}"
    );
    assert!(branches(&project).is_empty());
    let listed = project.git(&["worktree", "list"]);
    assert_eq!(
        listed.lines().count(),
        1,
        "only the checkout itself: {listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_child_cannot_write_into_the_callers_checkout() {
    let project = Project::new(&[("greet.txt", "hello\n")]);
    let target = project.path("greet.txt");
    let server = server(Scenario::with_rules([
        Rule::text("TRIED")
            .when_marker("ESCAPE")
            .when_tool_result(true),
        Rule::tool_use(
            "Write",
            json!({"file_path": target, "content": "escaped\n"}),
        )
        .then_tool_use(
            "Bash",
            json!({"command": format!("printf 'escaped\\n' > {target}")}),
        )
        .when_marker("ESCAPE")
        .when_tool_result(false),
        Rule::text("MAIN-DONE")
            .when_marker(MAIN)
            .when_tool_result(true),
        Rule::tool_use("Agent", isolated("ESCAPE"))
            .when_marker(MAIN)
            .when_tool_result(false),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "WT-MAIN: isolate",
                "--sandbox",
                "--allowedTools",
                "Write,Bash",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[],
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "{}\n{lines:#?}", stderr(&out));
    assert_eq!(
        project.read("greet.txt"),
        "hello\n",
        "the checkout is untouched"
    );
    let child_results = common::tool_result_texts(&lines, |l| !l["parent_tool_use_id"].is_null());
    assert!(
        child_results[0].contains("outside"),
        "the Write is refused as outside its workspace: {child_results:#?}"
    );
    assert!(
        child_results[1].contains("denied by the sandbox")
            || child_results[1].contains("Permission denied"),
        "the sandbox's only writable root is the worktree: {child_results:#?}"
    );
}
