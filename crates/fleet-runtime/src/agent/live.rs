//! The agent's side of [`crate::controls`]: binding the session's controls when the agent is
//! built, taking a model `set_model` chose before each request (and keeping the sandbox in
//! step with a mode changed from outside), and leaving a snapshot of its context after each
//! reply for `get_context_usage`.

use super::Agent;
use crate::compact::window::estimate_tokens;
use crate::compact::{LazyFrame, Window};
use crate::controls::{
    ApiUsage, ContextFigures, ContextUsage, McpToolUsage, MessageBreakdown, ToolUsageByType,
};
use fleet_protocol::MessageContent;
use fleet_protocol::{ContentBlock, Message, Role};
use fleet_tools::sandbox::{AgentSandbox, SandboxKind};
use std::collections::HashMap;
use std::sync::Arc;

impl Agent {
    /// Binds the controls in the config, if any, to this agent, and leaves a first snapshot.
    pub(super) fn bind_controls(&self) {
        if let Some(controls) = &self.config.controls {
            controls.bind(
                &self.config.tools.permissions,
                &self.config.model.id,
                &self.catalog,
                self.client.provider(),
            );
            self.publish_context(None);
        }
    }

    /// At the start of a run: the model `set_model` chose, which a skill of the previous run
    /// may have put back when it ended.
    pub(super) fn sync_controls_for_run(&mut self) {
        let Some(controls) = self.config.controls.clone() else {
            return;
        };
        if let Some(model) = controls.model_for_run() {
            self.switch_model(model);
        }
        self.follow_mode();
        self.publish_context(None);
    }

    /// Before each request: a model chosen since the last one, and the sandbox for the mode.
    pub(super) fn sync_controls(&mut self) {
        let Some(controls) = self.config.controls.clone() else {
            return;
        };
        if let Some(model) = controls.take_new_model() {
            self.switch_model(model);
        }
        self.follow_mode();
    }

    /// Before each request: an output limit the model's figures have lowered since it was
    /// chosen. A local server still loading when the session began is asked again after its
    /// first reply (see `fleet_session::model`), and the window it gives then makes the limit
    /// picked from the catalogue's guess (8,192 tokens) too large for it. A limit the user
    /// set is theirs.
    pub(super) fn follow_catalog(&mut self) {
        if self.config.model.max_tokens_asked.is_some() {
            return;
        }
        let natural = crate::output_limit::natural(&self.catalog.info(&self.config.model.id));
        if natural < self.config.model.max_tokens {
            self.config.model.max_tokens = natural;
        }
    }

    /// Moves to `model` (`set_model`, `/model`), with that model's output limit: the old
    /// one may be more than the new model can write, or much less.
    fn switch_model(&mut self, model: String) {
        if model != self.config.model.id {
            let info = self.catalog.info(&model);
            self.config.model.max_tokens =
                crate::output_limit::for_model(&info, self.config.model.max_tokens_asked);
        }
        self.config.model.id = model;
    }

    /// Keeps Bash's sandbox in step with a mode changed from outside: plan mode confines
    /// Bash to reading, and leaving it must lift that. Only the main agent's usual kinds are
    /// touched (a scratch or unconfined sandbox stays as it is).
    fn follow_mode(&mut self) {
        let kind = self.ctx.sandbox.kind();
        if !matches!(kind, SandboxKind::Standard | SandboxKind::ReadOnly) {
            return;
        }
        let wanted = AgentSandbox::kind_for_mode(
            self.config.tools.permissions.mode(),
            SandboxKind::Standard,
        );
        if &wanted != kind {
            let sandbox = self
                .ctx
                .sandbox
                .with_kind(wanted, Some(self.config.tools.permissions.clone()));
            self.ctx = self.ctx.clone().with_sandbox(Arc::new(sandbox));
        }
    }

    /// Leaves what the context holds now with the controls; `usage` is the reply just
    /// received, if this follows one.
    pub(super) fn publish_context(&self, usage: Option<&fleet_protocol::Usage>) {
        let Some(controls) = &self.config.controls else {
            return;
        };
        let api_usage = match usage {
            Some(usage) => Some(ApiUsage::from(usage)),
            None => controls.last_api_usage(),
        };
        let mut tools = 0;
        let mut mcp_tools = Vec::new();
        for definition in self.tool_definitions.iter() {
            let tokens = estimate_tokens(definition);
            match definition.name.strip_prefix("mcp__") {
                Some(rest) => mcp_tools.push(McpToolUsage {
                    name: definition.name.clone(),
                    server_name: rest.split("__").next().unwrap_or_default().to_string(),
                    tokens,
                }),
                None => tools += tokens,
            }
        }
        let (config, definitions) = (&self.config, &self.tool_definitions);
        let frame = LazyFrame::new(move || super::request::frame_of(config, definitions));
        let total = self.context.estimate(&frame, &self.messages);
        let window = Window::new(
            &self.catalog.info(&self.config.model.id),
            self.config.model.max_tokens,
            self.config.context.compact.trigger_pct,
        );
        let breakdown = breakdown(&self.messages);
        let messages = breakdown.tool_call_tokens
            + breakdown.tool_result_tokens
            + breakdown.assistant_message_tokens
            + breakdown.user_message_tokens;
        controls.publish_context(ContextUsage::from_figures(ContextFigures {
            model: self.config.model.id.clone(),
            context_window: window.context,
            compact_threshold: window.threshold,
            auto_compact: self.config.context.compact.auto,
            system_prompt: estimate_tokens(&self.config.context.system),
            tools,
            mcp_tools,
            messages,
            total,
            breakdown,
            api_usage,
        }));
    }
}

/// The conversation by kind of content, estimated: tool calls and results (by tool), and the
/// rest of what the assistant and the user said.
fn breakdown(messages: &[Message]) -> MessageBreakdown {
    let mut out = MessageBreakdown::default();
    let mut by_tool: Vec<ToolUsageByType> = Vec::new();
    let mut tool_of: HashMap<&str, usize> = HashMap::new();
    for message in messages {
        let blocks = match &message.content {
            MessageContent::Text(text) => {
                let tokens = estimate_tokens(text);
                match message.role {
                    Role::Assistant => out.assistant_message_tokens += tokens,
                    _ => out.user_message_tokens += tokens,
                }
                continue;
            }
            MessageContent::Blocks(blocks) => blocks,
        };
        for block in blocks {
            let tokens = estimate_tokens(block);
            match block {
                ContentBlock::ToolUse { id, name, .. } => {
                    out.tool_call_tokens += tokens;
                    let at = slot(name, &mut by_tool);
                    by_tool[at].call_tokens += tokens;
                    tool_of.insert(id, at);
                }
                ContentBlock::ToolResult { tool_use_id, .. } => {
                    out.tool_result_tokens += tokens;
                    if let Some(&at) = tool_of.get(tool_use_id.as_str()) {
                        by_tool[at].result_tokens += tokens;
                    }
                }
                _ if message.role == Role::Assistant => out.assistant_message_tokens += tokens,
                _ => out.user_message_tokens += tokens,
            }
        }
    }
    out.tool_calls_by_type = by_tool;
    out
}

/// The row of `name` in `by_tool`, added when missing.
fn slot(name: &str, by_tool: &mut Vec<ToolUsageByType>) -> usize {
    if let Some(at) = by_tool.iter().position(|t| t.name == name) {
        return at;
    }
    by_tool.push(ToolUsageByType {
        name: name.to_string(),
        call_tokens: 0,
        result_tokens: 0,
    });
    by_tool.len() - 1
}
