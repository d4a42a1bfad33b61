//! Starting a subagent: checking the limits, building it, and running it in the foreground
//! (the caller waits) or as a background task (the caller gets a notification later).

use super::input::AgentInput;
use super::pool::{child_keeps, child_permissions, shape};
use super::report::{self, ChildOutcome};
use super::tap::ChildTap;
use super::{new_agent_id, ParentView, Spawner};
use crate::agent::Agent;
use crate::config::AgentConfig;
use crate::context::{AgentContext, SubagentContext};
use crate::definitions::{AgentDefinition, Isolation};
use crate::inbox::Inbox;
use crate::ledger::{Refusal, RequestedMode};
use crate::limits::SlotGuard;
use crate::settle::Settle;
use crate::sink::EventSink;
use crate::tasks::NewTask;
use fleet_protocol::{AgentRef, KilledBy, Message, RunResult, TaskStatus, TaskUsage};
use fleet_store::SidechainWriter;
use fleet_tools::{ToolContext, ToolError, ToolOutput};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// A child ready to run.
struct Child {
    agent: Agent,
    agent_id: String,
    inbox: Arc<Inbox>,
    sink: EventSink,
    tap: Arc<ChildTap>,
    context: Arc<AgentContext>,
    prompt: Message,
    output_file: String,
    depth: u32,
}

impl Spawner {
    /// Runs one Agent tool call for the agent `parent`.
    pub(crate) async fn spawn(
        self: &Arc<Self>,
        parent: &Arc<ParentView>,
        input: AgentInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        input
            .check_features(self.config.features)
            .map_err(ToolError::Failed)?;
        let def = self.definition(input.subagent_type.as_deref())?;
        if let Some(isolation) = def.isolation.filter(|_| !self.config.features.isolation) {
            let isolation = match isolation {
                Isolation::Worktree => "worktree",
                Isolation::Remote => "remote",
            };
            return Err(ToolError::Failed(format!(
                "Agent type {:?} asks for isolation: {isolation}, which this version of fleet \
                 cannot provide yet; use another agent type or do the work yourself.",
                def.name
            )));
        }
        let depth = parent.depth + 1;
        let background = input.run_in_background.unwrap_or(false) || def.background;
        let slot = self.admit(parent, depth)?;
        let requested = match input.run_in_background {
            Some(true) => RequestedMode::Background,
            Some(false) => RequestedMode::Foreground,
            None => RequestedMode::Unset,
        };
        let tool_use_id = ctx.tool_use_id.clone().unwrap_or_default();
        let child = self.build(parent, &def, &input, ctx, &tool_use_id, depth)?;
        self.ledger.spawned(&def.name, depth, requested, background);
        if background {
            self.launch(parent, def, input, child, slot, tool_use_id)
                .await
        } else {
            let cancel = ctx.cancel.child_token();
            let started = Instant::now();
            let agent_id = child.agent_id.clone();
            let outcome = run_to_end(self.clone(), child, cancel.clone()).await;
            drop(slot);
            let status = outcome.status(cancel.is_cancelled());
            self.ledger
                .finish(&agent_id, status, Some(KilledBy::Parent));
            Ok(report::completed(
                &agent_id,
                &def,
                &outcome,
                started.elapsed(),
            ))
        }
    }

    fn definition(&self, requested: Option<&str>) -> Result<AgentDefinition, ToolError> {
        let name = requested
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or("general-purpose");
        self.config.agents.get(name).cloned().ok_or_else(|| {
            ToolError::Failed(format!(
                "Unknown subagent_type {name:?}. Available agent types: {}.",
                self.config.agents.names().join(", ")
            ))
        })
    }

    /// Checks depth, budget and concurrency; a refusal is counted and explained.
    fn admit(&self, parent: &ParentView, depth: u32) -> Result<SlotGuard, ToolError> {
        let limits = self.config.limits;
        if depth > limits.max_depth {
            self.ledger.refused(Refusal::Depth);
            return Err(ToolError::Failed(format!(
                "Cannot start a subagent: the nesting limit is {} levels (FLEET_MAX_SPAWN_DEPTH) and \
                 this agent is already at depth {}. Do this part of the work yourself.",
                limits.max_depth, parent.depth
            )));
        }
        if let Some(budget) = self.config.max_budget_usd {
            let spent = self.ledger.total_cost_usd();
            if spent >= budget {
                self.ledger.refused(Refusal::Budget);
                return Err(ToolError::Failed(format!(
                    "Cannot start a subagent: the session's budget of ${budget:.4} is used up \
                     (spent ${spent:.4}). Finish with what you have."
                )));
            }
        }
        self.slots.try_acquire().ok_or_else(|| {
            self.ledger.refused(Refusal::Concurrency);
            ToolError::Failed(format!(
                "Cannot start a subagent: {} are already running, the most allowed at once \
                 (FLEET_MAX_CONCURRENT_SUBAGENTS). Wait for some to finish, then try again.",
                self.slots.max()
            ))
        })
    }

