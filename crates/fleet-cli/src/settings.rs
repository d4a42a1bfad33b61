//! fleet's settings, as the binary uses them: the layer stack of `fleet_session::config`
//! (see there for the files, their order and the trust gate), read with the folders of this
//! process's environment.

use std::path::Path;

pub use fleet_session::config::{fleet_home, repo_root, SettingSource, Settings, SettingsFlags};

/// Every settings file of `cwd`.
pub fn load(cwd: &Path) -> anyhow::Result<Settings> {
    load_with(cwd, &SettingsFlags::default())
}

/// The settings files `flags` lets in, then the `--settings` layer above them — each file the
/// repository wrote passed through the trust gate.
pub fn load_with(cwd: &Path, flags: &SettingsFlags) -> anyhow::Result<Settings> {
    let at = fleet_session::config::locations(cwd);
    Ok(fleet_session::config::load_with(&at, flags)?)
}
