//! `fleet worktrees list | clean`, the real binary on real git repositories. Worktrees are made
//! with `WorktreeManager` directly, as an isolated agent's fleet makes them, in a helper process
//! that then exits: the worktrees it leaves are leftovers, exactly what a finished or killed run
//! leaves (one made by a process still running is "in use", which has its own test).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, Project, SCRUBBED};
use fleet_runtime::isolation::WorktreeManager;
use fleet_store::FleetHome;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Set to `<repo>\n<fleet home>\n<agent id>…` to make the helper test below create worktrees.
const HELPER_VAR: &str = "FLEET_TEST_MAKE_WORKTREES";

/// Not a test of its own: when [`HELPER_VAR`] is set (only in the process [`make_worktrees`]
/// starts), creates a worktree per agent id and exits, leaving them behind.
#[test]
fn helper_make_worktrees() {
    let Ok(spec) = std::env::var(HELPER_VAR) else {
        return;
    };
    let mut lines = spec.lines();
    let repo = PathBuf::from(lines.next().unwrap());
    let home = FleetHome::at(lines.next().unwrap());
    let ids: Vec<String> = lines.map(str::to_string).collect();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let manager = WorktreeManager::new(&home);
        for id in ids {
            let wt = manager.create_for_agent(&repo, &id).await.unwrap();
            println!("{}", wt.path.display());
        }
    });
}

/// Worktrees for `ids` made by a process that has ended; their folders, in order.
fn make_worktrees(project: &Project, ids: &[&str]) -> Vec<PathBuf> {
    let mut spec = format!(
        "{}\n{}",
        project.repo.display(),
        project.fleet_home.display()
    );
    for id in ids {
        spec.push('\n');
        spec.push_str(id);
    }
    let out = fleet_testkit::output_within(
        Command::new(std::env::current_exe().unwrap())
            .arg(fleet_testkit::child_test::test_name(
                module_path!(),
                "helper_make_worktrees",
            ))
            .args(["--exact", "--nocapture", "-q"])
            .env(HELPER_VAR, spec)
            .env("GIT_CONFIG_GLOBAL", "/dev/null"),
        fleet_testkit::WAIT,
        "the worktree helper test",
    );
    assert!(out.status.success(), "helper failed: {}", stderr(&out));
    let paths: Vec<PathBuf> = stdout(&out)
        .lines()
        .filter(|l| l.starts_with('/'))
        .map(PathBuf::from)
        .collect();
    assert_eq!(paths.len(), ids.len(), "{}", stdout(&out));
    paths
}

/// `fleet worktrees args…` in the repository, with the project's HOME and fleet home.
fn fleet(project: &Project, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.arg("worktrees")
        .args(args)
        .current_dir(&project.repo)
        .env("HOME", &project.home)
        .env("FLEET_HOME", &project.fleet_home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet")
}

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "fleet failed: {}", stderr(out));
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

fn by_branch<'a>(list: &'a Value, branch: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|w| w["branch"] == branch)
        .unwrap_or_else(|| panic!("no {branch} in {list:#}"))
}

fn fleet_branches(project: &Project) -> Vec<String> {
    project
        .git(&["branch", "--format=%(refname:short)"])
        .lines()
        .filter(|b| b.starts_with("fleet/"))
        .map(str::to_string)
        .collect()
}

fn registered(project: &Project) -> usize {
    project
        .git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count()
}

fn git_in(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@fleet.invalid"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
}

