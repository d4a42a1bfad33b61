//! The body of a `control_request`, told apart by its `subtype`. Requests either side sends
//! are here: the host's (`initialize`, `interrupt`, `set_model`, …) and fleet's own
//! (`can_use_tool`, `hook_callback`, `mcp_message`).

use super::permission_update::PermissionUpdate;
use crate::vocab::PermissionMode;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A request body as read from the wire: one fleet knows, or one it does not, kept whole so
/// the answer can name it ("unsupported subtype X") and the session goes on.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestBody {
    Known(ControlRequest),
    Unknown(UnknownRequest),
}

/// A request whose `subtype` fleet does not know.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownRequest {
    pub subtype: String,
    /// The whole body, `subtype` included, as it came.
    pub body: Map<String, Value>,
}

impl RequestBody {
    /// The request's `subtype`, known or not.
    pub fn subtype(&self) -> &str {
        match self {
            Self::Known(request) => request.subtype(),
            Self::Unknown(request) => &request.subtype,
        }
    }
}

impl From<ControlRequest> for RequestBody {
    fn from(request: ControlRequest) -> Self {
        Self::Known(request)
    }
}

impl Serialize for RequestBody {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Known(request) => request.serialize(serializer),
            Self::Unknown(request) => request.body.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for RequestBody {
    /// A body needs a string `subtype`. A known subtype must have its fields right (the error
    /// says which is wrong); any other is kept as [`RequestBody::Unknown`].
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let body = Map::<String, Value>::deserialize(deserializer)?;
        let Some(subtype) = body.get("subtype").and_then(Value::as_str) else {
            return Err(D::Error::custom("a request needs a string \"subtype\""));
        };
        if !ControlRequest::SUBTYPES.contains(&subtype) {
            return Ok(Self::Unknown(UnknownRequest {
                subtype: subtype.to_string(),
                body,
            }));
        }
        ControlRequest::deserialize(Value::Object(body))
            .map(Self::Known)
            .map_err(D::Error::custom)
    }
}

/// A request fleet knows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlRequest {
    /// The host's first request: what it adds to the session.
    Initialize(Box<Initialize>),
    /// Stop the running turn.
    Interrupt,
    SetPermissionMode {
        /// Read as the command line reads it (any case); an unknown mode makes the request
        /// unreadable, and the answer names the valid ones.
        #[serde(deserialize_with = "mode_by_name")]
        mode: PermissionMode,
    },
    SetModel {
        /// `None` (or `null`): back to the session's default model.
        #[serde(default)]
        model: Option<String>,
    },
    McpStatus,
    McpReconnect {
        #[serde(rename = "serverName")]
        server_name: String,
    },
    McpToggle {
        #[serde(rename = "serverName")]
        server_name: String,
        enabled: bool,
    },
    GetContextUsage,
    StopTask {
        task_id: String,
    },
    /// fleet asks the host whether a call may run.
    CanUseTool(Box<CanUseTool>),
    /// fleet runs a hook callback the host registered in `initialize`.
    HookCallback(HookCallback),
    /// fleet sends a JSON-RPC message to an MCP server living in the host.
    McpMessage(McpMessage),
}

impl ControlRequest {
    /// Every subtype above, as spelled on the wire.
    pub const SUBTYPES: &'static [&'static str] = &[
        "initialize",
        "interrupt",
        "set_permission_mode",
        "set_model",
        "mcp_status",
        "mcp_reconnect",
        "mcp_toggle",
        "get_context_usage",
        "stop_task",
        "can_use_tool",
        "hook_callback",
        "mcp_message",
    ];

    pub fn subtype(&self) -> &'static str {
        match self {
            Self::Initialize(_) => "initialize",
            Self::Interrupt => "interrupt",
            Self::SetPermissionMode { .. } => "set_permission_mode",
            Self::SetModel { .. } => "set_model",
            Self::McpStatus => "mcp_status",
            Self::McpReconnect { .. } => "mcp_reconnect",
            Self::McpToggle { .. } => "mcp_toggle",
            Self::GetContextUsage => "get_context_usage",
            Self::StopTask { .. } => "stop_task",
            Self::CanUseTool(_) => "can_use_tool",
            Self::HookCallback(_) => "hook_callback",
            Self::McpMessage(_) => "mcp_message",
        }
    }
}

/// `initialize`. The fields whose shape fleet checks itself (with a message naming the field)
/// stay JSON values here; what fleet does not read is kept in `other`, so a warning can name
/// it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Initialize {
    /// Hook callbacks by event: `{"PreToolUse": [{"matcher": …, "hookCallbackIds": […]}]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Value>,
    /// Agent definitions keyed by name, as `--agents` takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Value>,
    /// A string, or a list of strings joined by blank lines.
    #[serde(
        rename = "systemPrompt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub system_prompt: Option<Value>,
    #[serde(
        rename = "appendSystemPrompt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub append_system_prompt: Option<Value>,
    /// Names of MCP servers living in the host.
    #[serde(
        rename = "sdkMcpServers",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sdk_mcp_servers: Option<Value>,
    /// A settings layer: an object, or a JSON string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    #[serde(
        rename = "disallowedTools",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub disallowed_tools: Option<Value>,
    #[serde(
        rename = "mcpServers",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub mcp_servers: Option<Value>,
    #[serde(
        rename = "managedSettings",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub managed_settings: Option<Value>,
    #[serde(
        rename = "jsonSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub json_schema: Option<Value>,
    /// Every other field, as it came.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `can_use_tool`: may this call run? Worded as Claude Code words it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CanUseTool {
    #[serde(default)]
    pub tool_name: String,
    #[serde(default)]
    pub display_name: String,
    #[serde(default)]
    pub input: Value,
    /// The input's own `description`, when it has one (Bash's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Updates the host could give back to stop being asked.
    #[serde(default)]
    pub permission_suggestions: Vec<PermissionUpdate>,
    /// The file a read or write would touch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_path: Option<String>,
    #[serde(default)]
    pub decision_reason: String,
    #[serde(default)]
    pub tool_use_id: String,
    /// The asking subagent; absent for the main agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

/// `hook_callback`: run the host's callback `callback_id` on a hook's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookCallback {
    pub callback_id: String,
    /// The hook's input, as a command hook would read it on stdin.
    pub input: Value,
    /// The input's `tool_use_id`, repeated for the SDKs that look for it here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<Value>,
}

/// `mcp_message`: one JSON-RPC message for the host's MCP server `server_name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpMessage {
    pub server_name: String,
    pub message: Value,
}

/// A permission mode by its name in any case, as `--permission-mode` takes it.
pub(super) fn mode_by_name<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<PermissionMode, D::Error> {
    String::deserialize(deserializer)?
        .parse()
        .map_err(D::Error::custom)
}
