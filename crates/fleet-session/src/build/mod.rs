//! Building a session's main agent and the services its subagents come from: the model
//! client, tools and permissions, the sandbox, hooks, MCP tools, skills, teams, worktrees and
//! the remote launcher — from [`SessionOptions`], with what the front end adds ([`Host`]).
//!
//! - `permissions`: the rules and the tool list.
//! - `orchestration`: plain, fork or coordinator, and the coordinator's scratchpad.
//! - `agents`, `hooks`, `teams`, `structured`: one part each.
//! - `tool_host`: the tools alone, without an agent (`fleet mcp serve`).

pub mod agents;
pub mod hooks;
pub mod orchestration;
mod permissions;
mod structured;
mod teams;
mod tool_host;

pub use tool_host::{tool_host, ToolHost};

use crate::error::{Result, SessionError};
use crate::mcp::McpTools;
use crate::options::{Choice, SessionOptions};
use crate::report::Report;
use fleet_model::Provider;
use fleet_protocol::AgentEvent;
use fleet_runtime::coordinator::{worker_context, COORDINATOR_PROMPT};
use fleet_runtime::services::{ChildKit, ChildModels, OptionalServices, SpawnPlaces, TreeLimits};
use fleet_runtime::session::EVENT_BUFFER;
use fleet_runtime::subagent::{Features, MainAgent, Orchestration, TranscriptTarget};
use fleet_runtime::system_prompt::DEFAULT_PROMPT;
use fleet_runtime::{
    Agent, AgentConfig, Approver, Environment, EventSink, SpawnLimits, Spawner, SpawnerConfig,
    SystemPromptBuilder,
};
use fleet_store::FleetHome;
use fleet_tools::ToolPool;
use hooks::HostHooks;
use orchestration::Scratchpad;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The main agent and the spawner its subagents come from, reporting into one event stream.
pub struct Built {
    pub agent: Agent,
    pub spawner: Arc<Spawner>,
    pub sink: EventSink,
    pub events: mpsc::Receiver<AgentEvent>,
    /// The coordinator's scratchpad, kept for as long as the run.
    pub scratchpad: Option<Scratchpad>,
    /// The skills the session offers (an SDK host lists them as commands).
    pub skills: Arc<fleet_runtime::skills::SkillSet>,
}

/// What the front end driving the session adds to it.
#[derive(Default)]
pub struct Host {
    /// Who answers "ask" decisions (a person at the terminal, the UI, an SDK host); none
    /// makes them refusals.
    pub approver: Option<Arc<dyn Approver>>,
    /// Hooks an SDK host registered in `initialize`.
    pub hooks: Option<HostHooks>,
    /// The handle the session is steered by (interrupt, model, mode).
    pub controls: Option<fleet_runtime::controls::SessionControls>,
}

