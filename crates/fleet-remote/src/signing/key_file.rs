//! The user's job signing key: `$FLEET_HOME/keys/remote-jobs.ed25519`, one line
//! `ed25519-secret:<base64 of the 32-byte seed>`, in a folder and a file only the owner can
//! open. It is made on first use, atomically: two fleet processes starting at once (a worker
//! and a submitter sharing a home) end with the same key, never with a half-written file.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use ed25519_dalek::{Signer, SigningKey, SECRET_KEY_LENGTH};
use rand::TryRng;
use zeroize::Zeroize;

use super::{PublicKey, SigningError};

/// Where the key lives, relative to `$FLEET_HOME`.
pub const KEY_FILE: &str = "keys/remote-jobs.ed25519";

const SECRET_PREFIX: &str = "ed25519-secret:";

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
        if let Some(key) = Self::load(&path)? {
            return Ok(key);
        }
        create(&path)?;
        Self::load(&path)?.ok_or_else(|| SigningError::KeyFile {
            path: path.display().to_string(),
            reason: "it vanished right after it was made".into(),
        })
    }

    /// A fresh key held in memory only (tests, and a stranger's key in attacker tests).
    pub fn generate(label: &str) -> Self {
        Self {
            signing: SigningKey::from_bytes(&random_seed()),
            path: PathBuf::from(label),
        }
    }

    /// The key in `path`; `None` when there is no such file. The file is opened without
    /// following a symlink and checked through the open handle, so what is checked is what
    /// is read.
    fn load(path: &Path) -> Result<Option<Self>, SigningError> {
        let shown = || path.display().to_string();
        let unsafe_file = |problem: String| SigningError::KeyFileUnsafe {
            path: shown(),
            problem,
        };
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
            .open(path);
        let mut file = match opened {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // O_NOFOLLOW on a symlink.
            Err(err) if err.raw_os_error() == Some(nix::libc::ELOOP) => {
                return Err(unsafe_file("is a symlink, not a plain file".into()))
            }
            Err(err) => {
                return Err(SigningError::KeyFile {
                    path: shown(),
                    reason: err.to_string(),
                })
            }
        };
        let meta = file.metadata().map_err(|e| SigningError::KeyFile {
            path: shown(),
            reason: e.to_string(),
        })?;
        if !meta.file_type().is_file() {
            return Err(unsafe_file("is not a plain file".into()));
        }
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(unsafe_file(format!(
                "belongs to user {} (fleet runs as {me})",
                meta.uid()
            )));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(unsafe_file(format!(
                "has mode {:o}, open to others",
                meta.mode() & 0o777
            )));
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).map_err(|e| SigningError::KeyFile {
            path: shown(),
            reason: e.to_string(),
        })?;
        let seed = decode_seed(&text);
        text.zeroize();
        let mut seed = seed.ok_or_else(|| SigningError::KeyFile {
            path: shown(),
            reason: format!(
                "not a key fleet wrote (one line `{SECRET_PREFIX}<base64 of 32 bytes>`); move it \
                 away to have a new key made, then give workers the new public key"
            ),
        })?;
        let signing = SigningKey::from_bytes(&seed);
        seed.zeroize();
        Ok(Some(Self {
            signing,
            path: path.to_path_buf(),
        }))
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

/// Writes a new key to `path` unless one appears there meanwhile: the key goes to a private
/// temporary file first, which is then hard-linked into place (a link fails when the name is
/// taken, so the first process to get there wins and the others read its key).
fn create(path: &Path) -> Result<(), SigningError> {
    let io = |reason: std::io::Error| SigningError::KeyFile {
        path: path.display().to_string(),
        reason: reason.to_string(),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io)?;
    let tmp = dir.join(format!(
        ".remote-jobs.{}.{}.tmp",
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
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(line.as_bytes())?;
            file.sync_all()
        });
    line.zeroize();
    if let Err(err) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(err));
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        // Another process made it first: its key is the one.
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(io(err)),
    }
}
