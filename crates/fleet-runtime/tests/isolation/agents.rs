//! An agent's worktree: where it starts, and what `finish` keeps.

use fleet_runtime::isolation::{IsolationError, Outcome, WorktreeKind};

use crate::isolation::support::*;

#[tokio::test]
async fn base_is_the_callers_head_even_with_a_local_commit_origin_lacks() {
    let fx = Fixture::new();
    let clone = fx.dir.path().join("clone");
    git(
        fx.dir.path(),
        &["clone", "-q", fx.repo.to_str().unwrap(), "clone"],
    );
    write(&clone.join("a.txt"), "local\n");
    git(&clone, &["commit", "-q", "-am", "local only"]);
    let local_head = git(&clone, &["rev-parse", "HEAD"]);
    assert_ne!(local_head, git(&clone, &["rev-parse", "origin/HEAD"]));

    let wt = fx
        .manager
        .create_for_agent(&clone.join("src"), "a1b2c3d4e5f6a7b8")
        .await
        .unwrap();
    assert_eq!(wt.base_commit, local_head);
    assert_eq!(wt.kind, WorktreeKind::Agent);
    assert_eq!(wt.branch.as_deref(), Some("fleet/agent-a1b2c3d4"));
    assert_eq!(wt.path.file_name().unwrap(), "agent-a1b2c3d4");
    assert!(wt.path.starts_with(fx.dir.path().join("home/worktrees")));
    assert_eq!(
        wt.cwd,
        wt.path.join("src"),
        "the caller's cwd maps to the same relative path"
    );
    assert_eq!(
        std::fs::read_to_string(wt.path.join("a.txt")).unwrap(),
        "local\n"
    );
    assert_eq!(git(&wt.path, &["rev-parse", "HEAD"]), local_head);
    assert_eq!(
        git(&clone, &["rev-parse", "fleet/agent-a1b2c3d4"]),
        local_head
    );
}

#[tokio::test]
async fn an_unchanged_worktree_is_removed_with_its_branch() {
    let fx = Fixture::new();
    let wt = fx
        .manager
        .create_for_agent(&fx.repo, "a0000001xyz")
        .await
        .unwrap();
    // Ignored build output does not count as a change.
    write(&wt.path.join("target/debug/out.bin"), "bytes");

    assert_eq!(fx.manager.finish(&wt).await.unwrap(), Outcome::Removed);
    assert!(!wt.path.exists());
    assert!(!branch_exists(&fx.repo, "fleet/agent-a0000001"));
    assert_eq!(fx.registered().len(), 1, "only the main checkout is left");
    assert!(
        fx.manager.list().await.unwrap().is_empty(),
        "its record is gone too"
    );
}

#[tokio::test]
async fn a_worktree_holding_only_an_untracked_file_is_kept_as_uncommitted() {
    let fx = Fixture::new();
    let wt = fx
        .manager
        .create_for_agent(&fx.repo, "a0000002")
        .await
        .unwrap();
    write(&wt.path.join("notes/new.txt"), "draft\n");

    let Outcome::Kept(report) = fx.manager.finish(&wt).await.unwrap() else {
        panic!("an untracked file must keep the worktree");
    };
    assert!(report.uncommitted);
    assert_eq!(report.commits, 0);
    assert_eq!(report.changed_files, ["notes/new.txt"]);
    assert_eq!(report.head_commit, report.base_commit);
    assert!(wt.path.join("notes/new.txt").exists());
    assert!(branch_exists(&fx.repo, "fleet/agent-a0000002"));
}

#[tokio::test]
async fn a_commit_is_kept_with_its_count_and_files() {
    let fx = Fixture::new();
    let wt = fx
        .manager
        .create_for_agent(&fx.repo, "a0000003")
        .await
        .unwrap();
    write(&wt.path.join("a.txt"), "changed\n");
    write(&wt.path.join("src/added.txt"), "new\n");
    git(&wt.path, &["add", "-A"]);
    git(&wt.path, &["commit", "-q", "-m", "agent work"]);

    let Outcome::Kept(report) = fx.manager.finish(&wt).await.unwrap() else {
        panic!("a commit must keep the worktree");
    };
    assert_eq!(report.commits, 1);
    assert!(!report.uncommitted);
    assert_eq!(report.changed_files, ["a.txt", "src/added.txt"]);
    assert_eq!(report.branch.as_deref(), Some("fleet/agent-a0000003"));
    assert_eq!(report.base_commit, fx.head());
    assert_eq!(report.head_commit, git(&wt.path, &["rev-parse", "HEAD"]));
    let json = serde_json::to_value(&report).unwrap();
    for key in [
        "path",
        "branch",
        "base_commit",
        "head_commit",
        "changed_files",
        "commits",
    ] {
        assert!(json.get(key).is_some(), "report JSON lacks {key}: {json}");
    }
}

