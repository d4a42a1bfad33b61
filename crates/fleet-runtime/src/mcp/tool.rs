//! [`McpTool`]: one server tool offered to the model as `mcp__<server>__<tool>`, so permission
//! rules (`mcp__server`, `mcp__server__tool`, `mcp__server__*`) name it like Claude Code's.

use std::sync::Arc;

use fleet_tools::{Access, Tool, ToolContext, ToolError, ToolFuture};
use serde_json::Value;

use super::client::McpError;
use super::connection::{McpConnection, McpToolInfo};

/// The longest tool name the Messages API accepts.
pub const MAX_TOOL_NAME: usize = 64;

/// The name the model sees for `tool` on `server`. The API takes only `[A-Za-z0-9_-]` in tool
/// names, so anything else a server uses becomes `_` (as Claude Code does); one odd name must
/// not make every request of the session fail. Server names are checked when configured.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    let tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("mcp__{server}__{tool}")
}

/// One MCP tool as a fleet tool. It shares its server's connection with the server's other
/// tools; the description and schema are those listed when the adapter was made (a
/// `list_changed` makes the caller build new adapters).
pub struct McpTool {
    connection: Arc<McpConnection>,
    info: McpToolInfo,
    full_name: String,
}

impl McpTool {
    pub fn new(connection: Arc<McpConnection>, info: McpToolInfo) -> Self {
        let full_name = mcp_tool_name(connection.name(), &info.name);
        Self {
            connection,
            info,
            full_name,
        }
    }

    /// One adapter per tool the connection currently lists.
    pub async fn all(connection: &Arc<McpConnection>) -> Vec<McpTool> {
        connection
            .tools()
            .await
            .iter()
            .map(|info| McpTool::new(connection.clone(), info.clone()))
            .collect()
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.full_name
    }

    fn description(&self) -> String {
        self.info.description.clone()
    }

    fn input_schema(&self) -> Value {
        self.info.input_schema.clone()
    }

    fn is_read_only(&self) -> bool {
        self.info.read_only_hint
    }

    fn access(&self, _input: &Value, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match self
                .connection
                .call(&self.info.name, input, &ctx.cancel)
                .await
            {
                Ok(output) => Ok(output),
                Err(McpError::Cancelled { .. }) => Err(ToolError::Cancelled),
                Err(e) => Err(ToolError::service(e)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_what_the_api_accepts_and_replace_the_rest() {
        assert_eq!(mcp_tool_name("db", "run-query_2"), "mcp__db__run-query_2");
        assert_eq!(mcp_tool_name("db", "run query!"), "mcp__db__run_query_");
        assert_eq!(mcp_tool_name("db", "été/\u{1b}[31m"), "mcp__db___t____31m");
    }
}
