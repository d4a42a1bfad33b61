//! A private Ed25519 key file, as fleet keeps the user's keys under `$FLEET_HOME/keys`: one
//! line `ed25519-secret:<base64 of the 32-byte seed>`. A key is only as private as its file,
//! so the OS is made to keep it so, the same way for every key:
//! - the folder is made `0700` and the file `0600`, and the file is made on first use
//!   atomically (a private temporary file hard-linked into place: two processes starting at
//!   once end with the same key, never a half-written one);
//! - it is opened with `O_NOFOLLOW` and checked through the open handle (what is checked is
//!   what is read): a plain file, owned by the user fleet runs as, with no group or other
//!   bits. A key file a repository checked out (git writes `0644`) or another user planted is
//!   refused, not used.
//!
//! Each key's module words the errors for its own key; this one says what is wrong.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use ed25519_dalek::{SigningKey, SECRET_KEY_LENGTH};
use fleet_store::private_dir::{self, FolderError};
use rand::TryRng;
use zeroize::Zeroize;

/// What starts the one line of a key file.
pub const SECRET_PREFIX: &str = "ed25519-secret:";

/// A key line is short; more is not a key.
const MAX_KEY_BYTES: u64 = 256;

/// Whether the key's folder is checked too (see [`private_dir::check`]): whoever can write to
/// the folder can swap the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderCheck {
    /// The folder must be the user's own real folder, writable by nobody else.
    Required,
    /// Only the file is checked (the job signing key has never refused its folder; whether it
    /// should is a change of behaviour, not of code).
    Skipped,
}

/// Why a key file is not safe to use. The text reads after "it".
#[derive(Debug, thiserror::Error)]
pub enum KeyFileProblem {
    #[error("is a symbolic link, not a plain file")]
    Symlink,
    #[error("is not a plain file")]
    NotPlainFile,
    #[error("belongs to user {owner} (fleet runs as user {me})")]
    ForeignOwner { owner: u32, me: u32 },
    #[error("has mode {mode:o}: others can read it")]
    OpenToOthers { mode: u32 },
    #[error("is in a folder that {0}")]
    Folder(#[source] FolderError),
}

/// Why a key file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// Others could read or replace it.
    #[error("it {0}")]
    Unsafe(#[source] KeyFileProblem),
    /// The OS refused a step on it.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// It is not one line `ed25519-secret:<base64 of 32 bytes>`.
    #[error("it is not a key fleet wrote (one line `{SECRET_PREFIX}<base64 of 32 bytes>`)")]
    Malformed,
}

/// The key in `path`, made there on first use.
pub fn load_or_create(path: &Path, folder: FolderCheck) -> Result<SigningKey, KeyFileError> {
    if let Some(key) = load(path, folder)? {
        return Ok(key);
    }
    create(path, folder)?;
    load(path, folder)?.ok_or_else(|| KeyFileError::Io {
        action: "read",
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "it vanished right after it was made",
        ),
    })
}

/// A fresh key from the OS's randomness, held in memory only.
pub fn generate() -> SigningKey {
    let mut seed = random_seed();
    let signing = SigningKey::from_bytes(&seed);
    seed.zeroize();
    signing
}

/// The key in `path`; `None` when there is no such file.
fn load(path: &Path, folder: FolderCheck) -> Result<Option<SigningKey>, KeyFileError> {
    let io = |action: &'static str| {
        move |source| KeyFileError::Io {
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
        // O_NOFOLLOW on a symbolic link.
        Err(err) if err.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(KeyFileError::Unsafe(KeyFileProblem::Symlink))
        }
        Err(err) => return Err(io("open")(err)),
    };
    if folder == FolderCheck::Required {
        check_folder(path)?;
    }
    let meta = file.metadata().map_err(io("inspect"))?;
    check_file(&meta).map_err(KeyFileError::Unsafe)?;
    let mut text = String::new();
    let read = (&mut file).take(MAX_KEY_BYTES).read_to_string(&mut text);
    if let Err(err) = read {
        text.zeroize();
        return Err(io("read")(err));
    }
    let seed = decode_seed(&text);
    text.zeroize();
    let mut seed = seed.ok_or(KeyFileError::Malformed)?;
    let signing = SigningKey::from_bytes(&seed);
    seed.zeroize();
    Ok(Some(signing))
}

