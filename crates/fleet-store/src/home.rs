//! Where fleet keeps what outlives a process, and how a working folder maps to its project
//! folder inside it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Result, StoreError};

/// Slugs longer than this are cut and given a hash suffix, so that a deep working folder still
/// yields a file name well under the usual 255-byte limit.
const MAX_SLUG_CHARS: usize = 200;

/// The root folder of fleet's state: `$FLEET_HOME`, else `~/.fleet`.
///
/// Layout:
///
/// ```text
/// <home>/projects/<slug of the working folder>/<session id>.jsonl
/// ```
///
/// One folder per working folder keeps `--continue` cheap (it only lists one folder) and lets a
/// user find a project's sessions by eye.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetHome {
    root: PathBuf,
}

impl FleetHome {
    /// `$FLEET_HOME` if set and not empty, else `.fleet` in the user's home folder. A relative
    /// `$FLEET_HOME` is taken from the current folder, so that later changes of folder do not
    /// move it.
    pub fn from_env() -> Result<Self> {
        Self::resolve(std::env::var_os("FLEET_HOME"), std::env::home_dir())
    }

    /// A home at an explicit folder (tests, `--home`-style overrides). Nothing is created yet.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    fn resolve(fleet_home: Option<OsString>, user_home: Option<PathBuf>) -> Result<Self> {
        let root = match fleet_home.filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => user_home
                .filter(|h| !h.as_os_str().is_empty())
                .ok_or(StoreError::NoHome)?
                .join(".fleet"),
        };
        let root = std::path::absolute(&root)
            .map_err(|e| StoreError::io("resolve the fleet home folder", &root, e))?;
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder holding one sub-folder per working folder.
    pub fn projects_dir(&self) -> PathBuf {
        self.root.join("projects")
    }

    /// The folder for sessions started in `cwd`. A relative `cwd` is made absolute against the
    /// current folder first; symlinks are not resolved, so the same folder reached through two
    /// different paths gets two project folders (as in Claude Code).
    pub fn project_dir(&self, cwd: &Path) -> PathBuf {
        self.projects_dir().join(project_slug(cwd))
    }
}

/// The project folder name for a working folder: its absolute path with every character that
/// is not an ASCII letter or digit replaced by `-` (`/tmp/x_y/repo` → `-tmp-x-y-repo`), the
/// same rule Claude Code uses, so the names read the same to users of both.
///
/// The rule is lossy (`/a_b` and `/a-b` share a slug); that is accepted for readability. A slug
/// over 200 characters is cut to 200 and given `-<hash of the full path>`, so long paths that
/// share a prefix still get distinct folders.
pub fn project_slug(cwd: &Path) -> String {
    let absolute = std::path::absolute(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let text = absolute.to_string_lossy();
    let slug: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if slug.len() <= MAX_SLUG_CHARS {
        return slug;
    }
    // The slug is pure ASCII, so cutting at a byte index cannot split a character.
    format!(
        "{}-{:016x}",
        &slug[..MAX_SLUG_CHARS],
        fnv1a(absolute.as_os_str().as_encoded_bytes())
    )
}

/// FNV-1a, 64 bits. The slug must be the same on every run and every Rust version, which rules
/// out `std`'s `DefaultHasher`; this needs no dependency and is plenty for a folder-name suffix.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_home_variable_wins_over_user_home() {
        let home = FleetHome::resolve(Some("/srv/fleet".into()), Some("/home/u".into()));
        assert_eq!(home.ok().map(|h| h.root), Some(PathBuf::from("/srv/fleet")));
    }

    #[test]
    fn empty_fleet_home_falls_back_to_dot_fleet() {
        let home = FleetHome::resolve(Some("".into()), Some("/home/u".into()));
        assert_eq!(
            home.ok().map(|h| h.root),
            Some(PathBuf::from("/home/u/.fleet"))
        );
    }

    #[test]
    fn no_home_at_all_is_an_error() {
        let err = FleetHome::resolve(None, None).err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("FLEET_HOME")));
    }

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
