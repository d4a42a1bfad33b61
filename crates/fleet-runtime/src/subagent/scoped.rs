//! `tools: Bash(git *)` in a definition: the child gets the tool, but only for calls its
//! specifiers name. Everything else is refused before the call runs, on top of (never instead
//! of) the permission check the child's calls go through anyway.

use crate::definitions::AgentDefinition;
use fleet_tools::permissions::{
    Behavior, DecisionReason, PermissionMode, Permissions, RuleError, RuleKind, RuleSet,
};
use fleet_tools::{
    Access, Parallelism, ProposeFuture, Tool, ToolContext, ToolError, ToolFuture, ToolPool,
};
use serde_json::Value;
use std::sync::Arc;

struct ScopedTool {
    inner: Arc<dyn Tool>,
    /// Allow rules only, in a mode that allows nothing by itself: a call is in scope when a
    /// rule allows it.
    scope: Permissions,
    specifiers: Vec<String>,
}

impl Tool for ScopedTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[&str] {
        self.inner.aliases()
    }

    fn parallelism(&self) -> Parallelism {
        self.inner.parallelism()
    }

    fn description(&self) -> String {
        format!(
            "{}\n\nFor this agent, only these uses are allowed: {}.",
            self.inner.description(),
            self.specifiers.join(", ")
        )
    }

    fn input_schema(&self) -> Value {
        self.inner.input_schema()
    }

    fn is_read_only(&self) -> bool {
        self.inner.is_read_only()
    }

    fn is_read_only_call(&self, input: &Value, ctx: &ToolContext) -> bool {
        self.is_read_only() || self.inner.is_read_only_call(input, ctx)
    }

    fn access(&self, input: &Value, ctx: &ToolContext) -> Access {
        self.inner.access(input, ctx)
    }

    /// A call out of scope fails before anyone is asked about it.
    fn propose<'a>(&'a self, input: &'a Value, ctx: &'a ToolContext) -> ProposeFuture<'a> {
        match self.out_of_scope(input, ctx) {
            Some(err) => Box::pin(async move { Err(err) }),
            None => self.inner.propose(input, ctx),
        }
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        match self.out_of_scope(&input, ctx) {
            Some(err) => Box::pin(async move { Err(err) }),
            None => self.inner.call(input, ctx),
        }
    }
}

impl ScopedTool {
    /// The refusal of a call the definition's specifiers do not name.
    fn out_of_scope(&self, input: &Value, ctx: &ToolContext) -> Option<ToolError> {
        let access = self.inner.access(input, ctx);
        let decision = self.scope.check(self.name(), false, &access, &ctx.cwd);
        let in_scope = decision.behavior == Behavior::Allow
            && matches!(decision.reason, DecisionReason::Rule(_));
        (!in_scope).then(|| {
            ToolError::Failed(format!(
                "This agent may use {} only as its definition allows: {}. Stay within that.",
                self.name(),
                self.specifiers.join(", ")
            ))
        })
    }
}

/// Wraps each tool that `def.tools` names only with specifiers.
pub(crate) fn apply(
    pool: ToolPool,
    def: &AgentDefinition,
    base: &Permissions,
) -> Result<ToolPool, RuleError> {
    let Some(entries) = &def.tools else {
        return Ok(pool);
    };
    let mut tools = Vec::new();
    for tool in pool.iter() {
        let naming: Vec<_> = entries
            .iter()
            .filter(|e| e.matches_name(tool.name()))
            .collect();
        // A bare entry grants the whole tool.
        if naming.is_empty() || naming.iter().any(|e| e.specifier.is_none()) {
            tools.push(tool.clone());
            continue;
        }
        let mut rules = RuleSet::default();
        let source = format!("agent definition {}", def.name);
        for entry in &naming {
            let text = format!(
                "{}({})",
                tool.name(),
                entry.specifier.as_deref().unwrap_or_default()
            );
            rules.add(RuleKind::Allow, &text, base.workspace.root.clone(), &source)?;
        }
        let mut scope = Permissions::new(PermissionMode::DontAsk, rules, base.workspace.clone());
        scope.home.clone_from(&base.home);
        tools.push(Arc::new(ScopedTool {
            inner: tool.clone(),
            scope,
            specifiers: naming.iter().map(|e| e.to_rule_string()).collect(),
        }));
    }
    Ok(ToolPool::new(tools))
}
