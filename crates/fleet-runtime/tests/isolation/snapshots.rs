//! Snapshots: the checkout's current state, taken without touching the user's index or files.

use fleet_runtime::isolation::WorktreeKind;

use crate::isolation::support::*;

#[tokio::test]
async fn a_snapshot_holds_modified_staged_and_untracked_files_and_leaves_the_checkout_alone() {
    let fx = Fixture::new();
    write(&fx.repo.join("a.txt"), "modified, not staged\n");
    write(&fx.repo.join("staged.txt"), "staged\n");
    git(&fx.repo, &["add", "staged.txt"]);
    write(&fx.repo.join("src/untracked.txt"), "untracked\n");
    write(&fx.repo.join("target/ignored.bin"), "ignored\n");
    std::fs::remove_file(fx.repo.join("src/lib.txt")).unwrap();
    let before = CheckoutState::of(&fx.repo);
    let head = fx.head();

    let snap = fx
        .manager
        .create_snapshot(&fx.repo.join("src"), "verify: tests pass?")
        .await
        .unwrap();
    assert_eq!(snap.kind, WorktreeKind::Snapshot);
    assert_eq!(snap.branch, None);
    assert_eq!(snap.cwd, snap.path.join("src"));
    let read = |rel: &str| std::fs::read_to_string(snap.path.join(rel)).ok();
    assert_eq!(read("a.txt").as_deref(), Some("modified, not staged\n"));
    assert_eq!(read("staged.txt").as_deref(), Some("staged\n"));
    assert_eq!(read("src/untracked.txt").as_deref(), Some("untracked\n"));
    assert_eq!(
        read("src/lib.txt"),
        None,
        "a deleted file is deleted in the snapshot"
    );
    assert_eq!(read("target/ignored.bin"), None, "ignored files stay out");
    assert_eq!(
        git(&snap.path, &["rev-parse", "HEAD^"]),
        head,
        "the snapshot's parent is HEAD"
    );
    assert_eq!(
        git(&snap.path, &["status", "--porcelain"]),
        "",
        "a clean checkout of the snapshot"
    );
    assert_eq!(
        git(&fx.repo, &["rev-parse", "HEAD"]),
        head,
        "HEAD did not move"
    );
    assert_eq!(
        CheckoutState::of(&fx.repo),
        before,
        "the user's checkout changed"
    );

    // The verifier may write anything; discarding removes it all, and no branch was made.
    write(&snap.cwd.join("probe.sh"), "echo probe\n");
    fx.manager.discard(&snap).await.unwrap();
    assert!(!snap.path.exists());
    assert_eq!(fx.registered().len(), 1);
    assert_eq!(git(&fx.repo, &["branch", "--list", "fleet/*"]), "");
    assert!(fx.manager.list().await.unwrap().is_empty());
    assert_eq!(
        CheckoutState::of(&fx.repo),
        before,
        "the user's checkout changed"
    );
}

#[tokio::test]
async fn a_snapshot_works_in_a_repository_without_commits() {
    let fx = Fixture::new();
    let fresh = fx.dir.path().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    git(&fresh, &["init", "-q"]);
    write(&fresh.join("new.txt"), "hello\n");

    let snap = fx.manager.create_snapshot(&fresh, "fresh").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(snap.path.join("new.txt")).unwrap(),
        "hello\n"
    );
    assert!(
        !fresh.join(".git/index").exists(),
        "the user's (absent) index was not created"
    );
    fx.manager.discard(&snap).await.unwrap();
    assert!(!snap.path.exists());
}
