//! What a definition's `skills`, `memory` and `effort` add to a child it starts: preloaded
//! skill instructions and its memory in its system prompt, its memory folder in its
//! permissions, and its thinking budget.

use super::Delegation;
use crate::config::AgentConfig;
use crate::definitions::AgentDefinition;
use crate::memory::AgentMemory;
use fleet_tools::permissions::Permissions;
use fleet_tools::ToolError;

impl Delegation {
    /// The session's skills by name, for the `init` line.
    pub fn skill_names(&self) -> Vec<String> {
        self.children
            .skills
            .names()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// Opens the definition's memory folder (making it the first time) and lets the child
    /// read and write there without being asked. `None` when the definition has no memory.
    pub(crate) fn open_memory(
        &self,
        def: &AgentDefinition,
        permissions: &mut Permissions,
    ) -> Result<Option<AgentMemory>, ToolError> {
        let Some(scope) = def.memory else {
            return Ok(None);
        };
        let fail = |err: crate::memory::MemoryError| {
            ToolError::Failed(format!("Agent type {:?}: {err}", def.name))
        };
        // The project's memory stays in the main checkout, also for a child in a worktree.
        let root = &self.places.workspace.root;
        let memory =
            AgentMemory::open(scope, &def.name, root, permissions.home.as_deref()).map_err(fail)?;
        memory.allow(permissions).map_err(fail)?;
        Ok(Some(memory))
    }

    /// Puts the preloaded skills and the memory right after the definition's own prompt, and
    /// sets thinking from the definition's effort (else the session's).
    pub(crate) fn equip(
        &self,
        def: &AgentDefinition,
        memory: Option<&AgentMemory>,
        config: &mut AgentConfig,
    ) {
        let (skills, _unknown) = crate::skills::preload(&def.skills, &self.children.skills);
        let blocks = skills.into_iter().chain(memory.map(AgentMemory::prompt));
        for (i, block) in blocks.enumerate() {
            let system = &mut config.context.system;
            system.insert((1 + i).min(system.len()), block);
        }
        let effort = def.effort.as_ref().or(self.models.effort.as_ref());
        crate::effort::apply(config, effort, &self.models.catalog);
    }
}
