//! The session's MCP servers (`.mcp.json`, settings, `--mcp-config`): started all at once,
//! shared by every build of the session, and what they give its agents.

use crate::report::Report;
use fleet_runtime::mcp::config::McpConfig;
use fleet_runtime::mcp::{McpLogs, McpServers, McpStartFailure, McpTimeouts, SdkMcpBridge};
use fleet_runtime::subagent::McpSession;
use std::path::Path;
use std::sync::Arc;

/// What the session's MCP servers give its agents: their tools, their instructions, and how
/// each server's start went.
#[derive(Default, Clone)]
pub struct McpTools {
    pub tools: Vec<Arc<dyn fleet_tools::Tool>>,
    pub instructions: Option<String>,
    pub statuses: Vec<fleet_protocol::McpServerStatus>,
    /// The configuration and servers, for agents whose definitions name servers.
    pub session: Option<Arc<McpSession>>,
}

/// Which MCP servers a session starts.
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// `--mcp-config`: files or inline JSON.
    pub config: Vec<String>,
    /// `--strict-mcp-config`: only those.
    pub strict: bool,
    /// The repository is trusted: its `.mcp.json` servers start without asking.
    pub trusted: bool,
    /// Report the servers that failed, one line each (`-p`; the TUI shows them in its own
    /// way, from [`failures`]).
    pub report_failures: bool,
}

/// Starts the session's MCP servers. A server that fails is reported and the session goes on
/// without it; servers an SDK host runs start through `bridge`.
pub async fn start(
    cwd: &Path,
    options: &McpOptions,
    bridge: Option<Arc<dyn SdkMcpBridge>>,
    report: &dyn Report,
) -> Arc<McpSession> {
    let locations = crate::config::locations(cwd);
    let mut config = McpConfig::load(&locations, options.config.clone(), options.strict);
    if options.trusted {
        config.trust_project();
    }
    let logs = open_logs(locations.fleet_home.as_deref(), report);
    let servers = McpServers::start_logged(&config, McpTimeouts::from_env(), bridge, logs).await;
    // Said in every output format: a server the repository asks for but the user never
    // approved is a decision the user should see.
    for server in &config.unapproved {
        let line = format!(
            "MCP server {:?} not started: {}",
            server.name,
            config
                .approval
                .refusal(&server.name, &server.source.to_string())
        );
        report.line(&line, "");
    }
    // Also said in every output format: a configuration the user wrote and fleet cannot use.
    for error in &config.errors {
        report.line("warning: ", &error.warning());
    }
    if options.report_failures {
        // Configuration errors (no server behind them) were said just above.
        for failure in servers.failures() {
            report.line(&failure.lead(), &failure.detail());
        }
    }
    Arc::new(McpSession { config, servers })
}

/// The servers that failed to start, one line each (`MCP server "db" failed to start: … (its
/// output: …)`): what `-p` prints on stderr, for a front end that shows them its own way.
pub fn failures(servers: &McpSession) -> Vec<McpStartFailure> {
    servers.servers.failures()
}

/// `$FLEET_HOME/logs/mcp`, where stdio servers' stderr goes; without a fleet home, or when
/// the folder cannot be made (said once), it is kept only in memory.
fn open_logs(fleet_home: Option<&Path>, report: &dyn Report) -> Option<Arc<McpLogs>> {
    let home = fleet_home?;
    match McpLogs::open(home) {
        Ok(logs) => Some(Arc::new(logs)),
        Err(err) => {
            report.line(
                "warning: ",
                &format!(
                    "cannot make {}: {err}; MCP servers' stderr is not kept",
                    home.join("logs").join("mcp").display()
                ),
            );
            None
        }
    }
}

/// The tools, instructions and start-up statuses of the session's MCP servers.
pub async fn tools(servers: &Arc<McpSession>) -> McpTools {
    McpTools {
        tools: {
            let mut tools = servers.servers.tools().await;
            tools.extend(servers.servers.resource_tools().await);
            tools
        },
        instructions: servers.servers.instructions().await,
        statuses: servers
            .servers
            .statuses()
            .into_iter()
            .map(|(name, status)| fleet_protocol::McpServerStatus { name, status })
            .collect(),
        session: Some(servers.clone()),
    }
}
