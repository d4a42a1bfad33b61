//! Permission updates as the SDKs send them (`updatedPermissions` in a `can_use_tool` answer,
//! `permission_suggestions` back): add, replace or remove rules, set the mode, add or remove
//! folders, each kept for the session or also written to a settings file.
//!
//! The shape (`fleet_protocol::control::PermissionUpdate`) is the Python SDK's
//! `PermissionUpdate.to_dict` and the TypeScript SDK's `PermissionUpdate` type. As in Claude
//! Code, a list is applied whole or not at all: every update is checked (rules parsed, mode
//! known and allowed) before the first one changes anything.

use super::settings_file::{self, SettingsEdit};
use super::{ControlError, SessionControls};
use fleet_tools::permissions::{PermissionMode, Rule, RuleKind};
use serde::Deserialize;
use std::path::PathBuf;

pub use fleet_protocol::control::{Destination, PermissionUpdate, RuleBehavior, RuleValue};

/// The kind of rule a behaviour grants.
fn rule_kind(behavior: RuleBehavior) -> RuleKind {
    match behavior {
        RuleBehavior::Allow => RuleKind::Allow,
        RuleBehavior::Deny => RuleKind::Deny,
        RuleBehavior::Ask => RuleKind::Ask,
    }
}

/// How rules granted at `destination` are named in permission messages.
fn source_of(destination: Destination) -> &'static str {
    match destination {
        Destination::Session => "session (granted while running)",
        Destination::CliArg => "cliArg (granted while running)",
        Destination::UserSettings => "userSettings (granted while running)",
        Destination::ProjectSettings => "projectSettings (granted while running)",
        Destination::LocalSettings => "localSettings (granted while running)",
    }
}

/// An update checked and ready to apply.
struct Checked {
    destination: Destination,
    change: Change,
}

enum Change {
    AddRules(RuleKind, Vec<String>),
    ReplaceRules(RuleKind, Vec<String>),
    RemoveRules(RuleKind, Vec<String>),
    SetMode(PermissionMode),
    AddDirs(Vec<PathBuf>),
    RemoveDirs(Vec<PathBuf>),
}

