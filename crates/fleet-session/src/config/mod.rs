//! The session's configuration: one layer stack, every value knowing where it came from.
//!
//! Settings used to be read in several places, each with its own list of files and its own
//! reading of `$HOME`, `$FLEET_HOME` and `$CLAUDE_CONFIG_DIR`. Here they are read once:
//!
//! - [`locations`] resolves the folders from the environment once into a
//!   [`Locations`] (a plain struct of the runtime, so the runtime's loaders — skill
//!   approvals, MCP sources, agent files — take it too and never read the environment);
//! - [`load_with`] reads the layer stack ([`load`] documents its order) through the trust
//!   gate ([`trust`]) into [`Settings`], whose single values each remember their
//!   [`Source`] ([`Settings::origins`]) and whose lists keep their file and [`Layer`].
//!
//! Precedence is the stack's order and has not changed from what fleet always did; the tests
//! in `tests.rs` pin it.

mod dirs;
mod error;
pub mod flags;
pub mod layer;
pub mod load;
pub mod settings;
pub mod trust;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

pub use dirs::{fleet_home, locations, locations_from, project_dir, repo_root};
pub use error::ConfigError;
pub use flags::{FlagLayer, SettingSource, SettingsFlags};
pub use fleet_runtime::locations::Locations;
pub use layer::{Layer, Source, Sourced};
pub use load::{load, load_with};
pub use settings::{Origins, PermissionSource, SandboxSource, Settings, StackEntry};
pub use trust::{Item, TrustReport};
