//! A control (stop, approve, reject, teleport, reply) as it travels on
//! `fleet.control.<task>`: signed like a job, because an approval widens what a session may do
//! and a reply or a rejection's feedback is text the session takes as the user's. The signed
//! bytes name the task, so a control signed for one task is worthless on another's subject.

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::{PublicKey, SigningError, TrustedKeys, UserKey};
use crate::error::RemoteError;
use crate::record::Control;
use thiserror::Error;

/// Why a worker ignores a message on a task's control subject.
#[derive(Debug, Error)]
pub enum ControlRefusal {
    #[error("the control is not signed")]
    Unsigned(#[source] serde_json::Error),
    #[error("its signing key is not valid: {0}")]
    BadKey(#[source] SigningError),
    /// The keys are boxed: an Ed25519 key is 192 bytes.
    #[error("signed by {0}, a key this worker does not trust")]
    Untrusted(Box<PublicKey>),
    /// Signed for another task, or its contents changed on the way.
    #[error("its signature does not match this task and contents for key {0}")]
    BadSignature(Box<PublicKey>),
    #[error("a signed control that is not valid: {0}")]
    Invalid(#[source] serde_json::Error),
}

/// What a control signature is over, first.
pub const CONTROL_TAG: &str = "fleet-remote-control-v1";

/// The message on a task's control subject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedControl {
    /// The control's JSON text, exactly as signed.
    pub control: String,
    /// The signer's public key, `ed25519:<base64>`.
    pub key: String,
    /// The 64-byte Ed25519 signature, standard base64.
    pub signature: String,
}

fn signed_bytes(task_id: &str, control_text: &str) -> Vec<u8> {
    format!("{CONTROL_TAG}\n{task_id}\n{control_text}").into_bytes()
}

/// `control` for `task_id`, signed by `key`, as the message payload.
pub fn sign_control(
    task_id: &str,
    control: &Control,
    key: &UserKey,
) -> Result<Vec<u8>, RemoteError> {
    let text = serde_json::to_string(control).map_err(|e| RemoteError::malformed("control", e))?;
    let signature = key.sign(&signed_bytes(task_id, &text));
    let envelope = SignedControl {
        control: text,
        key: key.public_key().to_string(),
        signature: base64::engine::general_purpose::STANDARD.encode(signature),
    };
    serde_json::to_vec(&envelope).map_err(|e| RemoteError::malformed("signed control", e))
}

/// The control in `payload` on `task_id`'s subject, when a key in `trusted` signed it for
/// this task; else why not.
pub fn open_control(
    task_id: &str,
    payload: &[u8],
    trusted: &TrustedKeys,
) -> Result<Control, ControlRefusal> {
    let envelope: SignedControl =
        serde_json::from_slice(payload).map_err(ControlRefusal::Unsigned)?;
    let key = PublicKey::parse(&envelope.key).map_err(ControlRefusal::BadKey)?;
    if !trusted.contains(&key) {
        return Err(ControlRefusal::Untrusted(Box::new(key)));
    }
    let signature = base64::engine::general_purpose::STANDARD
        .decode(&envelope.signature)
        .unwrap_or_default();
    if !key.verifies(&signed_bytes(task_id, &envelope.control), &signature) {
        return Err(ControlRefusal::BadSignature(Box::new(key)));
    }
    serde_json::from_str(&envelope.control).map_err(ControlRefusal::Invalid)
}
