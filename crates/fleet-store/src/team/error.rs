//! What can go wrong with a team file, each naming the team or the file.

use std::path::PathBuf;

use thiserror::Error;

use crate::error::StoreError;

#[derive(Debug, Error)]
pub enum TeamError {
    /// Reading, writing, locking or renaming failed; the path is in the message.
    #[error(transparent)]
    Store(#[from] StoreError),

    /// No such team (its folder or its `config.json` is missing).
    #[error("no team {team:?}: {} does not exist; `fleet team list` shows the teams there are", path.display())]
    NotFound { team: String, path: PathBuf },

    /// The team file is not JSON of a team's shape.
    #[error("team file {} is not a valid team config: {source}; fix the file or delete the team's folder", path.display())]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    /// A team name that could name a path outside the teams folder, or is otherwise unusable.
    #[error("invalid team name {team:?}: use 1 to 128 letters, digits, '-', '_' or '.', starting with a letter or digit")]
    InvalidTeamName { team: String },

    /// A member name the team cannot use; `reason` says what is allowed.
    #[error("invalid teammate name {name:?}: {reason}")]
    InvalidMemberName { name: String, reason: String },

    /// Every numbered variant of a wanted team name is taken.
    #[error("cannot find a free team name starting with {wanted:?} under {}: delete old teams or pick another name", root.display())]
    NoFreeName { wanted: String, root: PathBuf },
}
