//! The task list's files: one `<id>.json` per task (replaced whole, atomically), the
//! `.highwatermark` that keeps ids from being reused, and the `.lock` every change holds.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::error::TaskListError;
use super::task::Task;
use crate::durable::{write_atomic, ExclusiveLock};
use crate::error::StoreError;

type Result<T> = std::result::Result<T, TaskListError>;

const HIGH_WATER_MARK: &str = ".highwatermark";
const LOCK: &str = ".lock";

/// The task id `text` names: decimal digits, optionally after `#` (`"#3"`, `" 3 "`, `"03"` are
/// all task 3). `None` for anything else.
pub(super) fn parse_id(text: &str) -> Option<u64> {
    let digits = text.trim();
    let digits = digits.strip_prefix('#').unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[derive(Debug, Clone)]
pub(super) struct Files {
    dir: PathBuf,
}

impl Files {
    /// The list in `dir`, created with its lock file if new.
    pub(super) fn open(dir: PathBuf) -> Result<Self> {
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io("create folder", &dir, e))?;
        let files = Self { dir };
        // Creating the lock file up front lets `fleet team show` see an empty list's folder.
        drop(files.lock()?);
        Ok(files)
    }

    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Held for every change, so claim checks and id allocation see a list nobody else is
    /// changing, in this process or another.
    pub(super) fn lock(&self) -> Result<ExclusiveLock> {
        Ok(ExclusiveLock::acquire(&self.dir.join(LOCK))?)
    }

    pub(super) fn path(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    pub(super) fn read(&self, id: u64) -> Result<Option<Task>> {
        let path = self.path(id);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| TaskListError::Corrupt { path, source }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io("read", &path, e).into()),
        }
    }

    /// Every task, by numeric id.
    pub(super) fn read_all(&self) -> Result<BTreeMap<u64, Task>> {
        let entries =
            std::fs::read_dir(&self.dir).map_err(|e| StoreError::io("list", &self.dir, e))?;
        let mut tasks = BTreeMap::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io("list", &self.dir, e))?;
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .filter(|stem| !stem.starts_with('#'))
                .and_then(parse_id)
            else {
                continue;
            };
            if let Some(task) = self.read(id)? {
                tasks.insert(id, task);
            }
        }
        Ok(tasks)
    }

    pub(super) fn write(&self, task: &Task) -> Result<()> {
        let id = parse_id(&task.id).ok_or_else(|| TaskListError::NotFound {
            id: task.id.clone(),
        })?;
        let path = self.path(id);
        let mut text = serde_json::to_vec_pretty(task).map_err(|source| StoreError::Encode {
            path: path.clone(),
            source,
        })?;
        text.push(b'\n');
        Ok(write_atomic(&path, &text)?)
    }

    pub(super) fn remove(&self, id: u64) -> Result<()> {
        let path = self.path(id);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::io("remove", &path, e).into()),
        }
    }

    /// The highest id ever handed out (0 for a new list). A missing or unreadable mark counts
    /// as 0; the caller also takes the highest id on disk, so a lost mark reuses no live id.
    pub(super) fn high_water_mark(&self) -> Result<u64> {
        let path = self.dir.join(HIGH_WATER_MARK);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(text.trim().parse().unwrap_or(0)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(0),
            Err(e) => Err(StoreError::io("read", &path, e).into()),
        }
    }

    pub(super) fn set_high_water_mark(&self, id: u64) -> Result<()> {
        let path = self.dir.join(HIGH_WATER_MARK);
        Ok(write_atomic(&path, id.to_string().as_bytes())?)
    }
}

#[cfg(test)]
mod tests {
    use super::parse_id;

    #[test]
    fn ids_are_decimal_with_an_optional_hash() {
        assert_eq!(parse_id("3"), Some(3));
        assert_eq!(parse_id(" #12 "), Some(12));
        assert_eq!(parse_id("03"), Some(3));
        for bad in ["", "#", "x", "-1", "1.5", "../1", "1 2"] {
            assert_eq!(parse_id(bad), None, "{bad}");
        }
    }
}
