//! `list` and `clean`: worktrees left behind by runs that ended or died.

use std::path::Path;

use fleet_runtime::isolation::{CleanTarget, IsolationError, KeepReason, Worktree, WorktreeState};

use crate::isolation::support::*;

/// Rewrites a worktree's record as if a process with `pid` had made it: a dead pid is a run
/// that was killed, pid 1 one that is still running.
fn owned_by(wt: &Worktree, pid: u32) {
    let file = wt.path.with_file_name(format!(
        "{}.json",
        wt.path.file_name().unwrap().to_string_lossy()
    ));
    let mut record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    record["pid"] = pid.into();
    std::fs::write(&file, serde_json::to_vec(&record).unwrap()).unwrap();
}

const DEAD_PID: u32 = 0x3fff_fff0;

fn find<'a>(
    infos: &'a [fleet_runtime::isolation::WorktreeInfo],
    path: &Path,
) -> &'a fleet_runtime::isolation::WorktreeInfo {
    infos.iter().find(|i| i.path == path).unwrap()
}

#[tokio::test]
async fn list_finds_leftovers_and_clean_removes_only_unchanged_ones_unless_forced() {
    let fx = Fixture::new();
    let unchanged = fx
        .manager
        .create_for_agent(&fx.repo, "a0000101")
        .await
        .unwrap();
    let changed = fx
        .manager
        .create_for_agent(&fx.repo, "a0000102")
        .await
        .unwrap();
    let deleted = fx
        .manager
        .create_for_agent(&fx.repo, "a0000103")
        .await
        .unwrap();
    let running = fx
        .manager
        .create_for_agent(&fx.repo, "a0000104")
        .await
        .unwrap();
    let snapshot = fx.manager.create_snapshot(&fx.repo, "check").await.unwrap();
    for wt in [&unchanged, &changed, &deleted, &snapshot] {
        owned_by(wt, DEAD_PID);
    }
    owned_by(&running, 1);
    write(&changed.path.join("work.txt"), "keep me\n");
    std::fs::remove_dir_all(&deleted.path).unwrap();

    let infos = fx.manager.list().await.unwrap();
    assert_eq!(infos.len(), 5);
    let info = find(&infos, &unchanged.path);
    assert_eq!(
        (info.state, info.changed, info.in_use),
        (WorktreeState::Present, false, false)
    );
    assert_eq!(info.agent_id, "a0000101");
    assert_eq!(info.branch.as_deref(), Some("fleet/agent-a0000101"));
    assert_eq!(info.head_commit.as_deref(), Some(fx.head().as_str()));
    assert!(!info.created_at.is_empty());
    let info = find(&infos, &changed.path);
    assert_eq!((info.state, info.changed), (WorktreeState::Present, true));
    let info = find(&infos, &deleted.path);
    assert_eq!(
        (info.state, info.changed),
        (WorktreeState::FolderMissing, false)
    );
    assert!(find(&infos, &running.path).in_use);
    assert_eq!(
        fx.registered().len(),
        4,
        "the checkout and three agent worktrees: the deleted folder's registration was \
         pruned, and a snapshot is a repository of its own, registered nowhere"
    );

    let report = fx.manager.clean(CleanTarget::All, false).await.unwrap();
    let mut removed: Vec<_> = report.removed.iter().map(|i| i.path.clone()).collect();
    removed.sort();
    let mut expected = vec![
        unchanged.path.clone(),
        deleted.path.clone(),
        snapshot.path.clone(),
    ];
    expected.sort();
    assert_eq!(removed, expected);
    let kept: Vec<_> = report
        .kept
        .iter()
        .map(|k| (k.worktree.path.clone(), k.reason.clone()))
        .collect();
    assert!(
        kept.contains(&(changed.path.clone(), KeepReason::Changed)),
        "{kept:?}"
    );
    assert!(
        kept.contains(&(running.path.clone(), KeepReason::InUse { pid: 1 })),
        "{kept:?}"
    );
    assert!(!unchanged.path.exists() && !snapshot.path.exists());
    assert!(!branch_exists(&fx.repo, "fleet/agent-a0000101"));
    assert!(!branch_exists(&fx.repo, "fleet/agent-a0000103"));
    assert!(changed.path.join("work.txt").exists());
    assert!(branch_exists(&fx.repo, "fleet/agent-a0000102"));
    assert_eq!(fx.manager.list().await.unwrap().len(), 2);

    // One by id8, forced: the changed worktree goes, branch and all.
    let report = fx
        .manager
        .clean(CleanTarget::One("a0000102".into()), true)
        .await
        .unwrap();
    assert_eq!(report.removed.len(), 1);
    assert!(report.kept.is_empty());
    assert!(!changed.path.exists());
    assert!(!branch_exists(&fx.repo, "fleet/agent-a0000102"));

    let err = fx
        .manager
        .clean(CleanTarget::One("nobody".into()), true)
        .await
        .unwrap_err();
    assert!(matches!(err, IsolationError::NotFound { .. }), "{err}");
    assert_eq!(
        fx.manager.list().await.unwrap().len(),
        1,
        "only the running one is left"
    );
}

#[tokio::test]
async fn a_folder_deleted_by_hand_after_commits_keeps_its_branch_unless_forced() {
    let fx = Fixture::new();
    let wt = fx
        .manager
        .create_for_agent(&fx.repo, "a0000201")
        .await
        .unwrap();
    write(&wt.path.join("a.txt"), "committed\n");
    git(&wt.path, &["commit", "-q", "-am", "work"]);
    owned_by(&wt, DEAD_PID);
    std::fs::remove_dir_all(&wt.path).unwrap();

    let infos = fx.manager.list().await.unwrap();
    assert_eq!(
        (infos[0].state, infos[0].changed),
        (WorktreeState::FolderMissing, true)
    );
    let report = fx.manager.clean(CleanTarget::All, false).await.unwrap();
    assert_eq!(report.kept.len(), 1);
    assert!(branch_exists(&fx.repo, "fleet/agent-a0000201"));
    let report = fx
        .manager
        .clean(
            CleanTarget::One(wt.path.to_string_lossy().into_owned()),
            true,
        )
        .await
        .unwrap();
    assert_eq!(report.removed.len(), 1);
    assert!(!branch_exists(&fx.repo, "fleet/agent-a0000201"));
    assert!(fx.manager.list().await.unwrap().is_empty());
}

#[tokio::test]
async fn clean_leaves_worktrees_this_process_is_still_using() {
    let fx = Fixture::new();
    let wt = fx
        .manager
        .create_for_agent(&fx.repo, "a0000301")
        .await
        .unwrap();
    let report = fx.manager.clean(CleanTarget::All, false).await.unwrap();
    assert!(report.removed.is_empty());
    assert!(matches!(report.kept[0].reason, KeepReason::InUse { .. }));
    assert!(wt.path.exists());
}
