//! `--settings` and `--setting-sources`: the command line's say in which settings load.
//!
//! `--settings` is one more layer above every settings file, as Claude Code's flag settings
//! are: a path to a JSON file (relative to the working folder) or the JSON itself, which is
//! how the Agent SDKs pass their `settings` and `sandbox` options.
//!
//! `--setting-sources user,project,local` names the settings files that load ("" for none):
//!
//! | source | settings files | also gates |
//! |---|---|---|
//! | `user` | `$FLEET_HOME/settings.json`, `~/.claude/settings.json` | `~/.claude/CLAUDE.md` |
//! | `project` | `.claude/settings.json`, `.fleet/settings.json` | the project's `CLAUDE.md`, `AGENTS.md`, `CLAUDE.local.md` |
//! | `local` | `.claude/settings.local.json`, `.fleet/settings.local.json` | — |
//!
//! As in Claude Code, leaving out `project` leaves out the project's instruction files. Unlike
//! it, agent files, skills and `.mcp.json` still load whatever the list says
//! (`--strict-mcp-config` leaves `.mcp.json` out). Without the flag every source loads.

use super::ConfigError;
use std::path::{Path, PathBuf};

/// Where a settings file comes from, as `--setting-sources` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingSource {
    User,
    Project,
    Local,
}

impl std::str::FromStr for SettingSource {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "user" => Ok(Self::User),
            "project" => Ok(Self::Project),
            "local" => Ok(Self::Local),
            other => Err(ConfigError::UnknownSource(other.to_string())),
        }
    }
}

/// What the command line says about settings.
#[derive(Debug, Clone, Default)]
pub struct SettingsFlags {
    /// `--setting-sources`; `None` loads every source.
    pub sources: Option<Vec<SettingSource>>,
    /// `--settings`: a file path or inline JSON.
    pub layer: Option<String>,
    /// Whether the repository is trusted for this run: `Some(true)` with `--trust-project`
    /// (or the person's answer), `Some(false)` when the person said not now, `None` to go by
    /// the user's store.
    pub trust: Option<bool>,
}

/// The `--settings` layer's text, and the name it goes by in errors and rule sources.
pub struct FlagLayer {
    pub text: String,
    pub label: PathBuf,
    /// The file it was read from; `None` for inline JSON.
    pub path: Option<PathBuf>,
}

impl SettingsFlags {
    /// Reads `--setting-sources` (comma separated, blanks ignored) and keeps `--settings`.
    pub fn parse(sources: Option<&str>, layer: Option<&str>) -> Result<Self, ConfigError> {
        let sources = match sources {
            None => None,
            Some(list) => Some(
                list.split(',')
                    .filter(|s| !s.trim().is_empty())
                    .map(str::parse)
                    .collect::<Result<Vec<SettingSource>, ConfigError>>()?,
            ),
        };
        Ok(Self {
            sources,
            layer: layer.map(str::to_string),
            trust: None,
        })
    }

    /// Whether files of `source` load.
    pub fn loads(&self, source: SettingSource) -> bool {
        self.sources.as_ref().is_none_or(|s| s.contains(&source))
    }

    /// The `--settings` layer: inline JSON when the value is an object, else the file it
    /// names (relative to `cwd`). A missing file is an error naming the flag.
    pub fn layer(&self, cwd: &Path) -> Result<Option<FlagLayer>, ConfigError> {
        let Some(value) = &self.layer else {
            return Ok(None);
        };
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(ConfigError::EmptySettingsFlag);
        }
        if trimmed.starts_with('{') {
            return Ok(Some(FlagLayer {
                text: trimmed.to_string(),
                label: PathBuf::from("--settings"),
                path: None,
            }));
        }
        let path = cwd.join(trimmed);
        let text =
            std::fs::read_to_string(&path).map_err(|source| ConfigError::SettingsFlagFile {
                value: trimmed.to_string(),
                path: path.clone(),
                source,
            })?;
        // Editors on Windows may start a UTF-8 file with a byte-order mark.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text).to_string();
        Ok(Some(FlagLayer {
            text,
            label: PathBuf::from(format!("--settings {}", path.display())),
            path: Some(path),
        }))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse_with_blanks_and_refuse_unknown_names() {
        let flags = SettingsFlags::parse(Some("user, local"), None).unwrap();
        assert!(flags.loads(SettingSource::User));
        assert!(flags.loads(SettingSource::Local));
        assert!(!flags.loads(SettingSource::Project));
        let none = SettingsFlags::parse(Some(""), None).unwrap();
        assert!(!none.loads(SettingSource::User));
        assert!(SettingsFlags::default().loads(SettingSource::Project));
        let err = SettingsFlags::parse(Some("user,managed"), None).unwrap_err();
        assert!(err.to_string().contains("\"managed\""), "{err}");
    }

    #[test]
    fn the_layer_is_inline_json_or_a_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.json"), "\u{feff}{\"model\": \"x\"}").unwrap();
        let inline = SettingsFlags::parse(None, Some(" {\"model\": \"y\"} ")).unwrap();
        assert_eq!(
            inline.layer(dir.path()).unwrap().unwrap().text,
            "{\"model\": \"y\"}"
        );
        let file = SettingsFlags::parse(None, Some("s.json")).unwrap();
        assert_eq!(
            file.layer(dir.path()).unwrap().unwrap().text,
            "{\"model\": \"x\"}"
        );
        let missing = SettingsFlags::parse(None, Some("nope.json")).unwrap();
        let err = missing.layer(dir.path()).err().unwrap();
        assert!(err.to_string().starts_with("--settings nope.json"), "{err}");
        assert!(matches!(err, ConfigError::SettingsFlagFile { .. }));
    }
}
