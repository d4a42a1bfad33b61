//! The shared task list of a team: what needs doing, who does it, what waits on what.
//!
//! # Layout
//!
//! ```text
//! $FLEET_HOME/tasks/<team>/
//! ├── .lock            flock'd for every change; never removed
//! ├── .highwatermark   the highest id ever handed out ("7")
//! ├── 1.json           one task per file (Claude Code's schema, camelCase)
//! └── 3.json
//! ```
//!
//! # Why this shape
//!
//! - **Claims are checked under one lock.** Every change takes an exclusive `flock` on `.lock`,
//!   reads the list, checks, and writes. One lock for the whole list (rather than one per task)
//!   is simple and correct across processes, and lists are small. So when eight members start
//!   the same task at once exactly one wins, and the others are told who has it; a task whose
//!   blockers are unfinished cannot be started. The rules are on [`TaskList::update`].
//! - **Files are replaced whole** (temporary file, fsync, rename), so readers ([`TaskList::get`],
//!   [`TaskList::list`]) take no lock and never see half a task.
//! - **Ids are never reused.** `.highwatermark` records the highest id handed out, written
//!   before a new task's file, so a deleted task's id does not come back and a message about
//!   "task #3" always means one task.
//!
//! A change that links two tasks rewrites both files; a crash between the two writes can leave
//! a link on one side only. Reading treats a link to a missing task as no link.
//!
//! # Example
//!
//! ```
//! use fleet_store::tasklist::{Actor, NewTask, PatchStatus, TaskList, TaskListError, TaskPatch};
//! use fleet_store::FleetHome;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! let list = TaskList::open(&FleetHome::at(dir.path()), "release-crew")?;
//! let task = list.create(NewTask { subject: "Write notes".into(), ..Default::default() })?;
//!
//! let start = TaskPatch { status: Some(PatchStatus::InProgress), ..Default::default() };
//! let updated = list.update(&task.id, start.clone(), &Actor::member("alpha"))?;
//! assert_eq!(updated.changed, ["owner", "status"]);
//! assert_eq!(updated.new_owner.as_deref(), Some("alpha"));
//!
//! let err = list.update(&task.id, start, &Actor::member("beta")).unwrap_err();
//! assert!(matches!(err, TaskListError::Claimed { ref owner, .. } if owner == "alpha"));
//! # Ok(())
//! # }
//! ```

mod error;
mod files;
mod task;
mod update;

use std::path::Path;

pub use error::TaskListError;
pub use task::{Actor, NewTask, PatchStatus, Task, TaskPatch, TaskState, Updated};

use crate::home::FleetHome;
use files::{parse_id, Files};

pub type Result<T, E = TaskListError> = std::result::Result<T, E>;

/// One team's task list (`$FLEET_HOME/tasks/<team>/`). Cheap to clone; every call goes to disk.
#[derive(Debug, Clone)]
pub struct TaskList {
    files: Files,
}

impl TaskList {
    /// Opens (creating if new) the list of `team`.
    pub fn open(home: &FleetHome, team: &str) -> Result<Self> {
        if crate::team::validate_team_name(team).is_err() {
            return Err(TaskListError::InvalidTeamName {
                team: team.to_string(),
            });
        }
        let files = Files::open(home.root().join("tasks").join(team))?;
        Ok(Self { files })
    }

    /// The list's folder.
    pub fn dir(&self) -> &Path {
        self.files.dir()
    }

    /// Adds a pending, unowned task under the next id never used in this list.
    pub fn create(&self, new: NewTask) -> Result<Task> {
        let _lock = self.files.lock()?;
        let highest_on_disk = self
            .files
            .read_all()?
            .last_key_value()
            .map_or(0, |(id, _)| *id);
        let id = self.files.high_water_mark()?.max(highest_on_disk) + 1;
        let metadata = new
            .metadata
            .map(|m| m.into_iter().filter(|(_, v)| !v.is_null()).collect())
            .filter(|m: &serde_json::Map<_, _>| !m.is_empty());
        let task = Task {
            id: id.to_string(),
            subject: new.subject,
            description: new.description,
            active_form: new.active_form,
            owner: None,
            status: TaskState::Pending,
            blocks: Vec::new(),
            blocked_by: Vec::new(),
            metadata,
        };
        // The mark first: if the task file then fails, the id is burnt, never handed out twice.
        self.files.set_high_water_mark(id)?;
        self.files.write(&task)?;
        Ok(task)
    }

    /// The task with this id (`"3"` or `"#3"`), or `None` when there is none.
    pub fn get(&self, id: &str) -> Result<Option<Task>> {
        match parse_id(id) {
            Some(id) => self.files.read(id),
            None => Ok(None),
        }
    }

    /// Every task, by numeric id.
    pub fn list(&self) -> Result<Vec<Task>> {
        Ok(self.files.read_all()?.into_values().collect())
    }

    /// Changes task `id` as `actor`, under the list's lock. `status: deleted` removes the task
    /// and unlinks it from the others. Nothing is written when a check fails:
    ///
    /// - a member (not the lead) changing the owner of, or starting, a task another member
    ///   owns → [`TaskListError::Claimed`]; the lead may reassign anything;
    /// - starting a task (anyone), or a member taking an owner for it, while a task in its
    ///   `blockedBy` is not completed → [`TaskListError::Blocked`]; the lead may still assign
    ///   it ahead of time;
    /// - a member starting an unowned task becomes its owner (reported in `new_owner`);
    /// - unknown ids (the task or a link) → [`TaskListError::NotFound`]; a link to itself or
    ///   one closing a loop → [`TaskListError::SelfDependency`] / [`TaskListError::Cycle`].
    pub fn update(&self, id: &str, patch: TaskPatch, actor: &Actor) -> Result<Updated> {
        let key = parse_id(id).ok_or_else(|| TaskListError::NotFound {
            id: id.trim().to_string(),
        })?;
        let _lock = self.files.lock()?;
        let mut all = self.files.read_all()?;
        let outcome = update::apply(&mut all, key, patch, actor)?;
        for dirty in &outcome.dirty {
            if let Some(task) = all.get(dirty) {
                self.files.write(task)?;
            }
        }
        if let Some(removed) = outcome.removed {
            self.files.remove(removed)?;
        }
        Ok(outcome.updated)
    }

    /// Hands back every unfinished task `owner` holds (a member that shut down): owner
    /// removed, status back to pending. Returns the tasks as written, for the
    /// `teammate_terminated` notice.
    pub fn release_owned_by(&self, owner: &str) -> Result<Vec<Task>> {
        let _lock = self.files.lock()?;
        let mut released = Vec::new();
        for (_, mut task) in self.files.read_all()? {
            if task.owner.as_deref() == Some(owner) && task.status != TaskState::Completed {
                task.owner = None;
                task.status = TaskState::Pending;
                self.files.write(&task)?;
                released.push(task);
            }
        }
        Ok(released)
    }
}

#[cfg(test)]
mod tests;
