//! The bodies of success answers (`control_response` → `response` → `response`), one type per
//! request that has a body worth naming.

use crate::PermissionMode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The host's answer to `can_use_tool`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "lowercase")]
pub enum CanUseToolAnswer {
    Allow {
        /// Run the call with this input instead of the model's.
        #[serde(
            rename = "updatedInput",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        updated_input: Option<Value>,
        /// Permission updates to apply from now on. Kept as values: one the session cannot
        /// read is reported when applied, and the call still runs.
        #[serde(
            rename = "updatedPermissions",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        updated_permissions: Option<Vec<Value>>,
    },
    Deny {
        /// What the model is told.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// Stop the whole turn, not only this call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interrupt: Option<bool>,
    },
}

/// The host's answer to `mcp_message`: the server's JSON-RPC reply (none to a notification).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpMessageAnswer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_response: Option<Value>,
}

/// An answer with nothing to say: `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// The answer to `interrupt`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterruptAnswer {
    /// Prompts still waiting to be run (fleet keeps none back).
    pub still_queued: Vec<Value>,
}

/// The answer to `set_permission_mode`: the mode now in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeAnswer {
    pub mode: PermissionMode,
}

/// The answer to `set_model`: the model now in use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelAnswer {
    pub model: String,
}

/// The answer to `mcp_status`: each server's status report, as the runtime words it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpStatusAnswer {
    #[serde(rename = "mcpServers")]
    pub mcp_servers: Value,
}

/// The answer to `initialize`: what the session offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeAnswer {
    pub commands: Vec<CommandInfo>,
    pub agents: Vec<AgentInfo>,
    pub output_style: String,
    pub available_output_styles: Vec<String>,
    pub models: Vec<ModelInfo>,
    pub account: ApiAccount,
    pub pid: u32,
    /// The Claude Code version whose protocol is spoken (the SDKs gate features on it).
    pub claude_code_version: String,
    pub fleet_version: String,
    pub current_permission_mode: PermissionMode,
    pub session_state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks_applied: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers_applied: Option<bool>,
}

/// A slash command (a skill) the session offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandInfo {
    pub name: String,
    pub description: String,
    #[serde(rename = "argumentHint")]
    pub argument_hint: String,
}

/// An agent type the session can delegate to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A model choice the host may offer its user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub value: String,
    #[serde(rename = "displayName")]
    pub display_name: String,
    pub description: String,
    #[serde(
        rename = "resolvedModel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub resolved_model: Option<String>,
}

/// Where the session's API key comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiAccount {
    #[serde(rename = "apiKeySource")]
    pub api_key_source: String,
    #[serde(rename = "apiProvider")]
    pub api_provider: String,
}
