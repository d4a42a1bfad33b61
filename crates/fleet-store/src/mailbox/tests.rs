use std::io::Write;
use std::path::Path;

use fleet_protocol::MailEntry;

use super::files::{self, Cursor, Paths};
use super::*;

fn entry(from: &str, n: usize) -> MailEntry {
    MailEntry::new(
        from,
        format!("message {n} from {from}"),
        "2026-12-01T17:00:00.000Z",
        format!("{from}-{n}"),
    )
}

fn texts(entries: &[MailEntry]) -> Vec<String> {
    entries.iter().map(|e| e.text.clone()).collect()
}

fn segment_files(dir: &Path, owner: &str) -> Vec<u64> {
    let mut found = Paths::new(dir, owner).segments().expect("list");
    found.sort_unstable();
    found
}

#[test]
fn entries_come_back_in_the_order_they_were_appended() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    inbox.append(&entry("lead", 1)).expect("append");
    inbox
        .append_all(&[entry("beta", 1), entry("lead", 2)])
        .expect("append all");
    let unread = inbox.unread().expect("unread");
    assert_eq!(
        texts(&unread.entries),
        [
            "message 1 from lead",
            "message 1 from beta",
            "message 2 from lead"
        ]
    );
    assert!(unread.warnings.is_empty(), "{:?}", unread.warnings);
    assert_eq!(inbox.pending().expect("pending"), 3);
}

#[test]
fn acknowledged_entries_are_gone_and_unacknowledged_ones_come_again_after_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    inbox
        .append_all(&[entry("lead", 1), entry("lead", 2)])
        .expect("append");
    let first = inbox.unread().expect("unread");
    inbox.ack(&first.upto).expect("ack");
    inbox.append(&entry("lead", 3)).expect("append");
    let second = inbox.unread().expect("unread");
    assert_eq!(texts(&second.entries), ["message 3 from lead"]);
    // The reader "crashes" before acknowledging: a fresh open sees entry 3 again, not 1 and 2.
    drop(inbox);
    let reopened = Mailbox::open(dir.path(), "alpha").expect("reopen");
    let again = reopened.unread().expect("unread");
    assert_eq!(texts(&again.entries), ["message 3 from lead"]);
    // An older position changes nothing.
    reopened.ack(&first.upto).expect("stale ack");
    assert_eq!(reopened.pending().expect("pending"), 1);
    reopened.ack(&again.upto).expect("ack");
    assert_eq!(reopened.pending().expect("pending"), 0);
    assert!(reopened.unread().expect("unread").entries.is_empty());
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning_and_the_next_append_is_clean() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    inbox.append(&entry("lead", 1)).expect("append");
    let segment = inbox.segment_path().expect("segment");
    // A writer killed in the middle of its line.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&segment)
        .expect("open segment");
    file.write_all(br#"{"from":"beta","text":"half a"#)
        .expect("tear");
    drop(file);

    let unread = inbox.unread().expect("unread");
    assert_eq!(texts(&unread.entries), ["message 1 from lead"]);
    assert_eq!(unread.warnings.len(), 1, "{:?}", unread.warnings);
    assert!(
        unread.warnings[0].contains("line 2"),
        "{}",
        unread.warnings[0]
    );
    assert!(
        unread.warnings[0].contains("cut short"),
        "{}",
        unread.warnings[0]
    );
    assert_eq!(
        inbox.pending().expect("pending"),
        1,
        "a torn line is not mail"
    );

    inbox.append(&entry("beta", 2)).expect("append after tear");
    let unread = inbox.unread().expect("unread");
    assert_eq!(
        texts(&unread.entries),
        ["message 1 from lead", "message 2 from beta"]
    );
    assert!(unread.warnings.is_empty(), "{:?}", unread.warnings);
}

#[test]
fn a_corrupt_line_in_the_middle_is_reported_by_its_line_number_and_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    inbox.append(&entry("lead", 1)).expect("append");
    let read = inbox.unread().expect("unread");
    inbox.ack(&read.upto).expect("ack");
    inbox.append(&entry("lead", 2)).expect("append");
    let segment = inbox.segment_path().expect("segment");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&segment)
        .expect("open segment");
    file.write_all(b"{\"not\": \"an entry\"}\n")
        .expect("corrupt");
    drop(file);
    inbox.append(&entry("lead", 3)).expect("append");

    let unread = inbox.unread().expect("unread");
    assert_eq!(
        texts(&unread.entries),
        ["message 2 from lead", "message 3 from lead"]
    );
    assert_eq!(unread.warnings.len(), 1, "{:?}", unread.warnings);
    // Line 1 was consumed earlier; numbering stays that of the file.
    assert!(
        unread.warnings[0].contains("line 3"),
        "{}",
        unread.warnings[0]
    );
    assert!(
        unread.warnings[0].contains(&segment.display().to_string()),
        "{}",
        unread.warnings[0]
    );
    inbox.ack(&unread.upto).expect("ack");
    let after = inbox.unread().expect("unread");
    assert!(after.entries.is_empty() && after.warnings.is_empty());
}

