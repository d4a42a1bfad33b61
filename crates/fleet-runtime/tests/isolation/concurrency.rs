//! Many worktrees at once: within one process (the in-process lock) and across processes
//! (git's own locks, retried).

use std::path::PathBuf;
use std::process::Command;

use fleet_runtime::isolation::{Outcome, WorktreeManager};
use fleet_store::FleetHome;

use crate::isolation::support::*;

const CHILD_REPO: &str = "FLEET_ISOLATION_TEST_REPO";
const CHILD_HOME: &str = "FLEET_ISOLATION_TEST_HOME";
const CHILD_PREFIX: &str = "FLEET_ISOLATION_TEST_PREFIX";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_agents_at_once_all_get_worktrees() {
    let fx = Fixture::new();
    let head = fx.head();
    let mut tasks = Vec::new();
    for n in 0..50 {
        let manager = fx.manager.clone();
        let repo = fx.repo.clone();
        tasks.push(tokio::spawn(async move {
            manager.create_for_agent(&repo, &format!("a{n:07}")).await
        }));
    }
    let mut worktrees = Vec::new();
    for task in tasks {
        worktrees.push(task.await.unwrap().unwrap());
    }
    assert_eq!(fx.registered().len(), 51);
    assert!(worktrees.iter().all(|w| w.base_commit == head));

    let mut tasks = Vec::new();
    for wt in worktrees {
        let manager = fx.manager.clone();
        tasks.push(tokio::spawn(async move { manager.finish(&wt).await }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap().unwrap(), Outcome::Removed);
    }
    assert_eq!(fx.registered().len(), 1);
    assert_eq!(git(&fx.repo, &["branch", "--list", "fleet/*"]), "");
}

#[tokio::test]
async fn two_processes_of_ten_share_one_repository() {
    let fx = Fixture::new();
    let exe = std::env::current_exe().unwrap();
    let child_test =
        fleet_testkit::child_test::test_name(module_path!(), "ten_agents_in_a_child_process");
    let children: Vec<_> = ["b", "c"]
        .iter()
        .map(|prefix| {
            Command::new(&exe)
                .args(["--exact", &child_test, "--nocapture"])
                .env(CHILD_REPO, &fx.repo)
                .env(CHILD_HOME, fx.dir.path().join("home"))
                .env(CHILD_PREFIX, prefix)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        let status = fleet_testkit::wait_child(&mut child, fleet_testkit::WAIT, "a child process");
        assert!(status.success(), "a child process failed");
    }
    let listed = fx.manager.list().await.unwrap();
    assert_eq!(listed.len(), 20, "{listed:#?}");
    assert_eq!(fx.registered().len(), 21);
}

/// The child half of the test above; does nothing when run on its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_agents_in_a_child_process() {
    let (Some(repo), Some(home), Some(prefix)) = (
        std::env::var_os(CHILD_REPO),
        std::env::var_os(CHILD_HOME),
        std::env::var(CHILD_PREFIX).ok(),
    ) else {
        return;
    };
    quiet_git_config();
    let manager = WorktreeManager::new(&FleetHome::at(PathBuf::from(home)));
    let repo = PathBuf::from(repo);
    let mut tasks = Vec::new();
    for n in 0..10 {
        let manager = manager.clone();
        let repo = repo.clone();
        let id = format!("{prefix}{n:07}");
        tasks.push(tokio::spawn(async move {
            manager.create_for_agent(&repo, &id).await
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn a_lock_held_by_another_git_is_waited_out() {
    let fx = Fixture::new();
    // Another git "holds" the lock of the very ref the agent's branch needs.
    let lock = fx.repo.join(".git/refs/heads/fleet/agent-a0000401.lock");
    write(&lock, "");
    let release = {
        let lock = lock.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            std::fs::remove_file(lock).unwrap();
        })
    };
    let wt = fx
        .manager
        .create_for_agent(&fx.repo, "a0000401")
        .await
        .unwrap();
    release.await.unwrap();
    assert!(branch_exists(&fx.repo, "fleet/agent-a0000401"));
    assert_eq!(fx.manager.finish(&wt).await.unwrap(), Outcome::Removed);
}
