//! Permission updates as the SDKs send them (`updatedPermissions` in a `can_use_tool` answer)
//! and as fleet offers them (`permission_suggestions` in the request): add, replace or remove
//! rules, set the mode, add or remove folders, each kept for the session or also written to a
//! settings file. The shape is the Python SDK's `PermissionUpdate.to_dict` and the TypeScript
//! SDK's `PermissionUpdate` type; what an update does is the runtime's (`controls/updates.rs`).

use crate::vocab::PermissionMode;
use serde::{Deserialize, Serialize};

/// One permission update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PermissionUpdate {
    AddRules {
        rules: Vec<RuleValue>,
        behavior: RuleBehavior,
        #[serde(default)]
        destination: Destination,
    },
    ReplaceRules {
        rules: Vec<RuleValue>,
        behavior: RuleBehavior,
        #[serde(default)]
        destination: Destination,
    },
    RemoveRules {
        rules: Vec<RuleValue>,
        behavior: RuleBehavior,
        #[serde(default)]
        destination: Destination,
    },
    SetMode {
        /// Read in any case, as `--permission-mode` takes it; an unknown mode makes the update
        /// unreadable, and the error names the valid ones.
        #[serde(deserialize_with = "super::request::mode_by_name")]
        mode: PermissionMode,
        #[serde(default)]
        destination: Destination,
    },
    AddDirectories {
        directories: Vec<String>,
        #[serde(default)]
        destination: Destination,
    },
    RemoveDirectories {
        directories: Vec<String>,
        #[serde(default)]
        destination: Destination,
    },
}

/// A rule as the SDKs send it: a tool, and what within it (`npm test` for Bash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleValue {
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_content: Option<String>,
}

impl RuleValue {
    /// `Bash(git status)` as tool `Bash`, content `git status`; `mcp__calc__add` as the tool.
    pub fn from_rule_string(rule: &str) -> Self {
        match rule.split_once('(') {
            Some((tool, rest)) if rest.ends_with(')') => Self {
                tool_name: tool.to_string(),
                rule_content: Some(rest[..rest.len() - 1].to_string()),
            },
            _ => Self {
                tool_name: rule.to_string(),
                rule_content: None,
            },
        }
    }

    /// The rule as settings files spell it: `Bash(npm test)`, or `Read` for the whole tool.
    pub fn to_rule_string(&self) -> String {
        match self.rule_content.as_deref().map(str::trim) {
            Some(content) if !content.is_empty() => format!("{}({content})", self.tool_name),
            _ => self.tool_name.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleBehavior {
    Allow,
    Deny,
    Ask,
}

/// Where an update is kept. `session` and `cliArg` live in memory until the session ends;
/// the settings destinations are also written to their file, so later sessions start with
/// them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Destination {
    #[default]
    Session,
    CliArg,
    /// `~/.claude/settings.json`.
    UserSettings,
    /// `.claude/settings.json` of the project.
    ProjectSettings,
    /// `.claude/settings.local.json` of the project.
    LocalSettings,
}
