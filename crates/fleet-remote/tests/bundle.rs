//! Repository state travels as bundles: a snapshot with uncommitted and untracked files, a
//! fresh checkout of it elsewhere, a result branch back into the caller's repository.

use crate::support;

use fleet_remote::bundle;
use support::{git, repo_with_a_commit};

#[tokio::test]
async fn uncommitted_and_untracked_files_travel_and_the_callers_repository_is_untouched() {
    let repo = repo_with_a_commit();
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    std::fs::write(repo.path().join("a.txt"), "edited\n").expect("write");
    std::fs::write(repo.path().join("new.txt"), "untracked\n").expect("write");
    std::fs::write(repo.path().join("ignored.txt"), "secret\n").expect("write");
    std::fs::create_dir(repo.path().join("sub")).expect("mkdir");
    let status_before = git(repo.path(), &["status", "--porcelain"]);
    let objects_before = git(repo.path(), &["count-objects", "-v"]);

    let scratch = tempfile::tempdir().expect("scratch");
    let snap = bundle::snapshot(&repo.path().join("sub"), scratch.path())
        .await
        .expect("snapshot")
        .expect("a repository");
    assert_eq!(snap.head, head);
    assert_ne!(
        snap.snapshot, head,
        "uncommitted work makes a snapshot commit"
    );
    assert_eq!(snap.branch.as_deref(), Some("main"));
    assert_eq!(snap.subdir, "sub");
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), status_before);
    assert_eq!(git(repo.path(), &["count-objects", "-v"]), objects_before);

    let work = tempfile::tempdir().expect("work");
    let checkout = work.path().join("checkout");
    bundle::checkout(&snap.bundle, &snap.snapshot, &checkout)
        .await
        .expect("checkout");
    let read = |name: &str| std::fs::read_to_string(checkout.join(name)).ok();
    assert_eq!(read("a.txt").as_deref(), Some("edited\n"));
    assert_eq!(read("new.txt").as_deref(), Some("untracked\n"));
    assert_eq!(read("ignored.txt"), None, "ignored files stay home");

    // The job edits; its branch comes back into the caller's repository.
    std::fs::write(checkout.join("made.txt"), "by the job\n").expect("write");
    let out = work.path().join("result.bundle");
    let commit = bundle::result_bundle(&checkout, &snap.snapshot, "fleet/remote-0123abcd", &out)
        .await
        .expect("result")
        .expect("a change");
    bundle::fetch_into(repo.path(), &out, "fleet/remote-0123abcd")
        .await
        .expect("fetch");
    assert_eq!(
        git(repo.path(), &["rev-parse", "fleet/remote-0123abcd"]),
        commit
    );
    assert_eq!(
        git(repo.path(), &["show", "fleet/remote-0123abcd:made.txt"]),
        "by the job"
    );
    assert_eq!(git(repo.path(), &["rev-parse", "HEAD"]), head, "HEAD stays");
}

#[tokio::test]
async fn a_clean_checkout_ships_head_and_a_job_that_changes_nothing_has_no_branch() {
    let repo = repo_with_a_commit();
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    let scratch = tempfile::tempdir().expect("scratch");
    let snap = bundle::snapshot(repo.path(), scratch.path())
        .await
        .expect("snapshot")
        .expect("a repository");
    assert_eq!(snap.snapshot, head, "a clean checkout is its HEAD");
    let work = tempfile::tempdir().expect("work");
    let checkout = work.path().join("c");
    bundle::checkout(&snap.bundle, &snap.snapshot, &checkout)
        .await
        .expect("checkout");
    let out = work.path().join("r.bundle");
    let made = bundle::result_bundle(&checkout, &snap.snapshot, "fleet/remote-x", &out)
        .await
        .expect("result");
    assert_eq!(made, None);
    assert!(!out.exists());
}

#[tokio::test]
async fn a_folder_outside_git_is_no_repository_and_a_broken_bundle_is_named() {
    let plain = tempfile::tempdir().expect("dir");
    let scratch = tempfile::tempdir().expect("scratch");
    assert_eq!(
        bundle::snapshot(plain.path(), scratch.path())
            .await
            .expect("no error"),
        None
    );
    let junk = plain.path().join("junk.bundle");
    std::fs::write(&junk, "not a bundle").expect("write");
    let err = bundle::checkout(&junk, "HEAD", &plain.path().join("c"))
        .await
        .expect_err("junk");
    let text = err.to_string();
    assert!(text.contains("fetch the repository bundle"), "{text}");
}
