//! Builds the main agent of a headless run from flags and settings: workspace, permissions,
//! tools and system prompt.

use super::{agents, orchestration};
use crate::args::PrintArgs;
use crate::model_choice::Choice;
use crate::settings::{repo_root, Settings};
use anyhow::bail;
use fleet_model::Provider;
use fleet_protocol::env;
use fleet_protocol::AgentEvent;
use fleet_runtime::coordinator::{worker_context, COORDINATOR_PROMPT};
use fleet_runtime::session::EVENT_BUFFER;
use fleet_runtime::subagent::{
    Features, MainAgent, Orchestration, TranscriptTarget, ORCHESTRATION_TOOLS,
};
use fleet_runtime::system_prompt::DEFAULT_PROMPT;
use fleet_runtime::teams::{TeamSettings, TEAM_TOOLS};
use fleet_runtime::{
    Agent, AgentConfig, Approver, Environment, EventSink, SpawnLimits, Spawner, SpawnerConfig,
    SystemPromptBuilder,
};
use fleet_store::FleetHome;
use fleet_tools::permissions::{
    split_rule_list, CommandLinePermissions, Permissions, RuleKind, SettingsSource,
};
use fleet_tools::sandbox::{AgentSandbox, SandboxConfig, SandboxKind};
use fleet_tools::{ToolContext, ToolPool, Workspace};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::mpsc;

/// What the session's MCP servers give its agents: their tools, their instructions, and how
/// each server's start went.
#[derive(Default, Clone)]
pub struct McpTools {
    pub tools: Vec<Arc<dyn fleet_tools::Tool>>,
    pub instructions: Option<String>,
    pub statuses: Vec<fleet_protocol::McpServerStatus>,
    /// The configuration and servers, for agents whose definitions name servers.
    pub session: Option<Arc<fleet_runtime::subagent::McpSession>>,
}

/// The main agent and the spawner its subagents come from, reporting into one event stream.
pub struct Built {
    pub agent: Agent,
    pub spawner: Arc<Spawner>,
    pub sink: EventSink,
    pub events: mpsc::Receiver<AgentEvent>,
    /// The coordinator's scratchpad, kept for as long as the run.
    pub scratchpad: Option<orchestration::Scratchpad>,
    /// The skills the session offers (an SDK host lists them as commands).
    pub skills: Arc<fleet_runtime::skills::SkillSet>,
}

/// What the process driving fleet adds to the session.
#[derive(Default)]
pub struct Host {
    /// Who answers "ask" decisions (a person at the terminal, or an SDK host); none makes
    /// them refusals.
    pub approver: Option<Arc<dyn Approver>>,
    /// Hooks an SDK host registered in `initialize`.
    pub hooks: Option<super::hooks::SdkHooks>,
    /// The handle an SDK host steers the main agent by (interrupt, model, mode).
    pub controls: Option<fleet_runtime::controls::SessionControls>,
}

