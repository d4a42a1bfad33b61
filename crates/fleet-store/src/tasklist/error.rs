//! Why a task-list operation was refused or failed. Each message names the task and says what
//! to do next, because the reader is usually a model deciding its next tool call.

use std::path::PathBuf;

use thiserror::Error;

use crate::error::StoreError;

#[derive(Debug, Error)]
pub enum TaskListError {
    /// Reading, writing or locking failed; the path is in the message.
    #[error(transparent)]
    Store(#[from] StoreError),

    /// The team name could not name a task-list folder.
    #[error("invalid team name {team:?} for a task list: use letters, digits, '-', '_' or '.', starting with a letter or digit")]
    InvalidTeamName { team: String },

    /// No task has this id (never created, or deleted).
    #[error("task #{id} not found: call TaskList to see the tasks there are")]
    NotFound { id: String },

    /// Another member owns the task; only its owner or the lead may take it over.
    #[error("task #{id} is owned by {owner}; pick an unowned task from TaskList, or ask {owner} or the team lead to hand it over")]
    Claimed { id: String, owner: String },

    /// The task waits on tasks that are not completed yet.
    #[error("{}", blocked_message(id, by))]
    Blocked {
        id: String,
        /// The unfinished blockers: id and subject.
        by: Vec<(String, String)>,
    },

    /// A task cannot wait on itself.
    #[error("task #{id} cannot block or wait on itself; name another task")]
    SelfDependency { id: String },

    /// The new link would close a loop of tasks waiting on each other.
    #[error("task #{id} cannot wait on #{on}: #{on} already waits on #{id}, and the loop would block both forever; remove one of the links")]
    Cycle { id: String, on: String },

    /// A task file is not JSON of a task's shape.
    #[error("task file {} is not a valid task: {source}; fix or delete the file", path.display())]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

fn blocked_message(id: &str, by: &[(String, String)]) -> String {
    let list: Vec<String> = by
        .iter()
        .map(|(id, subject)| format!("#{id} {subject:?}"))
        .collect();
    format!(
        "task #{id} is blocked by unfinished task{} {}; complete {} first, or pick an \
         unblocked task from TaskList",
        if by.len() == 1 { "" } else { "s" },
        list.join(", "),
        if by.len() == 1 { "it" } else { "them" },
    )
}
