//! A job as it travels on `fleet.jobs`: `{"job": "<the job's JSON text>", "key":
//! "ed25519:…", "signature": "<base64>"}`. The signature covers [`JOB_TAG`], a newline and
//! the job text byte for byte, so the worker checks exactly what it then parses: no
//! re-serialising, no field left out of the signature.

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::{PublicKey, TrustedKeys, UserKey};
use crate::error::RemoteError;
use crate::job::Job;

/// What a job signature is over, first: a signature made for anything else (a team inbox
/// entry, a later format) is never taken for a job's.
pub const JOB_TAG: &str = "fleet-remote-job-v1";

/// The message on the jobs subject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedJob {
    /// The job's JSON text, exactly as signed.
    pub job: String,
    /// The signer's public key, `ed25519:<base64>`.
    pub key: String,
    /// The 64-byte Ed25519 signature, standard base64.
    pub signature: String,
}

/// The bytes signed for `job_text`.
fn signed_bytes(job_text: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(JOB_TAG.len() + 1 + job_text.len());
    bytes.extend_from_slice(JOB_TAG.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(job_text.as_bytes());
    bytes
}

/// `job` signed by `key`, as the message payload.
pub fn sign(job: &Job, key: &UserKey) -> Result<Vec<u8>, RemoteError> {
    let text = serde_json::to_string(job).map_err(|e| RemoteError::malformed("job", e))?;
    let signature = key.sign(&signed_bytes(&text));
    let envelope = SignedJob {
        job: text,
        key: key.public_key().to_string(),
        signature: base64::engine::general_purpose::STANDARD.encode(signature),
    };
    serde_json::to_vec(&envelope).map_err(|e| RemoteError::malformed("signed job", e))
}

/// What a worker makes of a message on the jobs subject.
#[derive(Debug, Clone, PartialEq)]
pub enum Opened {
    /// Signed by a trusted key, and intact.
    Verified { job: Box<Job>, key: PublicKey },
    /// Not to be run. `task_id` is the id the message claims, when it is a well-formed one
    /// (so the task's record can say why); `reason` says what is wrong and how to fix it.
    Refused {
        task_id: Option<String>,
        reason: String,
    },
}

/// Checks `payload` against `trusted`. Nothing in the payload is believed before the
/// signature checks out; outside data never makes this panic.
pub fn open(payload: &[u8], trusted: &TrustedKeys) -> Opened {
    let envelope: SignedJob = match serde_json::from_slice(payload) {
        Ok(envelope) => envelope,
        Err(err) => {
            let claimed = claimed_id(serde_json::from_slice(payload).ok());
            let reason = if claimed.is_some() {
                "the job is not signed (jobs must be submitted by a fleet that signs them with \
                 its user's key)"
                    .to_string()
            } else {
                format!("not a signed job: {err}")
            };
            return Opened::Refused {
                task_id: claimed,
                reason,
            };
        }
    };
    let task_id = claimed_id(serde_json::from_str(&envelope.job).ok());
    let refused = |reason: String| Opened::Refused {
        task_id: task_id.clone(),
        reason,
    };
    let key = match PublicKey::parse(&envelope.key) {
        Ok(key) => key,
        Err(err) => return refused(format!("its signing key is not valid: {err}")),
    };
    if !trusted.contains(&key) {
        return refused(format!(
            "signed by {key}, a key this worker does not trust (add it to \"remote\": \
             {{\"trustedKeys\": [...]}} in the worker's $FLEET_HOME/settings.json, or pass \
             --trust-key, and restart the worker)"
        ));
    }
    let signature = base64::engine::general_purpose::STANDARD
        .decode(&envelope.signature)
        .unwrap_or_default();
    if !key.verifies(&signed_bytes(&envelope.job), &signature) {
        return refused(format!(
            "its signature does not match its contents for key {key} (changed after it was \
             signed, or forged)"
        ));
    }
    match serde_json::from_str::<Job>(&envelope.job) {
        Ok(job) => Opened::Verified {
            job: Box::new(job),
            key,
        },
        Err(err) => refused(format!("a signed job that is not valid: {err}")),
    }
}

/// The task id a message claims, when it is a well-formed one.
fn claimed_id(value: Option<serde_json::Value>) -> Option<String> {
    value?
        .get("task_id")?
        .as_str()
        .filter(|id| crate::names::is_task_id(id))
        .map(str::to_string)
}
