//! Where stdio servers' own stderr goes: one owner-only file per server and session, in
//! `$FLEET_HOME/logs/mcp/`.
//!
//! A server's stderr is its own business (start-up banners, debug output, a stack trace when
//! it dies). Written onto the user's terminal it would interleave with fleet's output; kept
//! only in memory it would be lost just when it explains a failure. So it goes to a file, and
//! a failed start names that file in its one line. The files are owner-only because a server
//! may print what its environment holds (tokens, connection strings).
//!
//! Files older than [`KEEP_FOR`] are removed when a session opens the folder, so the folder
//! does not grow without end; one file stops growing at [`MAX_LOG_BYTES`].

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// How long a log is kept after it was last written.
pub const KEEP_FOR: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The most one log file takes; what a server writes beyond it is read and dropped, with a
/// note at the cut, so a chatty server can neither block on a full pipe nor fill the disk.
pub const MAX_LOG_BYTES: u64 = 16 * 1024 * 1024;

/// The log folder of one session: names each server's file once, so every start of a server
/// (a restart, a reconnect) appends to the same file.
#[derive(Debug)]
pub struct McpLogs {
    dir: PathBuf,
    /// When and by which fleet process: keeps two sessions' files apart.
    stamp: String,
    /// How many connections of each server name have been given a file (agents' own servers
    /// of the same name may run side by side, each with its own file).
    given: Mutex<BTreeMap<String, u32>>,
}

impl McpLogs {
    /// The folder `$FLEET_HOME/logs/mcp` of `fleet_home`, made owner-only if new, with logs
    /// older than [`KEEP_FOR`] removed.
    pub fn open(fleet_home: &Path) -> io::Result<Self> {
        Self::open_dir(fleet_home.join("logs").join("mcp"))
    }

    /// [`Self::open`] for any folder.
    pub fn open_dir(dir: PathBuf) -> io::Result<Self> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
        prune(&dir, KEEP_FOR);
        Ok(Self {
            dir,
            stamp: stamp(SystemTime::now()),
            given: Mutex::new(BTreeMap::new()),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A file of its own for one connection of `server`: `<server>-<stamp>.log`, then
    /// `<server>-<stamp>-2.log` for the second connection of that name, and so on.
    pub fn file_for(&self, server: &str) -> PathBuf {
        let name: String = server
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut given = self.given.lock().unwrap_or_else(PoisonError::into_inner);
        let count = given.entry(name.clone()).or_insert(0);
        *count += 1;
        let file = match *count {
            1 => format!("{name}-{}.log", self.stamp),
            n => format!("{name}-{}-{n}.log", self.stamp),
        };
        self.dir.join(file)
    }
}

/// Opens `path` for appending, owner-only (also when it existed with a wider mode).
pub(crate) fn open_log(path: &Path) -> io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

/// `20261205T211422Z-<pid>`: sorts by time, and never clashes with another fleet process.
fn stamp(now: SystemTime) -> String {
    let time: String = humantime::format_rfc3339_seconds(now)
        .to_string()
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    format!("{time}-{}", std::process::id())
}

/// Removes the `*.log` files of `dir` not written for `age`. Best effort: a file another
/// session removes first, or one that cannot be removed, is left to the next session.
fn prune(dir: &Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let Some(cutoff) = SystemTime::now().checked_sub(age) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "log") {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|written| written < cutoff);
        if old {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn each_connection_of_a_name_gets_its_own_file_in_an_owner_only_folder() {
        let home = tempfile::tempdir().unwrap();
        let logs = McpLogs::open(home.path()).unwrap();
        let mode = std::fs::metadata(logs.dir()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let first = logs.file_for("db");
        let second = logs.file_for("db");
        let odd = logs.file_for("a b/c");
        assert_ne!(first, second);
        assert!(first
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("db-"));
        assert!(second.to_str().unwrap().ends_with("-2.log"), "{second:?}");
        assert!(odd
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("a_b_c-"));
        assert_eq!(odd.parent(), Some(logs.dir()));
    }

    #[test]
    fn a_log_is_owner_only_even_when_it_existed_wider() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        std::fs::write(&path, "old\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(open_log(&path).unwrap());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn old_logs_are_removed_and_other_files_kept() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.log");
        let new = dir.path().join("new.log");
        let other = dir.path().join("notes.txt");
        for file in [&old, &new, &other] {
            std::fs::write(file, "x").unwrap();
        }
        let long_ago = SystemTime::now() - Duration::from_secs(30 * 24 * 60 * 60);
        for file in [&old, &other] {
            std::fs::File::options()
                .write(true)
                .open(file)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        prune(dir.path(), KEEP_FOR);
        assert!(!old.exists());
        assert!(new.exists());
        assert!(other.exists());
    }

    #[test]
    fn the_stamp_sorts_by_time_and_names_the_process() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(
            stamp(at),
            format!("20270115T080000Z-{}", std::process::id())
        );
    }
}
