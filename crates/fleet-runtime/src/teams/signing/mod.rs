//! The lead's signatures on what it writes into a pane teammate's inbox. A mailbox is a file
//! any local process of the same user can append to; a teammate in its own process therefore
//! believes an entry that claims to come from the lead (`team-lead`, `user`, `system`) only
//! when it carries the lead's Ed25519 signature (`lead_sig`), checked against the public key
//! the lead gave it on its command line (`--lead-verify-key`). One key pair per teammate,
//! held in the lead's memory only.
//!
//! Formats follow Claude Code's, so the files read the same (and a signature made by either
//! tool checks out in the other):
//! - verify key: `<epoch-ms>.<base64url(DER SubjectPublicKeyInfo of the Ed25519 key)>`;
//! - signed bytes: the UTF-8 of the compact JSON array `["claude-team-lead-entry-v1", msg_id,
//!   from, timestamp, text, summary|null, color|null, from_plugin|null]`, exactly as JS
//!   `JSON.stringify` writes it ([`signed_payload`]);
//! - `lead_sig`: base64url (no padding) of the 64-byte signature.
//!
//! Besides the lead, the user signs too: `fleet team send` signs what it writes as `user`
//! with the user's own key in `$FLEET_HOME` (`user_key`), under another tag, and a teammate
//! accepts a `user` entry signed by either key.

mod key_arg;
mod payload;
#[cfg(test)]
mod tests;
mod user_key;

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use fleet_protocol::MailEntry;

pub use payload::{signed_payload, tagged_payload, SIGNED_ENTRY_TAG, USER_ENTRY_TAG};
pub use user_key::{UserKeyError, UserMailKey, UserVerifier, USER_KEY_FILE, USER_SENDER};

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

/// The lead's signing key for one teammate. The secret lives only in this value (wiped when it
/// is dropped) and is never printed.
pub struct LeadKey {
    signing: SigningKey,
    /// When the key was made; the first part of the verify-key argument.
    issued_ms: u64,
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
        let signing = crate::private_key::generate();
        let issued_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Self { signing, issued_ms }
    }

    /// The `--lead-verify-key` argument for the teammate (the same on every call).
    pub fn verify_key_arg(&self) -> String {
        key_arg::encode(self.issued_ms, &self.signing.verifying_key())
    }

    /// What the teammate holding [`Self::verify_key_arg`] checks with; for the lead's own
    /// tests and checks, without a round trip through the argument.
    pub fn verifier(&self) -> LeadVerifier {
        LeadVerifier {
            key: self.signing.verifying_key(),
        }
    }

    /// Sets `entry.lead_sig` when its sender needs one (see [`needs_signature`]); an entry from
    /// a peer is left as it is. Sign last: any later change to a signed field (`msg_id`,
    /// `from`, `timestamp`, `text`, `summary`, `color`) makes the teammate refuse the entry.
    pub fn sign(&self, entry: &mut MailEntry) {
        if !needs_signature(&entry.from) {
            return;
        }
        let signature = self.signing.sign(signed_payload(entry).as_bytes());
        entry.lead_sig =
            Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(signature.to_bytes()));
    }
}

/// What a teammate checks lead entries with.
#[derive(Debug, Clone)]
pub struct LeadVerifier {
    key: VerifyingKey,
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
    /// Reads a `--lead-verify-key` argument: `<digits>.<base64url SPKI>`, padded or not.
    /// Anything else (no dot, a non-digit stamp, another alphabet, a key that is not Ed25519,
    /// a weak key) is [`SigningError::BadKey`].
    pub fn parse(arg: &str) -> Result<Self, SigningError> {
        key_arg::decode(arg).map(|key| Self { key })
    }

    /// How `entry` stands. A peer's entry is [`Verdict::Peer`] whatever its `lead_sig` says
    /// (peers need none, and a stray one grants nothing); an entry from a lead sender needs a
    /// signature over its fields by this key. Outside data never makes this panic.
    pub fn check(&self, entry: &MailEntry) -> Verdict {
        if !needs_signature(&entry.from) {
            return Verdict::Peer;
        }
        let sig = match entry.lead_sig.as_deref() {
            None | Some("") => return Verdict::Unsigned,
            Some(sig) => sig,
        };
        let Some(signature) = decode_signature(sig) else {
            return Verdict::BadSignature;
        };
        // Strict: no non-canonical signature passes (a lead's own signatures always are).
        match self
            .key
            .verify_strict(signed_payload(entry).as_bytes(), &signature)
        {
            Ok(()) => Verdict::Verified,
            Err(_) => Verdict::BadSignature,
        }
    }
}

/// The 64 signature bytes of a `lead_sig`, padded or not; `None` for anything else.
fn decode_signature(sig: &str) -> Option<Signature> {
    let bytes = key_arg::URL_SAFE_ANY_PAD.decode(sig).ok()?;
    let bytes: [u8; ed25519_dalek::SIGNATURE_LENGTH] = bytes.try_into().ok()?;
    Some(Signature::from_bytes(&bytes))
}
