//! What the spawner asks of the session's team service, without knowing it: the Agent tool's
//! teammate mode, team mail for SendMessage, the team's tools, TaskStop by a member's name,
//! and whether the team still has work going on.
//!
//! `teams/` implements this port (its `Teams`), and depends on `subagent/` to build and run
//! its members; `subagent/` never imports `teams/` (a test of the crate, `layering`, checks
//! it), so the two no longer reach into each other both ways. The spawner holds the service
//! only as this port; `Teams::of` (in teams/) recovers the service itself for the session.

use super::{AgentInput, ParentView, SendMessageInput, Spawner};
use fleet_tools::{Tool, ToolContext, ToolError, ToolOutput};
use futures::future::BoxFuture;
use std::any::Any;
use std::sync::Arc;

/// The session's team service, as the spawner sees it.
pub trait TeamPort: Send + Sync + std::fmt::Debug + 'static {
    /// Starts a teammate for the Agent call `input`, which names it `name`.
    fn spawn_teammate<'a>(
        &'a self,
        spawner: &'a Arc<Spawner>,
        parent: &'a Arc<ParentView>,
        input: AgentInput,
        name: &'a str,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// Handles SendMessage when `input.to` is a team address; `Ok(None)` when it is none (the
    /// spawner then looks among the subagents).
    fn send<'a>(
        &'a self,
        spawner: &'a Arc<Spawner>,
        sender: &'a ParentView,
        input: &'a SendMessageInput,
    ) -> BoxFuture<'a, Result<Option<ToolOutput>, ToolError>>;

    /// The members a sender can reach, for an unknown recipient's error.
    fn listing(&self) -> Vec<String>;

    /// The team's own tools (TeamCreate, the task list's, a teammate's ExitPlanMode) that
    /// `keep` accepts.
    fn tools(self: Arc<Self>, keep: &dyn Fn(&str) -> bool) -> Vec<Arc<dyn Tool>>;

    /// Whether `tool` is one only a team has (plain subagents never get it).
    fn is_team_tool(&self, tool: &str) -> bool;

    /// Told to every in-process teammate after its own prompt.
    fn member_notes(&self) -> &'static str;

    /// Stops the running member `name` (TaskStop by name); what TaskStop answers, or `None`
    /// when no such member runs.
    fn stop_member(&self, name: &str) -> Option<serde_json::Value>;

    /// Whether the team has work going on: while so, a headless session waits.
    fn busy(&self) -> bool;

    /// The team's change count; 0 without a team.
    fn version(&self) -> u64;

    /// Wakes once the team has changed since `seen` (or a team appears).
    fn changed_since(&self, seen: u64) -> BoxFuture<'_, ()>;

    /// Stops every member (the session is ending); returns how many were running.
    fn stop_all(&self) -> BoxFuture<'_, usize>;

    /// The service itself, for `teams/` to recover its own type.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}
