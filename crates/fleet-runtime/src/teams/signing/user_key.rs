//! The user's own key for team mail: `$FLEET_HOME/keys/team-mail.ed25519`, one line
//! `ed25519-secret:<base64 of the 32-byte seed>`. `fleet team send` signs what it writes as
//! `user` with it, and every pane teammate checks such an entry against its public half, so a
//! person can talk to a teammate from another terminal while no other writer of the inbox
//! file can speak as the user.
//!
//! The key is only as private as its file, so the OS is made to keep it so:
//! - the folder is made `0700`, the file `0600`, and the file is made on first use atomically
//!   (a private temporary file hard-linked into place: two processes starting at once end with
//!   the same key, never a half-written one);
//! - it is opened with `O_NOFOLLOW` and checked through the open handle (what is checked is
//!   what is read): a plain file, owned by the user fleet runs as, with no group or other
//!   bits; the folder likewise owned by the user and writable by nobody else. A key file a
//!   repository checked out (git writes `0644`) or another user planted is refused, not used.
//! - `$FLEET_HOME/keys` is on the sandbox's and the Read guard's never-readable list, so a
//!   tool command of an agent cannot read the key either.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey, SECRET_KEY_LENGTH};
use fleet_protocol::MailEntry;
use rand::TryRng;
use zeroize::Zeroize;

use super::payload::{tagged_payload, USER_ENTRY_TAG};
use super::Verdict;

/// Where the key lives, relative to `$FLEET_HOME`.
pub const USER_KEY_FILE: &str = "keys/team-mail.ed25519";

/// The sender the user's key speaks as.
pub const USER_SENDER: &str = "user";

const SECRET_PREFIX: &str = "ed25519-secret:";

/// Why the user's team-mail key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UserKeyError {
    #[error(
        "the team-mail key {} is not safe to use: it {problem}. Remove it (a new one is made \
         on first use), or make it yours and private (`chmod 600`, folder `chmod 700`)",
        path.display()
    )]
    Unsafe { path: PathBuf, problem: String },
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
        if let Some(key) = load(&path)? {
            return Ok(key);
        }
        create(&path)?;
        load(&path)?.ok_or_else(|| UserKeyError::Io {
            action: "read",
            path: path.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "it vanished right after it was made",
            ),
        })
    }

    /// A key held in memory only: a stranger's key, for tests of forgery.
    pub fn generate() -> Self {
        let mut seed = random_seed();
        let signing = SigningKey::from_bytes(&seed);
        seed.zeroize();
        Self { signing }
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

/// The key in `path`; `None` when there is no such file.
fn load(path: &Path) -> Result<Option<UserMailKey>, UserKeyError> {
    let unsafe_key = |problem: String| UserKeyError::Unsafe {
        path: path.to_path_buf(),
        problem,
    };
    let io = |action: &'static str| {
        move |source| UserKeyError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    };
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits() | nix::fcntl::OFlag::O_NOCTTY.bits())
        .open(path);
    let mut file = match opened {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) if err.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(unsafe_key("is a symbolic link, not a plain file".into()))
        }
        Err(err) => return Err(io("open")(err)),
    };
    if let Some(dir) = path.parent() {
        check_folder(dir, path)?;
    }
    let meta = file.metadata().map_err(io("inspect"))?;
    if !meta.file_type().is_file() {
        return Err(unsafe_key("is not a plain file".into()));
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(unsafe_key(format!(
            "belongs to user {} (fleet runs as user {me})",
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(unsafe_key(format!(
            "has mode {:o}: others can read it",
            meta.mode() & 0o777
        )));
    }
    let mut text = String::new();
    // A key line is short; more is not a key.
    let read = (&mut file).take(256).read_to_string(&mut text);
    if let Err(err) = read {
        text.zeroize();
        return Err(io("read")(err));
    }
    let seed = decode_seed(&text);
    text.zeroize();
    let Some(mut seed) = seed else {
        return Err(UserKeyError::Malformed {
            path: path.to_path_buf(),
        });
    };
    let signing = SigningKey::from_bytes(&seed);
    seed.zeroize();
    Ok(Some(UserMailKey { signing }))
}

/// The key's folder must be a real folder of the user's that nobody else can write to (who
/// can write there can swap the file).
fn check_folder(dir: &Path, key: &Path) -> Result<(), UserKeyError> {
    let meta = std::fs::symlink_metadata(dir).map_err(|source| UserKeyError::Io {
        action: "inspect the folder of",
        path: dir.to_path_buf(),
        source,
    })?;
    let problem = if !meta.file_type().is_dir() {
        Some("is in a folder that is a symbolic link or not a folder".to_string())
    } else if meta.uid() != nix::unistd::geteuid().as_raw() {
        Some(format!(
            "is in a folder that belongs to user {}",
            meta.uid()
        ))
    } else if meta.mode() & 0o022 != 0 {
        Some(format!(
            "is in a folder others can write to (mode {:o})",
            meta.mode() & 0o777
        ))
    } else {
        None
    };
    match problem {
        Some(problem) => Err(UserKeyError::Unsafe {
            path: key.to_path_buf(),
            problem,
        }),
        None => Ok(()),
    }
}

fn decode_seed(text: &str) -> Option<[u8; SECRET_KEY_LENGTH]> {
    let b64 = text.trim().strip_prefix(SECRET_PREFIX)?;
    let mut bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    let seed = <[u8; SECRET_KEY_LENGTH]>::try_from(bytes.as_slice()).ok();
    bytes.zeroize();
    seed
}

fn random_seed() -> [u8; SECRET_KEY_LENGTH] {
    let mut seed = [0u8; SECRET_KEY_LENGTH];
    if rand::rngs::SysRng.try_fill_bytes(&mut seed).is_err() {
        // The thread generator is a CSPRNG seeded from the OS too.
        rand::Rng::fill_bytes(&mut rand::rng(), &mut seed);
    }
    seed
}

/// Writes a new key to `path` unless one appears there meanwhile: a private temporary file,
/// hard-linked into place (a link fails when the name is taken, so the first process wins and
/// the others read its key).
fn create(path: &Path) -> Result<(), UserKeyError> {
    let io = |action: &'static str, at: &Path| {
        let at = at.to_path_buf();
        move |source| UserKeyError::Io {
            action,
            path: at,
            source,
        }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io("create the folder of", path))?;
    check_folder(dir, path)?;
    let tmp = dir.join(format!(
        ".team-mail.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let mut seed = random_seed();
    let mut line = format!(
        "{SECRET_PREFIX}{}\n",
        base64::engine::general_purpose::STANDARD.encode(seed)
    );
    seed.zeroize();
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(line.as_bytes())?;
            file.sync_all()
        });
    line.zeroize();
    if let Err(err) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write", path)(err));
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        // Another process made it first: its key is the one.
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(io("create", path)(err)),
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
        assert!(err.to_string().contains("others can write"), "{err}");
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
