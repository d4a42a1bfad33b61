//! Building a child agent — from an agent definition or as a fork of its parent, the first
//! time or again to resume it — ready to run.

use super::admission::StartPermit;
use super::fork::{ForkBase, FORK_MAX_TURNS, FORK_TYPE};
use super::lifecycle::Run;
use super::pool::{child_keeps, child_permissions, shape};
use super::tap::ChildTap;
use super::{ParentView, Spawner, ORCHESTRATION_TOOLS};
use crate::agent::Agent;
use crate::config::AgentConfig;
use crate::context::{AgentContext, SubagentContext, TeammateContext};
use crate::definitions::{AgentDefinition, Restriction};
use crate::sink::EventSink;
use fleet_protocol::{AgentRef, CommittedMessage, Message};
use fleet_tools::permissions::Permissions;
use fleet_tools::sandbox::AgentSandbox;
use fleet_tools::{ToolContext, ToolError};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// What a child runs as.
#[derive(Debug)]
pub(crate) enum Kind {
    Defined(Arc<AgentDefinition>),
    /// A fork: its parent's system prompt, tools and model.
    Fork(Arc<ForkBase>),
}

impl Kind {
    pub fn type_name(&self) -> &str {
        match self {
            Self::Defined(def) => &def.name,
            Self::Fork(_) => FORK_TYPE,
        }
    }
}

/// What makes a child a teammate: its place in the team.
#[derive(Debug)]
pub(crate) struct MemberSpec {
    pub team: String,
    pub name: String,
    pub color: String,
    /// It works read-only until the lead approves its plan.
    pub plan_required: bool,
    /// Set when it approves its own shutdown: its run ends after that call.
    pub exit: Arc<std::sync::atomic::AtomicBool>,
}

/// Everything needed to build a child again: kept for as long as the session, so a stopped
/// agent can be resumed.
#[derive(Debug)]
pub(crate) struct Blueprint {
    pub kind: Kind,
    /// The agent that started it (its tools and permissions bound the child's).
    pub parent: Arc<ParentView>,
    pub description: String,
    pub name: Option<String>,
    pub model: String,
    pub cwd: PathBuf,
    pub depth: u32,
    /// Set for a teammate.
    pub member: Option<Arc<MemberSpec>>,
    /// Set for an isolated child: its worktree (its cwd lies inside it).
    pub worktree: Option<Arc<crate::isolation::Worktree>>,
    /// The MCP servers its definition names, and the ones it started.
    pub mcp: Arc<super::mcp::ChildMcp>,
}

/// One run of a child: who it is and what it starts from.
pub(crate) struct Start {
    pub agent_id: String,
    /// The conversation before `prompt`: a fork's inheritance, or a resumed agent's transcript.
    pub history: Vec<Message>,
    /// Whether `history` goes into the transcript first (a fork's; a resumed agent's history
    /// came from there).
    pub write_history: bool,
    pub prompt: Message,
    pub tool_use_id: String,
    /// The API request id of the reply that asked for this run.
    pub request_id: Option<String>,
    /// The transcript's last entry, when continuing it.
    pub transcript_after: Option<String>,
    pub run: Run,
}

/// A child ready to run.
pub(crate) struct Child {
    pub agent: Agent,
    pub agent_id: String,
    pub run: Run,
    pub sink: EventSink,
    pub tap: Arc<ChildTap>,
    pub context: Arc<AgentContext>,
    pub prompt: Message,
    pub output_file: String,
    pub depth: u32,
}

