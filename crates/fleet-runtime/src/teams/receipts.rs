//! Receipts: a teammate's word on a message the user sent it with `fleet team send`, so the
//! sender learns whether it was taken or refused instead of guessing from the inbox cursor
//! (which moves past refused mail too).
//!
//! A teammate that screens its own mail (a pane teammate) writes
//! `teams/<team>/receipts/<msg_id>.json` when it accepts an entry from `user` or refuses any
//! entry; the sender waits for that file, reads it and removes it (and sweeps away receipts
//! nobody came for, after an hour). Receipts are a courtesy to
//! the sender, not an authority: the message itself stands or falls by its signature.
//!
//! The files are the user's only: the folder is made `0700` and must belong to the user with
//! no group or other write bit, a receipt is written `0600` under a temporary name and renamed
//! into place (a symbolic link planted at the final name is replaced, not followed), and read
//! with `O_NOFOLLOW`, checked to be the user's own plain file. A `msg_id` that is not a plain
//! name (it comes from the inbox, outside data) gets no receipt.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use fleet_store::private_dir::FolderError;
use serde::{Deserialize, Serialize};

/// The folder of a team's receipts, inside the team's folder.
pub const RECEIPTS_DIR: &str = "receipts";

/// A receipt is small; more than this is not one.
const MAX_RECEIPT_BYTES: u64 = 16 * 1024;

/// What became of one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    pub msg_id: String,
    /// The member that read it.
    pub to: String,
    /// Taken into the member's conversation (`true`), or refused.
    pub accepted: bool,
    /// Why it was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    #[error("message id {0:?} cannot name a receipt (letters, digits, `-` and `_` only)")]
    BadId(String),
    #[error("the receipt folder {} is not safe: it {problem}", path.display())]
    Unsafe { path: PathBuf, problem: String },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a receipt: {source}", path.display())]
    NotReceipt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// `teams/<team>/receipts` for the team folder `team_dir`.
pub fn dir(team_dir: &Path) -> PathBuf {
    team_dir.join(RECEIPTS_DIR)
}

fn plain_id(msg_id: &str) -> bool {
    !msg_id.is_empty()
        && msg_id.len() <= 128
        && msg_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn path_of(team_dir: &Path, msg_id: &str) -> Result<PathBuf, ReceiptError> {
    if !plain_id(msg_id) {
        return Err(ReceiptError::BadId(msg_id.to_string()));
    }
    Ok(dir(team_dir).join(format!("{msg_id}.json")))
}

/// The folder must be the user's own, writable by nobody else (see
/// [`fleet_store::private_dir`]).
fn check_dir(dir: &Path) -> Result<(), ReceiptError> {
    match fleet_store::private_dir::check(dir) {
        Ok(()) => Ok(()),
        Err(FolderError::Inspect(source)) => Err(ReceiptError::Io {
            action: "inspect",
            path: dir.to_path_buf(),
            source,
        }),
        Err(problem) => Err(ReceiptError::Unsafe {
            path: dir.to_path_buf(),
            problem: problem.to_string(),
        }),
    }
}

/// Writes `receipt` for the sender to find.
pub fn write(team_dir: &Path, receipt: &Receipt) -> Result<(), ReceiptError> {
    let path = path_of(team_dir, &receipt.msg_id)?;
    let folder = dir(team_dir);
    let io = |action: &'static str, at: &Path| {
        let at = at.to_path_buf();
        move |source| ReceiptError::Io {
            action,
            path: at,
            source,
        }
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&folder) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(io("create", &folder)(err)),
    }
    check_dir(&folder)?;
    let text = serde_json::to_vec(receipt).map_err(|source| ReceiptError::NotReceipt {
        path: path.clone(),
        source,
    })?;
    let tmp = folder.join(format!(
        ".{}.{}.tmp",
        receipt.msg_id,
        uuid::Uuid::new_v4().simple()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(&tmp)
        .and_then(|mut file| file.write_all(&text));
    if let Err(err) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write", &tmp)(err));
    }
    std::fs::rename(&tmp, &path).map_err(|err| {
        let _ = std::fs::remove_file(&tmp);
        io("write", &path)(err)
    })
}

