//! The spawner's own settings, and what they answer about a child before it is built: its
//! agent type, model, folder, sandbox, transcript and memory. They hold no state; what a
//! session's agents share and change lives in the spawner and its services.

use super::build::Kind;
use super::pool::scratch_dir;
use super::ParentView;
use crate::definitions::{AgentDefinition, ModelSetting, Restriction};
use crate::services::{ChildKit, ChildModels, SpawnPlaces, TreeLimits};
use fleet_protocol::Message;
use fleet_store::{SidechainWriter, Transcript};
use fleet_tools::permissions::PermissionMode;
use fleet_tools::sandbox::{AgentSandbox, SandboxKind};
use fleet_tools::ToolError;
use std::path::PathBuf;
use std::sync::Arc;

/// The spawner's own settings: what it builds children from, and the limits it keeps.
///
/// The session makes them from its [`SpawnerConfig`](crate::SpawnerConfig), whose parts they
/// keep as they are (its optional services become the spawner's [`Services`](super::Services),
/// which hold the state of the team, the tasks and the tree's figures).
pub struct Delegation {
    /// Which model a child runs and how it is asked.
    pub models: ChildModels,
    /// What children are built from: agent types, tools, prompts, skills, hooks, sandbox.
    pub children: ChildKit,
    /// What bounds the whole tree: its shape and its spending.
    pub limits: TreeLimits,
    /// Where children work and where their transcripts are kept.
    pub places: SpawnPlaces,
}

impl std::fmt::Debug for Delegation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delegation")
            .field("agents", &self.children.agents.names())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Delegation {
    pub(crate) fn definition(
        &self,
        requested: Option<&str>,
    ) -> Result<Arc<AgentDefinition>, ToolError> {
        let name = requested
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or("general-purpose");
        self.children.agents.get(name).cloned().ok_or_else(|| {
            let fork = if self.children.features.fork() {
                " (or leave subagent_type out to fork yourself)"
            } else {
                ""
            };
            ToolError::bad_value(
                "subagent_type",
                format!(
                    "Unknown subagent_type {name:?}. Available agent types: {}{fork}.",
                    self.children.agents.names().join(", ")
                ),
            )
        })
    }

    /// The model a child runs: `FLEET_SUBAGENT_MODEL`, else the call's `model`, else the
    /// definition's, else the parent's.
    pub(crate) fn child_model(
        &self,
        parent: &ParentView,
        def: &AgentDefinition,
        requested: Option<&str>,
    ) -> String {
        let named = self
            .models
            .model_override
            .clone()
            .or_else(|| requested.map(str::to_string))
            .or_else(|| match &def.model {
                Some(ModelSetting::Named(name)) => Some(name.clone()),
                Some(ModelSetting::Inherit) | None => None,
            });
        match named {
            None => parent.model.clone(),
            Some(name) if self.models.resolve_aliases => self.models.catalog.resolve_id(&name),
            Some(name) if is_claude_alias(&name) => parent.model.clone(),
            Some(name) => name,
        }
    }

    /// `cwd` from the call, which must be a folder inside the workspace; else the parent's.
    pub(crate) fn child_cwd(
        &self,
        requested: Option<&str>,
        parent_cwd: &std::path::Path,
    ) -> Result<PathBuf, ToolError> {
        let Some(requested) = requested.filter(|c| !c.trim().is_empty()) else {
            return Ok(parent_cwd.to_path_buf());
        };
        let dir = parent_cwd.join(requested);
        let dir = dir.canonicalize().map_err(|err| {
            let message = format!("cwd {requested:?}: {err}; give an existing folder");
            ToolError::bad_value_from("cwd", message, err)
        })?;
        let workspace = &self.places.workspace;
        let inside = dir.starts_with(&workspace.root)
            || workspace
                .additional
                .iter()
                .any(|extra| dir.starts_with(extra));
        if !dir.is_dir() || !inside {
            return Err(ToolError::bad_value(
                "cwd",
                format!(
                    "cwd {requested:?} must be a folder inside the project ({})",
                    workspace.root.display()
                ),
            ));
        }
        Ok(dir)
    }

    /// How a child's Bash commands are confined: read-only for read-only agents and anything in
    /// plan mode, scratch space for the verification agent, else as the settings say.
    pub(crate) fn sandbox_kind(
        &self,
        kind: &Kind,
        mode: PermissionMode,
        snapshot: Option<&std::path::Path>,
    ) -> SandboxKind {
        let restriction = match kind {
            Kind::Defined(def) => def.restriction,
            Kind::Fork(_) => Restriction::None,
        };
        let kind = match restriction {
            Restriction::None => SandboxKind::Standard,
            Restriction::ReadOnly => SandboxKind::ReadOnly,
            Restriction::TempWritesOnly => SandboxKind::Scratch(
                snapshot
                    .map(std::path::Path::to_path_buf)
                    .unwrap_or_else(|| scratch_dir(&self.places.workspace.root)),
            ),
        };
        AgentSandbox::kind_for_mode(mode, kind)
    }

    /// The child's transcript writer and its path (empty when transcripts are off).
    pub(crate) fn transcript(
        &self,
        agent_id: &str,
        after: Option<String>,
    ) -> Result<(Option<SidechainWriter>, String), ToolError> {
        let Some(target) = &self.places.transcripts else {
            return Ok((None, String::new()));
        };
        let writer =
            SidechainWriter::new(&target.home, &target.project, &target.session_id, agent_id)
                .map_err(|err| ToolError::Internal {
                    message: format!("Cannot start a subagent: {err}"),
                    source: Some(Box::new(err)),
                })?
                .continuing_after(after);
        let path = writer.path().display().to_string();
        Ok((Some(writer), path))
    }

    /// Where a child's transcript is, when transcripts are kept.
    pub(crate) fn transcript_path(&self, agent_id: &str) -> Option<PathBuf> {
        let target = self.places.transcripts.as_ref()?;
        Some(SidechainWriter::path_for(
            &target.home,
            &target.project,
            &target.session_id,
            agent_id,
        ))
    }

    /// The stopped agent's conversation, from its transcript, and the transcript's last entry.
    pub(crate) fn history(
        &self,
        agent_id: &str,
    ) -> Result<(Vec<Message>, Option<String>), ToolError> {
        let path = self.transcript_path(agent_id).ok_or_else(|| {
            ToolError::failed(format!(
                "Agent {agent_id} has stopped and cannot be resumed: this session keeps no \
                 transcripts. Start a new agent with everything it needs in its prompt."
            ))
        })?;
        let loaded = Transcript::load(&path).map_err(|err| {
            ToolError::failed(format!(
                "Agent {agent_id} has stopped and cannot be resumed: {err}"
            ))
        })?;
        for warning in loaded.warnings() {
            tracing::warn!(agent = agent_id, "resuming: {warning}");
        }
        Ok((loaded.messages(), loaded.last_uuid().map(str::to_string)))
    }

    /// The team mail an agent's transcript says it read (empty when there is none).
    pub(crate) fn delivered_mail_of(&self, agent_id: &str) -> std::collections::HashSet<String> {
        self.transcript_path(agent_id)
            .and_then(|path| Transcript::load(&path).ok())
            .map(|loaded| crate::transcript::delivered_mail(&loaded))
            .unwrap_or_default()
    }
}

fn is_claude_alias(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "sonnet" | "opus" | "haiku" | "inherit"
    )
}
