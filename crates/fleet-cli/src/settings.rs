//! fleet's settings files: the provider and model to use when neither a flag nor the
//! environment names one.
//!
//! Read lowest first, later files winning: `$FLEET_HOME/settings.json` (default
//! `~/.fleet/settings.json`), then the project's `.fleet/settings.json` and
//! `.fleet/settings.local.json` — the nearest `.fleet/` folder from the working directory up to
//! the repository root. Keys this version does not know are ignored, so newer files still load.

use anyhow::{bail, Context};
use fleet_model::Provider;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub provider: Option<Provider>,
    pub model: Option<String>,
    /// The files that were read, lowest precedence first.
    pub sources: Vec<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// `$FLEET_HOME`, else `~/.fleet`.
pub fn fleet_home() -> Option<PathBuf> {
    match std::env::var_os("FLEET_HOME").filter(|v| !v.is_empty()) {
        Some(home) => Some(PathBuf::from(home)),
        None => std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(|h| PathBuf::from(h).join(".fleet")),
    }
}

/// The nearest `.fleet` folder from `cwd` up to the repository root (the first folder with a
/// `.git`), if there is one.
fn project_dir(cwd: &Path) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let candidate = dir.join(".fleet");
        if candidate.is_dir() {
            return Some(candidate);
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    None
}

pub fn load(cwd: &Path) -> anyhow::Result<Settings> {
    let mut files = Vec::new();
    if let Some(home) = fleet_home() {
        files.push(home.join("settings.json"));
    }
    if let Some(project) = project_dir(cwd) {
        files.push(project.join("settings.json"));
        files.push(project.join("settings.local.json"));
    }
    let mut settings = Settings::default();
    for path in files {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let file: File = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}:{}: not valid settings JSON: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if let Some(name) = file.provider {
            match name.parse() {
                Ok(provider) => settings.provider = Some(provider),
                Err(_) => bail!(
                    "{}: `provider` is {name:?}; use \"anthropic\" or \"openai\"",
                    path.display()
                ),
            }
        }
        if let Some(model) = file.model.filter(|m| !m.trim().is_empty()) {
            settings.model = Some(model);
        }
        settings.sources.push(path);
    }
    Ok(settings)
}
