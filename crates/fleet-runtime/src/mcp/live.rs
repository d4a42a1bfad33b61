//! [`McpLive`]: keeps one agent's MCP tools in step with its servers' `list_changed`
//! notifications, checked before each of the agent's model requests.
//!
//! An agent's pool was cut from a server's tools by its grants (a definition's `tools`, a
//! read-only restriction). When the server's list changes, the agent keeps what its grant
//! gave it: an agent that held every tool of the server gets the whole new list; one that
//! held some keeps those that still exist (with their new descriptions and schemas); one that
//! held none gets none. A read-only agent only ever gets tools the server marks read-only.
//!
//! The grant is read off the pool the first time the agent looks, so building an agent needs
//! no lock on its servers; that first look also replaces adapters made from an older listing
//! (a session's shared tools are made once, at its start).

use std::collections::HashSet;
use std::sync::Arc;

use fleet_tools::{Tool, ToolPool};

use super::{mcp_tool_name, McpConnection, McpServers, McpTool, McpToolInfo};

/// Which of a server's tools an agent may hold.
#[derive(Clone, Debug)]
enum Grant {
    /// Not looked at yet.
    Unknown,
    /// Every tool the server lists, now and later.
    Whole,
    /// These tools (their `mcp__…` names), while the server lists them.
    Named(HashSet<String>),
}

/// One server as one agent last saw it.
#[derive(Clone)]
struct Seen {
    connection: Arc<McpConnection>,
    /// The listing last acted on; 0 before the first look (listings start at 1).
    generation: u64,
    grant: Grant,
}

/// The servers whose tools an agent's pool may hold.
#[derive(Clone)]
pub struct McpLive {
    servers: Vec<Seen>,
    read_only_only: bool,
}

impl std::fmt::Debug for McpLive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.servers.iter().map(|s| s.connection.name()).collect();
        f.debug_struct("McpLive")
            .field("servers", &names)
            .field("read_only_only", &self.read_only_only)
            .finish()
    }
}

impl McpLive {
    /// Watches `connections` for one agent; `read_only_only` for agents held to read-only
    /// tools. `None` when there is nothing to watch, so agents without MCP carry nothing.
    pub fn watch(connections: Vec<Arc<McpConnection>>, read_only_only: bool) -> Option<Self> {
        if connections.is_empty() {
            return None;
        }
        let servers = connections
            .into_iter()
            .map(|connection| Seen {
                connection,
                generation: 0,
                grant: Grant::Unknown,
            })
            .collect();
        Some(Self {
            servers,
            read_only_only,
        })
    }

    /// Watches a session's servers for the main agent: those that connected at the start,
    /// whose grant is read off the agent's pool as usual, and those that failed then, which
    /// the agent was given nothing of only because they had nothing to give: when a
    /// reconnect brings one, the agent gets all its tools (read-only agents, its read-only
    /// ones). `None` without servers.
    pub fn for_session(servers: &McpServers, read_only_only: bool) -> Option<Self> {
        let servers: Vec<Seen> = servers
            .entries
            .iter()
            .filter_map(|entry| {
                let connection = entry.server.clone()?;
                let grant = match entry.connection {
                    Some(_) => Grant::Unknown,
                    None => Grant::Whole,
                };
                Some(Seen {
                    connection,
                    generation: 0,
                    grant,
                })
            })
            .collect();
        (!servers.is_empty()).then_some(Self {
            servers,
            read_only_only,
        })
    }

    /// Acts on any server whose tools changed since the agent last looked, rewriting that
    /// server's tools in `pool`. True when the pool changed (the model must be shown the new
    /// definitions).
    pub async fn refresh(&mut self, pool: &mut ToolPool) -> bool {
        let mut changed = false;
        for seen in &mut self.servers {
            let generation = seen.connection.sync_tools().await;
            if generation == seen.generation {
                continue;
            }
            seen.generation = generation;
            let listing = seen.connection.tools().await;
            let prefix = format!("mcp__{}__", seen.connection.name());
            let held: Vec<Arc<dyn Tool>> = pool
                .iter()
                .filter(|tool| tool.name().starts_with(&prefix))
                .cloned()
                .collect();
            if matches!(seen.grant, Grant::Unknown) {
                seen.grant = grant_of(&held, seen.connection.name(), &listing);
            }
            let fresh: Vec<McpTool> = listing
                .iter()
                .filter(|info| match &seen.grant {
                    Grant::Whole => true,
                    Grant::Named(names) => {
                        names.contains(&mcp_tool_name(seen.connection.name(), &info.name))
                    }
                    Grant::Unknown => false,
                })
                .filter(|info| !self.read_only_only || info.read_only_hint)
                .map(|info| McpTool::new(seen.connection.clone(), info.clone()))
                .collect();
            if same_tools(&held, &fresh) {
                continue;
            }
            tracing::debug!(
                server = seen.connection.name(),
                before = held.len(),
                after = fresh.len(),
                "MCP tools changed; the agent's next request shows the new list"
            );
            pool.retain(|tool| !tool.name().starts_with(&prefix));
            for tool in fresh {
                pool.insert(Arc::new(tool));
            }
            changed = true;
        }
        changed
    }
}

/// What the agent was given of a server, judged from the tools it holds: all of them (as
/// far as the current listing shows) means the whole server.
fn grant_of(held: &[Arc<dyn Tool>], server: &str, listing: &[McpToolInfo]) -> Grant {
    let names: HashSet<String> = held.iter().map(|tool| tool.name().to_string()).collect();
    let whole = !names.is_empty()
        && listing
            .iter()
            .all(|info| names.contains(&mcp_tool_name(server, &info.name)));
    if whole {
        Grant::Whole
    } else {
        Grant::Named(names)
    }
}

/// Whether the pool already shows the model exactly these tools.
fn same_tools(held: &[Arc<dyn Tool>], fresh: &[McpTool]) -> bool {
    held.len() == fresh.len()
        && fresh.iter().all(|new| {
            held.iter().any(|old| {
                old.name() == new.name()
                    && old.description() == new.description()
                    && old.input_schema() == new.input_schema()
            })
        })
}