/// The receipt for `msg_id`, removed once read; `None` while there is none.
pub fn take(team_dir: &Path, msg_id: &str) -> Result<Option<Receipt>, ReceiptError> {
    let path = path_of(team_dir, msg_id)?;
    let io = |action: &'static str| {
        let at = path.clone();
        move |source| ReceiptError::Io {
            action,
            path: at,
            source,
        }
    };
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK).bits())
        .open(&path);
    let file = match opened {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io("open")(err)),
    };
    check_dir(&dir(team_dir))?;
    let meta = file.metadata().map_err(io("inspect"))?;
    if !meta.file_type().is_file() || meta.uid() != nix::unistd::geteuid().as_raw() {
        let _ = std::fs::remove_file(&path);
        return Err(ReceiptError::Unsafe {
            path: path.clone(),
            problem: "is not a plain file of the user's".into(),
        });
    }
    let mut text = Vec::new();
    file.take(MAX_RECEIPT_BYTES)
        .read_to_end(&mut text)
        .map_err(io("read"))?;
    let _ = std::fs::remove_file(&path);
    let receipt: Receipt =
        serde_json::from_slice(&text).map_err(|source| ReceiptError::NotReceipt {
            path: path.clone(),
            source,
        })?;
    Ok(Some(receipt))
}

/// Removes receipts older than `age` that nobody came for (a sender that gave up waiting,
/// or sent with `--wait 0`). Best effort: what cannot be removed stays for the next sweep.
pub fn sweep(team_dir: &Path, age: std::time::Duration) {
    let folder = dir(team_dir);
    if check_dir(&folder).is_err() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|at| now.duration_since(at).ok())
            .is_some_and(|since| since > age);
        if old && entry.file_name().to_string_lossy().ends_with(".json") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_receipt_is_written_private_read_once_and_removed() {
        let team = tempfile::tempdir().expect("temp dir");
        let receipt = Receipt {
            msg_id: "m-1".into(),
            to: "alpha".into(),
            accepted: false,
            reason: Some("it is not signed".into()),
        };
        assert!(take(team.path(), "m-1").expect("look").is_none());
        write(team.path(), &receipt).expect("write");
        let path = dir(team.path()).join("m-1.json");
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let folder = std::fs::metadata(dir(team.path())).expect("folder");
        assert_eq!(folder.permissions().mode() & 0o777, 0o700);
        assert_eq!(take(team.path(), "m-1").expect("read"), Some(receipt));
        assert!(!path.exists(), "read once");
    }

    #[test]
    fn ids_that_are_not_plain_names_and_planted_links_get_nowhere() {
        let team = tempfile::tempdir().expect("temp dir");
        let receipt = |id: &str| Receipt {
            msg_id: id.into(),
            to: "alpha".into(),
            accepted: true,
            reason: None,
        };
        for bad in ["../x", "a/b", "", "a.json"] {
            assert!(matches!(
                write(team.path(), &receipt(bad)),
                Err(ReceiptError::BadId(_))
            ));
        }
        // A link planted at a receipt's name is not followed on reading, and replaced, not
        // written through, on writing.
        std::fs::create_dir(dir(team.path())).expect("folder");
        std::fs::set_permissions(dir(team.path()), std::fs::Permissions::from_mode(0o700))
            .expect("chmod");
        let target = team.path().join("target");
        std::fs::write(&target, "keep").expect("target");
        std::os::unix::fs::symlink(&target, dir(team.path()).join("m-2.json")).expect("link");
        assert!(take(team.path(), "m-2").is_err());
        write(team.path(), &receipt("m-2")).expect("write");
        assert_eq!(std::fs::read_to_string(&target).expect("target"), "keep");
        // A folder others can write to is refused.
        std::fs::set_permissions(dir(team.path()), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
        assert!(matches!(
            write(team.path(), &receipt("m-3")),
            Err(ReceiptError::Unsafe { .. })
        ));
    }
}
