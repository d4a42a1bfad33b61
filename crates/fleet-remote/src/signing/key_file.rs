//! The user's job signing key: `$FLEET_HOME/keys/remote-jobs.ed25519`, one line
//! `ed25519-secret:<base64 of the 32-byte seed>`, in a folder and a file only the owner can
//! open. It is made on first use, atomically: two fleet processes starting at once (a worker
//! and a submitter sharing a home) end with the same key, never with a half-written file.
//! How the file is made and checked is [`fleet_runtime::private_key`]'s; this module words
//! its errors for the job key.

use std::path::{Path, PathBuf};

use ed25519_dalek::{Signer, SigningKey};
use fleet_runtime::private_key::{self, FolderCheck, KeyFileError, SECRET_PREFIX};

use super::{PublicKey, SigningError};

/// Where the key lives, relative to `$FLEET_HOME`.
pub const KEY_FILE: &str = "keys/remote-jobs.ed25519";

/// The user's Ed25519 key for signing remote jobs. The secret is never printed.
pub struct UserKey {
    signing: SigningKey,
    path: PathBuf,
}

impl std::fmt::Debug for UserKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserKey({}, {})", self.public_key(), self.path.display())
    }
}

impl UserKey {
    /// The key of the user whose fleet home is `$FLEET_HOME` (else `~/.fleet`), made there on
    /// first use.
    pub fn from_env() -> Result<Self, SigningError> {
        let home =
            fleet_store::FleetHome::from_env().map_err(|e| SigningError::NoHome(e.to_string()))?;
        Self::load_or_create(home.root())
    }

    /// The key in the fleet home `home`, made on first use.
    pub fn load_or_create(home: &Path) -> Result<Self, SigningError> {
        let path = home.join(KEY_FILE);
        // The folder is not checked: this key never refused its folder (the team-mail key,
        // in the same folder, does).
        let signing = private_key::load_or_create(&path, FolderCheck::Skipped)
            .map_err(|err| key_file_error(&path, err))?;
        Ok(Self { signing, path })
    }

    /// A fresh key held in memory only (tests, and a stranger's key in attacker tests).
    pub fn generate(label: &str) -> Self {
        Self {
            signing: private_key::generate(),
            path: PathBuf::from(label),
        }
    }

    /// The public half, `ed25519:<base64>`, for workers' `remote.trustedKeys`.
    pub fn public_key(&self) -> PublicKey {
        PublicKey::from_verifying(self.signing.verifying_key())
    }

    /// The file the key is in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The 64-byte signature over `message`.
    pub(crate) fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.signing.sign(message).to_bytes()
    }
}

/// Words `err` about the key file at `path` for the job signing key.
fn key_file_error(path: &Path, err: KeyFileError) -> SigningError {
    let path = path.display().to_string();
    match err {
        KeyFileError::Unsafe(problem) => SigningError::KeyFileUnsafe { path, problem },
        KeyFileError::Io { action, source, .. } => SigningError::KeyFile {
            path,
            reason: format!("cannot {action}: {source}"),
        },
        KeyFileError::Malformed => SigningError::KeyFile {
            path,
            reason: format!(
                "not a key fleet wrote (one line `{SECRET_PREFIX}<base64 of 32 bytes>`); move it \
                 away to have a new key made, then give workers the new public key"
            ),
        },
    }
}