// One call builds the whole session; its parts are independent inputs, not a bundle.
#[allow(clippy::too_many_arguments)]
pub fn agent(
    args: &PrintArgs,
    cwd: &Path,
    settings: &Settings,
    choice: Choice,
    session_id: &str,
    host: Host,
    persist: bool,
    mcp: &McpTools,
) -> anyhow::Result<Built> {
    let approver = host.approver;
    let choice = super::flags::client(args, choice)?;
    let mode = orchestration::choose(args, settings)?;
    let scratchpad = match mode {
        Orchestration::Coordinator => Some(orchestration::scratchpad(cwd, session_id, persist)?),
        _ => None,
    };
    let scratch_path = scratchpad.as_ref().map(|s| s.path.as_path());
    let mut permissions = permissions(args, cwd, settings, scratch_path)?;
    let sandbox = Arc::new(sandbox_config(args, settings)?);
    // What the user's own `allowRead` lifts in the sandbox, the Read tool reads unasked too.
    permissions.rules.allow.extend(sandbox.allow_read_rules()?);
    let workspace = permissions.workspace.clone();
    let permissions = Arc::new(permissions);
    let keep = tool_filter(args)?;
    if args.max_turns == Some(0) {
        bail!("--max-turns must be at least 1");
    }
    if let Some(budget) = args.max_budget_usd {
        if budget.is_nan() || budget <= 0.0 {
            bail!("--max-budget-usd must be a positive number of dollars, got {budget}");
        }
    }

    let environment = Environment::detect(cwd);
    let default_prompt = match mode {
        Orchestration::Coordinator => COORDINATOR_PROMPT,
        _ => DEFAULT_PROMPT,
    };
    let prompt = super::flags::system_prompt(args)?.unwrap_or_else(|| default_prompt.to_string());
    let mut system = super::flags::instruction_sources(
        args,
        SystemPromptBuilder::new(prompt).environment(environment.clone()),
    )?;
    // Subagents get the same environment and instruction files after their own prompt.
    let mut shared_system: Vec<String> = super::flags::instruction_sources(
        args,
        SystemPromptBuilder::new(String::new()).environment(environment),
    )?
    .build();

    let catalog = Arc::new(choice.catalog);
    let asked_output = crate::model_choice::asked_output_limit(args.max_output_tokens, settings)?;
    let (sink, events) = EventSink::channel(EVENT_BUFFER);
    let trusted = settings.trust.trusted;
    let agents = agents::load(cwd, args.agents.clone(), trusted)?;
    let skills = Arc::new(agents::skills(cwd, &agents, trusted));
    if let Some(listing) = fleet_runtime::skills::listing(&skills) {
        shared_system.push(listing.clone());
        // The coordinator only directs workers; they are the ones who use skills.
        if mode != Orchestration::Coordinator {
            system = system.append(listing);
        }
    }
    let thinking = super::thinking::Thinking::from_args(args, settings);
    let effort = thinking.effort();
    let spawner = Spawner::new(
        SpawnerConfig {
            shared_system,
            limits: SpawnLimits::from_env()?,
            max_budget_usd: args.max_budget_usd,
            model_override: std::env::var("FLEET_SUBAGENT_MODEL")
                .ok()
                .filter(|m| !m.trim().is_empty()),
            resolve_aliases: choice.client.provider() == Provider::Anthropic,
            transcripts: persist
                .then(|| FleetHome::from_env().ok())
                .flatten()
                .map(|home| TranscriptTarget {
                    home,
                    project: cwd.to_path_buf(),
                    session_id: session_id.to_string(),
                }),
            features: Features {
                orchestration: mode,
                ..Features::default()
            },
            sandbox: sandbox.clone(),
            teams: team_settings(mode, session_id, persist, args, settings)?,
            mcp: mcp.session.clone(),
            hooks: super::hooks::session_hooks(settings, cwd, session_id, host.hooks.as_ref())?,
            // Worktrees live under the fleet home, outside the repository.
            worktrees: persist
                .then(|| FleetHome::from_env().ok())
                .flatten()
                .map(|home| Arc::new(fleet_runtime::isolation::WorktreeManager::new(&home))),
            skills: skills.clone(),
            effort: effort.clone(),
            max_tokens: asked_output,
            // Connected on the first `isolation: "remote"` call, not before.
            remote: crate::remote_cmd::configured_url(None, Some(settings)).map(|url| {
                Arc::new(fleet_remote::launcher::NatsLauncher::new(url))
                    as Arc<dyn fleet_runtime::remote::RemoteLauncher>
            }),
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
            ..SpawnerConfig::new(
                choice.client.clone(),
                catalog.clone(),
                Arc::new(agents),
                workspace.clone(),
            )
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
    if let Some(append) = &args.append_system_prompt {
        system = system.append(append.clone());
    }
    if let Some(append) = super::flags::appended_prompt_file(args)? {
        system = system.append(append);
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
    config.max_tokens = max_tokens;
    config.max_tokens_asked = asked_output;
    config.system = system.build();
    if let Some(instructions) = &mcp.instructions {
        config.system.push(instructions.clone());
    }
    config.mcp_servers = mcp.statuses.clone();
    config.mcp_live = mcp
        .session
        .as_ref()
        .and_then(|session| fleet_runtime::mcp::McpLive::for_session(&session.servers, false));
    config.max_turns = args.max_turns;
    thinking.apply(&mut config, &catalog);
    config.approver = approver;
    config.controls = host.controls;
    config.max_budget_usd = args.max_budget_usd;
    config.stream_events = args.include_partial_messages;
    super::structured::equip(args, &mut config)?;
    spawner.attach_main(&mut config);
    let kind = AgentSandbox::kind_for_mode(config.permissions.mode(), SandboxKind::Standard);
    let main_sandbox = AgentSandbox::new(kind, sandbox, Some(config.permissions.clone()));
    // Read deny rules and the credential stores bind Grep and Glob too, not only Read.
    let guard = main_sandbox.read_guard(cwd);
    let ctx = ToolContext::new(cwd.to_path_buf(), workspace)
        .with_sandbox(Arc::new(main_sandbox))
        .with_read_guard(Arc::new(guard));
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

/// Teams are on unless `FLEET_AGENT_TEAMS=0`, in coordinator mode (workers are the
/// coordinator's own scheme), or when nothing may be written under `$FLEET_HOME` (mailboxes and
/// team files live there).
fn team_settings(
    mode: Orchestration,
    session_id: &str,
    persist: bool,
    args: &PrintArgs,
    settings: &crate::settings::Settings,
) -> anyhow::Result<Option<TeamSettings>> {
    let wanted = env::FLEET_AGENT_TEAMS.get()?.unwrap_or(true);
    if !wanted || !persist || mode == Orchestration::Coordinator {
        return Ok(None);
    }
    let Ok(home) = FleetHome::from_env() else {
        return Ok(None);
    };
    let sid8: String = session_id.chars().take(8).collect();
    Ok(Some(TeamSettings {
        home,
        session_id: session_id.to_string(),
        auto_approve_plans: env::FLEET_TEAM_AUTO_APPROVE_PLANS.is_on()?,
        listen: true,
        panes: super::panes::settings(args, settings, &format!("session-{sid8}"))?,
    }))
}

/// Which tools the main agent gets: `--tools` picks (`default` = all), a bare name in
/// `--disallowedTools` removes. `Task` is the Agent tool's old name.
fn tool_filter(args: &PrintArgs) -> anyhow::Result<impl Fn(&str) -> bool> {
    let canonical = |name: &str| {
        if name == "Task" {
            "Agent".to_string()
        } else {
            name.to_string()
        }
    };
    let mut known: Vec<String> = ToolPool::builtin()
        .names()
        .into_iter()
        .map(str::to_string)
        .collect();
    known.extend(ORCHESTRATION_TOOLS.iter().map(|t| t.to_string()));
    known.extend(TEAM_TOOLS.iter().map(|t| t.to_string()));
    known.push(fleet_runtime::skills::SKILL_TOOL.to_string());
    let wanted: Option<Vec<String>> = match &args.tools {
        None => None,
        Some(list) => {
            let names: Vec<String> = list
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|name| !name.is_empty())
                .map(canonical)
                .collect();
            if names == ["default"] {
                None
            } else {
                if let Some(unknown) = names
                    .iter()
                    .find(|n| !known.contains(n) && !n.starts_with("mcp__"))
                {
                    bail!(
                        "--tools: no tool named {unknown:?}; the tools are {}",
                        known.join(", ")
                    );
                }
                Some(names)
            }
        }
    };
    // A bare tool name in --disallowedTools takes the tool away entirely, so the model is not
    // even offered it.
    let removed: Vec<String> = args
        .disallowed_tools
        .iter()
        .flat_map(|list| split_rule_list(list))
        .filter(|rule| !rule.contains('('))
        .map(|rule| canonical(&rule))
        .collect();
    Ok(move |name: &str| {
        wanted.as_ref().is_none_or(|w| w.iter().any(|n| n == name))
            && !removed.iter().any(|n| n == name)
    })
}

/// The sandbox of the run: every settings file's `sandbox` object and
/// `shellEnvironmentPolicy`, then `--sandbox` / `--no-sandbox`.
fn sandbox_config(args: &PrintArgs, settings: &Settings) -> anyhow::Result<SandboxConfig> {
    sandbox_from_settings(settings, args.sandbox())
}

/// The sandbox the settings files describe, switched on or off by `enabled` when given
/// (`--sandbox` / `--no-sandbox`). Shared with `fleet mcp serve`.
pub(crate) fn sandbox_from_settings(
    settings: &Settings,
    enabled: Option<bool>,
) -> anyhow::Result<SandboxConfig> {
    let mut config = SandboxConfig::default();
    for source in &settings.sandbox {
        config.add_settings(
            &source.settings,
            &source.base,
            &source.file.display().to_string(),
        )?;
    }
    config.env = settings.env_policy.clone();
    if let Some(enabled) = enabled {
        config.enabled = enabled;
    }
    Ok(config)
}

/// The permissions of the run: every settings file's rules and folders, then the command
/// line's. The workspace is the project (the repository root, else the cwd) plus every added
/// folder, and the coordinator's scratchpad, which every agent may use without being asked.
fn permissions(
    args: &PrintArgs,
    cwd: &Path,
    settings: &Settings,
    scratchpad: Option<&Path>,
) -> anyhow::Result<Permissions> {
    for dir in &args.add_dir {
        if !cwd.join(dir).is_dir() {
            bail!("--add-dir {}: no such folder", dir.display());
        }
    }
    let root = repo_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let sources = permission_sources(settings);
    let mut cli = CommandLinePermissions {
        allowed_tools: args.allowed_tools.clone(),
        disallowed_tools: args.disallowed_tools.clone(),
        mode: args.mode(),
        add_dirs: args.add_dir.clone(),
    };
    if let Some(dir) = scratchpad {
        cli.add_dirs.push(dir.to_path_buf());
    }
    let mut permissions = Permissions::from_sources(Workspace::new(&root), &sources, &cli, cwd)?;
    // Added as rules, not as flag text: a flag list is split on spaces and commas, which a
    // scratchpad path may hold.
    for rule in scratchpad
        .map(orchestration::scratchpad_rules)
        .unwrap_or_default()
    {
        permissions.rules.add(
            RuleKind::Allow,
            &rule,
            root.clone(),
            "the coordinator scratchpad",
        )?;
    }
    Ok(permissions)
}

/// Every settings file's `permissions` object, lowest precedence first, as the rules want them.
/// Shared with `fleet mcp serve`.
pub(crate) fn permission_sources(settings: &Settings) -> Vec<SettingsSource> {
    settings
        .permissions
        .iter()
        .map(|source| SettingsSource {
            settings: source.settings.clone(),
            base: source.base.clone(),
            name: source.file.display().to_string(),
        })
        .collect()
}
