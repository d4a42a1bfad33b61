//! The set of tools one agent is given.

use crate::tool::Tool;
use fleet_protocol::ToolDefinition;
use std::sync::Arc;

#[derive(Clone, Default)]
pub struct ToolPool {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolPool {
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        Self { tools }
    }

    /// Every built-in tool.
    pub fn builtin() -> Self {
        Self::new(crate::builtin::all())
    }

    /// Adds a tool, replacing one of the same name.
    pub fn insert(&mut self, tool: Arc<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    /// Keeps only the tools `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&dyn Tool) -> bool) {
        self.tools.retain(|t| keep(t.as_ref()));
    }

    /// By name, else by alias (`Task` finds `Agent`).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .or_else(|| self.tools.iter().find(|t| t.aliases().contains(&name)))
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The definitions sent to the model, in pool order (stable, so the prompt cache holds).
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|t| ToolDefinition {
                name: t.name().to_string(),
                description: Some(t.description()),
                input_schema: t.input_schema(),
                cache_control: None,
            })
            .collect()
    }
}
