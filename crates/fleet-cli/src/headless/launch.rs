//! The steps of building a session that `-p` and the interactive mode share: what the MCP
//! servers give the agents, and starting the built agent (its history, its team taken up
//! again, the socket other sessions reach it on, the session task itself).

use super::session_file::SessionFile;
use super::setup::McpTools;
use anyhow::Context;
use fleet_protocol::{AgentEvent, Message};
use fleet_runtime::subagent::McpSession;
use fleet_runtime::{Agent, EventSink, Session, SessionHandle, Spawner};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The tools, instructions and start-up statuses of the session's MCP servers.
pub(crate) async fn mcp_tools(servers: &Arc<McpSession>) -> McpTools {
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

/// A built main agent and the parts of the tree it reports into, ready to start.
pub(crate) struct Ready {
    pub agent: Agent,
    pub spawner: Arc<Spawner>,
    pub sink: EventSink,
    pub events: mpsc::Receiver<AgentEvent>,
    /// A person is at the terminal: the next prompt need not wait for background tasks
    /// (see `Session::spawn_attended`).
    pub attended: bool,
}

/// A started session.
pub(crate) struct Started {
    pub handle: SessionHandle,
    /// The socket other sessions send to; removed when the session ends.
    pub socket: Option<PathBuf>,
}

/// Starts `ready` on the history `session` carries on from, taking up the session's team
/// again, listening for other sessions when teams ask for it, fed by `prompts`.
pub(crate) async fn start(
    ready: Ready,
    session: &mut SessionFile,
    prompts: mpsc::Receiver<Message>,
) -> anyhow::Result<Started> {
    let Ready {
        agent,
        spawner,
        sink,
        events,
        attended,
    } = ready;
    let agent = agent.with_history(session.history());
    // A resumed session takes up its team again: members, their conversations, unread mail.
    if let Some(team) = spawner
        .restore_team(session.mail_read())
        .await
        .map_err(anyhow::Error::msg)
        .context("bringing the session's team back")?
    {
        tracing::info!("resumed team {team}");
    }
    let mut socket = None;
    if spawner.teams().is_some_and(|t| t.settings.listen) {
        match spawner.listen_uds() {
            Ok(path) => socket = Some(path),
            Err(err) => tracing::warn!("not listening for other sessions' messages: {err}"),
        }
    }
    let handle = if attended {
        Session::spawn_attended(agent, prompts, sink, events, spawner)
    } else {
        Session::spawn_with(agent, prompts, sink, events, Some(spawner))
    };
    Ok(Started { handle, socket })
}
