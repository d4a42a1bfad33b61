//! Finding sessions on disk: for `--continue` (the latest here), `--resume <id>` (one by id,
//! here first, then anywhere) and listing a folder's sessions.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::{Result, StoreError};
use crate::home::FleetHome;
use crate::transcript::{EntryKind, Lines, TranscriptEntry, TranscriptWriter};

/// Shortest id prefix accepted by [`SessionStore::find_session`]: short enough to type, long
/// enough (32 bits of a UUID) that a clash is rare and is reported, not guessed.
pub const MIN_ID_PREFIX: usize = 8;

/// Longest preview of a session's first prompt, in characters.
const PREVIEW_CHARS: usize = 100;

/// A fresh session id (a random UUID, as Claude Code uses).
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Accepts 1 to 128 ASCII letters, digits, `-` and `_` (which covers UUIDs). Ids become file
/// names, so anything that could name another folder (`/`, `..`) is refused before any path is
/// built from it.
pub fn validate_session_id(id: &str) -> Result<()> {
    let valid = (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(StoreError::InvalidSessionId { id: id.to_owned() })
    }
}

/// `projects/<slug of cwd>/<id>.jsonl`, once `id` is known to be safe in a file name.
pub(crate) fn transcript_path(home: &FleetHome, cwd: &Path, id: &str) -> Result<PathBuf> {
    validate_session_id(id)?;
    Ok(home.project_dir(cwd).join(format!("{id}.jsonl")))
}

/// A session transcript on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRef {
    pub id: String,
    pub path: PathBuf,
    /// When the transcript last changed, which is when the session was last active.
    pub modified: SystemTime,
}

/// A session as listed for a user to pick from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    pub session: SessionRef,
    /// The first thing the user typed, on one line and cut to 100 characters; `None` if the
    /// session has no typed prompt yet.
    pub first_prompt: Option<String>,
}

/// The sessions under one [`FleetHome`].
#[derive(Debug, Clone)]
pub struct SessionStore {
    home: FleetHome,
}

impl SessionStore {
    pub fn new(home: FleetHome) -> Self {
        Self { home }
    }

    pub fn home(&self) -> &FleetHome {
        &self.home
    }

    /// Where session `id` started in `cwd` is (or will be) written.
    pub fn session_path(&self, cwd: &Path, id: &str) -> Result<PathBuf> {
        transcript_path(&self.home, cwd, id)
    }

    /// Starts a new session in `cwd` under a fresh id.
    pub fn create_session(&self, cwd: &Path) -> Result<TranscriptWriter> {
        TranscriptWriter::create(&self.home, cwd, &new_session_id())
    }

    /// The most recently active session of `cwd`, for `--continue`. `None` if there is none.
    pub fn latest_session(&self, cwd: &Path) -> Result<Option<SessionRef>> {
        Ok(sessions_in(&self.home.project_dir(cwd))?.into_iter().next())
    }

    /// The session `id`, looked for in `cwd`'s project first, then in every project (a session
    /// may be resumed from another folder). An unambiguous prefix of at least
    /// [`MIN_ID_PREFIX`] characters is accepted too; an exact match always wins over prefixes.
    pub fn find_session(&self, cwd: &Path, id: &str) -> Result<SessionRef> {
        validate_session_id(id)?;
        let here = self.home.project_dir(cwd);
        let mut folders = vec![here.clone()];
        folders.extend(self.project_dirs()?.into_iter().filter(|d| *d != here));

        for folder in &folders {
            let path = folder.join(format!("{id}.jsonl"));
            if let Some(found) = session_at(&path)? {
                return Ok(found);
            }
        }
        if id.len() >= MIN_ID_PREFIX {
            // Here first: a prefix unique in this folder is what the user most likely means.
            for scope in [&folders[..1], &folders[..]] {
                let mut matches = Vec::new();
                for folder in scope {
                    matches.extend(
                        sessions_in(folder)?
                            .into_iter()
                            .filter(|s| s.id.starts_with(id)),
                    );
                }
                match matches.len() {
                    0 => {}
                    1 => return Ok(matches.remove(0)),
                    _ => {
                        return Err(StoreError::AmbiguousSession {
                            prefix: id.to_owned(),
                            matches: matches.into_iter().map(|s| s.id).collect(),
                        })
                    }
                }
            }
        }
        Err(StoreError::SessionNotFound {
            id: id.to_owned(),
            projects: self.home.projects_dir(),
        })
    }

    /// The sessions of `cwd`, most recently active first, each with its first prompt.
    pub fn list_sessions(&self, cwd: &Path) -> Result<Vec<SessionSummary>> {
        sessions_in(&self.home.project_dir(cwd))?
            .into_iter()
            .map(|session| {
                Ok(SessionSummary {
                    first_prompt: first_prompt(&session.path)?,
                    session,
                })
            })
            .collect()
    }

    /// Every project folder, in name order. None yet is not an error.
    fn project_dirs(&self) -> Result<Vec<PathBuf>> {
        let projects = self.home.projects_dir();
        let mut dirs = Vec::new();
        for entry in read_dir(&projects)? {
            let entry = entry.map_err(|e| StoreError::io("list", &projects, e))?;
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(entry.path());
            }
        }
        dirs.sort();
        Ok(dirs)
    }
}

/// Lists a folder, treating a missing folder as empty.
fn read_dir(dir: &Path) -> Result<impl Iterator<Item = std::io::Result<std::fs::DirEntry>>> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(Some(entries).into_iter().flatten()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None.into_iter().flatten()),
        Err(e) => Err(StoreError::io("list", dir, e)),
    }
}

/// The session transcripts directly in `dir`, newest first (ties by id, so the order is stable).
fn sessions_in(dir: &Path) -> Result<Vec<SessionRef>> {
    let mut sessions = Vec::new();
    for entry in read_dir(dir)? {
        let entry = entry.map_err(|e| StoreError::io("list", dir, e))?;
        if let Some(session) = session_at(&entry.path())? {
            sessions.push(session);
        }
    }
    sessions.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.id.cmp(&b.id)));
    Ok(sessions)
}

/// The session whose transcript is `path`, if `path` is one: an existing `<valid id>.jsonl`
/// file. A file that vanishes while being looked at is simply not a session.
fn session_at(path: &Path) -> Result<Option<SessionRef>> {
    if path.extension().is_none_or(|e| e != "jsonl") {
        return Ok(None);
    }
    let Some(id) = path.file_stem().and_then(|s| s.to_str()) else {
        return Ok(None);
    };
    if validate_session_id(id).is_err() {
        return Ok(None);
    }
    let meta = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => meta,
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io("inspect", path, e)),
    };
    let modified = meta
        .modified()
        .map_err(|e| StoreError::io("read the modification time of", path, e))?;
    Ok(Some(SessionRef {
        id: id.to_owned(),
        path: path.to_path_buf(),
        modified,
    }))
}

/// The first prompt the user typed: the first non-meta user entry with text. Reading stops
/// there, so listing long sessions stays cheap.
fn first_prompt(path: &Path) -> Result<Option<String>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io("open", path, e)),
    };
    let mut lines = Lines::new(BufReader::new(file), path);
    while let Some((_, line)) = lines.next_line()? {
        let Ok(entry) = serde_json::from_slice::<TranscriptEntry>(line) else {
            continue;
        };
        if entry.kind != EntryKind::User || entry.is_meta() {
            continue;
        }
        let text = entry.message.map(|m| m.text()).unwrap_or_default();
        let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !one_line.is_empty() {
            return Ok(Some(preview(&one_line)));
        }
    }
    Ok(None)
}

fn preview(text: &str) -> String {
    match text.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
