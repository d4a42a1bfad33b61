//! The inbox's async calls leave the async thread free: while another holder keeps the inbox
//! locked, an `append_async` waits on the blocking pool (the kernel shows its `flock` blocked)
//! and the only thread of a current-thread runtime goes on, here to release the lock itself.
//! With the blocking call made on that thread this test could never finish.
#![allow(clippy::unwrap_used)]

use fleet_protocol::MailEntry;
use fleet_store::Mailbox;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

fn entry(id: &str) -> MailEntry {
    MailEntry::new(
        "team-lead",
        format!("text of {id}"),
        "2026-12-05T00:00:00.000Z",
        id,
    )
}

/// Whether the kernel lists a blocked `flock` waiter on the file with inode `ino`.
fn flock_waits_on(ino: u64) -> bool {
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    locks.lines().any(|line| {
        line.contains("->")
            && line.contains("FLOCK")
            && line
                .split_whitespace()
                .any(|field| field.rsplit(':').next() == Some(&ino.to_string()))
    })
}

#[tokio::test(flavor = "current_thread")]
async fn an_append_waiting_on_the_inbox_lock_does_not_hold_the_async_thread() {
    let dir = tempfile::tempdir().unwrap();
    let inbox = Mailbox::open(dir.path(), "alpha").unwrap();
    let lock_path = inbox.dir().join("alpha.lock");
    // Another holder of the inbox's lock (a second open file, as another process has).
    let other = std::fs::File::open(&lock_path).unwrap();
    other.lock().unwrap();
    let ino = std::fs::metadata(&lock_path).unwrap().ino();

    let append = {
        let inbox = inbox.clone();
        tokio::spawn(async move { inbox.append_async(entry("m1")).await })
    };
    // The event: the append is parked in the kernel on the lock, off this thread.
    tokio::time::timeout(WAIT, async {
        while !flock_waits_on(ino) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the append waits on the inbox lock");
    assert!(!append.is_finished());

    // This thread is free: it releases the lock, and the append completes.
    other.unlock().unwrap();
    tokio::time::timeout(WAIT, append)
        .await
        .expect("the append finished once the lock was free")
        .unwrap()
        .unwrap();

    let unread = inbox.unread_async().await.unwrap();
    assert_eq!(
        unread.msg_ids().collect::<Vec<_>>(),
        vec!["m1"],
        "the entry is there, once"
    );
    assert_eq!(inbox.pending_async().await.unwrap(), 1);
    inbox.ack_async(unread.upto).await.unwrap();
    assert_eq!(inbox.pending_async().await.unwrap(), 0);
    inbox
        .append_all_async(vec![entry("m2"), entry("m3")])
        .await
        .unwrap();
    let unread = inbox.unread_at_most_async(1).await.unwrap();
    assert_eq!(unread.msg_ids().collect::<Vec<_>>(), vec!["m2"]);
}
