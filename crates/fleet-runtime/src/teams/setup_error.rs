//! Why a session could not take up its team: join one as a pane teammate, bring back the team
//! it led, or listen for other sessions. The session layer reports these before the first
//! turn; the text is the one these steps always gave, the underlying error kept as the source.

use super::{ListenError, RosterError};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TeamSetupError {
    #[error("teams are off in this session (FLEET_AGENT_TEAMS=0)")]
    TeamsOff,
    #[error(transparent)]
    Roster(#[from] RosterError),
    #[error(transparent)]
    Listen(#[from] ListenError),
    /// The lead's verify key on the command line does not parse.
    #[error("{0}")]
    LeadKey(#[source] super::signing::SigningError),
    #[error("team {team:?} has no member named {name:?}: a pane teammate is started by its lead")]
    NoSuchMember { team: String, name: String },
    #[error("the main agent's tools are not set up yet")]
    NotReady,
    #[error("no general-purpose agent to bring members back as")]
    NoGeneralPurpose,
}

/// Why the secrets a lead handed its pane teammate could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SecretEnvError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a JSON object of strings: {source}", path.display())]
    NotJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}
