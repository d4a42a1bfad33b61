//! The user's approvals of repositories: `$FLEET_HOME/trust.json`.
//!
//! A cloned repository ships settings, hooks, MCP servers, skills and agent files. Whatever of
//! that runs code or widens rights counts only once the user has trusted the repository, and
//! that decision must live where the repository cannot write it: a file a repository could
//! commit (`.claude/settings.local.json`) approves nothing. So the decisions fleet records —
//! `fleet trust`, the interactive trust question, "always allow" answers, `fleet mcp add` —
//! go here, in the user's own store, keyed by the repository's canonical path.
//!
//! A trust decision also keeps the hash of what was approved: when the repository later asks
//! for something else (a new hook, a changed server command), the hash differs and the user
//! is asked again. The file is written whole and atomically, under a lock, owner-only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::durable::{write_atomic, ExclusiveLock};
use crate::error::{Result, StoreError};
use crate::home::FleetHome;

/// The file name under `$FLEET_HOME`.
pub const TRUST_FILE: &str = "trust.json";

/// Everything the user approved, per repository.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustFile {
    /// Keyed by the repository's canonical path.
    #[serde(default)]
    pub projects: BTreeMap<String, ProjectApproval>,
}

/// What the user approved for one repository.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectApproval {
    /// The whole repository trusted (`fleet trust`, the trust question).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted: Option<TrustRecord>,
    /// Allow rules the user gave through fleet ("always allow" in the terminal UI).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Project MCP servers approved one by one (`fleet mcp add`), with the hash of the
    /// configuration approved.
    #[serde(
        default,
        rename = "mcpServers",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub mcp_servers: BTreeMap<String, String>,
}

/// One trust decision: the hash of what the repository asked for, and that list as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    pub hash: String,
    #[serde(default)]
    pub items: Vec<String>,
    /// When, as RFC 3339 (UTC).
    #[serde(default)]
    pub at: String,
}

/// `$FLEET_HOME/trust.json`.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    pub fn new(home: &FleetHome) -> Self {
        Self {
            path: home.root().join(TRUST_FILE),
        }
    }

    /// The store of `$FLEET_HOME` (or `~/.fleet`).
    pub fn from_env() -> Result<Self> {
        FleetHome::from_env().map(|home| Self::new(&home))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's contents; a missing file is an empty store. A file that is not valid JSON
    /// is an error naming it, never silently replaced (it holds the user's decisions).
    pub fn load(&self) -> Result<TrustFile> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TrustFile::default()),
            Err(e) => return Err(StoreError::io("read", &self.path, e)),
        };
        if text.trim().is_empty() {
            return Ok(TrustFile::default());
        }
        serde_json::from_str(&text).map_err(|e| {
            StoreError::io(
                "read",
                &self.path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("not a valid trust file (line {}): {e}", e.line()),
                ),
            )
        })
    }

    /// What the user approved for the repository at `root` (canonical path).
    pub fn project(&self, root: &Path) -> Result<ProjectApproval> {
        Ok(self.load()?.projects.remove(&key(root)).unwrap_or_default())
    }

    /// Changes the entry of `root` under the lock and writes the file back, owner-only. An
    /// entry left empty is removed.
    pub fn update<T>(
        &self,
        root: &Path,
        change: impl FnOnce(&mut ProjectApproval) -> T,
    ) -> Result<T> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io("create folder", dir, e))?;
        let _lock = ExclusiveLock::acquire(&dir.join(".trust.lock"))?;
        let mut file = self.load()?;
        let entry = file.projects.entry(key(root)).or_default();
        let out = change(entry);
        if *entry == ProjectApproval::default() {
            file.projects.remove(&key(root));
        }
        let text = serde_json::to_string_pretty(&file).map_err(|source| StoreError::Encode {
            path: self.path.clone(),
            source,
        })? + "\n";
        write_atomic(&self.path, text.as_bytes())?;
        restrict_to_owner(&self.path)?;
        Ok(out)
    }
}

fn key(root: &Path) -> String {
    root.to_string_lossy().into_owned()
}

fn restrict_to_owner(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| StoreError::io("restrict permissions of", path, e))
}

/// Now, as RFC 3339 in UTC (for [`TrustRecord::at`]).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn decisions_round_trip_per_repository_and_empty_entries_go() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(&FleetHome::at(dir.path()));
        let repo = Path::new("/src/app");
        assert_eq!(store.project(repo).unwrap(), ProjectApproval::default());
        store
            .update(repo, |p| {
                p.trusted = Some(TrustRecord {
                    hash: "h1".into(),
                    items: vec!["hooks".into()],
                    at: now_rfc3339(),
                });
                p.allow.push("Bash(npm test)".into());
            })
            .unwrap();
        let got = store.project(repo).unwrap();
        assert_eq!(got.trusted.unwrap().hash, "h1");
        assert_eq!(got.allow, ["Bash(npm test)"]);
        assert_eq!(
            store.project(Path::new("/src/other")).unwrap(),
            ProjectApproval::default()
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        store
            .update(repo, |p| *p = ProjectApproval::default())
            .unwrap();
        assert!(store.load().unwrap().projects.is_empty());
    }

    #[test]
    fn a_broken_file_is_an_error_naming_it_not_an_empty_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(&FleetHome::at(dir.path()));
        std::fs::write(store.path(), "{not json").unwrap();
        let err = store.load().unwrap_err().to_string();
        assert!(err.contains("trust.json"), "{err}");
        assert!(store.update(Path::new("/r"), |_| ()).is_err());
    }
}
