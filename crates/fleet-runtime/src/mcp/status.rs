//! A session's servers as the Agent SDK's `mcp_status` reports them: one
//! [`McpServerStatusReport`] per server, shaped as the TypeScript SDK's `McpServerStatus`
//! (`sdk.d.ts`; the Python SDK's `types.py` mirrors it): `name`, `status` (`connected`,
//! `failed`, `needs-auth`, `pending` or `disabled`), `serverInfo`, `error`, `config`, `scope`,
//! `source` and `tools`.
//!
//! The configuration is reported without secrets: `env` and `headers` values are expanded
//! from the user's environment (tokens, mostly), so only their names are shown.

use std::collections::BTreeMap;

use fleet_protocol::McpServerState;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::config::{McpServerConfig, McpSource, McpTransport};
use super::{McpServers, McpStatus, McpToolInfo};

/// What stands in for an `env` or `headers` value in a report.
const REDACTED: &str = "[redacted]";

/// One server in an `mcp_status` answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatusReport {
    pub name: String,
    /// `connected`, `failed`, `pending` or `disabled` (fleet has no OAuth, so never
    /// `needs-auth`).
    pub status: McpServerState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<McpServerInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    /// `user`, `project`, `local`, `dynamic` (`--mcp-config`) or `agent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<&'static str>,
    /// Where the definition came from: `sdk` for a server the SDK program hosts, else the
    /// scope (the SDKs key trust on this, not on the name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'static str>,
    /// The tools it offers, while connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<McpToolStatus>>,
}

/// `serverInfo` from the server's `initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpServerInfo {
    pub name: String,
    pub version: String,
}

/// One tool in a status report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpToolStatus {
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// `readOnly`, `destructive` and `openWorld`, from the server's `…Hint` annotations.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub annotations: Map<String, Value>,
}

impl McpServers {
    /// Every server as it is now, in the order they were configured (configuration errors
    /// last), for `mcp_status`.
    pub async fn status(&self) -> Vec<McpServerStatusReport> {
        let mut reports = Vec::with_capacity(self.entries.len());
        for entry in &self.entries {
            let scope = entry.source.as_ref().map(scope_of);
            let Some(server) = &entry.server else {
                reports.push(McpServerStatusReport {
                    name: entry.name.clone(),
                    status: McpServerState::Failed,
                    server_info: None,
                    error: entry.error.clone(),
                    config: None,
                    scope,
                    source: scope,
                    tools: None,
                });
                continue;
            };
            let config = server.config();
            let snapshot = server.snapshot().await;
            let (status, error) = match snapshot.status {
                None => (McpServerState::Pending, None),
                Some(McpStatus::Connected) => (McpServerState::Connected, None),
                Some(McpStatus::Disabled) => (McpServerState::Disabled, None),
                Some(McpStatus::Failed { reason, .. }) => (McpServerState::Failed, Some(reason)),
            };
            let connected = status == McpServerState::Connected;
            reports.push(McpServerStatusReport {
                name: entry.name.clone(),
                status,
                server_info: snapshot
                    .server_info
                    .filter(|_| connected)
                    .map(|(name, version)| McpServerInfo { name, version }),
                error,
                config: Some(config_report(config)),
                scope,
                source: match config.transport {
                    McpTransport::Sdk { .. } => Some("sdk"),
                    _ => scope,
                },
                tools: connected.then(|| snapshot.tools.iter().map(tool_status).collect()),
            });
        }
        reports
    }
}

/// The scope word the SDKs use: `--mcp-config` servers are `dynamic`.
fn scope_of(source: &McpSource) -> &'static str {
    match source.scope() {
        "flag" => "dynamic",
        other => other,
    }
}

/// A server's configuration as the SDK types spell it, secrets left out.
fn config_report(config: &McpServerConfig) -> Value {
    let redacted = |map: &BTreeMap<String, String>| -> Map<String, Value> {
        map.keys()
            .map(|key| (key.clone(), Value::String(REDACTED.into())))
            .collect()
    };
    match &config.transport {
        McpTransport::Stdio {
            command, args, env, ..
        } => {
            let mut value = json!({"type": "stdio", "command": command, "args": args});
            if !env.is_empty() {
                value["env"] = Value::Object(redacted(env));
            }
            value
        }
        McpTransport::Http { url, headers } | McpTransport::Sse { url, headers } => {
            let mut value = json!({"type": config.transport.kind(), "url": url});
            if !headers.is_empty() {
                value["headers"] = Value::Object(redacted(headers));
            }
            value
        }
        McpTransport::Sdk { name } => json!({"type": "sdk", "name": name}),
    }
}

fn tool_status(info: &McpToolInfo) -> McpToolStatus {
    let mut annotations = Map::new();
    for (hint, key) in [
        ("readOnlyHint", "readOnly"),
        ("destructiveHint", "destructive"),
        ("openWorldHint", "openWorld"),
    ] {
        if let Some(flag) = info.annotations.get(hint).and_then(Value::as_bool) {
            annotations.insert(key.into(), Value::Bool(flag));
        }
    }
    McpToolStatus {
        name: info.name.clone(),
        description: info.description.clone(),
        annotations,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_env_and_headers_are_named_but_not_shown() {
        let config = McpServerConfig {
            name: "issues".into(),
            transport: McpTransport::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: BTreeMap::from([("Authorization".into(), "Bearer t0k".into())]),
            },
            source: McpSource::FlagInline(0),
        };
        let report = config_report(&config);
        assert_eq!(report["type"], "http");
        assert_eq!(report["url"], "https://mcp.example.com/mcp");
        assert_eq!(report["headers"]["Authorization"], REDACTED);
        assert!(!report.to_string().contains("t0k"));
    }

    #[test]
    fn annotations_take_the_sdk_names() {
        let info = McpToolInfo {
            name: "rm".into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
            read_only_hint: false,
            annotations: json!({"destructiveHint": true, "openWorldHint": false, "title": "x"}),
        };
        let status = serde_json::to_value(tool_status(&info)).unwrap();
        assert_eq!(
            status,
            json!({"name": "rm", "annotations": {"destructive": true, "openWorld": false}})
        );
    }

    #[test]
    fn flag_servers_are_dynamic() {
        assert_eq!(scope_of(&McpSource::FlagInline(0)), "dynamic");
        assert_eq!(
            scope_of(&McpSource::Project("/p/.mcp.json".into())),
            "project"
        );
    }
}
