//! An inbox shared with other processes: a write by a child process wakes a waiter here, and
//! what it wrote is there to read.

use std::process::Command;

use fleet_store::Mailbox;

const TORTURE: &str = env!("CARGO_BIN_EXE_fleet-mailbox-torture");

fn write_from_child(dir: &std::path::Path, owner: &str, from: &str, count: u64) {
    let output = Command::new(TORTURE)
        .args(["write", "--dir"])
        .arg(dir)
        .args(["--owner", owner, "--from", from, "--start", "0", "--count"])
        .arg(count.to_string())
        .output()
        .expect("run the writer");
    assert!(
        output.status.success(),
        "writer failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let acked = String::from_utf8_lossy(&output.stdout).lines().count();
    assert_eq!(acked as u64, count, "every append acknowledged");
}

#[tokio::test(flavor = "current_thread")]
async fn a_write_by_another_process_wakes_a_waiting_reader() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "lead").expect("open");
    let waiter = {
        let inbox = inbox.clone();
        tokio::spawn(async move { inbox.wait().await })
    };
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!waiter.is_finished(), "wait returned with no mail");

    // Only the inotify watch can hear this writer: it shares nothing in memory with us.
    write_from_child(dir.path(), "lead", "beta", 1);
    woken(waiter).await;
    let unread = inbox.unread().expect("unread");
    assert_eq!(unread.msg_ids().collect::<Vec<_>>(), ["beta-0"]);
    assert_eq!(unread.entries[0].from, "beta");
}

#[tokio::test(flavor = "current_thread")]
async fn mail_to_another_owner_in_the_folder_does_not_wake_this_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "lead").expect("open");
    let waiter = {
        let inbox = inbox.clone();
        tokio::spawn(async move { inbox.wait().await })
    };
    let alpha_waiter = {
        let alpha = Mailbox::open(dir.path(), "alpha").expect("open");
        tokio::spawn(async move { alpha.wait().await })
    };
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    write_from_child(dir.path(), "alpha", "beta", 3);
    // The folder's one watcher thread handles its events in order: once alpha's waiter has
    // woken, alpha's mail has been seen, and a lead waiter it woke by mistake is runnable, so
    // a few yields let it finish. (An event to wait on, not a fixed sleep.)
    woken(alpha_waiter).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!waiter.is_finished(), "woken by someone else's mail");
    write_from_child(dir.path(), "lead", "gamma", 1);
    woken(waiter).await;
    assert_eq!(inbox.pending().expect("pending"), 1);
}

/// Awaits a waiter task; a wake-up that never comes fails the test after a minute instead of
/// hanging it (a hang guard, not a timing check).
async fn woken(waiter: tokio::task::JoinHandle<()>) {
    tokio::time::timeout(std::time::Duration::from_secs(60), waiter)
        .await
        .expect("the waiter was not woken within a minute")
        .expect("waiter");
}