impl SessionControls {
    /// Applies updates as JSON values (the `updatedPermissions` of a `can_use_tool` answer).
    /// One that does not parse, or fails its check, applies none.
    pub fn apply_permission_update_values(
        &self,
        updates: &[serde_json::Value],
    ) -> Result<(), ControlError> {
        let typed = updates
            .iter()
            .map(|value| {
                PermissionUpdate::deserialize(value)
                    .map_err(|err| ControlError::InvalidUpdate(format!("{err} in {value}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.apply_permission_updates(&typed)
    }

    /// Applies `updates` to the main agent's permissions, from its next check on, writing
    /// the settings-file ones to their file as well. All are checked first; a failure leaves
    /// the permissions as they were (a settings file already written stays written).
    pub fn apply_permission_updates(
        &self,
        updates: &[PermissionUpdate],
    ) -> Result<(), ControlError> {
        let checked = updates
            .iter()
            .map(|update| self.check(update))
            .collect::<Result<Vec<_>, _>>()?;
        for update in &checked {
            self.write_settings(update)?;
        }
        let permissions = &self.bound()?.permissions;
        for Checked {
            destination,
            change,
        } in checked
        {
            let base = &permissions.workspace.root;
            let source = source_of(destination);
            match change {
                Change::AddRules(kind, rules) => {
                    permissions.grant_rules(kind, &rules, base, source)?
                }
                Change::ReplaceRules(kind, rules) => {
                    permissions.replace_granted_rules(kind, &rules, base, source)?
                }
                Change::RemoveRules(kind, rules) => {
                    permissions.revoke_rules(kind, &rules);
                }
                Change::SetMode(mode) => {
                    self.set_permission_mode(mode)?;
                }
                Change::AddDirs(dirs) => permissions.grant_dirs(&dirs),
                Change::RemoveDirs(dirs) => permissions.revoke_dirs(&dirs),
            }
        }
        Ok(())
    }

    /// Adds `rules` as `behavior` rules kept in `destination`.
    pub fn add_rules(
        &self,
        behavior: RuleBehavior,
        rules: &[RuleValue],
        destination: Destination,
    ) -> Result<(), ControlError> {
        self.apply_permission_updates(&[PermissionUpdate::AddRules {
            rules: rules.to_vec(),
            behavior,
            destination,
        }])
    }

    /// Adds folders to the workspace (writes there no longer leave it), kept in
    /// `destination`.
    pub fn add_directories(
        &self,
        directories: &[String],
        destination: Destination,
    ) -> Result<(), ControlError> {
        self.apply_permission_updates(&[PermissionUpdate::AddDirectories {
            directories: directories.to_vec(),
            destination,
        }])
    }

    /// Sets the mode, kept in `destination` (a settings destination also writes
    /// `permissions.defaultMode`).
    pub fn set_mode(
        &self,
        mode: PermissionMode,
        destination: Destination,
    ) -> Result<(), ControlError> {
        self.apply_permission_updates(&[PermissionUpdate::SetMode { mode, destination }])
    }

    fn check(&self, update: &PermissionUpdate) -> Result<Checked, ControlError> {
        let bound = self.bound()?;
        let rules_of = |behavior: &RuleBehavior, rules: &[RuleValue]| {
            let kind = rule_kind(*behavior);
            let texts: Vec<String> = rules.iter().map(RuleValue::to_rule_string).collect();
            for text in &texts {
                Rule::parse(
                    kind,
                    text,
                    bound.permissions.workspace.root.clone(),
                    "update",
                )?;
            }
            Ok::<_, ControlError>((kind, texts))
        };
        let dirs_of = |dirs: &[String]| -> Result<Vec<PathBuf>, ControlError> {
            if dirs.iter().any(|d| d.trim().is_empty()) {
                return Err(ControlError::InvalidUpdate(
                    "a directory in the update is empty".into(),
                ));
            }
            Ok(dirs.iter().map(PathBuf::from).collect())
        };
        let (destination, change) = match update {
            PermissionUpdate::AddRules {
                rules,
                behavior,
                destination,
            } => {
                let (kind, texts) = rules_of(behavior, rules)?;
                (*destination, Change::AddRules(kind, texts))
            }
            PermissionUpdate::ReplaceRules {
                rules,
                behavior,
                destination,
            } => {
                let (kind, texts) = rules_of(behavior, rules)?;
                (*destination, Change::ReplaceRules(kind, texts))
            }
            PermissionUpdate::RemoveRules {
                rules,
                behavior,
                destination,
            } => {
                let (kind, texts) = rules_of(behavior, rules)?;
                (*destination, Change::RemoveRules(kind, texts))
            }
            PermissionUpdate::SetMode { mode, destination } => {
                let mode = *mode;
                if mode == PermissionMode::BypassPermissions && !bound.bypass_allowed {
                    return Err(ControlError::BypassNotAllowed);
                }
                (*destination, Change::SetMode(mode))
            }
            PermissionUpdate::AddDirectories {
                directories,
                destination,
            } => (*destination, Change::AddDirs(dirs_of(directories)?)),
            PermissionUpdate::RemoveDirectories {
                directories,
                destination,
            } => (*destination, Change::RemoveDirs(dirs_of(directories)?)),
        };
        Ok(Checked {
            destination,
            change,
        })
    }

    /// Writes a settings-destination update to its file.
    fn write_settings(&self, update: &Checked) -> Result<(), ControlError> {
        let bound = self.bound()?;
        let options = self.options();
        let project = options
            .project_dir
            .clone()
            .unwrap_or_else(|| bound.permissions.workspace.root.clone());
        let home = options
            .home_dir
            .clone()
            .or_else(|| bound.permissions.home.clone());
        let Some(path) = settings_file::path_for(update.destination, &project, home.as_deref())?
        else {
            return Ok(());
        };
        let text = |dirs: &[PathBuf]| -> Vec<String> {
            dirs.iter().map(|d| d.display().to_string()).collect()
        };
        let edit = match &update.change {
            Change::AddRules(kind, rules) => SettingsEdit::AddRules(*kind, rules.clone()),
            Change::ReplaceRules(kind, rules) => SettingsEdit::ReplaceRules(*kind, rules.clone()),
            Change::RemoveRules(kind, rules) => SettingsEdit::RemoveRules(*kind, rules.clone()),
            Change::SetMode(mode) => SettingsEdit::SetMode(*mode),
            Change::AddDirs(dirs) => SettingsEdit::AddDirs(text(dirs)),
            Change::RemoveDirs(dirs) => SettingsEdit::RemoveDirs(text(dirs)),
        };
        settings_file::apply(&path, &edit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn updates_read_as_the_python_sdk_writes_them() {
        let update: PermissionUpdate = serde_json::from_value(json!({
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "npm test"}, {"toolName": "Read"}],
            "behavior": "allow",
            "destination": "localSettings"
        }))
        .expect("valid update");
        let PermissionUpdate::AddRules {
            rules, destination, ..
        } = update
        else {
            panic!("not addRules: {update:?}");
        };
        assert_eq!(destination, Destination::LocalSettings);
        let texts: Vec<String> = rules.iter().map(RuleValue::to_rule_string).collect();
        assert_eq!(texts, ["Bash(npm test)", "Read"]);
    }

    #[test]
    fn a_missing_destination_means_the_session() {
        let update: PermissionUpdate =
            serde_json::from_value(json!({"type": "setMode", "mode": "acceptEdits"}))
                .expect("valid update");
        assert_eq!(
            update,
            PermissionUpdate::SetMode {
                mode: PermissionMode::AcceptEdits,
                destination: Destination::Session
            }
        );
    }

    #[test]
    fn an_update_missing_a_field_is_refused() {
        let missing = json!({"type": "addRules", "rules": [{"toolName": "Bash"}]});
        assert!(serde_json::from_value::<PermissionUpdate>(missing).is_err());
        let unknown = json!({"type": "grantEverything"});
        assert!(serde_json::from_value::<PermissionUpdate>(unknown).is_err());
    }
}
