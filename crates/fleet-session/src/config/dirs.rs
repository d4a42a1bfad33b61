//! Resolving the configuration folders from the process environment — once, here.
//!
//! Everything below the session (the settings stack, skill approvals, MCP sources) takes a
//! [`Locations`] instead of reading `$HOME`, `$FLEET_HOME` or `$CLAUDE_CONFIG_DIR` itself.

use fleet_runtime::locations::Locations;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The folders of a session started in `cwd`, from the process environment.
/// Without `$HOME` the home folder is the account's (from the password database), as it was
/// for MCP's `.claude.json` and trust store before the stack read them.
pub fn locations(cwd: &Path) -> Locations {
    locations_from(cwd, |name| {
        let value = std::env::var_os(name).filter(|v| !v.is_empty());
        match name {
            "HOME" => value.or_else(|| std::env::home_dir().map(OsString::from)),
            _ => value,
        }
    })
}

/// The folders of a session started in `cwd`, with variables read through `var` (tests give
/// their own). Empty variables count as unset.
pub fn locations_from(cwd: &Path, var: impl Fn(&str) -> Option<OsString>) -> Locations {
    let var = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = var("HOME");
    let fleet_home = var("FLEET_HOME").or_else(|| home.as_ref().map(|h| h.join(".fleet")));
    Locations {
        cwd: cwd.to_path_buf(),
        home,
        fleet_home,
        claude_config_dir: var("CLAUDE_CONFIG_DIR"),
        managed_dir: None,
    }
}

/// `$FLEET_HOME`, else `~/.fleet`.
pub fn fleet_home() -> Option<PathBuf> {
    locations(Path::new(".")).fleet_home
}

/// The repository root above `cwd` (the first folder with a `.git`), if any.
pub fn repo_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The project folder: the nearest folder from the working folder up to the repository root
/// holding a `.fleet/` or `.claude/` folder. The home folder itself never counts.
pub fn project_dir(at: &Locations) -> Option<PathBuf> {
    for dir in at.cwd.ancestors() {
        let is_home = at.home.as_deref() == Some(dir);
        if !is_home && (dir.join(".fleet").is_dir() || dir.join(".claude").is_dir()) {
            return Some(dir.to_path_buf());
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    None
}
