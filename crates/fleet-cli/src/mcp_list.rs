//! `fleet mcp list` and `fleet mcp get NAME`: every configured server started as a session
//! would start it, with where it comes from, its transport, how its start went and its tools.
//!
//! Both are health checks too: they exit with status 1 when a server they report failed to
//! start (a configuration error included), so a script or CI step can rely on them. A server
//! the user has not approved was not started on purpose and does not fail them.

use fleet_runtime::mcp::config::{McpConfig, McpServerConfig};
use fleet_runtime::mcp::{McpLogs, McpServers, McpTimeouts};
use serde_json::{json, Value};
use std::process::ExitCode;
use std::sync::Arc;

/// A row's status when its server failed to start.
const FAILED: &str = "failed";

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// One JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct GetArgs {
    /// The server's name.
    pub name: String,
    /// One JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Every server of this folder's configuration, started and described.
pub async fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let (config, servers) = start().await?;
    let rows = describe(&config, &servers).await;
    let health = health(rows.iter());
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "servers": rows }))?
        );
        return Ok(health);
    }
    if rows.is_empty() {
        println!("No MCP servers configured here (.mcp.json, settings, ~/.claude.json).");
        return Ok(ExitCode::SUCCESS);
    }
    for row in &rows {
        let tools = row["tools"].as_array().map_or(0, Vec::len);
        println!(
            "{name}  {transport}  {status}  {tools} tool(s)  from {source}",
            name = row["name"].as_str().unwrap_or_default(),
            transport = row["transport"].as_str().unwrap_or("-"),
            status = row["status"].as_str().unwrap_or_default(),
            source = row["source"].as_str().unwrap_or("-"),
        );
        if let Some(error) = row["error"].as_str() {
            println!(
                "    {}",
                crate::visible::visible_line(&with_log(error, row))
            );
        }
    }
    Ok(health)
}

/// Status 1 when any of `rows` failed to start.
fn health<'a>(mut rows: impl Iterator<Item = &'a Value>) -> ExitCode {
    if rows.any(|row| row["status"] == FAILED) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The error, and where the server's own output is when it has a log.
fn with_log(error: &str, row: &Value) -> String {
    match row["log"].as_str() {
        Some(log) => format!("{error} (its output: {log})"),
        None => error.to_string(),
    }
}

/// One server and its tools.
pub async fn get(args: GetArgs) -> anyhow::Result<ExitCode> {
    let (config, servers) = start().await?;
    let rows = describe(&config, &servers).await;
    let Some(row) = rows.iter().find(|r| r["name"] == args.name.as_str()) else {
        let names: Vec<&str> = rows.iter().filter_map(|r| r["name"].as_str()).collect();
        anyhow::bail!(
            "no MCP server {:?} here; configured: {}",
            args.name,
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
    };
    let health = health(std::iter::once(row));
    if args.json {
        println!("{}", serde_json::to_string_pretty(row)?);
        return Ok(health);
    }
    println!(
        "{}  ({}, {}, from {})",
        args.name,
        row["transport"].as_str().unwrap_or("-"),
        row["status"].as_str().unwrap_or_default(),
        row["source"].as_str().unwrap_or("-")
    );
    if let Some(error) = row["error"].as_str() {
        println!("  {}", crate::visible::visible_line(&with_log(error, row)));
    }
    for tool in row["tools"].as_array().into_iter().flatten() {
        println!(
            "  {}  {}",
            crate::visible::visible_line(tool["name"].as_str().unwrap_or_default()),
            crate::visible::visible_line(tool["description"].as_str().unwrap_or_default())
        );
    }
    for tool in row["skipped"].as_array().into_iter().flatten() {
        println!(
            "  left out: {} ({})",
            crate::visible::visible_line(tool["name"].as_str().unwrap_or_default()),
            crate::visible::visible_line(tool["why"].as_str().unwrap_or_default())
        );
    }
    Ok(health)
}

async fn start() -> anyhow::Result<(McpConfig, McpServers)> {
    let cwd = std::env::current_dir()?;
    let locations = fleet_session::config::locations(&cwd);
    let config = McpConfig::load(&locations, Vec::new(), false);
    // Servers' stderr goes where a session's would, so a failure can be looked into.
    let logs = locations
        .fleet_home
        .as_deref()
        .and_then(|home| McpLogs::open(home).ok())
        .map(Arc::new);
    let servers = McpServers::start_logged(&config, McpTimeouts::from_env(), None, logs).await;
    Ok((config, servers))
}

/// One JSON object per server: name, source, transport, status, error, tools.
async fn describe(config: &McpConfig, servers: &McpServers) -> Vec<Value> {
    let mut rows = Vec::new();
    for entry in &servers.entries {
        let configured: Option<&McpServerConfig> =
            config.servers.iter().find(|s| s.name == entry.name);
        let tools: Vec<Value> = match &entry.connection {
            Some(connection) => connection
                .tools()
                .await
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name,
                        "description": t.description,
                        "read_only": t.read_only_hint,
                    })
                })
                .collect(),
            None => Vec::new(),
        };
        let skipped: Vec<Value> = match &entry.connection {
            Some(connection) => connection
                .skipped_tools()
                .await
                .into_iter()
                .map(|(name, why)| json!({"name": name, "why": why}))
                .collect(),
            None => Vec::new(),
        };
        rows.push(json!({
            "name": entry.name,
            "source": configured.map(|c| c.source.to_string()),
            "transport": configured.map(|c| c.transport.kind()),
            "status": entry.status,
            "error": entry.error,
            "log": entry.log.as_ref().map(|p| p.display().to_string()),
            "tools": tools,
            "skipped": skipped,
        }));
    }
    // Listed, not started: the user sees what the repository asks for and how to allow it.
    for server in &config.unapproved {
        rows.push(json!({
            "name": server.name,
            "source": server.source.to_string(),
            "transport": server.transport.kind(),
            "status": "not approved",
            "error": config.approval.refusal(&server.name, &server.source.to_string()),
            "tools": [],
            "skipped": [],
        }));
    }
    rows.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    fleet_runtime::mcp::kill_all_server_groups();
    rows
}