    fn build(
        self: &Arc<Self>,
        parent: &Arc<ParentView>,
        def: &AgentDefinition,
        input: &AgentInput,
        ctx: &ToolContext,
        tool_use_id: &str,
        depth: u32,
    ) -> Result<Child, ToolError> {
        let agent_id = new_agent_id();
        let model = self.child_model(parent, def, input.model.as_deref());
        let cwd = self.child_cwd(input.cwd.as_deref(), &ctx.cwd)?;
        let permissions = Arc::new(child_permissions(&parent.permissions, def).map_err(|err| {
            ToolError::Failed(format!("Agent type {:?} has a bad rule: {err}", def.name))
        })?);
        let inbox = Arc::new(Inbox::new());
        let view = Arc::new(ParentView {
            agent_id: agent_id.clone(),
            depth,
            model: model.clone(),
            permissions: permissions.clone(),
            tool_names: OnceLock::new(),
            inbox: inbox.clone(),
            approver: parent.approver.clone(),
            cwd: cwd.clone(),
        });
        let tools = self.assemble(
            &view,
            |name| child_keeps(parent, def, name),
            def.restriction,
        );
        let tools = super::scoped::apply(tools, def, &permissions).map_err(|err| {
            ToolError::Failed(format!(
                "Agent type {:?} has a bad tools entry: {err}",
                def.name
            ))
        })?;
        let definitions = self.definitions_for(&tools, &shape(&tools, def));

        let mut config = AgentConfig::new(model.clone(), tools, permissions);
        config.max_tokens = self.config.max_tokens;
        config.system = std::iter::once(def.prompt.clone())
            .chain(std::iter::once(SUBAGENT_NOTES.to_string()))
            .chain(self.config.shared_system.iter().cloned())
            .collect();
        config.max_turns = def.max_turns;
        config.inbox = Some(inbox.clone());
        config.ledger = Some(self.ledger.clone());
        config.tool_definitions = Some(definitions);
        config.approver = parent.approver.clone();

        let writer = match &self.config.transcripts {
            Some(target) => Some(
                SidechainWriter::new(&target.home, &target.project, &target.session_id, &agent_id)
                    .map_err(|err| ToolError::Failed(format!("Cannot start a subagent: {err}")))?,
            ),
            None => None,
        };
        let output_file = writer
            .as_ref()
            .map(|w| w.path().display().to_string())
            .unwrap_or_default();
        let tap = Arc::new(ChildTap {
            transcript: writer.map(Mutex::new),
            transcript_error: Mutex::new(None),
            task: OnceLock::new(),
        });
        let agent_ref = AgentRef::subagent(&agent_id, tool_use_id, &def.name, &input.description);
        let sink = EventSink::new(agent_ref, self.sink.sender()).with_tap(tap.clone());
        let tool_ctx = ToolContext::new(cwd, self.config.workspace.clone());
        let session_id = self
            .config
            .transcripts
            .as_ref()
            .map(|t| t.session_id.clone())
            .unwrap_or_default();
        let agent = Agent::new(
            self.config.client.clone(),
            self.config.catalog.clone(),
            config,
            tool_ctx,
            session_id,
        );
        self.ledger
            .register(&agent_id, &def.name, Some(&parent.agent_id), depth, &model);
        let context = Arc::new(AgentContext::Subagent(SubagentContext::new(
            &agent_id,
            &def.name,
            def.is_builtin(),
            depth,
            ctx.request_id.clone(),
        )));
        let prompt = match &def.initial_prompt {
            Some(first) => format!("{first}\n\n{}", input.prompt),
            None => input.prompt.clone(),
        };
        Ok(Child {
            agent,
            agent_id,
            inbox,
            sink,
            tap,
            context,
            prompt: Message::user_text(prompt),
            output_file,
            depth,
        })
    }

