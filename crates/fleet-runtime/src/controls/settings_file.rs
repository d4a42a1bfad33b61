//! Writing a permission update into a settings file (`.claude/settings.local.json` and its
//! siblings), so that later sessions start with it. The file is read, changed under
//! `permissions`, and replaced whole through a temporary file beside it; anything else in it
//! is kept as it was, in its order.

use super::updates::Destination;
use super::ControlError;
use fleet_tools::permissions::{PermissionMode, RuleKind};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

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
    let fail = |message: String| ControlError::Settings {
        path: path.to_path_buf(),
        message,
    };
    let mut settings = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(fail("it does not hold a JSON object".into())),
            Err(err) => return Err(fail(format!("it is not valid JSON ({err})"))),
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(err) => return Err(fail(err.to_string())),
    };
    let permissions = settings
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err(fail("its `permissions` is not an object".into()));
    };
    change(permissions, edit).map_err(fail)?;
    write(path, &Value::Object(settings)).map_err(fail)
}

fn change(permissions: &mut Map<String, Value>, edit: &SettingsEdit) -> Result<(), String> {
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
) -> Result<&'a mut Vec<Value>, String> {
    match permissions
        .entry(key)
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(list) => Ok(list),
        _ => Err(format!("its `permissions.{key}` is not a list")),
    }
}

/// Replaces the file whole: a reader never sees half of it.
fn write(path: &Path, value: &Value) -> Result<(), String> {
    let dir = path
        .parent()
        .ok_or_else(|| "the path has no folder".to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    text.push('\n');
    let temp = tempfile_in(dir)?;
    std::fs::write(&temp, text).map_err(|e| e.to_string())?;
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        e.to_string()
    })
}

fn tempfile_in(dir: &Path) -> Result<PathBuf, String> {
    let name = format!(".settings-{}.tmp", uuid::Uuid::new_v4());
    Ok(dir.join(name))
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
