//! The user's own key for team mail: `$FLEET_HOME/keys/team-mail.ed25519`, one line
//! `ed25519-secret:<base64 of the 32-byte seed>`. `fleet team send` signs what it writes as
//! `user` with it, and every pane teammate checks such an entry against its public half, so a
//! person can talk to a teammate from another terminal while no other writer of the inbox
//! file can speak as the user.
//!
//! The key is only as private as its file, so the OS is made to keep it so
//! ([`crate::private_key`], with the folder checked too):
//! - the folder is made `0700`, the file `0600`, made on first use atomically;
//! - it is opened without following a link and refused unless it is a plain file of the
//!   user's with no group or other bits, in a folder of the user's nobody else can write to.
//!   A key file a repository checked out (git writes `0644`) or another user planted is
//!   refused, not used.
//! - `$FLEET_HOME/keys` is on the sandbox's and the Read guard's never-readable list, so a
//!   tool command of an agent cannot read the key either.

use std::path::{Path, PathBuf};

use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use fleet_protocol::MailEntry;

use crate::private_key::{self, FolderCheck, KeyFileError, KeyFileProblem, SECRET_PREFIX};

use super::payload::{tagged_payload, USER_ENTRY_TAG};
use super::Verdict;

/// Where the key lives, relative to `$FLEET_HOME`.
pub const USER_KEY_FILE: &str = "keys/team-mail.ed25519";

/// The sender the user's key speaks as.
pub const USER_SENDER: &str = "user";

/// Why the user's team-mail key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UserKeyError {
    #[error(
        "the team-mail key {} is not safe to use: it {problem}. Remove it (a new one is made \
         on first use), or make it yours and private (`chmod 600`, folder `chmod 700`)",
        path.display()
    )]
    Unsafe {
        path: PathBuf,
        #[source]
        problem: KeyFileProblem,
    },
    #[error("cannot {action} the team-mail key {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} is not a key fleet wrote (one line `{SECRET_PREFIX}<base64 of 32 bytes>`); move it \
         away to have a new one made",
        path.display()
    )]
    Malformed { path: PathBuf },
}

/// The user's signing key for team mail. The secret is never printed and is wiped on drop
/// (by `ed25519_dalek`).
pub struct UserMailKey {
    signing: SigningKey,
}

impl std::fmt::Debug for UserMailKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UserMailKey(..)")
    }
}

impl UserMailKey {
    /// The key in the fleet home `home`, made there on first use.
    pub fn load_or_create(home: &Path) -> Result<Self, UserKeyError> {
        let path = home.join(USER_KEY_FILE);
        let signing = private_key::load_or_create(&path, FolderCheck::Required)
            .map_err(|err| UserKeyError::from_key_file(&path, err))?;
        Ok(Self { signing })
    }

    /// A key held in memory only: a stranger's key, for tests of forgery.
    pub fn generate() -> Self {
        Self {
            signing: private_key::generate(),
        }
    }

    /// Signs `entry` (into `lead_sig`, over the user tag) when it is from [`USER_SENDER`];
    /// `false`, leaving it as it is, for any other sender: this key speaks for the user only.
    pub fn sign(&self, entry: &mut MailEntry) -> bool {
        if entry.from != USER_SENDER {
            return false;
        }
        let signature = self
            .signing
            .sign(tagged_payload(USER_ENTRY_TAG, entry).as_bytes());
        entry.lead_sig =
            Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(signature.to_bytes()));
        true
    }

    /// What a teammate checks the user's entries with.
    pub fn verifier(&self) -> UserVerifier {
        UserVerifier {
            key: self.signing.verifying_key(),
        }
    }
}

/// The public half of the user's key, as a teammate holds it.
#[derive(Debug, Clone)]
pub struct UserVerifier {
    key: VerifyingKey,
}