/// A key file must be a plain file of the user's with no group or other bits.
fn check_file(meta: &std::fs::Metadata) -> Result<(), KeyFileProblem> {
    if !meta.file_type().is_file() {
        return Err(KeyFileProblem::NotPlainFile);
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(KeyFileProblem::ForeignOwner {
            owner: meta.uid(),
            me,
        });
    }
    if meta.mode() & 0o077 != 0 {
        return Err(KeyFileProblem::OpenToOthers {
            mode: meta.mode() & 0o777,
        });
    }
    Ok(())
}

/// The folder of the key in `path` must be private (see [`private_dir::check`]).
fn check_folder(path: &Path) -> Result<(), KeyFileError> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    match private_dir::check(dir) {
        Ok(()) => Ok(()),
        Err(FolderError::Inspect(source)) => Err(KeyFileError::Io {
            action: "inspect the folder of",
            path: path.to_path_buf(),
            source,
        }),
        Err(problem) => Err(KeyFileError::Unsafe(KeyFileProblem::Folder(problem))),
    }
}

fn decode_seed(text: &str) -> Option<[u8; SECRET_KEY_LENGTH]> {
    let b64 = text.trim().strip_prefix(SECRET_PREFIX)?;
    let mut bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    let seed = <[u8; SECRET_KEY_LENGTH]>::try_from(bytes.as_slice()).ok();
    bytes.zeroize();
    seed
}

fn encode_seed(seed: &[u8; SECRET_KEY_LENGTH]) -> String {
    format!(
        "{SECRET_PREFIX}{}\n",
        base64::engine::general_purpose::STANDARD.encode(seed)
    )
}

fn random_seed() -> [u8; SECRET_KEY_LENGTH] {
    let mut seed = [0u8; SECRET_KEY_LENGTH];
    if rand::rngs::SysRng.try_fill_bytes(&mut seed).is_err() {
        // The OS refused once; the thread generator is a CSPRNG seeded from the OS too (and
        // panics, like every other user of randomness in the process, if the OS has none to
        // give at all).
        rand::Rng::fill_bytes(&mut rand::rng(), &mut seed);
    }
    seed
}

/// Writes a new key to `path` unless one appears there meanwhile: a private temporary file,
/// hard-linked into place (a link fails when the name is taken, so the first process wins and
/// the others read its key).
fn create(path: &Path, folder: FolderCheck) -> Result<(), KeyFileError> {
    let io = |action: &'static str| {
        move |source| KeyFileError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io("create the folder of"))?;
    if folder == FolderCheck::Required {
        check_folder(path)?;
    }
    // Named after the key, so a leftover says whose it was.
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{stem}.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let mut seed = random_seed();
    let mut line = encode_seed(&seed);
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
        return Err(io("write")(err));
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        // Another process made it first: its key is the one.
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(io("create")(err)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_survives_its_line_and_nothing_else_decodes() {
        let seed = [7u8; SECRET_KEY_LENGTH];
        assert_eq!(decode_seed(&encode_seed(&seed)), Some(seed));
        assert_eq!(decode_seed("ed25519-secret:AAAA"), None);
        assert_eq!(decode_seed("not a key"), None);
    }

    #[test]
    fn a_key_file_in_an_open_folder_is_refused_only_when_the_folder_is_checked() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().expect("temp dir");
        let path = home.path().join("keys/test.ed25519");
        let made = load_or_create(&path, FolderCheck::Required).expect("made");
        let keys = path.parent().expect("folder");
        std::fs::set_permissions(keys, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let err = load_or_create(&path, FolderCheck::Required).expect_err("open folder");
        assert!(
            matches!(err, KeyFileError::Unsafe(KeyFileProblem::Folder(_))),
            "{err}"
        );
        let again = load_or_create(&path, FolderCheck::Skipped).expect("file alone is fine");
        assert_eq!(again.verifying_key(), made.verifying_key());
    }
}