#[test]
fn list_shows_both_and_clean_removes_the_unchanged_one_and_keeps_the_changed_one() {
    let project = Project::new(&[("greet.txt", "hello\n")]);
    let paths = make_worktrees(&project, &["aaaa1111bbbb2222", "cccc3333dddd4444"]);
    std::fs::write(paths[0].join("notes.txt"), "work\n").unwrap();
    let head = project.git(&["rev-parse", "HEAD"]).trim().to_string();

    let list = json(&fleet(&project, &["list", "--json"]));
    assert_eq!(list.as_array().unwrap().len(), 2, "{list:#}");
    let changed = by_branch(&list, "fleet/agent-aaaa1111");
    let unchanged = by_branch(&list, "fleet/agent-cccc3333");
    assert_eq!(changed["changed"], true, "{changed:#}");
    assert_eq!(unchanged["changed"], false, "{unchanged:#}");
    for w in [changed, unchanged] {
        assert_eq!(w["state"], "present");
        assert_eq!(w["in_use"], false, "its process ended: {w:#}");
        assert_eq!(w["repo_root"], project.repo.display().to_string());
        assert_eq!(w["base_commit"], head);
        assert!(w["age_secs"].is_u64());
    }
    assert_eq!(changed["agent_id"], "aaaa1111bbbb2222");
    assert_eq!(changed["path"], paths[0].display().to_string());

    let text = fleet(&project, &["list"]);
    assert!(text.status.success(), "{}", stderr(&text));
    let text = stdout(&text);
    assert!(text.starts_with("REPO"), "{text}");
    for needle in [
        "aaaa1111bbbb2222",
        "fleet/agent-cccc3333",
        " changed ",
        " unchanged ",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }

    // Plain clean: the unchanged one goes (folder, branch, registration), the changed one stays.
    let out = fleet(&project, &["clean"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("removed") && said.contains("agent-cccc3333"),
        "{said}"
    );
    assert!(
        said.contains("kept") && said.contains("holds work") && said.contains("--force"),
        "says what it kept and why: {said}"
    );
    assert!(!paths[1].exists());
    assert!(
        paths[0].join("notes.txt").exists(),
        "nothing written is lost"
    );
    assert_eq!(fleet_branches(&project), ["fleet/agent-aaaa1111"]);
    assert_eq!(registered(&project), 2);

    // Named but changed: kept again, and JSON says why.
    let report = json(&fleet(&project, &["clean", "aaaa1111", "--json"]));
    assert_eq!(report["removed"], serde_json::json!([]));
    assert_eq!(report["kept"][0]["reason"], "changed", "{report:#}");
    assert_eq!(
        report["kept"][0]["worktree"]["branch"],
        "fleet/agent-aaaa1111"
    );

    // --force removes it, named by its path.
    let path = paths[0].display().to_string();
    let report = json(&fleet(&project, &["clean", &path, "--force", "--json"]));
    assert_eq!(report["removed"][0]["agent_id"], "aaaa1111bbbb2222");
    assert_eq!(report["kept"], serde_json::json!([]));
    assert!(!paths[0].exists());
    assert!(fleet_branches(&project).is_empty());
    assert_eq!(registered(&project), 1, "only the checkout itself");
    assert_eq!(
        json(&fleet(&project, &["list", "--json"])),
        serde_json::json!([])
    );
    assert_eq!(
        project.git(&["status", "--porcelain"]),
        "",
        "checkout untouched"
    );
}

#[test]
fn a_worktree_whose_folder_was_deleted_by_hand_is_found_pruned_and_cleaned() {
    let project = Project::new(&[("greet.txt", "hello\n")]);
    let paths = make_worktrees(&project, &["eeee5555", "ffff6666"]);
    // The second one committed work before its folder went: its branch must survive `clean`.
    std::fs::write(paths[1].join("greet.txt"), "changed\n").unwrap();
    git_in(&paths[1], &["commit", "-qam", "work"]);
    for path in &paths {
        std::fs::remove_dir_all(path).unwrap();
    }
    assert_eq!(registered(&project), 3, "git still lists them");

    let list = json(&fleet(&project, &["list", "--json"]));
    let plain = by_branch(&list, "fleet/agent-eeee5555");
    let committed = by_branch(&list, "fleet/agent-ffff6666");
    assert_eq!(plain["state"], "folder_missing", "{list:#}");
    assert_eq!(plain["changed"], false, "{list:#}");
    assert_eq!(
        committed["changed"], true,
        "its branch holds a commit: {list:#}"
    );
    assert_eq!(registered(&project), 1, "list pruned git's registrations");
    let text = stdout(&fleet(&project, &["list"]));
    assert!(text.contains("stale: folder gone"), "{text}");

    let report = json(&fleet(&project, &["clean", "--json"]));
    assert_eq!(report["removed"].as_array().unwrap().len(), 1, "{report:#}");
    assert_eq!(report["removed"][0]["branch"], "fleet/agent-eeee5555");
    assert_eq!(report["kept"][0]["reason"], "changed");
    assert_eq!(fleet_branches(&project), ["fleet/agent-ffff6666"]);

    let report = json(&fleet(&project, &["clean", "--all", "--force", "--json"]));
    assert_eq!(report["removed"][0]["branch"], "fleet/agent-ffff6666");
    assert!(fleet_branches(&project).is_empty());
    assert_eq!(
        json(&fleet(&project, &["list", "--json"])),
        serde_json::json!([])
    );
}

#[test]
fn an_unknown_id_fails_naming_what_exists() {
    let project = Project::new(&[("greet.txt", "hello\n")]);
    let out = fleet(&project, &["clean", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("there are none"), "{}", stderr(&out));

    make_worktrees(&project, &["abcd1234ef"]);
    let out = fleet(&project, &["clean", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("no fleet worktree matches `nope`"), "{err}");
    assert!(
        err.contains("agent-abcd1234 (agent abcd1234ef, branch fleet/agent-abcd1234)"),
        "{err}"
    );
    assert_eq!(
        fleet_branches(&project),
        ["fleet/agent-abcd1234"],
        "nothing removed"
    );

    let out = fleet(&project, &["clean", "--force"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a forced clean of everything must be asked for"
    );
    assert!(stderr(&out).contains("--all"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_a_running_fleet_made_is_kept_unless_forced() {
    let project = Project::new(&[("greet.txt", "hello\n")]);
    // Made by this (running) process: to the binary, an agent may still be working in it.
    let manager = WorktreeManager::new(&FleetHome::at(&project.fleet_home));
    let wt = manager
        .create_for_agent(&project.repo, "1234abcd5678")
        .await
        .unwrap();
    let list = json(&fleet(&project, &["list", "--json"]));
    assert_eq!(list[0]["in_use"], true, "{list:#}");
    assert_eq!(list[0]["changed"], false);

    let out = fleet(&project, &["clean"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("running fleet") && said.contains(&format!("pid {}", std::process::id())),
        "{said}"
    );
    assert!(wt.path.exists());

    let report = json(&fleet(
        &project,
        &["clean", "1234abcd", "--force", "--json"],
    ));
    assert_eq!(
        report["removed"][0]["agent_id"], "1234abcd5678",
        "{report:#}"
    );
    assert!(!wt.path.exists());
    assert!(fleet_branches(&project).is_empty());
}
