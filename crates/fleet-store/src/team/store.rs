//! Team files on disk: creating a team under a unique name, reading it, changing it under a
//! lock, listing and deleting teams.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::config::{agent_id, epoch_ms, Member, TeamConfig};
use super::error::TeamError;
use super::names::{slugify, validate_team_name};
use crate::durable::{write_atomic, ExclusiveLock};
use crate::error::StoreError;
use crate::home::FleetHome;

pub type Result<T, E = TeamError> = std::result::Result<T, E>;

/// How many numbered variants of a wanted team name are tried before giving up.
const MAX_NAME_ATTEMPTS: u32 = 1000;

const CONFIG_FILE: &str = "config.json";
const LOCK_FILE: &str = "config.lock";

/// The teams under `$FLEET_HOME/teams/`.
#[derive(Debug, Clone)]
pub struct TeamStore {
    root: PathBuf,
}

impl TeamStore {
    pub fn new(home: &FleetHome) -> Self {
        Self {
            root: home.root().join("teams"),
        }
    }

    /// `$FLEET_HOME/teams`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `teams/<team>`.
    pub fn dir(&self, team: &str) -> PathBuf {
        self.root.join(team)
    }

    /// `teams/<team>/inboxes`, where each member's mailbox lives.
    pub fn inboxes_dir(&self, team: &str) -> PathBuf {
        self.dir(team).join("inboxes")
    }

    /// `teams/<team>/config.json`.
    pub fn config_path(&self, team: &str) -> PathBuf {
        self.dir(team).join(CONFIG_FILE)
    }

    /// Creates a team named after `wanted` (slugified; `-2`, `-3`, … appended when taken) with
    /// `lead` as its first member, and returns its config. Creating the folder is the claim, so
    /// two sessions asking for the same name at once get two teams. The lead's `agent_id` is
    /// set to `<lead name>@<team>`, since the team's final name is only known here.
    pub fn create(
        &self,
        wanted: &str,
        description: Option<&str>,
        mut lead: Member,
        lead_session_id: &str,
    ) -> Result<TeamConfig> {
        std::fs::create_dir_all(&self.root)
            .map_err(|e| StoreError::io("create folder", &self.root, e))?;
        let slug = slugify(wanted);
        let name = self.claim_name(&slug)?;
        let dir = self.dir(&name);
        lead.agent_id = agent_id(&lead.name, &name);
        let config = TeamConfig {
            name: name.clone(),
            description: description.map(str::to_string),
            created_at: epoch_ms(),
            lead_agent_id: lead.agent_id.clone(),
            lead_session_id: lead_session_id.to_string(),
            socket: None,
            members: vec![lead],
            extra: Default::default(),
        };
        let written = (|| {
            let inboxes = self.inboxes_dir(&name);
            private_dir()
                .recursive(true)
                .create(&inboxes)
                .map_err(|e| StoreError::io("create folder", &inboxes, e))?;
            let _lock = ExclusiveLock::acquire(&dir.join(LOCK_FILE))?;
            self.write(&config)
        })();
        if let Err(e) = written {
            // Give the name back rather than leave a team without a file.
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
        Ok(config)
    }

    /// Reads a team's config. No lock is needed: the file is only ever replaced whole.
    pub fn load(&self, team: &str) -> Result<TeamConfig> {
        validate_team_name(team)?;
        let path = self.config_path(team);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(TeamError::NotFound {
                    team: team.to_string(),
                    path,
                })
            }
            Err(e) => return Err(StoreError::io("read", &path, e).into()),
        };
        serde_json::from_slice(&text).map_err(|source| TeamError::Corrupt { path, source })
    }

    /// Changes a team's config under its lock: reads the current file, lets `f` change it, and
    /// writes it back atomically. Returns the config as written and what `f` returned. Every
    /// read-modify-write goes through here, so two spawns at once both land.
    pub fn update<T>(
        &self,
        team: &str,
        f: impl FnOnce(&mut TeamConfig) -> T,
    ) -> Result<(TeamConfig, T)> {
        validate_team_name(team)?;
        let dir = self.dir(team);
        if !dir.is_dir() {
            return Err(TeamError::NotFound {
                team: team.to_string(),
                path: dir,
            });
        }
        let _lock = ExclusiveLock::acquire(&dir.join(LOCK_FILE))?;
        let mut config = self.load(team)?;
        let out = f(&mut config);
        // The name is the folder's; `f` cannot move the team.
        config.name = team.to_string();
        self.write(&config)?;
        Ok((config, out))
    }

    /// Every team with a readable config, oldest first. Broken team files are skipped and
    /// reported as warnings; [`list_with_problems`](Self::list_with_problems) returns them.
    pub fn list(&self) -> Result<Vec<TeamConfig>> {
        let (teams, problems) = self.list_with_problems()?;
        for problem in problems {
            tracing::warn!("skipping a team: {problem}");
        }
        Ok(teams)
    }

    /// Every team with a readable config, oldest first, and the errors of those without one. A
    /// folder still being created (no config yet) and deleted teams' folders are left out.
    pub fn list_with_problems(&self) -> Result<(Vec<TeamConfig>, Vec<TeamError>)> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
            Err(e) => return Err(StoreError::io("list", &self.root, e).into()),
        };
        let mut teams = Vec::new();
        let mut problems = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io("list", &self.root, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if validate_team_name(&name).is_err() || !entry.path().is_dir() {
                continue;
            }
            match self.load(&name) {
                Ok(config) => teams.push(config),
                Err(TeamError::NotFound { .. }) => {}
                Err(e) => problems.push(e),
            }
        }
        teams.sort_by(|a, b| (a.created_at, &a.name).cmp(&(b.created_at, &b.name)));
        Ok((teams, problems))
    }

    /// Removes a team: its folder is renamed to `<team>.deleted-<uuid>` (so the name is free at
    /// once and nobody reads a half-removed team), then removed.
    pub fn delete(&self, team: &str) -> Result<()> {
        validate_team_name(team)?;
        let dir = self.dir(team);
        let doomed = self
            .root
            .join(format!("{team}.deleted-{}", uuid::Uuid::new_v4().simple()));
        match std::fs::rename(&dir, &doomed) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(TeamError::NotFound {
                    team: team.to_string(),
                    path: dir,
                })
            }
            Err(e) => return Err(StoreError::io("rename", &dir, e).into()),
        }
        std::fs::remove_dir_all(&doomed)
            .map_err(|e| StoreError::io("remove folder", &doomed, e).into())
    }

    /// Claims `teams/<slug>` or the first free `teams/<slug>-N` by creating it (`0700`).
    fn claim_name(&self, slug: &str) -> Result<String> {
        for n in 1..=MAX_NAME_ATTEMPTS {
            let name = if n == 1 {
                slug.to_string()
            } else {
                format!("{slug}-{n}")
            };
            let dir = self.dir(&name);
            // The team's folder is the user's only: its config names prompts and members, its
            // inboxes hold the mail.
            match private_dir().create(&dir) {
                Ok(()) => return Ok(name),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(StoreError::io("create folder", &dir, e).into()),
            }
        }
        Err(TeamError::NoFreeName {
            wanted: slug.to_string(),
            root: self.root.clone(),
        })
    }

    fn write(&self, config: &TeamConfig) -> Result<()> {
        let path = self.config_path(&config.name);
        let mut text = serde_json::to_vec_pretty(config).map_err(|source| StoreError::Encode {
            path: path.clone(),
            source,
        })?;
        text.push(b'\n');
        write_atomic(&path, &text)?;
        Ok(())
    }
}

/// A folder builder that makes owner-only (`0700`) folders.
fn private_dir() -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}