    /// `cwd` from the call, which must be a folder inside the workspace; else the parent's.
    fn child_cwd(
        &self,
        requested: Option<&str>,
        parent_cwd: &std::path::Path,
    ) -> Result<PathBuf, ToolError> {
        let Some(requested) = requested.filter(|c| !c.trim().is_empty()) else {
            return Ok(parent_cwd.to_path_buf());
        };
        let dir = parent_cwd.join(requested);
        let dir = dir.canonicalize().map_err(|err| {
            ToolError::Failed(format!("cwd {requested:?}: {err}; give an existing folder"))
        })?;
        let workspace = &self.config.workspace;
        let inside = dir.starts_with(&workspace.root)
            || workspace
                .additional
                .iter()
                .any(|extra| dir.starts_with(extra));
        if !dir.is_dir() || !inside {
            return Err(ToolError::Failed(format!(
                "cwd {requested:?} must be a folder inside the project ({})",
                workspace.root.display()
            )));
        }
        Ok(dir)
    }

    /// Registers a background task and starts the child on its own cancellation root.
    async fn launch(
        self: &Arc<Self>,
        parent: &Arc<ParentView>,
        def: AgentDefinition,
        input: AgentInput,
        child: Child,
        slot: SlotGuard,
        tool_use_id: String,
    ) -> Result<ToolOutput, ToolError> {
        let cancel = CancellationToken::new();
        let task_id = child.agent_id.clone();
        let model = child.agent.config().model.clone();
        // From now on the child's progress shows on its task.
        let _ = child.tap.task.set((self.tasks.clone(), task_id.clone()));
        self.tasks
            .register(NewTask {
                task_id: task_id.clone(),
                owner_id: parent.agent_id.clone(),
                owner_inbox: parent.inbox.clone(),
                tool_use_id,
                description: input.description.clone(),
                subagent_type: def.name.clone(),
                prompt: input.prompt.clone(),
                model: model.clone(),
                depth: child.depth,
                output_file: child.output_file.clone(),
                cancel: cancel.clone(),
            })
            .await;
        let output = report::launched(&task_id, &def, &input, &model, &child.output_file);
        let spawner = self.clone();
        tokio::spawn(async move {
            let _ = spawner.tasks.set_running(&task_id);
            let outcome = run_to_end(spawner.clone(), child, cancel.clone()).await;
            drop(slot);
            let status = outcome.status(cancel.is_cancelled());
            let usage = TaskUsage {
                total_tokens: outcome.total_tokens(),
                tool_uses: outcome.tool_uses,
                duration_ms: 0,
            };
            // A task stopped meanwhile has already ended; its kill stands.
            let _ = spawner
                .tasks
                .finish(&task_id, status, outcome.result_text(), usage, None)
                .await;
        });
        Ok(output)
    }
}

/// Runs the child on its prompt, then lets it react to its own background tasks until none
/// are left, so nothing it started is orphaned. Returns the last run's result and totals.
async fn run_to_end(
    spawner: Arc<Spawner>,
    child: Child,
    cancel: CancellationToken,
) -> ChildOutcome {
    let Child {
        mut agent,
        agent_id,
        inbox,
        sink,
        tap,
        context,
        prompt,
        ..
    } = child;
    let tasks = spawner.tasks.clone();
    context
        .scope(async move {
            let mut outcome = ChildOutcome::default();
            let result = agent.run(prompt, &sink, &cancel).await;
            outcome.add(&result, &spawner, &agent_id);
            Settle {
                owner: &agent_id,
                tasks: &tasks,
                inbox: &inbox,
                sink: &sink,
                cancel: &cancel,
                announce: None,
            }
            .run(&mut agent, |result| {
                outcome.add(result, &spawner, &agent_id)
            })
            .await;
            if cancel.is_cancelled() {
                tasks.stop_owned_by(&agent_id, KilledBy::Parent).await;
            }
            outcome.transcript_error = tap.take_error();
            outcome
        })
        .await
}

impl ChildOutcome {
    fn add(&mut self, result: &RunResult, spawner: &Spawner, agent_id: &str) {
        self.usage += &result.usage;
        self.cost_usd += result.total_cost_usd;
        self.turns += result.num_turns;
        self.tool_uses = spawner
            .ledger
            .agent(agent_id)
            .map(|a| a.tool_uses)
            .unwrap_or(self.tool_uses);
        self.last = Some(result.clone());
    }

    fn status(&self, cancelled: bool) -> TaskStatus {
        match &self.last {
            _ if cancelled => TaskStatus::Killed,
            Some(result) if !result.is_error() && self.transcript_error.is_none() => {
                TaskStatus::Completed
            }
            _ => TaskStatus::Failed,
        }
    }
}

/// Told to every subagent after its own prompt.
const SUBAGENT_NOTES: &str = "You are running as a subagent: another agent gave you this task \
and receives only your final message, not your tool calls or their output. Make that message \
complete on its own: what you found or changed, with absolute file paths and the key lines, and \
anything you could not do. Do not ask questions back; decide sensibly and say what you assumed.";