#[test]
fn reading_in_batches_stops_at_the_limit_and_continues_from_there() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    let batch: Vec<_> = (0..5).map(|n| entry("lead", n)).collect();
    inbox.append_all(&batch).expect("append");
    let first = inbox.unread_at_most(2).expect("unread");
    assert_eq!(first.msg_ids().collect::<Vec<_>>(), ["lead-0", "lead-1"]);
    inbox.ack(&first.upto).expect("ack");
    let rest = inbox.unread_at_most(10).expect("unread");
    assert_eq!(
        rest.msg_ids().collect::<Vec<_>>(),
        ["lead-2", "lead-3", "lead-4"]
    );
}

#[test]
fn entries_already_committed_are_dropped_by_msg_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    // A writer retried after a crash: the same msg_id twice.
    inbox
        .append_all(&[entry("lead", 1), entry("lead", 2), entry("lead", 2)])
        .expect("append");
    let mut unread = inbox.unread().expect("unread");
    unread.retain_unseen(|id| id == "lead-1");
    assert_eq!(unread.msg_ids().collect::<Vec<_>>(), ["lead-2"]);
}

#[test]
fn all_lists_consumed_entries_as_read_until_they_are_compacted_away() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    inbox
        .append_all(&[entry("lead", 1), entry("lead", 2)])
        .expect("append");
    let first = inbox.unread_at_most(1).expect("unread");
    inbox.ack(&first.upto).expect("ack");
    let all = inbox.all().expect("all");
    let flags: Vec<_> = all.iter().map(|e| (e.msg_id.as_str(), e.read)).collect();
    assert_eq!(flags, [("lead-1", true), ("lead-2", false)]);
}

#[test]
fn compaction_keeps_the_unconsumed_entries_and_bounds_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha")
        .expect("open")
        .with_compaction_threshold(4096);
    let mut next = 0;
    for _round in 0..20 {
        let batch: Vec<_> = (next..next + 30).map(|n| entry("lead", n)).collect();
        next += 30;
        inbox.append_all(&batch).expect("append");
        // Consume all but the last 5 of what waits.
        let waiting = inbox.pending().expect("pending");
        let read = inbox.unread_at_most(waiting - 5).expect("unread");
        inbox.ack(&read.upto).expect("ack");
    }
    let rest = inbox.unread().expect("unread");
    let expected: Vec<String> = (next - 5..next).map(|n| format!("lead-{n}")).collect();
    assert_eq!(rest.msg_ids().collect::<Vec<_>>(), expected);
    let segments = segment_files(inbox.dir(), "alpha");
    assert_eq!(segments.len(), 1, "old segments deleted: {segments:?}");
    assert!(segments[0] > 0, "compaction happened");
    let size = std::fs::metadata(inbox.segment_path().expect("segment"))
        .expect("stat")
        .len();
    assert!(size < 3 * 4096, "segment stays bounded, is {size} bytes");
}

/// The state a crash after step 1 of compaction leaves: a next segment nobody points at.
#[test]
fn a_crash_before_the_cursor_switch_leaves_the_old_segment_in_charge() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha")
        .expect("open")
        .with_compaction_threshold(u64::MAX);
    inbox
        .append_all(&[entry("lead", 1), entry("lead", 2)])
        .expect("append");
    let read = inbox.unread_at_most(1).expect("unread");
    inbox.ack(&read.upto).expect("ack");
    // The orphan holds a half-written copy.
    let orphan = inbox.dir().join("alpha.1.jsonl");
    std::fs::write(&orphan, b"{\"from\":\"lead\",\"te").expect("orphan");

    inbox.append(&entry("lead", 3)).expect("append");
    let unread = inbox.unread().expect("unread");
    assert_eq!(unread.msg_ids().collect::<Vec<_>>(), ["lead-2", "lead-3"]);
    assert!(unread.warnings.is_empty(), "{:?}", unread.warnings);

    // The next compaction overwrites the orphan and removes the old segment.
    let inbox = inbox.with_compaction_threshold(1);
    inbox.ack(&unread.upto).expect("ack and compact");
    assert_eq!(segment_files(inbox.dir(), "alpha"), [1]);
    assert_eq!(std::fs::read(&orphan).expect("read"), b"");
    inbox.append(&entry("lead", 4)).expect("append");
    let last = inbox.unread().expect("unread");
    assert_eq!(last.msg_ids().collect::<Vec<_>>(), ["lead-4"]);
    assert!(last.warnings.is_empty(), "{:?}", last.warnings);
}

