//! Team files: who is in a team, kept where every process of the team can read it.
//!
//! # Layout
//!
//! ```text
//! $FLEET_HOME/teams/
//! ├── release-crew/
//! │   ├── config.json      the team and its members (camelCase, as Claude Code's)
//! │   ├── config.lock      flock'd for every read-modify-write; never removed
//! │   └── inboxes/         one mailbox per member (see the mailbox module)
//! └── old-team.deleted-…   a team being removed
//! ```
//!
//! # Why this shape
//!
//! - **Readers never see half a file.** `config.json` is only ever replaced whole (temporary
//!   file, fsync, rename), so `fleet team show` in another terminal needs no lock.
//! - **Writers never lose each other's changes.** Every change is a read-modify-write under an
//!   exclusive `flock` on `config.lock` ([`TeamStore::update`]); the kernel releases it if the
//!   holder is killed, so there is no stale lock to clean up.
//! - **Names are claimed, not checked.** A new team's folder is created with `create_dir`, which
//!   fails if it exists, so two sessions asking for `release-crew` at once get `release-crew`
//!   and `release-crew-2`.
//!
//! # Example
//!
//! ```
//! use fleet_store::team::{Member, MemberStatus, TeamStore};
//! use fleet_store::FleetHome;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! let teams = TeamStore::new(&FleetHome::at(dir.path()));
//! let lead = Member::new("team-lead", "", "team-lead", "/src/app");
//! let team = teams.create("Release crew", Some("ship 2.0"), lead, "3f2c…")?;
//! assert_eq!(team.name, "release-crew");
//! assert_eq!(team.lead_agent_id, "team-lead@release-crew");
//!
//! teams.update(&team.name, |config| {
//!     config.members.push(Member::new("alpha", &config.name, "general-purpose", "/src/app"));
//! })?;
//! let (config, ()) = teams.update(&team.name, |config| {
//!     if let Some(alpha) = config.member_mut("alpha") {
//!         alpha.status = MemberStatus::Idle;
//!     }
//! })?;
//! assert_eq!(config.member("alpha").map(|m| m.status), Some(MemberStatus::Idle));
//! # Ok(())
//! # }
//! ```

mod config;
mod error;
mod names;
mod store;

pub use config::{agent_id, Member, MemberStatus, TeamConfig};
pub use error::TeamError;
pub use names::{slugify, validate_member_name, validate_team_name, RESERVED_MEMBER_NAMES};
pub use store::TeamStore;

#[cfg(test)]
mod tests;
