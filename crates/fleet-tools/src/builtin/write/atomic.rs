//! Replacing a file so that a reader (or a crash) sees the old content or the new, never half
//! of each: write a temporary file beside it, then rename it over the original.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temporary files of concurrent writes within this process.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path`. When `permissions` is given (those of the file being replaced) the
/// new file gets them; otherwise it gets the process defaults, as a freshly created file would.
///
/// If the folder does not let us create the temporary file but the file itself is writable,
/// the file is overwritten in place: not atomic, but better than refusing.
pub(crate) fn write_file(
    path: &Path,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<()> {
    let temp = temp_path(path);
    let mut file = match OpenOptions::new().write(true).create_new(true).open(&temp) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied && permissions.is_some() => {
            return overwrite_in_place(path, bytes);
        }
        Err(err) => return Err(err),
    };
    let result = fill(&mut file, bytes, permissions).and_then(|()| std::fs::rename(&temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn fill(file: &mut File, bytes: &[u8], permissions: Option<Permissions>) -> io::Result<()> {
    file.write_all(bytes)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    // Flushed before the rename, so a crash cannot leave the new name on empty content.
    file.sync_all()
}

fn overwrite_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).truncate(true).open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// A hidden name in the same folder (a rename across file systems would not be atomic).
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.fleet-{}-{unique}.tmp", std::process::id()))
}
