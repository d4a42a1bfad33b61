//! An inbox is the user's only: files made `0600`, a folder made `0700`, a symbolic link
//! planted at an inbox file's name is not followed, and a folder others can write to is
//! refused. What the OS enforces here is what keeps another local user (or a repository
//! pointing fleet at files it checked out) from reading or swapping team mail.

use std::os::unix::fs::PermissionsExt;

use fleet_protocol::MailEntry;
use fleet_store::{Mailbox, MailboxError};

fn entry(id: &str) -> MailEntry {
    MailEntry::new("alpha", "hello", "2026-12-01T17:00:00.000Z", id)
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

#[test]
fn inbox_files_and_a_new_folder_are_owner_only() {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("team/inboxes");
    let inbox = Mailbox::open(&dir, "alpha").expect("open");
    inbox.append(&entry("m1")).expect("append");
    let unread = inbox.unread().expect("read");
    inbox.ack(&unread.upto).expect("ack");
    assert_eq!(mode(&dir), 0o700);
    for name in ["alpha.0.jsonl", "alpha.lock", "alpha.cursor"] {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
}

#[test]
fn a_link_planted_at_a_segment_is_not_followed() {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("inboxes");
    let inbox = Mailbox::open(&dir, "alpha").expect("open");
    let elsewhere = root.path().join("elsewhere");
    std::fs::write(&elsewhere, "").expect("target");
    std::os::unix::fs::symlink(&elsewhere, dir.join("alpha.0.jsonl")).expect("link");
    assert!(
        inbox.append(&entry("m1")).is_err(),
        "written through a link"
    );
    assert!(inbox.unread().is_err(), "read through a link");
    assert_eq!(std::fs::read(&elsewhere).expect("target"), b"");
}

#[test]
fn a_folder_others_can_write_to_is_refused() {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("inboxes");
    std::fs::create_dir(&dir).expect("folder");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    match Mailbox::open(&dir, "alpha") {
        Err(MailboxError::Unsafe { problem, .. }) => {
            assert!(problem.contains("written by others"), "{problem}")
        }
        other => panic!("opened an inbox in a folder anyone can write to: {other:?}"),
    }
}
