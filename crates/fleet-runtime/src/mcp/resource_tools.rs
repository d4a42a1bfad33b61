//! The two tools that let the model see servers' resources, named as Claude Code names them so
//! permission rules and prompts written for it apply: `ListMcpResourcesTool` (every server's
//! resources, or one server's) and `ReadMcpResourceTool` (one resource by server and URI).
//! Both are read-only: reading a resource changes nothing on the server by the protocol's
//! contract.
//!
//! The tools only reach servers that announced the `resources` capability; naming another one,
//! or one that does not exist, is an error that lists the servers that do offer resources, so
//! the model can correct itself in one step.

use std::sync::Arc;

use fleet_tools::{Access, Tool, ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::connection::McpConnection;
use super::output::cap_text;
use super::resources::{McpResource, McpResourceError};

pub const LIST_MCP_RESOURCES_TOOL: &str = "ListMcpResourcesTool";
pub const READ_MCP_RESOURCE_TOOL: &str = "ReadMcpResourceTool";

/// The servers the resource tools reach, and the connected ones they do not (for errors).
#[derive(Clone, Default)]
pub struct ResourceServers {
    offering: Vec<Arc<McpConnection>>,
    others: Vec<String>,
}

impl ResourceServers {
    /// Sorts `connections` into those that offer resources and the rest.
    pub async fn new(connections: impl IntoIterator<Item = Arc<McpConnection>>) -> Self {
        let mut servers = Self::default();
        for connection in connections {
            if connection.offers_resources().await {
                servers.offering.push(connection);
            } else {
                servers.others.push(connection.name().to_string());
            }
        }
        servers
    }

    /// The names of the servers that offer resources.
    pub fn names(&self) -> Vec<&str> {
        self.offering.iter().map(|c| c.name()).collect()
    }

    /// The two tools over these servers, or none when no server offers resources.
    pub fn tools(self) -> Vec<Arc<dyn Tool>> {
        if self.offering.is_empty() {
            return Vec::new();
        }
        let servers = Arc::new(self);
        vec![
            Arc::new(ListMcpResourcesTool {
                servers: servers.clone(),
            }),
            Arc::new(ReadMcpResourceTool { servers }),
        ]
    }

    fn find(&self, name: &str) -> Result<&Arc<McpConnection>, ToolError> {
        if let Some(connection) = self.offering.iter().find(|c| c.name() == name) {
            return Ok(connection);
        }
        let offering = self
            .names()
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let why = if self.others.iter().any(|n| n == name) {
            format!("MCP server {name:?} does not offer resources")
        } else {
            format!("There is no MCP server named {name:?}")
        };
        Err(ToolError::bad_value(
            "server",
            format!("{why}. Servers with resources: {offering}."),
        ))
    }
}

fn tool_error(error: McpResourceError) -> ToolError {
    match error {
        McpResourceError::Cancelled { .. } => ToolError::Cancelled,
        other => ToolError::service(other),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListInput {
    /// Only this server's resources. Omit it to list every server's.
    #[serde(default)]
    pub server: Option<String>,
}

/// Lists resources, as JSON objects with the server, URI, name, MIME type and description.
pub struct ListMcpResourcesTool {
    servers: Arc<ResourceServers>,
}

impl TypedTool for ListMcpResourcesTool {
    type Input = ListInput;
    const NAME: &'static str = LIST_MCP_RESOURCES_TOOL;
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        format!(
            "List the resources (files, records, documents) that connected MCP servers offer \
             to be read. Each entry gives its server, uri, name, mimeType and description; read \
             one with {READ_MCP_RESOURCE_TOOL}. Give `server` to list only that server's. \
             Servers with resources: {}.",
            self.servers.names().join(", ")
        )
    }

    fn access(&self, _input: &ListInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, input: ListInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let targets: Vec<&Arc<McpConnection>> = match &input.server {
            Some(name) => vec![self.servers.find(name)?],
            None => self.servers.offering.iter().collect(),
        };
        let listings = futures::future::join_all(
            targets
                .iter()
                .map(|connection| connection.list_resources(&ctx.cancel)),
        )
        .await;
        let mut entries = Vec::new();
        let mut failures = Vec::new();
        for (connection, listing) in targets.iter().zip(listings) {
            match listing {
                Ok(resources) => entries.extend(
                    resources
                        .into_iter()
                        .map(|resource| listed(connection.name(), resource)),
                ),
                Err(McpResourceError::Cancelled { .. }) => return Err(ToolError::Cancelled),
                // One server asked for by name: its failure is the answer.
                Err(error) if input.server.is_some() => return Err(tool_error(error)),
                Err(error) => failures.push(error.to_string()),
            }
        }
        let max_tokens = targets
            .iter()
            .map(|c| c.max_output_tokens)
            .min()
            .unwrap_or(super::output::DEFAULT_MAX_OUTPUT_TOKENS);
        let mut text = if entries.is_empty() {
            "No resources found. MCP servers may still offer tools when they have no resources."
                .to_string()
        } else {
            Value::Array(entries.clone()).to_string()
        };
        for failure in &failures {
            text.push_str(&format!("\n\nCould not list resources: {failure}"));
        }
        Ok(ToolOutput::text(cap_text(&text, max_tokens))
            .with_structured(json!({"resources": entries, "errors": failures})))
    }
}

/// One listed resource as the model reads it.
fn listed(server: &str, resource: McpResource) -> Value {
    let mut value = json!({"server": server});
    if let (Some(object), Ok(Value::Object(fields))) =
        (value.as_object_mut(), serde_json::to_value(resource))
    {
        object.extend(fields);
    }
    value
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadInput {
    /// The server that offers the resource, as ListMcpResourcesTool names it.
    pub server: String,
    /// The resource's URI.
    pub uri: String,
}

/// Reads one resource: its text, or a line describing binary contents.
pub struct ReadMcpResourceTool {
    servers: Arc<ResourceServers>,
}

impl TypedTool for ReadMcpResourceTool {
    type Input = ReadInput;
    const NAME: &'static str = READ_MCP_RESOURCE_TOOL;
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        format!(
            "Read one resource of an MCP server by its server name and URI (find them with \
             {LIST_MCP_RESOURCES_TOOL}). Text contents are returned as they are; binary \
             contents are described by type and size. Servers with resources: {}.",
            self.servers.names().join(", ")
        )
    }

    fn access(&self, _input: &ReadInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, input: ReadInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let connection = self.servers.find(&input.server)?;
        let text = connection
            .read_resource(&input.uri, &ctx.cancel)
            .await
            .map_err(tool_error)?;
        Ok(ToolOutput::text(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers_without_resources(names: &[&str]) -> ResourceServers {
        ResourceServers {
            offering: Vec::new(),
            others: names.iter().map(|n| n.to_string()).collect(),
        }
    }

    #[test]
    fn no_server_with_resources_means_no_tools() {
        assert!(servers_without_resources(&["a"]).tools().is_empty());
        assert!(ResourceServers::default().tools().is_empty());
    }

    #[test]
    fn an_unknown_server_and_one_without_resources_are_told_apart() {
        let servers = servers_without_resources(&["plain"]);
        let Err(unknown) = servers.find("nope") else {
            panic!("an unknown server was found")
        };
        assert!(
            unknown
                .to_string()
                .starts_with("There is no MCP server named \"nope\". Servers with resources:"),
            "{unknown}"
        );
        let Err(plain) = servers.find("plain") else {
            panic!("a server without resources was found")
        };
        assert!(
            plain
                .to_string()
                .contains("\"plain\" does not offer resources"),
            "{plain}"
        );
    }

    #[test]
    fn a_listed_resource_carries_its_server_and_wire_names() {
        let value = listed(
            "docs",
            McpResource {
                uri: "demo://a".into(),
                name: "a".into(),
                mime_type: Some("text/plain".into()),
                description: None,
            },
        );
        assert_eq!(
            value,
            json!({"server": "docs", "uri": "demo://a", "name": "a", "mimeType": "text/plain"})
        );
    }
}
