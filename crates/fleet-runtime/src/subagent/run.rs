//! Starting a subagent: checking the limits, choosing what it runs as (an agent type or a fork
//! of its caller), and running it in the foreground (the caller waits) or as a background task
//! (the caller gets a notification later).

use super::admission::StartPermit;
use super::build::{Blueprint, Child, Kind, Start};
use super::directory::AgentRecord;
use super::fork::{fork_history, fork_prompt, is_fork_conversation, ForkPoint, FORK_TYPE};
use super::input::AgentInput;
use super::lifecycle::Run;
use super::report::{self, ChildOutcome};
use super::{new_agent_id, ParentView, Spawner};
use crate::context::AgentContext;
use crate::definitions::Isolation;
use crate::ledger::{Refusal, RequestedMode};
use crate::limits::SlotGuard;
use crate::settle::Settle;
use crate::tasks::NewTask;
use fleet_protocol::{KilledBy, Message, RunResult, TaskStatus};
use fleet_tools::{ToolContext, ToolError, ToolOutput};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl Spawner {
    /// Runs one agent of type `agent_type` on `prompt` in the foreground, as the main agent's
    /// Agent call would, and returns what that call would answer (its structured copy holds
    /// the result, cost and any kept worktree). For commands that run one agent with no model
    /// turn of their own (`fleet verify`); the main agent's tools must be set up.
    pub async fn run_child(
        self: &Arc<Self>,
        agent_type: &str,
        description: &str,
        prompt: &str,
        cwd: &std::path::Path,
    ) -> Result<ToolOutput, ToolError> {
        let parent = self
            .main_view()
            .ok_or_else(|| ToolError::failed("the main agent's tools are not set up"))?;
        let input = AgentInput {
            description: description.to_string(),
            prompt: prompt.to_string(),
            subagent_type: Some(agent_type.to_string()),
            model: None,
            run_in_background: Some(false),
            isolation: None,
            name: None,
            team_name: None,
            cwd: None,
        };
        let mut ctx = ToolContext::new(cwd.to_path_buf(), self.config.places.workspace.clone());
        ctx.tool_use_id = Some(format!(
            "toolu_fleet_{}",
            agent_type.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
        ));
        self.spawn(&parent, input, &ctx).await
    }

    /// Runs one Agent tool call for the agent `parent`.
    ///
    /// Its steps are boxed where awaited (see [`crate::agent::Agent::run`]): this future is
    /// held for the whole life of every subagent, and inline steps made it about 48 KB.
    pub(crate) async fn spawn(
        self: &Arc<Self>,
        parent: &Arc<ParentView>,
        input: AgentInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let features = self.features();
        input.check_features(features)?;
        let in_teammate = AgentContext::current().is_some_and(|c| c.teammate().is_some());
        if in_teammate && input.run_in_background == Some(true) {
            return Err(ToolError::failed(
                "In-process teammates cannot spawn background agents. Leave out \
                 `run_in_background` to run a subagent and wait for its answer.",
            ));
        }
        if let Some(name) = input
            .name
            .clone()
            .filter(|_| features.teams && !features.coordinator())
        {
            let team = self.team.clone().ok_or_else(|| {
                ToolError::failed("Teams are off in this session (FLEET_AGENT_TEAMS=0).")
            })?;
            return Box::pin(team.spawn_teammate(self, parent, input, &name, ctx)).await;
        }
        let fork = self.fork_point(parent, &input)?;
        if fork.is_some() && input.isolation.is_some() {
            return Err(ToolError::failed(
                "A fork works in its parent's folder, with its conversation; leave out \
                 `isolation`, or name a subagent_type to isolate.",
            ));
        }
        let (kind, history, prompt) = match &fork {
            Some(point) => (
                Kind::Fork(point.base.clone()),
                fork_history(&point.messages),
                fork_prompt(&point.messages, &input.prompt),
            ),
            None => {
                let def = self.config.definition(input.subagent_type.as_deref())?;
                self.isolation.check(&def)?;
                let prompt = match &def.initial_prompt {
                    Some(first) => format!("{first}\n\n{}", input.prompt),
                    None => input.prompt.clone(),
                };
                (Kind::Defined(def), Vec::new(), Message::user_text(prompt))
            }
        };
        if let Some(name) = &input.name {
            self.directory.check_name_free(name)?;
        }
        let depth = parent.depth + 1;
        // A teammate waits for its subagents: it has no background of its own to return to.
        let background = !in_teammate
            && (features.always_background()
                || input.run_in_background == Some(true)
                || matches!(&kind, Kind::Defined(def) if def.background));
        let slot = self.admit(depth)?;
        let requested = match input.run_in_background {
            Some(true) => RequestedMode::Background,
            Some(false) => RequestedMode::Foreground,
            None => RequestedMode::Unset,
        };
        let (model, cwd) = match &kind {
            Kind::Defined(def) => (
                self.config.child_model(parent, def, input.model.as_deref()),
                self.config.child_cwd(input.cwd.as_deref(), &ctx.cwd)?,
            ),
            Kind::Fork(base) => (base.model.clone(), ctx.cwd.clone()),
        };
        if let Kind::Defined(def) = &kind {
            if super::isolate::requested_isolation(&input, def)? == Some(Isolation::Remote) {
                // It runs on a worker: no local slot, worktree or servers.
                drop(slot);
                let call = super::remote::RemoteCall {
                    parent,
                    input: &input,
                    def,
                    model,
                    cwd,
                    depth,
                };
                let launch = call.launch(self.remote.as_ref(), &self.tasks, ctx);
                return Box::pin(launch).await;
            }
        }
        // Nothing is made for the child until it may be (see `admission`).
        let start = Box::pin(StartPermit::acquire()).await;
        let isolate = match &kind {
            Kind::Defined(def) => {
                let requested = super::isolate::requested_isolation(&input, def)?;
                self.isolation.isolate_for(requested, def)?
            }
            Kind::Fork(_) => None,
        };
        // Its required MCP servers, before anything else is made for it.
        let child_mcp = Arc::new(match &kind {
            Kind::Defined(def) => Box::pin(self.mcp.child(def)).await?,
            Kind::Fork(_) => super::mcp::ChildMcp::default(),
        });
        let agent_id = new_agent_id();
        let worktree = match isolate {
            Some(isolate) => Box::pin(self.isolation.make(isolate, &cwd, &agent_id)).await?,
            None => None,
        };
        let cwd = match &worktree {
            Some(wt) => super::isolate::map_cwd(wt, &cwd),
            None => cwd,
        };
        let bp = Arc::new(Blueprint {
            kind,
            parent: parent.clone(),
            description: input.description.clone(),
            name: input.name.clone(),
            model,
            cwd,
            depth,
            member: None,
            worktree: worktree.clone(),
            mcp: child_mcp.clone(),
        });
        // A background child lives on its own root: interrupting its parent leaves it be. So
        // does one the user may move to the background; its caller forwards an interrupt
        // while it waits (see `waiting`).
        let run = Run::new(if background || ctx.background.is_some() {
            CancellationToken::new()
        } else {
            ctx.cancel.child_token()
        });
        let tool_use_id = ctx.tool_use_id.clone().unwrap_or_default();
        let built = self.build(
            &bp,
            Start {
                agent_id,
                write_history: !history.is_empty(),
                history,
                prompt,
                tool_use_id: tool_use_id.clone(),
                request_id: ctx.request_id.clone(),
                transcript_after: None,
                run: run.clone(),
            },
        );
        let child = match built {
            Ok(child) => child,
            Err(err) => {
                if let Some(wt) = &worktree {
                    Box::pin(self.isolation.settle(wt)).await;
                }
                Box::pin(child_mcp.stop()).await;
                return Err(err);
            }
        };
        child.tap.start.hold(start);
        let record = self.directory.add(&child.agent_id, bp.clone(), run)?;
        let type_name = bp.kind.type_name();
        self.ledger.register(
            &child.agent_id,
            type_name,
            Some(&parent.agent_id),
            depth,
            &bp.model,
        );
        self.ledger.spawned(type_name, depth, requested, background);
        if background {
            let task_id = child.agent_id.clone();
            let output_file = child.output_file.clone();
            let admitted = Admitted {
                bp: bp.clone(),
                child,
                record,
                slot,
            };
            Box::pin(self.launch(parent, admitted, &input.prompt, tool_use_id)).await;
            return Ok(report::launched(
                &task_id,
                &bp,
                &input.prompt,
                &output_file,
                parent.tool_names(),
            ));
        }
        let admitted = Admitted {
            bp,
            child,
            record,
            slot,
        };
        Box::pin(self.run_foreground(parent, admitted, &input.prompt, ctx)).await
    }

    /// The parent's conversation when this call forks it: `subagent_type: "fork"`, or no
    /// type while fork mode is on. A fork's own attempt to fork is refused.
    fn fork_point(
        &self,
        parent: &ParentView,
        input: &AgentInput,
    ) -> Result<Option<Arc<ForkPoint>>, ToolError> {
        let requested = input.subagent_type.as_deref().map(str::trim);
        let wants_fork = match requested {
            Some(name) if name.eq_ignore_ascii_case(FORK_TYPE) => true,
            Some("") | None => self.config.children.features.fork(),
            Some(_) => false,
        };
        if !wants_fork {
            return Ok(None);
        }
        if !self.config.children.features.fork() {
            let message = format!(
                "Forking is off in this session (FLEET_FORK_SUBAGENT=1 turns it on{}). Use \
                 one of the agent types: {}.",
                if self.config.children.features.coordinator() {
                    "; it is always off in coordinator mode"
                } else {
                    ""
                },
                self.config.children.agents.names().join(", ")
            );
            return Err(ToolError::bad_value("subagent_type", message));
        }
        let point = parent.fork_source.latest();
        // How the agent was started says it is a fork; its messages say so too if that was
        // lost (the fallback).
        let in_fork = AgentContext::current().is_some_and(|c| c.agent_type() == FORK_TYPE)
            || point
                .as_ref()
                .is_some_and(|p| is_fork_conversation(&p.messages));
        if in_fork {
            return Err(ToolError::bad_value(
                "subagent_type",
                "Forking is not available inside a fork: you are already a forked worker. Do \
                 the work directly with your tools, or name a subagent_type to delegate part \
                 of it.",
            ));
        }
        if input.model.is_some() || input.cwd.is_some() {
            let field = if input.model.is_some() {
                "model"
            } else {
                "cwd"
            };
            return Err(ToolError::bad_value(
                field,
                "A fork runs on your model in your folder, with your conversation; leave out \
                 `model` and `cwd`, or name a subagent_type.",
            ));
        }
        point.map(Some).ok_or_else(|| {
            ToolError::Failed(
                "Cannot fork: this agent's conversation is not available to copy. Name a \
                 subagent_type instead."
                    .into(),
            )
        })
    }

    /// Checks depth, budget and concurrency for an agent at `depth`; a refusal is counted and
    /// explained.
    pub(crate) fn admit(&self, depth: u32) -> Result<SlotGuard, ToolError> {
        let limits = self.config.limits.spawn;
        if depth > limits.max_depth {
            self.ledger.refused(Refusal::Depth);
            return Err(ToolError::Failed(format!(
                "Cannot start a subagent: the nesting limit is {} levels (FLEET_MAX_SPAWN_DEPTH) and \
                 this agent is already at depth {}. Do this part of the work yourself.",
                limits.max_depth,
                depth - 1
            )));
        }
        if let Some(budget) = self.config.limits.max_budget_usd {
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

    /// Registers a background task owned by `owner` and starts the child. The task ends,
    /// and `owner` is notified, when the child's run has ended.
    pub(super) async fn launch(
        self: &Arc<Self>,
        owner: &ParentView,
        admitted: Admitted,
        prompt: &str,
        tool_use_id: String,
    ) {
        let Admitted {
            bp,
            child,
            record,
            slot,
        } = admitted;
        let task_id = child.agent_id.clone();
        // From now on the child's progress shows on its task.
        let _ = child.tap.task.set((self.tasks.clone(), task_id.clone()));
        self.tasks
            .register(NewTask {
                task_id: task_id.clone(),
                name: bp.name.clone(),
                owner_id: owner.agent_id.clone(),
                owner_inbox: owner.inbox.clone(),
                tool_use_id,
                description: bp.description.clone(),
                subagent_type: bp.kind.type_name().to_string(),
                prompt: prompt.to_string(),
                model: bp.model.clone(),
                depth: child.depth,
                output_file: child.output_file.clone(),
                cancel: child.run.cancel.clone(),
            })
            .await;
        let spawner = self.clone();
        let worktree = bp.worktree.clone();
        let child_mcp = bp.mcp.clone();
        tokio::spawn(async move {
            let _ = spawner.tasks.set_running(&task_id);
            let cancel = child.run.cancel.clone();
            let outcome = run_guarded(spawner.clone(), child, &record).await;
            drop(slot);
            child_mcp.stop().await;
            let mut result = outcome.result_text();
            if let Some(wt) = &worktree {
                if let Some(kept) = Box::pin(spawner.isolation.settle(wt)).await {
                    result.push_str(&super::isolate::kept_text(&kept));
                    if let Ok(json) = serde_json::to_string(&kept) {
                        spawner.tasks.set_worktree(&task_id, json);
                    }
                }
            }
            let status = outcome.status(cancel.is_cancelled());
            let usage = outcome.task_usage();
            // A task stopped meanwhile has already ended; its kill stands.
            let _ = spawner
                .tasks
                .finish(&task_id, status, result, usage, None)
                .await;
            // Only now may a message resume it: its task has ended and its transcript is whole.
            record.life.set_stopped();
        });
    }
}

/// A child admitted and built, with what it holds until its run ends.
pub(super) struct Admitted {
    pub bp: Arc<Blueprint>,
    pub child: Child,
    /// Its entry in the session's directory (how SendMessage reaches and resumes it).
    pub record: Arc<AgentRecord>,
    /// Its place among the agents running at once, given back when its run ends.
    pub slot: SlotGuard,
}

/// [`run_to_end`] under a panic guard: a child that crashes still ends — failed, saying why —
/// so its task reports and nobody waits for it forever.
pub(super) async fn run_guarded(
    spawner: Arc<Spawner>,
    child: Child,
    record: &AgentRecord,
) -> ChildOutcome {
    use futures::FutureExt;
    let session_id = child.agent.session_id().to_string();
    // Boxed: moved into the guard unboxed, the child's whole run would be laid out twice in
    // the task (the future before it starts, and again inside the guard) — tens of KB per
    // agent, which a fan-out of thousands multiplies.
    match std::panic::AssertUnwindSafe(Box::pin(run_to_end(spawner, child, record)))
        .catch_unwind()
        .await
    {
        Ok(outcome) => outcome,
        Err(payload) => {
            let crash = crate::crash::SessionCrash::from_panic(payload);
            tracing::error!("a subagent crashed: {crash}");
            ChildOutcome {
                last: Some(crate::crash::error_result(
                    &session_id,
                    format!("it stopped unexpectedly ({crash})"),
                )),
                ..ChildOutcome::default()
            }
        }
    }
}

/// Runs the child on its prompt, then lets it react to its own background tasks and to
/// messages sent to it until none are left, so nothing it started is orphaned and nothing
/// sent to it is dropped. Returns the runs' result and totals.
async fn run_to_end(spawner: Arc<Spawner>, child: Child, record: &AgentRecord) -> ChildOutcome {
    let Child {
        mut agent,
        agent_id,
        run,
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
            let cancel = &run.cancel;
            let result = agent.run(prompt, &sink, cancel).await;
            // Answered or not, its first run is over: the permit goes to the next child.
            tap.start.release();
            outcome.add(&result, &spawner, &agent_id);
            loop {
                // Boxed: it holds a run of its own, which inline would double this state.
                let settle = Settle {
                    owner: &agent_id,
                    tasks: &tasks,
                    inbox: &run.inbox,
                    sink: &sink,
                    cancel,
                    announce: None,
                    team: None,
                    wait_for_tasks: true,
                };
                Box::pin(settle.run(&mut agent, |result| {
                    outcome.add(result, &spawner, &agent_id)
                }))
                .await;
                if record.life.try_close(&run) {
                    break;
                }
            }
            if let Some(source) = agent.config().fork_source() {
                source.clear();
            }
            if cancel.is_cancelled() {
                // Boxed: only a stopped child takes this path, and inline its 3 KB would be
                // part of every child's state for its whole run.
                Box::pin(tasks.stop_owned_by(&agent_id, KilledBy::Parent)).await;
            }
            outcome.transcript_error = tap.take_error();
            outcome
        })
        .await
}

impl ChildOutcome {
    fn add(&mut self, result: &RunResult, spawner: &Spawner, agent_id: &str) {
        let nothing_reported_before = self.last.is_none() || !self.usage.is_reported();
        self.usage += &result.usage;
        self.usage.unreported = nothing_reported_before && !result.usage.is_reported();
        self.unreported_replies += result.unreported_replies();
        self.cost_usd += result.total_cost_usd;
        self.turns += result.num_turns;
        self.tool_uses = spawner
            .ledger
            .agent(agent_id)
            .map(|a| a.tool_uses)
            .unwrap_or(self.tool_uses);
        self.last = Some(result.clone());
    }

    pub(super) fn status(&self, cancelled: bool) -> TaskStatus {
        match &self.last {
            _ if cancelled => TaskStatus::Killed,
            Some(result) if !result.is_error() && self.transcript_error.is_none() => {
                TaskStatus::Completed
            }
            _ => TaskStatus::Failed,
        }
    }
}
