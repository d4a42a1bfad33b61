//! A teammate's inbox as a crash or a hand edit may leave it: any bytes in the active segment
//! and, when the input asks, any cursor file. Read, acknowledged, counted, listed and appended
//! to. Checks: no panic; with a cursor fleet wrote (none, or one at a line end inside the
//! segment), everything read is consumed by its ack, and mail appended after any damage is the
//! next and only thing read.
#![no_main]

use fleet_fuzz::{fresh_dir, scratch};
use fleet_protocol::MailEntry;
use fleet_store::Mailbox;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let dir = scratch().join("inboxes");
    fresh_dir(&dir);
    // Mode bit 0: the input starts with a cursor file, up to the first NUL.
    let (cursor, segment) = match (mode & 1 == 1, rest.iter().position(|&b| b == 0)) {
        (true, Some(nul)) => (Some(&rest[..nul]), &rest[nul + 1..]),
        _ => (None, rest),
    };
    if let Some(cursor) = cursor {
        std::fs::write(dir.join("alpha.cursor"), cursor).expect("tmpfs write");
    }
    std::fs::write(dir.join("alpha.0.jsonl"), segment).expect("tmpfs write");

    let Ok(inbox) = Mailbox::open(&dir, "alpha") else {
        return;
    };
    let _ = inbox.all();
    let _ = inbox.pending();
    let Ok(unread) = inbox.unread_at_most(usize::from(mode >> 1).max(1)) else {
        return;
    };
    if inbox.ack(&unread.upto).is_err() {
        return;
    }
    let Ok(unread) = inbox.unread() else {
        return;
    };
    if inbox.ack(&unread.upto).is_err() {
        return;
    }
    let trusted_cursor = cursor.is_none();
    if trusted_cursor {
        assert_eq!(
            inbox.pending().ok(),
            Some(0),
            "an ack of all that was read leaves nothing"
        );
    }
    let entry = MailEntry::new(
        "team-lead",
        "after the fuzz",
        "2026-12-05T00:00:00.000Z",
        "m-fuzz",
    );
    if inbox.append(&entry).is_err() {
        return;
    }
    let after = inbox.unread();
    if trusted_cursor {
        let after = after.expect("an inbox that was read reads again");
        assert_eq!(
            after.entries,
            vec![entry],
            "the appended mail is the only unread mail"
        );
    }
});
