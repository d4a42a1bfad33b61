//! A transcript file as a crash, a full disk or a hand edit may leave it: loaded, turned into
//! the conversation a resumed session sends, and appended to. Checks: no panic; the repaired
//! conversation answers every `tool_use` exactly once in the user turns right after it, with
//! no result that answers nothing (what the Messages API demands); an entry appended after
//! any content is the last entry read back.
#![no_main]

use fleet_fuzz::scratch;
use fleet_protocol::{ContentBlock, Message, MessageContent, Role};
use fleet_store::{Transcript, TranscriptEntry, TranscriptWriter};
use libfuzzer_sys::fuzz_target;

/// The Messages API's rule on tool calls, checked on a conversation about to be sent.
///
/// A reply that repeats a call id is left out: fleet never writes one (the API gives unique
/// ids), no repair can make it valid (the API refuses duplicate ids), and the repair answers
/// such an id once per call, which this check would count twice.
fn assert_every_call_answered(messages: &[Message]) {
    let repeats_an_id = |m: &Message| {
        let mut ids: Vec<&str> = m.tool_uses().map(|t| t.id).collect();
        let calls = ids.len();
        ids.sort_unstable();
        ids.dedup();
        ids.len() != calls
    };
    if messages.iter().any(repeats_an_id) {
        return;
    }
    let mut waiting: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        match message.role {
            Role::Assistant => {
                assert!(
                    waiting.is_empty(),
                    "message {i}: calls {waiting:?} never answered"
                );
                waiting = message.tool_uses().map(|t| t.id.to_owned()).collect();
            }
            Role::User => {
                let MessageContent::Blocks(blocks) = &message.content else {
                    continue;
                };
                for block in blocks {
                    if let ContentBlock::ToolResult { tool_use_id, .. } = block {
                        let at = waiting.iter().position(|id| id == tool_use_id);
                        let at = at.unwrap_or_else(|| {
                            panic!(
                                "message {i}: a result for {tool_use_id:?}, which is not waiting"
                            )
                        });
                        waiting.remove(at);
                    }
                }
            }
        }
    }
    assert!(
        waiting.is_empty(),
        "the last calls {waiting:?} were never answered"
    );
}

fuzz_target!(|data: &[u8]| {
    let path = scratch().join("transcript.jsonl");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let Ok(loaded) = Transcript::load(&path) else {
        return;
    };
    assert_every_call_answered(&loaded.messages());
    let _ = loaded.warnings();
    let _ = loaded.last_uuid();
    let before = loaded.entries.len();

    let Ok(mut writer) = TranscriptWriter::open_append(&path) else {
        return;
    };
    let appended = writer
        .append(TranscriptEntry::message(Message::user_text(
            "after the fuzz",
        )))
        .expect("appending to a transcript on tmpfs works");
    let again = Transcript::load(&path).expect("the transcript reads back");
    assert_eq!(
        again.entries.len(),
        before + 1,
        "the appended entry is read back"
    );
    assert_eq!(again.entries.last().map(|e| &e.uuid), Some(&appended.uuid));
    assert_every_call_answered(&again.messages());
});
