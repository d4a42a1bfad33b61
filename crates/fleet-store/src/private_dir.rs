//! A private folder: one that holds files only the user may read or replace (inboxes, keys,
//! receipts). Whoever can write to a folder can swap the files in it, so a file's own
//! permissions are worth nothing in a folder that is another user's or open to writes by
//! others; every such folder is checked here, the same way, before its files are trusted.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Why a folder cannot hold the user's private files. The text reads after "it", as in
/// "the inbox folder … is not safe to use: it can be written by others (mode 777)".
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// The folder's own details could not be read.
    #[error("cannot be inspected: {0}")]
    Inspect(#[source] std::io::Error),
    /// The name is a symbolic link (which could be pointed elsewhere) or something else than a
    /// folder.
    #[error("is a symbolic link or not a folder")]
    NotAFolder,
    /// Another user owns it and so can replace what is in it.
    #[error("belongs to user {owner} (fleet runs as user {me})")]
    ForeignOwner { owner: u32, me: u32 },
    /// Group or other users may create, remove or rename files in it.
    #[error("can be written by others (mode {mode:o})")]
    OpenToOthers { mode: u32 },
}

/// Checks that `dir` itself (not what a symbolic link there points to) is a folder of the
/// user fleet runs as that nobody else can write to.
pub fn check(dir: &Path) -> Result<(), FolderError> {
    let meta = std::fs::symlink_metadata(dir).map_err(FolderError::Inspect)?;
    if !meta.file_type().is_dir() {
        return Err(FolderError::NotAFolder);
    }
    check_owner_and_mode(&meta)
}

/// The owner and write bits part of [`check`], for a caller that has already looked the
/// folder up its own way (the mailbox follows a symbolic link to its folder).
pub fn check_owner_and_mode(meta: &Metadata) -> Result<(), FolderError> {
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(FolderError::ForeignOwner {
            owner: meta.uid(),
            me,
        });
    }
    if meta.mode() & 0o022 != 0 {
        return Err(FolderError::OpenToOthers {
            mode: meta.mode() & 0o777,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_a_real_folder_closed_to_others_passes() {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("private");
        std::fs::create_dir(&dir).expect("folder");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        check(&dir).expect("0755 is closed to writes by others");

        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o775)).expect("chmod");
        let err = check(&dir).expect_err("group-writable");
        assert!(
            matches!(err, FolderError::OpenToOthers { mode: 0o775 }),
            "{err}"
        );
        assert_eq!(err.to_string(), "can be written by others (mode 775)");

        let link = root.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).expect("link");
        assert!(matches!(check(&link), Err(FolderError::NotAFolder)));
        assert!(matches!(
            check(&root.path().join("missing")),
            Err(FolderError::Inspect(_))
        ));
    }
}