impl UserVerifier {
    /// How an entry from [`USER_SENDER`] stands against the user's key; anything else is not
    /// this key's to vouch for ([`Verdict::Unsigned`] for other lead senders, which need the
    /// lead's key). Outside data never makes this panic.
    pub fn check(&self, entry: &MailEntry) -> Verdict {
        if entry.from != USER_SENDER {
            return if super::needs_signature(&entry.from) {
                Verdict::Unsigned
            } else {
                Verdict::Peer
            };
        }
        let Some(sig) = entry.lead_sig.as_deref().filter(|s| !s.is_empty()) else {
            return Verdict::Unsigned;
        };
        let Some(bytes) = super::key_arg::URL_SAFE_ANY_PAD
            .decode(sig)
            .ok()
            .and_then(|b| <[u8; 64]>::try_from(b.as_slice()).ok())
        else {
            return Verdict::BadSignature;
        };
        let signature = Signature::from_bytes(&bytes);
        match self
            .key
            .verify_strict(tagged_payload(USER_ENTRY_TAG, entry).as_bytes(), &signature)
        {
            Ok(()) => Verdict::Verified,
            Err(_) => Verdict::BadSignature,
        }
    }
}

impl UserKeyError {
    /// Words `err` about the key file at `path` for the team-mail key.
    fn from_key_file(path: &Path, err: KeyFileError) -> Self {
        match err {
            KeyFileError::Unsafe(problem) => Self::Unsafe {
                path: path.to_path_buf(),
                problem,
            },
            KeyFileError::Io {
                action,
                path,
                source,
            } => Self::Io {
                action,
                path,
                source,
            },
            KeyFileError::Malformed => Self::Malformed {
                path: path.to_path_buf(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn entry(from: &str) -> MailEntry {
        MailEntry::new(from, "please rebase", "2026-12-01T17:00:00.000Z", "m1")
    }

    #[test]
    fn made_private_on_first_use_and_the_same_key_after() {
        let home = tempfile::tempdir().expect("temp dir");
        let key = UserMailKey::load_or_create(home.path()).expect("made");
        let path = home.path().join(USER_KEY_FILE);
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().expect("folder"))
            .expect("folder")
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let mut signed = entry("user");
        assert!(key.sign(&mut signed));
        let again = UserMailKey::load_or_create(home.path()).expect("loaded");
        assert_eq!(again.verifier().check(&signed), Verdict::Verified);
    }

    #[test]
    fn a_key_others_can_read_or_reach_through_a_link_is_refused() {
        let home = tempfile::tempdir().expect("temp dir");
        UserMailKey::load_or_create(home.path()).expect("made");
        let path = home.path().join(USER_KEY_FILE);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = UserMailKey::load_or_create(home.path()).expect_err("0644 refused");
        assert!(err.to_string().contains("mode 644"), "{err}");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let real = home.path().join("elsewhere");
        std::fs::rename(&path, &real).expect("move");
        std::os::unix::fs::symlink(&real, &path).expect("link");
        let err = UserMailKey::load_or_create(home.path()).expect_err("link refused");
        assert!(err.to_string().contains("symbolic link"), "{err}");

        std::fs::remove_file(&path).expect("unlink");
        std::fs::rename(&real, &path).expect("move back");
        let keys = path.parent().expect("folder");
        std::fs::set_permissions(keys, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let err = UserMailKey::load_or_create(home.path()).expect_err("open folder refused");
        assert!(err.to_string().contains("written by others"), "{err}");
    }

    #[test]
    fn only_the_users_entries_signed_by_this_key_verify() {
        let home = tempfile::tempdir().expect("temp dir");
        let key = UserMailKey::load_or_create(home.path()).expect("made");
        let verifier = key.verifier();
        assert_eq!(verifier.check(&entry("user")), Verdict::Unsigned);
        let mut forged = entry("user");
        UserMailKey::generate().sign(&mut forged);
        assert_eq!(verifier.check(&forged), Verdict::BadSignature);
        let mut changed = entry("user");
        key.sign(&mut changed);
        changed.text.push('!');
        assert_eq!(verifier.check(&changed), Verdict::BadSignature);
        // The user's key never speaks as the lead, and a lead-tagged signature by this key
        // is not a user signature.
        let mut as_lead = entry("team-lead");
        assert!(!key.sign(&mut as_lead));
        assert_eq!(verifier.check(&as_lead), Verdict::Unsigned);
        let mut garbage = entry("user");
        garbage.lead_sig = Some("not base64 at all!".into());
        assert_eq!(verifier.check(&garbage), Verdict::BadSignature);
        assert_eq!(verifier.check(&entry("alpha")), Verdict::Peer);
    }
}