/// Builds the main agent of session `session_id` on `choice` (the model client with its
/// extras applied), with the MCP servers' tools `mcp`.
pub fn agent(
    options: &SessionOptions,
    choice: Choice,
    session_id: &str,
    host: Host,
    mcp: &McpTools,
    report: &dyn Report,
) -> Result<Built> {
    let cwd = options.cwd.as_path();
    let persist = options.persist;
    let approver = host.approver;
    let mode = orchestration::choose(options.coordinator, options.fork_subagent)?;
    let scratchpad = match mode {
        Orchestration::Coordinator => Some(orchestration::scratchpad(cwd, session_id, persist)?),
        _ => None,
    };
    let scratch_path = scratchpad.as_ref().map(|s| s.path.as_path());
    let mut permissions = permissions::permissions(options, scratch_path)?;
    let sandbox = Arc::new(options.sandbox.clone());
    // What the user's own `allowRead` lifts in the sandbox, the Read tool reads unasked too.
    permissions.rules.allow.extend(sandbox.allow_read_rules()?);
    let workspace = permissions.workspace.clone();
    let permissions = Arc::new(permissions);
    let keep = permissions::tool_filter(options.tools.as_deref(), &options.disallowed_tools)?;
    if options.max_turns == Some(0) {
        return Err(SessionError::invalid("--max-turns must be at least 1"));
    }
    if let Some(budget) = options.max_budget_usd {
        if budget.is_nan() || budget <= 0.0 {
            return Err(SessionError::invalid(format!(
                "--max-budget-usd must be a positive number of dollars, got {budget}"
            )));
        }
    }

    let environment = Environment::detect(cwd);
    let default_prompt = match mode {
        Orchestration::Coordinator => COORDINATOR_PROMPT,
        _ => DEFAULT_PROMPT,
    };
    let prompt = options
        .system_prompt
        .clone()
        .unwrap_or_else(|| default_prompt.to_string());
    let instructions = |builder: SystemPromptBuilder| {
        let builder = builder.project_instructions(options.project_instructions);
        if options.user_instructions {
            builder
        } else {
            builder.user_instructions(None)
        }
    };
    let mut system =
        instructions(SystemPromptBuilder::new(prompt).environment(environment.clone()));
    // Subagents get the same environment and instruction files after their own prompt.
    let mut shared_system: Vec<String> =
        instructions(SystemPromptBuilder::new(String::new()).environment(environment)).build();

    let catalog = Arc::new(choice.catalog);
    let asked_output = options.max_output_tokens;
    let (sink, events) = EventSink::channel(EVENT_BUFFER);
    let trusted = options.trusted;
    let agents = agents::load(
        &agents::sources(cwd, options.repo_root.clone(), options.agents.clone()),
        trusted,
        report,
    )?;
    let skills = Arc::new(agents::skills(
        &agents::sources(cwd, options.repo_root.clone(), None),
        &agents,
        trusted,
        report,
    ));
    if let Some(listing) = fleet_runtime::skills::listing(&skills) {
        shared_system.push(listing.clone());
        // The coordinator only directs workers; they are the ones who use skills.
        if mode != Orchestration::Coordinator {
            system = system.append(listing);
        }
    }
    let thinking = &options.thinking;
    let effort = thinking.effort();
    // Fields in this order so the fallible ones fail as before: limits, teams, hooks.
    let spawner = Spawner::new(
        SpawnerConfig {
            models: ChildModels {
                model_override: std::env::var("FLEET_SUBAGENT_MODEL")
                    .ok()
                    .filter(|m| !m.trim().is_empty()),
                resolve_aliases: choice.client.provider() == Provider::Anthropic,
                effort: effort.clone(),
                max_tokens: asked_output,
                ..ChildModels::new(choice.client.clone(), catalog.clone())
            },
            limits: TreeLimits {
                spawn: SpawnLimits::from_env()?,
                max_budget_usd: options.max_budget_usd,
            },
            places: SpawnPlaces {
                workspace: workspace.clone(),
                transcripts: persist
                    .then(|| FleetHome::from_env().ok())
                    .flatten()
                    .map(|home| TranscriptTarget {
                        home,
                        project: cwd.to_path_buf(),
                        session_id: session_id.to_string(),
                    }),
            },
            services: OptionalServices {
                teams: teams::settings(mode, session_id, options)?,
                // Worktrees live under the fleet home, outside the repository.
                worktrees: persist
                    .then(|| FleetHome::from_env().ok())
                    .flatten()
                    .map(|home| Arc::new(fleet_runtime::isolation::WorktreeManager::new(&home))),
                mcp: mcp.session.clone(),
                // Connected on the first `isolation: "remote"` call, not before.
                remote: options.remote.clone(),
            },
            children: ChildKit {
                agents: Arc::new(agents),
                base_tools: {
                    let mut base = ToolPool::builtin();
                    if !skills.is_empty() {
                        base.insert(Arc::new(fleet_runtime::skills::SkillTool::new(
                            skills.clone(),
                        )));
                    }
                    for tool in &mcp.tools {
                        base.insert(tool.clone());
                    }
                    base
                },
                shared_system,
                skills: skills.clone(),
                hooks: hooks::session_hooks(
                    &options.hooks,
                    options.project(),
                    cwd,
                    session_id,
                    host.hooks.as_ref(),
                    report,
                )?,
                sandbox: sandbox.clone(),
                features: Features {
                    orchestration: mode,
                    ..Features::default()
                },
            },
        },
        sink.clone(),
    );
    if mode == Orchestration::Coordinator {
        let servers: Vec<String> = mcp
            .session
            .as_ref()
            .map(|session| {
                session
                    .servers
                    .connections()
                    .iter()
                    .map(|c| c.name().to_string())
                    .collect()
            })
            .unwrap_or_default();
        system = system.append(worker_context(
            &spawner.worker_tools(&keep),
            &servers,
            scratch_path,
        ));
    }
    for append in &options.append_system_prompt {
        system = system.append(append.clone());
    }
    let tools = spawner.main_tools(
        MainAgent {
            model: choice.model.clone(),
            permissions: permissions.clone(),
            approver: approver.clone(),
            cwd: cwd.to_path_buf(),
        },
        keep,
    );

    let max_tokens =
        fleet_runtime::output_limit::for_model(&catalog.info(&choice.model), asked_output);
    let mut config = AgentConfig::new(choice.model, tools, permissions);
    config.model.max_tokens = max_tokens;
    config.model.max_tokens_asked = asked_output;
    config.context.system = system.build();
    if let Some(instructions) = &mcp.instructions {
        config.context.system.push(instructions.clone());
    }
    config.tools.mcp_servers = mcp.statuses.clone();
    config.tools.mcp_live = mcp
        .session
        .as_ref()
        .and_then(|session| fleet_runtime::mcp::McpLive::for_session(&session.servers, false));
    config.stop.max_turns = options.max_turns;
    thinking.apply(&mut config, &catalog);
    config.tools.approver = approver;
    config.controls = host.controls;
    config.stop.max_budget_usd = options.max_budget_usd;
    config.model.stream_events = options.include_partial_messages;
    structured::equip(options.json_schema.as_deref(), &mut config)?;
    spawner.attach_main(&mut config);
    let ctx = tool_host::tool_context(cwd, workspace, sandbox, &config.tools.permissions);
    let agent = Agent::new(choice.client, catalog, config, ctx, session_id);
    Ok(Built {
        agent,
        spawner,
        sink,
        events,
        scratchpad,
        skills,
    })
}
