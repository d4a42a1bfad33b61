#![allow(clippy::unwrap_used)]
//! Writing and reading transcripts on real files in temporary folders.

use crate::common;

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use common::{assistant_calling, results, temp_store, user, write_session};
use fleet_protocol::{ContentBlock, Message, MessageContent, Role, ToolResultContent};
use fleet_store::{
    EntryKind, FleetHome, SessionStore, StoreError, Transcript, TranscriptEntry, TranscriptWriter,
    INTERRUPTED_TOOL_RESULT,
};
use serde_json::{json, Value};

/// The tool_result blocks of a message as (id, is_error, text).
fn result_blocks(message: &Message) -> Vec<(String, bool, String)> {
    message
        .blocks()
        .into_iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content: Some(ToolResultContent::Text(text)),
                is_error,
                ..
            } => Some((tool_use_id, is_error == Some(true), text)),
            _ => None,
        })
        .collect()
}

#[test]
fn entries_round_trip_with_a_parent_uuid_chain() {
    let (_dir, store) = temp_store();
    let cwd = Path::new("/work/app");
    let mut writer = store.create_session(cwd).unwrap();
    let written = vec![
        writer.append(user("build it")).unwrap(),
        writer.append(assistant_calling(&["tu_1"])).unwrap(),
        writer
            .append(results(&["tu_1"]).with_extra("toolUseResult", json!({"stdout": "ok"})))
            .unwrap(),
        writer
            .append(TranscriptEntry::system("api_error", "overloaded, retried"))
            .unwrap(),
    ];

    let loaded = Transcript::load(writer.path()).unwrap();
    assert!(loaded.skipped.is_empty());
    assert_eq!(loaded.entries, written);
    assert_eq!(loaded.entries[0].parent_uuid, None);
    for pair in loaded.entries.windows(2) {
        assert_eq!(pair[1].parent_uuid.as_deref(), Some(pair[0].uuid.as_str()));
    }
    for entry in &loaded.entries {
        assert_eq!(entry.session_id, writer.session_id());
        assert_eq!(entry.cwd, "/work/app");
        assert!(entry.time().is_some(), "bad timestamp {}", entry.timestamp);
    }
    assert_eq!(loaded.last_uuid(), Some(written[3].uuid.as_str()));
    // The system record is not part of the conversation.
    let messages = loaded.messages();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0].text(), "build it");

    // The file itself has Claude Code's field names and shapes.
    let text = fs::read_to_string(writer.path()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["type"], "user");
    assert_eq!(lines[0]["parentUuid"], Value::Null);
    assert_eq!(lines[0]["message"]["content"], "build it");
    assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
    assert_eq!(lines[2]["toolUseResult"]["stdout"], "ok");
    assert_eq!(lines[3]["subtype"], "api_error");
    assert!(lines[3].get("message").is_none());
    let stamp = lines[0]["timestamp"].as_str().unwrap();
    assert_eq!(stamp.len(), "2025-01-31T12:00:00.123Z".len(), "{stamp}");
    assert!(stamp.ends_with('Z'));
}

#[test]
fn reopening_continues_the_chain_and_keeps_the_session_id() {
    let (_dir, store) = temp_store();
    let path = write_session(&store, Path::new("/w"), vec![user("one"), user("two")]);
    let before = Transcript::load(&path).unwrap();

    let mut writer = TranscriptWriter::open_append(&path).unwrap();
    assert_eq!(writer.last_uuid(), before.last_uuid());
    let third = writer.append(user("three")).unwrap();
    assert_eq!(third.parent_uuid.as_deref(), before.last_uuid());
    assert_eq!(third.session_id, before.entries[0].session_id);
    assert_eq!(third.cwd, "/w");
    assert_eq!(Transcript::load(&path).unwrap().entries.len(), 3);
}

