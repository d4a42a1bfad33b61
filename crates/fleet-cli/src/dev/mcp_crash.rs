//! `fleet dev mcp-crash`: starts the MCP servers a session in this folder would start, then
//! panics. It exists so a test can prove what users rely on — that no MCP server (nor anything
//! it started) outlives a fleet that crashed — on the real binary and its real panic path.

use anyhow::Context;
use fleet_runtime::mcp::config::McpConfig;
use fleet_runtime::mcp::{McpServers, McpTimeouts};

#[derive(Debug, clap::Args)]
pub struct McpCrashArgs {
    /// Extra servers, as for `fleet -p --mcp-config` (a file or inline JSON; repeatable).
    #[arg(long = "mcp-config")]
    mcp_config: Vec<String>,
}

pub async fn run(args: McpCrashArgs) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("reading the current folder")?;
    let config = McpConfig::load(
        &fleet_session::config::locations(&cwd),
        args.mcp_config,
        false,
    );
    let servers = McpServers::start(&config, McpTimeouts::from_env()).await;
    let mut pids = Vec::new();
    for connection in servers.connections() {
        if let Some(pid) = connection.server_pid().await {
            pids.push(pid.to_string());
        }
    }
    eprintln!(
        "fleet dev mcp-crash: servers started (pids {})",
        pids.join(" ")
    );
    panic!("fleet dev mcp-crash: crashing on purpose with MCP servers running");
}
