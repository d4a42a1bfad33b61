//! Writing a permission update into a settings file (`.claude/settings.local.json` and its
//! siblings), so that later sessions start with it. The file is read, changed under
//! `permissions`, and replaced whole through a temporary file beside it; anything else in it
//! is kept as it was, in its order.

use super::updates::Destination;
use super::ControlError;
use fleet_tools::permissions::{PermissionMode, RuleKind};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Why a settings file could not be changed (said with its path by
/// [`ControlError::Settings`]).
#[derive(Debug, thiserror::Error)]
pub enum SettingsFileError {
    #[error("it does not hold a JSON object")]
    NotAnObject,
    #[error("it is not valid JSON ({0})")]
    InvalidJson(#[source] serde_json::Error),
    #[error("its `permissions` is not an object")]
    PermissionsNotAnObject,
    #[error("its `permissions.{0}` is not a list")]
    NotAList(String),
    #[error("the path has no folder")]
    NoFolder,
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Encode(serde_json::Error),
}

/// One change to a settings file's `permissions`.
pub(super) enum SettingsEdit {
    AddRules(RuleKind, Vec<String>),
    ReplaceRules(RuleKind, Vec<String>),
    RemoveRules(RuleKind, Vec<String>),
    SetMode(PermissionMode),
    AddDirs(Vec<String>),
    RemoveDirs(Vec<String>),
}

/// The file a destination is written to, as Claude Code names them; `None` for the
/// destinations held in memory only.
pub(super) fn path_for(
    destination: Destination,
    project: &Path,
    home: Option<&Path>,
) -> Result<Option<PathBuf>, ControlError> {
    Ok(match destination {
        Destination::Session | Destination::CliArg => None,
        Destination::LocalSettings => Some(project.join(".claude").join("settings.local.json")),
        Destination::ProjectSettings => Some(project.join(".claude").join("settings.json")),
        Destination::UserSettings => match home {
            Some(home) => Some(home.join(".claude").join("settings.json")),
            None => {
                return Err(ControlError::InvalidUpdate(
                    "userSettings needs a home folder, and HOME is not set".into(),
                ))
            }
        },
    })
}

/// Applies `edit` to the settings file at `path` (made when missing).
pub(super) fn apply(path: &Path, edit: &SettingsEdit) -> Result<(), ControlError> {
    edit_file(path, edit).map_err(|source| ControlError::Settings {
        path: path.to_path_buf(),
        source,
    })
}

fn edit_file(path: &Path, edit: &SettingsEdit) -> Result<(), SettingsFileError> {
    let mut settings = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(SettingsFileError::NotAnObject),
            Err(err) => return Err(SettingsFileError::InvalidJson(err)),
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(err) => return Err(err.into()),
    };
    let permissions = settings
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err(SettingsFileError::PermissionsNotAnObject);
    };
    change(permissions, edit)?;
    write(path, &Value::Object(settings))
}

fn change(
    permissions: &mut Map<String, Value>,
    edit: &SettingsEdit,
) -> Result<(), SettingsFileError> {
    match edit {
        SettingsEdit::SetMode(mode) => {
            permissions.insert("defaultMode".into(), Value::String(mode.as_str().into()));
            Ok(())
        }
        SettingsEdit::AddRules(kind, rules) => {
            let list = list(permissions, kind.as_str())?;
            for rule in rules {
                if !list.iter().any(|v| v.as_str() == Some(rule)) {
                    list.push(Value::String(rule.clone()));
                }
            }
            Ok(())
        }
        SettingsEdit::ReplaceRules(kind, rules) => {
            let list = list(permissions, kind.as_str())?;
            *list = rules.iter().cloned().map(Value::String).collect();
            Ok(())
        }
        SettingsEdit::RemoveRules(kind, rules) => {
            let list = list(permissions, kind.as_str())?;
            list.retain(|v| !v.as_str().is_some_and(|s| rules.iter().any(|r| r == s)));
            Ok(())
        }
        SettingsEdit::AddDirs(dirs) => {
            let list = list(permissions, "additionalDirectories")?;
            for dir in dirs {
                if !list.iter().any(|v| v.as_str() == Some(dir)) {
                    list.push(Value::String(dir.clone()));
                }
            }
            Ok(())
        }
        SettingsEdit::RemoveDirs(dirs) => {
            let list = list(permissions, "additionalDirectories")?;
            list.retain(|v| !v.as_str().is_some_and(|s| dirs.iter().any(|d| d == s)));
            Ok(())
        }
    }
}

/// The array `permissions.<key>`, made when missing.
fn list<'a>(
    permissions: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Vec<Value>, SettingsFileError> {
    match permissions
        .entry(key)
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(list) => Ok(list),
        _ => Err(SettingsFileError::NotAList(key.to_string())),
    }
}

/// Replaces the file whole: a reader never sees half of it.
fn write(path: &Path, value: &Value) -> Result<(), SettingsFileError> {
    let dir = path.parent().ok_or(SettingsFileError::NoFolder)?;
    std::fs::create_dir_all(dir)?;
    let mut text = serde_json::to_string_pretty(value).map_err(SettingsFileError::Encode)?;
    text.push('\n');
    let temp = tempfile_in(dir);
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        e.into()
    })
}

fn tempfile_in(dir: &Path) -> PathBuf {
    dir.join(format!(".settings-{}.tmp", uuid::Uuid::new_v4()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_added_once_beside_what_the_file_holds() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(".claude/settings.local.json");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(
            &path,
            r#"{"model": "opus", "permissions": {"deny": ["Bash(rm *)"]}}"#,
        )
        .expect("write");
        let edit = SettingsEdit::AddRules(RuleKind::Allow, vec!["Bash(npm test)".into()]);
        apply(&path, &edit).expect("applied");
        apply(&path, &edit).expect("applied again");
        let value: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert_eq!(value["model"], "opus");
        assert_eq!(value["permissions"]["deny"][0], "Bash(rm *)");
        assert_eq!(
            value["permissions"]["allow"],
            serde_json::json!(["Bash(npm test)"])
        );
    }

    #[test]
    fn a_file_that_is_not_an_object_is_left_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "[1, 2]").expect("write");
        let err = apply(&path, &SettingsEdit::SetMode(PermissionMode::Plan)).expect_err("refused");
        assert!(err.to_string().contains("JSON object"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "[1, 2]");
    }
}