impl Spawner {
    pub(crate) fn build(
        self: &Arc<Self>,
        bp: &Blueprint,
        start: Start,
    ) -> Result<Child, ToolError> {
        let Start {
            agent_id,
            history,
            write_history,
            prompt,
            tool_use_id,
            request_id,
            transcript_after,
            run,
        } = start;
        let parent = &bp.parent;
        let mut permissions = match &bp.kind {
            Kind::Defined(def) => child_permissions(&parent.permissions, def).map_err(|err| {
                let message = format!("Agent type {:?} has a bad rule: {err}", def.name);
                ToolError::bad_value_from("subagent_type", message, err)
            })?,
            Kind::Fork(_) => Permissions::clone(&parent.permissions),
        };
        let memory = match &bp.kind {
            Kind::Defined(def) => self.config.open_memory(def, &mut permissions)?,
            Kind::Fork(_) => None,
        };
        // An isolated child's boundary is its worktree: writes into the caller's checkout are
        // outside it, and its sandbox's writable root is the worktree.
        let workspace = match &bp.worktree {
            Some(wt) => Arc::new(super::isolate::workspace_in(
                wt,
                &self.config.places.workspace,
            )),
            None => self.config.places.workspace.clone(),
        };
        if bp.worktree.is_some() {
            permissions.workspace = workspace.clone();
        }
        let permissions = Arc::new(permissions);
        let snapshot = bp
            .worktree
            .as_ref()
            .filter(|wt| wt.kind == crate::isolation::WorktreeKind::Snapshot)
            .map(|wt| wt.path.clone());
        let sandbox = AgentSandbox::new(
            self.config
                .sandbox_kind(&bp.kind, permissions.mode(), snapshot.as_deref()),
            self.config.children.sandbox.clone(),
            Some(permissions.clone()),
        );
        let view = Arc::new(ParentView {
            agent_id: agent_id.clone(),
            depth: bp.depth,
            model: bp.model.clone(),
            permissions: permissions.clone(),
            tool_names: OnceLock::new(),
            grantable: OnceLock::new(),
            inbox: run.inbox.clone(),
            approver: parent.approver.clone(),
            cwd: bp.cwd.clone(),
            fork_source: Default::default(),
            scratch: snapshot.clone(),
        });
        let coordinator = self.config.children.features.coordinator();
        let member = bp.member.as_deref();
        let mut config = match &bp.kind {
            Kind::Defined(def) => {
                let tools = self.assemble(
                    &view,
                    |name| match member {
                        // A teammate shares the task list and its lead's way of talking, but
                        // starts no team and no background agents.
                        Some(spec) => match name {
                            "ExitPlanMode" => spec.plan_required,
                            "TeamCreate" | "TeamDelete" | "TaskOutput" => false,
                            _ => child_keeps(parent, def, name),
                        },
                        None => {
                            (child_keeps(parent, def, name) || bp.mcp.names_tool(name))
                                && !(coordinator && ORCHESTRATION_TOOLS.contains(&name))
                                && !self.team.as_ref().is_some_and(|t| t.is_team_tool(name))
                                && name != "ExitPlanMode"
                        }
                    },
                    def.restriction,
                );
                let tools = if bp.mcp.tools.is_empty() {
                    tools
                } else {
                    let mut tools = tools;
                    for tool in &bp.mcp.tools {
                        tools.insert(tool.clone());
                    }
                    tools
                };
                let tools = super::scoped::apply(tools, def, &permissions).map_err(|err| {
                    let message = format!("Agent type {:?} has a bad tools entry: {err}", def.name);
                    ToolError::bad_value_from("subagent_type", message, err)
                })?;
                let definitions = self.definitions_for(&tools, &shape(&tools, def));
                let mut config = AgentConfig::new(bp.model.clone(), tools, permissions);
                config.model.max_tokens = crate::output_limit::for_model(
                    &self.config.models.catalog.info(&bp.model),
                    self.config.models.max_tokens,
                );
                config.model.max_tokens_asked = self.config.models.max_tokens;
                let notes = match (member, &self.team) {
                    (Some(_), Some(team)) => team.member_notes(),
                    _ => SUBAGENT_NOTES,
                };
                config.context.system = [def.prompt.clone(), notes.to_string()]
                    .into_iter()
                    .chain(self.config.children.shared_system.iter().cloned())
                    .collect();
                if let Some(wt) = &bp.worktree {
                    let note = super::isolate::note(wt, bp);
                    config.context.system.insert(2, note);
                }
                self.config.equip(def, memory.as_ref(), &mut config);
                config.stop.max_turns = def.max_turns;
                config.tools.definitions = Some(definitions);
                config.tools.mcp_live = self.mcp.live(&bp.mcp, def);
                config
            }
            Kind::Fork(base) => {
                // The parent's exact tools, so the request's tool array is the parent's.
                let tools = self.assemble(
                    &view,
                    |name| parent.tool_names().iter().any(|held| held == name),
                    Restriction::None,
                );
                let mut config = AgentConfig::new(base.model.clone(), tools, permissions);
                config.model.max_tokens = base.max_tokens;
                config.model.max_tokens_asked = self.config.models.max_tokens;
                config.context.system = base.system.clone();
                config.model.thinking = base.thinking.clone();
                config.stop.max_turns = Some(FORK_MAX_TURNS);
                config.tools.definitions = Some(base.tools.clone());
                config
            }
        };
        let definition = match &bp.kind {
            Kind::Defined(def) => Some(def.as_ref()),
            Kind::Fork(_) => None,
        };
        config.hooks = crate::hooks::for_child(self.config.children.hooks.as_ref(), definition)?;
        let forks = self.config.children.features.fork();
        config.tree = Some(crate::config::TreeLink {
            inbox: run.inbox.clone(),
            ledger: self.ledger.clone(),
            fork_source: forks.then(|| view.fork_source.clone()),
        });
        config.tools.approver = parent.approver.clone();

        let (writer, output_file) = self.config.transcript(&agent_id, transcript_after)?;
        let tap = Arc::new(ChildTap {
            transcript: writer.map(Mutex::new),
            transcript_error: Mutex::new(None),
            task: OnceLock::new(),
            start: StartPermit::default(),
        });
        if write_history {
            for message in &history {
                tap.record(&CommittedMessage {
                    message: message.clone(),
                    reply: None,
                    tool_results: Vec::new(),
                    mail_ids: Vec::new(),
                });
            }
        }
        if let Some(spec) = member {
            config.stop.end_after_tools = spec.exit.clone();
        }
        let type_name = bp.kind.type_name();
        let shown_id = match member {
            Some(spec) => format!("{}@{}", spec.name, spec.team),
            None => agent_id.clone(),
        };
        let agent_ref = AgentRef::subagent(&shown_id, &tool_use_id, type_name, &bp.description);
        let sink = self.sink.for_agent(agent_ref).with_tap(tap.clone());
        // The child's own deny rules decide what its Grep and Glob may see.
        let guard = sandbox.read_guard(&bp.cwd);
        let tool_ctx = ToolContext::new(bp.cwd.clone(), workspace)
            .with_sandbox(Arc::new(sandbox))
            .with_read_guard(Arc::new(guard));
        let session_id = self
            .config
            .places
            .transcripts
            .as_ref()
            .map(|t| t.session_id.clone())
            .unwrap_or_default();
        let agent = Agent::new(
            self.config.models.client.clone(),
            self.config.models.catalog.clone(),
            config,
            tool_ctx,
            session_id,
        )
        .with_history(history);
        let builtin = match &bp.kind {
            Kind::Defined(def) => def.is_builtin(),
            Kind::Fork(_) => true,
        };
        let context = Arc::new(match member {
            Some(spec) => AgentContext::Teammate(TeammateContext {
                agent_id: shown_id.clone(),
                agent_name: spec.name.clone(),
                team_name: spec.team.clone(),
                color: spec.color.clone(),
                plan_mode_required: spec.plan_required,
                parent_session_id: session_id_of(&self.config.places.transcripts),
                is_team_lead: false,
                agent_type: type_name.to_string(),
            }),
            None => AgentContext::Subagent(SubagentContext::new(
                &agent_id, type_name, builtin, bp.depth, request_id,
            )),
        });
        Ok(Child {
            agent,
            agent_id,
            run,
            sink,
            tap,
            context,
            prompt,
            output_file,
            depth: bp.depth,
        })
    }
}

fn session_id_of(target: &Option<super::TranscriptTarget>) -> String {
    target
        .as_ref()
        .map(|t| t.session_id.clone())
        .unwrap_or_default()
}

/// Told to every subagent after its own prompt (forks get their parent's prompt instead).
const SUBAGENT_NOTES: &str = "You are running as a subagent: another agent gave you this task \
and receives only your final message, not your tool calls or their output. Make that message \
complete on its own: what you found or changed, with absolute file paths and the key lines, and \
anything you could not do. Do not ask questions back; decide sensibly and say what you assumed.";