#[test]
fn unknown_entry_kinds_are_kept_unchanged() {
    let (dir, _store) = temp_store();
    let path = dir.path().join("s.jsonl");
    let line = r#"{"type":"file-history-snapshot","uuid":"","parentUuid":null,"sessionId":"","timestamp":"","cwd":"","messageId":"m1","snapshot":{"files":[]}}"#;
    fs::write(&path, format!("{line}\n")).unwrap();
    let loaded = Transcript::load(&path).unwrap();
    assert_eq!(
        loaded.entries[0].kind,
        EntryKind::Other("file-history-snapshot".into())
    );
    assert_eq!(serde_json::to_string(&loaded.entries[0]).unwrap(), line);
}

#[test]
fn two_writers_appending_at_once_never_interleave() {
    let (_dir, store) = temp_store();
    let path = write_session(&store, Path::new("/w"), vec![user("start")]);
    const LINES: usize = 200;
    // Lines far larger than a pipe buffer or a page, so a write could be split.
    let payload = "x".repeat(100_000);

    // Both open before either writes, so both chain from the first entry.
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|name| (name, TranscriptWriter::open_append(&path).unwrap()))
        .collect();
    let threads: Vec<_> = writers
        .into_iter()
        .map(|(name, mut writer)| {
            let payload = payload.clone();
            std::thread::spawn(move || {
                for seq in 0..LINES {
                    let entry = user(&payload)
                        .with_extra("writer", name)
                        .with_extra("seq", seq);
                    writer.append(entry).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }

    let loaded = Transcript::load(&path).unwrap();
    assert_eq!(loaded.skipped, vec![], "every line must parse");
    assert_eq!(loaded.entries.len(), 1 + 2 * LINES);
    for name in ["a", "b"] {
        let mine: Vec<_> = loaded
            .entries
            .iter()
            .filter(|e| e.extra.get("writer") == Some(&json!(name)))
            .collect();
        assert_eq!(mine.len(), LINES);
        for (seq, entry) in mine.iter().enumerate() {
            assert_eq!(entry.extra["seq"], json!(seq));
            assert_eq!(entry.message.as_ref().unwrap().text().len(), payload.len());
        }
        // Each writer chains its own entries, starting from the entry it found.
        assert_eq!(mine[0].parent_uuid, Some(loaded.entries[0].uuid.clone()));
        for pair in mine.windows(2) {
            assert_eq!(pair[1].parent_uuid.as_deref(), Some(pair[0].uuid.as_str()));
        }
    }
}

#[test]
fn append_waits_while_another_handle_holds_the_lock() {
    let (_dir, store) = temp_store();
    let path = write_session(&store, Path::new("/w"), vec![user("one")]);
    let mut writer = TranscriptWriter::open_append(&path).unwrap();
    let holder = File::open(&path).unwrap();
    holder.lock().unwrap();

    let appending = std::thread::spawn(move || writer.append(user("two")).map(|_| ()));
    // Wait for the event, not a fixed time: the append blocked on the lock (the kernel lists a
    // blocked flock request with `->` in /proc/locks). An append that goes ahead ends instead.
    let waiting = format!(
        ":{} ",
        std::os::unix::fs::MetadataExt::ino(&fs::metadata(&path).unwrap())
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .any(|l| l.contains("->") && l.contains(&waiting))
    {
        assert!(
            !appending.is_finished(),
            "the append went ahead while another handle held the lock"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the append neither blocked on the lock nor ended"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let while_locked = fs::read_to_string(&path).unwrap();
    holder.unlock().unwrap();
    appending.join().unwrap().unwrap();

    assert_eq!(
        while_locked.lines().count(),
        1,
        "append must wait for the lock"
    );
    assert_eq!(fs::read_to_string(&path).unwrap().lines().count(), 2);
}

#[test]
fn truncated_last_line_is_skipped_with_a_warning_and_later_appends_stay_whole() {
    let (_dir, store) = temp_store();
    let path = write_session(&store, Path::new("/w"), vec![user("one"), user("two")]);
    let full = Transcript::load(&path).unwrap();
    // A crash mid-write: half of a third line, without its newline.
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(br#"{"type":"user","uuid":"abc","mess"#)
        .unwrap();
    drop(file);

    let loaded = Transcript::load(&path).unwrap();
    assert_eq!(loaded.entries, full.entries);
    assert_eq!(loaded.skipped.len(), 1);
    assert_eq!(loaded.skipped[0].line, 3);
    assert!(loaded.skipped[0].truncated);
    let warnings = loaded.warnings();
    assert!(
        warnings[0].starts_with(&format!("{}:3: skipped an incomplete", path.display())),
        "{warnings:?}"
    );

    // Resuming after the crash: the new entry starts on its own line and chains to the last
    // whole entry; the fragment becomes a corrupt line in the middle.
    let mut writer = TranscriptWriter::open_append(&path).unwrap();
    let three = writer.append(user("three")).unwrap();
    assert_eq!(three.parent_uuid.as_deref(), full.last_uuid());
    let after = Transcript::load(&path).unwrap();
    assert_eq!(after.entries.len(), 3);
    assert_eq!(after.entries[2], three);
    assert_eq!(after.skipped.len(), 1);
    assert_eq!(after.skipped[0].line, 3);
    assert!(!after.skipped[0].truncated);
}

#[test]
fn corrupt_middle_line_is_skipped_and_reported_with_its_number() {
    let (_dir, store) = temp_store();
    let path = write_session(&store, Path::new("/w"), vec![user("one"), user("two")]);
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(1, "not json at all");
    lines.insert(2, "");
    fs::write(&path, lines.join("\n") + "\n").unwrap();

    let loaded = Transcript::load(&path).unwrap();
    let texts: Vec<String> = loaded.messages().iter().map(Message::text).collect();
    assert_eq!(texts, ["one", "two"]);
    assert_eq!(loaded.skipped.len(), 1, "a blank line is not corrupt");
    assert_eq!(loaded.skipped[0].line, 2);
    assert!(!loaded.skipped[0].truncated);
    assert!(loaded.warnings()[0].contains(&format!("{}:2: skipped a corrupt line", path.display())));
}

#[test]
fn dangling_tool_calls_at_the_end_get_error_results() {
    let (_dir, store) = temp_store();
    let path = write_session(
        &store,
        Path::new("/w"),
        vec![user("build"), assistant_calling(&["tu_1", "tu_2"])],
    );
    let messages = Transcript::load(&path).unwrap().messages();
    assert_eq!(messages.len(), 3);
    let last = &messages[2];
    assert_eq!(last.role, Role::User);
    assert_eq!(
        result_blocks(last),
        vec![
            ("tu_1".into(), true, INTERRUPTED_TOOL_RESULT.into()),
            ("tu_2".into(), true, INTERRUPTED_TOOL_RESULT.into()),
        ]
    );
}

#[test]
fn a_call_left_unanswered_before_a_resume_is_answered_in_place() {
    // Crash after the first of two results; the resumed session then added a prompt.
    let (_dir, store) = temp_store();
    let path = write_session(
        &store,
        Path::new("/w"),
        vec![
            user("build"),
            assistant_calling(&["tu_1", "tu_2"]),
            results(&["tu_1"]),
            user("go on"),
        ],
    );
    let messages = Transcript::load(&path).unwrap().messages();
    let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::User,
            Role::User
        ]
    );
    assert_eq!(
        result_blocks(&messages[2]),
        [("tu_1".into(), false, "ok".into())]
    );
    assert_eq!(
        result_blocks(&messages[3]),
        [("tu_2".into(), true, INTERRUPTED_TOOL_RESULT.into())]
    );
    assert_eq!(messages[4].text(), "go on");
}

#[test]
fn results_answering_no_call_are_dropped() {
    // The assistant line that made the call was lost (a corrupt line).
    let (_dir, store) = temp_store();
    let path = write_session(
        &store,
        Path::new("/w"),
        vec![user("build"), results(&["tu_gone"]), user("and?")],
    );
    let messages = Transcript::load(&path).unwrap().messages();
    let contents: Vec<&MessageContent> = messages.iter().map(|m| &m.content).collect();
    assert_eq!(
        contents,
        [
            &MessageContent::Text("build".into()),
            &MessageContent::Text("and?".into())
        ]
    );
}

#[test]
fn meta_messages_are_replayed_and_system_records_are_not() {
    let (_dir, store) = temp_store();
    let path = write_session(
        &store,
        Path::new("/w"),
        vec![
            user("<task-notification>done</task-notification>").meta(),
            TranscriptEntry::system("api_error", "overloaded, retried"),
            user("next"),
        ],
    );
    let texts: Vec<String> = Transcript::load(&path)
        .unwrap()
        .messages()
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(
        texts,
        ["<task-notification>done</task-notification>", "next"]
    );
}

#[test]
fn creating_over_an_existing_session_is_refused() {
    let (_dir, store) = temp_store();
    let cwd = Path::new("/w");
    let mut first = TranscriptWriter::create(store.home(), cwd, "same").unwrap();
    first.append(user("keep me")).unwrap();
    let err = TranscriptWriter::create(store.home(), cwd, "same").unwrap_err();
    assert!(matches!(err, StoreError::SessionExists { .. }), "{err}");
    assert_eq!(Transcript::load(first.path()).unwrap().entries.len(), 1);
}

#[test]
fn a_folder_that_cannot_be_created_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-folder");
    File::create(&blocker).unwrap();

    let store = SessionStore::new(FleetHome::at(&blocker));
    let err = store.create_session(Path::new("/w")).unwrap_err();
    let message = err.to_string();
    assert!(message.starts_with("cannot create folder "), "{message}");
    assert!(
        message.contains(&blocker.display().to_string()),
        "{message}"
    );

    let path = blocker.join("s.jsonl");
    let err = TranscriptWriter::open_append(&path)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&blocker.display().to_string()), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_failed_append_is_returned_naming_the_file() {
    let mut writer = TranscriptWriter::open_append("/dev/full").unwrap();
    let err = writer.append(user("lost")).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("cannot append to /dev/full: No space left on device"),
        "{message}"
    );
    assert_eq!(
        writer.last_uuid(),
        None,
        "a failed entry must not join the chain"
    );
}

#[test]
fn every_entry_can_be_synced_to_disk() {
    let (_dir, store) = temp_store();
    let mut writer = store.create_session(Path::new("/w")).unwrap();
    writer.set_sync_every_entry(true);
    writer.append(user("durable")).unwrap();
    writer.sync().unwrap();
    assert_eq!(Transcript::load(writer.path()).unwrap().entries.len(), 1);
}

#[test]
fn a_compacted_session_continues_from_its_last_boundary() {
    let (_dir, store) = temp_store();
    let mut writer = store.create_session(Path::new("/work/app")).unwrap();
    writer.append(user("the long story, part one")).unwrap();
    writer.append(assistant_calling(&["tu_1"])).unwrap();
    writer.append(results(&["tu_1"])).unwrap();
    writer
        .append(
            TranscriptEntry::system(fleet_store::COMPACT_BOUNDARY, "Conversation compacted")
                .with_extra(
                    "compactMetadata",
                    json!({"trigger": "auto", "preTokens": 9000}),
                ),
        )
        .unwrap();
    writer.append(user("summary of part one")).unwrap();
    writer.append(user("part two")).unwrap();

    let loaded = Transcript::load(writer.path()).unwrap();
    assert!(loaded.entries[3].is_compact_boundary());
    let texts: Vec<String> = loaded.messages().iter().map(Message::text).collect();
    assert_eq!(texts, ["summary of part one", "part two"]);
}
