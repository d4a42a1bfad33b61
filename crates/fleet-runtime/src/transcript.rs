//! How a committed message is written to a session transcript: the message itself, plus the
//! reply's id, model and usage, and structured tool results, under Claude Code's key names so
//! tools that read its transcripts can read ours.

use fleet_protocol::CommittedMessage;
use fleet_store::{SharedField, TranscriptEntry};
use serde_json::{json, Value};
use std::sync::Arc;

pub fn entry(committed: &CommittedMessage) -> TranscriptEntry {
    let mut entry = TranscriptEntry::message(committed.message.clone());
    if let Some(reply) = &committed.reply {
        entry = entry
            .with_extra("messageId", reply.id.clone())
            .with_extra("model", reply.model.clone())
            .with_extra(
                "usage",
                serde_json::to_value(&reply.usage).unwrap_or(Value::Null),
            );
        if let Some(stop) = &reply.stop_reason {
            entry = entry.with_extra("stopReason", stop.as_str());
        }
    }
    // Shared, not copied: the reply to a 10,000-agent fan-out holds 10,000 results, and a
    // copy of them all was ~40 MB of that run's peak for the moment of one write.
    match committed.tool_results.as_slice() {
        [] => {}
        [(_, value)] => {
            entry = entry.with_shared("toolUseResult", SharedField::Value(Arc::clone(value)))
        }
        many => {
            entry = entry.with_shared("toolUseResults", SharedField::Object(many.to_vec()));
        }
    }
    if !committed.mail_ids.is_empty() {
        entry = entry.with_extra("mailIds", json!(committed.mail_ids));
    }
    entry
}

/// What a compaction leaves in a transcript: the `compact_boundary` record, then the
/// conversation from there on (the summary marked `isCompactSummary`, then the turns kept),
/// which is all a resumed session reads (see [`fleet_store::LoadedTranscript::messages`]).
/// The kept turns are written again after the boundary so that the file reads on its own
/// from there, at the cost of a few repeated lines.
pub fn boundary_entries(boundary: &fleet_protocol::CompactBoundary) -> Vec<TranscriptEntry> {
    let record = TranscriptEntry::system(fleet_store::COMPACT_BOUNDARY, "Conversation compacted")
        .with_extra(
            "compactMetadata",
            json!({
                "trigger": boundary.trigger.as_str(),
                "preTokens": boundary.pre_tokens,
                "postTokens": boundary.post_tokens,
            }),
        );
    let mut entries = vec![record];
    for (index, message) in boundary.messages.iter().enumerate() {
        let entry = TranscriptEntry::message(message.clone());
        entries.push(match index {
            0 => entry.with_extra("isCompactSummary", true),
            _ => entry,
        });
    }
    entries
}

/// Every team-mail `msg_id` a transcript says was delivered (see
/// [`fleet_protocol::CommittedMessage::mail_ids`]).
pub fn delivered_mail(loaded: &fleet_store::LoadedTranscript) -> std::collections::HashSet<String> {
    loaded
        .entries
        .iter()
        .filter_map(|e| e.extra.get("mailIds")?.as_array())
        .flatten()
        .filter_map(|id| id.as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_protocol::{ContentBlock, Message, ReplyMeta, Role, StopReason};

    fn stop_of(stop: StopReason) -> Option<Value> {
        let committed = CommittedMessage {
            message: Message::with_blocks(Role::Assistant, vec![ContentBlock::text("done")]),
            reply: Some(ReplyMeta {
                id: "msg_1".into(),
                model: "m".into(),
                usage: Default::default(),
                stop_reason: Some(stop),
            }),
            tool_results: Vec::new(),
            mail_ids: Vec::new(),
        };
        entry(&committed).extra.get("stopReason").cloned()
    }

    /// `stopReason` stays the bare wire name it was as a string, a reason this build does not
    /// know included.
    #[test]
    fn the_stop_reason_is_written_as_its_wire_name() {
        assert_eq!(stop_of(StopReason::EndTurn), Some(json!("end_turn")));
        assert_eq!(
            stop_of(StopReason::Other("newer_reason".into())),
            Some(json!("newer_reason"))
        );
    }

    fn results_line(results: Vec<(String, Arc<Value>)>) -> Value {
        let counts = |results: &[(String, Arc<Value>)]| -> Vec<usize> {
            results.iter().map(|(_, v)| Arc::strong_count(v)).collect()
        };
        let before = counts(&results);
        let committed = CommittedMessage {
            message: Message::with_blocks(Role::User, vec![ContentBlock::text("r")]),
            reply: None,
            tool_results: results,
            mail_ids: Vec::new(),
        };
        let entry = entry(&committed);
        let shared: Vec<usize> = counts(&committed.tool_results);
        let once_more: Vec<usize> = before.iter().map(|n| n + 1).collect();
        assert_eq!(shared, once_more, "the entry holds the results, not copies");
        let line = serde_json::to_string(&entry).expect("an entry serializes");
        serde_json::from_str(&line).expect("the line is JSON")
    }

    /// Results are written from the shared values under Claude Code's keys, and a line read
    /// back has them as ordinary extra fields.
    #[test]
    fn structured_results_are_written_without_copies_under_their_keys() {
        let one = Arc::new(json!({"agentId": "a1", "totalTokens": 3}));
        let line = results_line(vec![("toolu_1".into(), Arc::clone(&one))]);
        assert_eq!(line["toolUseResult"], *one);
        assert!(line.get("toolUseResults").is_none(), "{line}");

        let two = Arc::new(json!({"agentId": "a2"}));
        let line = results_line(vec![
            ("toolu_1".into(), Arc::clone(&one)),
            ("toolu_2".into(), Arc::clone(&two)),
        ]);
        assert_eq!(
            line["toolUseResults"],
            json!({"toolu_1": *one, "toolu_2": *two})
        );
        let read: TranscriptEntry = serde_json::from_value(line).expect("read back");
        assert_eq!(read.extra["toolUseResults"]["toolu_2"], *two);
        assert!(read.shared.is_empty());
    }
}