/// The state a crash after step 2 leaves: the cursor names the new segment, the old one is
/// still there.
#[test]
fn a_crash_after_the_cursor_switch_leaves_a_stale_segment_that_is_ignored_then_deleted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha")
        .expect("open")
        .with_compaction_threshold(1);
    inbox
        .append_all(&[entry("lead", 1), entry("lead", 2), entry("lead", 3)])
        .expect("append");
    let read = inbox.unread_at_most(2).expect("unread");
    inbox.ack(&read.upto).expect("ack and compact");
    assert_eq!(segment_files(inbox.dir(), "alpha"), [1]);
    // Put back a stale generation 0, as if the delete never ran.
    std::fs::write(
        inbox.dir().join("alpha.0.jsonl"),
        b"{\"from\":\"lead\",\"text\":\"old\",\"timestamp\":\"t\",\"msg_id\":\"lead-1\"}\n",
    )
    .expect("stale");
    let paths = Paths::new(inbox.dir(), "alpha");
    assert_eq!(
        files::read_cursor(&paths).expect("cursor"),
        Cursor {
            segment: 1,
            offset: 0,
            lines: 0
        }
    );

    inbox.append(&entry("lead", 4)).expect("append");
    let unread = inbox.unread().expect("unread");
    assert_eq!(unread.msg_ids().collect::<Vec<_>>(), ["lead-3", "lead-4"]);
    inbox.ack(&unread.upto).expect("ack and compact");
    assert_eq!(segment_files(inbox.dir(), "alpha"), [2]);
}

#[test]
fn a_leftover_cursor_temp_file_does_not_matter() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    inbox.append(&entry("lead", 1)).expect("append");
    std::fs::write(inbox.dir().join("alpha.cursor.tmp"), b"{\"segm").expect("tmp");
    let unread = inbox.unread().expect("unread");
    inbox.ack(&unread.upto).expect("ack");
    assert_eq!(inbox.pending().expect("pending"), 0);
}

#[test]
fn a_damaged_cursor_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    std::fs::write(inbox.dir().join("alpha.cursor"), b"garbage").expect("cursor");
    let err = inbox.unread().expect_err("damaged cursor");
    assert!(err.to_string().contains("alpha.cursor"), "{err}");
}

#[test]
fn owners_that_are_not_plain_names_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    for owner in ["", "../x", "a/b", "a.b"] {
        match Mailbox::open(dir.path(), owner) {
            Err(MailboxError::InvalidOwner { .. }) => {}
            other => panic!("{owner:?}: expected InvalidOwner, got {other:?}"),
        }
    }
}

#[test]
fn threads_appending_at_once_lose_nothing_and_keep_their_own_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    std::thread::scope(|scope| {
        for t in 0..4 {
            // Half the threads use their own handle on the same inbox.
            let inbox = if t % 2 == 0 {
                inbox.clone()
            } else {
                Mailbox::open(dir.path(), "alpha").expect("open")
            };
            scope.spawn(move || {
                for n in 0..50 {
                    inbox.append(&entry(&format!("w{t}"), n)).expect("append");
                }
            });
        }
    });
    let unread = inbox.unread().expect("unread");
    assert_eq!(unread.entries.len(), 200);
    for t in 0..4 {
        let from = format!("w{t}");
        let mine: Vec<_> = unread
            .entries
            .iter()
            .filter(|e| e.from == from)
            .map(|e| e.msg_id.clone())
            .collect();
        let expected: Vec<_> = (0..50).map(|n| format!("{from}-{n}")).collect();
        assert_eq!(mine, expected);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn wait_returns_at_once_when_mail_is_already_there() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    inbox.append(&entry("lead", 1)).expect("append");
    inbox.wait().await;
}

#[tokio::test(flavor = "current_thread")]
async fn wait_sleeps_on_an_empty_inbox_and_an_append_in_this_process_wakes_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    let waiter = {
        let inbox = inbox.clone();
        tokio::spawn(async move { inbox.wait().await })
    };
    // Let the waiter run up to its sleep.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!waiter.is_finished(), "wait returned with no mail");
    // A second handle, as a sender elsewhere in the process would have.
    let sender = Mailbox::open(dir.path(), "alpha").expect("open");
    sender.append(&entry("lead", 1)).expect("append");
    waiter.await.expect("waiter");
    assert_eq!(inbox.pending().expect("pending"), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_torn_line_alone_does_not_wake_a_waiter_forever() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = Mailbox::open(dir.path(), "alpha").expect("open");
    std::fs::write(inbox.dir().join("alpha.0.jsonl"), b"{\"from\":").expect("torn");
    let waiter = {
        let inbox = inbox.clone();
        tokio::spawn(async move { inbox.wait().await })
    };
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!waiter.is_finished(), "a torn line is not mail");
    inbox.append(&entry("lead", 1)).expect("append");
    waiter.await.expect("waiter");
    let unread = inbox.unread().expect("unread");
    assert_eq!(unread.msg_ids().collect::<Vec<_>>(), ["lead-1"]);
}
