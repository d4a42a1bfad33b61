//! Jobs signed by the person who submits them, and checked by the worker that runs them.
//!
//! Anyone who can publish on the broker can queue a job, and a job says which permission
//! mode and rules its agent runs with. So a worker runs only jobs signed with an Ed25519 key
//! it trusts:
//!
//! - the submitter's key lives in `$FLEET_HOME/keys/remote-jobs.ed25519`, a file only its
//!   owner can read, made on first use ([`UserKey`]); `fleet remote key` prints its public
//!   half as `ed25519:<base64>` ([`PublicKey`]);
//! - a job travels as a [`SignedJob`]: the job's JSON text exactly as it was signed, the
//!   public key, and the signature over a tag and that text, so nothing in the job (agent
//!   definition, prompt, model, mode, rules, repository snapshot, labels) can change on the
//!   way without the signature failing;
//! - a worker trusts the keys in its user settings' `remote.trustedKeys` and its
//!   `--trust-key` flags; with none configured, only its own user's key ([`TrustedKeys`]);
//! - controls (stop, approve, reject, teleport, reply) are signed the same way, over the task
//!   id too ([`SignedControl`]): an approval widens a session, and feedback is text the
//!   session takes as the user's.
//!
//! The team signatures in `fleet_runtime::teams::signing` use the same crates but a
//! different format (Claude Code's); the two never sign each other's payloads (each signed
//! text starts with its own tag).

mod control;
mod envelope;
mod key_file;
mod public_key;
#[cfg(test)]
mod tests;
mod trust;

pub use control::{open_control, sign_control, ControlRefusal, SignedControl, CONTROL_TAG};
pub use envelope::{open, sign, Opened, SignedJob, JOB_TAG};
pub use key_file::{UserKey, KEY_FILE};
pub use public_key::PublicKey;
pub use trust::{TrustSource, TrustedKeys};

/// A key that cannot be read, made or trusted.
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    /// Text given as a public key is not one.
    #[error("{key:?} is not an Ed25519 public key (`ed25519:` and the 32 key bytes in base64 or hex, as `fleet remote key` prints it): {reason}")]
    BadPublicKey { key: String, reason: String },
    /// The user's key file cannot be read or written.
    #[error("the job signing key {path}: {reason}")]
    KeyFile { path: String, reason: String },
    /// The key file is readable or writable by someone else, or is not a plain file.
    #[error("the job signing key {path} {problem}; it must be a plain file only its owner can read and write (chmod 600 {path})")]
    KeyFileUnsafe {
        path: String,
        #[source]
        problem: fleet_runtime::private_key::KeyFileProblem,
    },
    /// No `$FLEET_HOME` and no home folder to put the key in.
    #[error("no folder for the job signing key: {0} (set FLEET_HOME)")]
    NoHome(String),
    /// A settings file's `remote.trustedKeys` is not a list of keys.
    #[error("{path}: remote.trustedKeys: {reason}")]
    Settings { path: String, reason: String },
}