#[tokio::test]
async fn two_agents_editing_one_file_are_both_kept_and_the_checkout_is_untouched() {
    let fx = Fixture::new();
    // The user has work in progress of their own: a staged file and a modified one.
    write(&fx.repo.join("staged.txt"), "staged\n");
    git(&fx.repo, &["add", "staged.txt"]);
    write(&fx.repo.join("src/lib.txt"), "user edit\n");
    let before = CheckoutState::of(&fx.repo);

    let one = fx
        .manager
        .create_for_agent(&fx.repo, "a0000011")
        .await
        .unwrap();
    let two = fx
        .manager
        .create_for_agent(&fx.repo, "a0000022")
        .await
        .unwrap();
    write(&one.path.join("a.txt"), "from one\n");
    git(&one.path, &["commit", "-q", "-am", "one"]);
    write(&two.path.join("a.txt"), "from two\n");

    let Outcome::Kept(first) = fx.manager.finish(&one).await.unwrap() else {
        panic!("one's commit must be kept");
    };
    let Outcome::Kept(second) = fx.manager.finish(&two).await.unwrap() else {
        panic!("two's edit must be kept");
    };
    assert_eq!((first.commits, first.uncommitted), (1, false));
    assert_eq!((second.commits, second.uncommitted), (0, true));
    assert_eq!(first.changed_files, ["a.txt"]);
    assert_eq!(second.changed_files, ["a.txt"]);
    assert_ne!(first.branch, second.branch);
    assert_eq!(
        git(&fx.repo, &["show", "fleet/agent-a0000011:a.txt"]),
        "from one"
    );
    assert_eq!(
        std::fs::read_to_string(two.path.join("a.txt")).unwrap(),
        "from two\n"
    );
    assert_eq!(
        CheckoutState::of(&fx.repo),
        before,
        "the caller's checkout changed"
    );
}

#[tokio::test]
async fn a_detached_head_gives_a_branch_at_that_commit() {
    let fx = Fixture::new();
    let first = fx.head();
    write(&fx.repo.join("a.txt"), "two\n");
    git(&fx.repo, &["commit", "-q", "-am", "second"]);
    git(&fx.repo, &["checkout", "-q", "--detach", &first]);

    let wt = fx
        .manager
        .create_for_agent(&fx.repo, "a0000004")
        .await
        .unwrap();
    assert_eq!(wt.base_commit, first);
    assert_eq!(
        git(&wt.path, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "fleet/agent-a0000004"
    );
    assert_eq!(fx.manager.finish(&wt).await.unwrap(), Outcome::Removed);
}

#[tokio::test]
async fn a_folder_outside_git_a_bare_repo_and_a_repo_without_commits_are_refused_clearly() {
    let fx = Fixture::new();
    let plain = fx.dir.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    // A ceiling keeps git from finding a repository above the temporary folder.
    std::env::set_var("GIT_CEILING_DIRECTORIES", fx.dir.path());

    let err = fx.manager.create_for_agent(&plain, "a1").await.unwrap_err();
    assert!(matches!(err, IsolationError::NotARepo { .. }), "{err}");
    assert!(
        err.to_string().contains("not inside a git repository"),
        "{err}"
    );

    let bare = fx.dir.path().join("bare.git");
    git(fx.dir.path(), &["init", "-q", "--bare", "bare.git"]);
    let err = fx.manager.create_for_agent(&bare, "a1").await.unwrap_err();
    assert!(matches!(err, IsolationError::BareRepo { .. }), "{err}");
    assert!(err.to_string().contains("bare"), "{err}");

    let empty = fx.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    git(&empty, &["init", "-q"]);
    let err = fx.manager.create_for_agent(&empty, "a1").await.unwrap_err();
    assert!(matches!(err, IsolationError::NoCommits { .. }), "{err}");
    assert!(err.to_string().contains("no commits"), "{err}");

    let err = fx
        .manager
        .create_for_agent(&fx.repo, "@@")
        .await
        .unwrap_err();
    assert!(matches!(err, IsolationError::BadId { .. }), "{err}");
    assert!(
        fx.manager.list().await.unwrap().is_empty(),
        "refusals leave nothing behind"
    );
}

#[tokio::test]
async fn an_id8_already_taken_falls_back_to_the_whole_id() {
    let fx = Fixture::new();
    let one = fx
        .manager
        .create_for_agent(&fx.repo, "a1234567aaaa")
        .await
        .unwrap();
    let two = fx
        .manager
        .create_for_agent(&fx.repo, "a1234567bbbb")
        .await
        .unwrap();
    assert_eq!(one.branch.as_deref(), Some("fleet/agent-a1234567"));
    assert_eq!(two.branch.as_deref(), Some("fleet/agent-a1234567bbbb"));
    assert_ne!(one.path, two.path);
}

#[tokio::test]
async fn a_nested_agent_starts_from_its_parents_worktree_head() {
    let fx = Fixture::new();
    let parent = fx
        .manager
        .create_for_agent(&fx.repo, "a0000005")
        .await
        .unwrap();
    write(&parent.path.join("a.txt"), "parent\n");
    git(&parent.path, &["commit", "-q", "-am", "parent work"]);
    let parent_head = git(&parent.path, &["rev-parse", "HEAD"]);

    let child = fx
        .manager
        .create_for_agent(&parent.cwd, "a0000006")
        .await
        .unwrap();
    assert_eq!(child.base_commit, parent_head);
    assert_eq!(
        child.repo_root,
        std::fs::canonicalize(&parent.path).unwrap()
    );
    assert_eq!(
        child.path.parent(),
        parent.path.parent(),
        "grouped under one repository"
    );
    assert_eq!(fx.manager.finish(&child).await.unwrap(), Outcome::Removed);
}
