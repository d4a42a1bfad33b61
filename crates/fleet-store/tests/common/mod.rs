//! Helpers shared by the test binaries.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use fleet_protocol::{ContentBlock, Message, Role};
use fleet_store::{FleetHome, SessionStore, TranscriptEntry};
use serde_json::json;
use tempfile::TempDir;

/// A store in a fresh temporary folder; its home does not exist yet.
pub fn temp_store() -> (TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(FleetHome::at(dir.path().join("home")));
    (dir, store)
}

pub fn user(text: &str) -> TranscriptEntry {
    TranscriptEntry::message(Message::user_text(text))
}

pub fn assistant_calling(ids: &[&str]) -> TranscriptEntry {
    let blocks = ids
        .iter()
        .map(|id| ContentBlock::tool_use(*id, "Bash", json!({"command": "make"})))
        .collect();
    TranscriptEntry::message(Message::with_blocks(Role::Assistant, blocks))
}

pub fn results(ids: &[&str]) -> TranscriptEntry {
    let blocks = ids
        .iter()
        .map(|id| ContentBlock::tool_result(*id, "ok", false))
        .collect();
    TranscriptEntry::message(Message::with_blocks(Role::User, blocks))
}

pub fn write_session(store: &SessionStore, cwd: &Path, entries: Vec<TranscriptEntry>) -> PathBuf {
    let mut writer = store.create_session(cwd).unwrap();
    for entry in entries {
        writer.append(entry).unwrap();
    }
    writer.path().to_path_buf()
}
