//! The lead's signatures on what it writes into a pane teammate's inbox. A mailbox is a file
//! any local process of the same user can append to; a teammate in its own process therefore
//! believes an entry that claims to come from the lead (`team-lead`, `user`, `system`) only
//! when it carries the lead's Ed25519 signature (`lead_sig`), checked against the public key
//! the lead gave it on its command line (`--lead-verify-key`). One key pair per teammate,
//! held in the lead's memory only.
//!
//! Formats follow Claude Code's, so the files read the same:
//! - verify key: `<epoch-ms>.<base64url(DER SubjectPublicKeyInfo of the Ed25519 key)>`;
//! - signed bytes: the compact JSON array `["claude-team-lead-entry-v1", msg_id, from,
//!   timestamp, text, summary|null, color|null, from_plugin|null]`;
//! - `lead_sig`: base64url (no padding) of the 64-byte signature.
//!
//! PLACEHOLDER (helper C fills this in).

use fleet_protocol::MailEntry;

/// The senders whose entries must be signed in a pane teammate's inbox.
pub const LEAD_SENDERS: [&str; 3] = ["team-lead", "user", "system"];

/// Whether an entry from `from` must carry the lead's signature.
pub fn needs_signature(from: &str) -> bool {
    LEAD_SENDERS.contains(&from)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigningError {
    #[error("the lead's verify key {0:?} is not `<epoch-ms>.<base64url SPKI>` of an Ed25519 key")]
    BadKey(String),
}

/// The lead's signing key for one teammate.
pub struct LeadKey {
    _private: (),
}

impl std::fmt::Debug for LeadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.write_str("LeadKey(..)")
    }
}

impl LeadKey {
    /// A fresh key pair from the OS's randomness.
    pub fn generate() -> Self {
        Self { _private: () }
    }

    /// The `--lead-verify-key` argument for the teammate.
    pub fn verify_key_arg(&self) -> String {
        String::new()
    }

    /// Sets `entry.lead_sig` when its sender needs one (see [`needs_signature`]).
    pub fn sign(&self, entry: &mut MailEntry) {
        let _ = entry;
    }
}

/// What a teammate checks lead entries with.
#[derive(Debug, Clone)]
pub struct LeadVerifier {
    _private: (),
}

/// How an inbox entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// From a peer: no signature needed.
    Peer,
    /// From the lead, with a valid signature.
    Verified,
    /// Claims to be from the lead and has no signature.
    Unsigned,
    /// Claims to be from the lead and the signature does not match.
    BadSignature,
}

impl Verdict {
    /// Whether the entry may be acted on.
    pub fn trusted(self) -> bool {
        matches!(self, Verdict::Peer | Verdict::Verified)
    }
}

impl LeadVerifier {
    /// Reads a `--lead-verify-key` argument.
    pub fn parse(arg: &str) -> Result<Self, SigningError> {
        Err(SigningError::BadKey(arg.to_string()))
    }

    pub fn check(&self, entry: &MailEntry) -> Verdict {
        if needs_signature(&entry.from) {
            Verdict::Unsigned
        } else {
            Verdict::Peer
        }
    }
}
