//! One entry of a member's inbox, field for field as Claude Code writes it
//! (`from, text, summary?, timestamp, color?, msgV, msg_id, type, read`).

use serde::{Deserialize, Serialize};

/// The entry format version written in `msgV`.
pub const MAIL_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailEntry {
    /// The sender's member name (`team-lead`, `alpha`, …, or `user` for a person at
    /// `fleet team send`).
    pub from: String,
    /// Plain text, or a protocol frame serialized as compact JSON.
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// ISO-8601 with milliseconds, UTC (`2026-12-01T17:00:00.000Z`).
    pub timestamp: String,
    /// The sender's color; the lead's entries have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(rename = "msgV", default = "version")]
    pub msg_v: u32,
    /// Unique per message: what the sender is told, and what a reader deduplicates on.
    pub msg_id: String,
    /// Always `message`.
    #[serde(rename = "type", default = "message_type")]
    pub kind: String,
    /// Kept for the shape of the file; consumption is tracked by the mailbox, not here.
    #[serde(default)]
    pub read: bool,
    /// The lead's Ed25519 signature (base64url), on entries the lead writes into a pane
    /// teammate's inbox as `team-lead`, `user` or `system`: a teammate in its own process
    /// refuses such an entry without a valid one, so no other local process can speak as the
    /// lead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_sig: Option<String>,
}

fn version() -> u32 {
    MAIL_VERSION
}

fn message_type() -> String {
    "message".into()
}

impl MailEntry {
    /// A new entry from `from` with a fresh `msg_id` chosen by the caller (the protocol crate
    /// has no randomness).
    pub fn new(
        from: impl Into<String>,
        text: impl Into<String>,
        timestamp: impl Into<String>,
        msg_id: impl Into<String>,
    ) -> Self {
        Self {
            from: from.into(),
            text: text.into(),
            summary: None,
            timestamp: timestamp.into(),
            color: None,
            msg_v: MAIL_VERSION,
            msg_id: msg_id.into(),
            kind: message_type(),
            read: false,
            lead_sig: None,
        }
    }

    pub fn with_summary(mut self, summary: Option<String>) -> Self {
        self.summary = summary;
        self
    }

    pub fn with_color(mut self, color: Option<String>) -> Self {
        self.color = color;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_written_in_claude_codes_order_and_optional_ones_left_out() {
        let entry = MailEntry::new("team-lead", "hi", "2026-12-01T17:00:00.000Z", "m1");
        let json = serde_json::to_string(&entry).expect("serializes");
        assert_eq!(
            json,
            r#"{"from":"team-lead","text":"hi","timestamp":"2026-12-01T17:00:00.000Z","msgV":1,"msg_id":"m1","type":"message","read":false}"#
        );
        let back: MailEntry = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, entry);
    }

    #[test]
    fn the_lead_signature_is_written_last_and_read_back() {
        let mut entry = MailEntry::new("team-lead", "hi", "2026-12-01T17:00:00.000Z", "m1")
            .with_summary(Some("s".into()));
        entry.lead_sig = Some("c2ln".into());
        let json = serde_json::to_string(&entry).expect("serializes");
        assert_eq!(
            json,
            r#"{"from":"team-lead","text":"hi","summary":"s","timestamp":"2026-12-01T17:00:00.000Z","msgV":1,"msg_id":"m1","type":"message","read":false,"lead_sig":"c2ln"}"#
        );
        let back: MailEntry = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, entry);
        // An entry written without one (every peer's) reads as unsigned.
        let unsigned: MailEntry = serde_json::from_str(
            r#"{"from":"alpha","text":"hi","timestamp":"t","msgV":1,"msg_id":"m2","type":"message","read":false}"#,
        )
        .expect("parses");
        assert_eq!(unsigned.lead_sig, None);
    }
}
