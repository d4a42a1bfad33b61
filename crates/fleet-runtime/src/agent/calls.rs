//! Between a reply and the next request: answering the reply's tool calls (and what the
//! answers change: loaded skills, a hook's stop), the fork point for tools that copy the
//! conversation, notifications that arrived meanwhile, and MCP tools that changed.

use super::Agent;
use crate::dispatch::{Call, Dispatcher};
use crate::sink::EventSink;
use crate::subagent::ForkPoint;
use fleet_protocol::{ContentBlock, Message, PermissionDenial, Role};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl Agent {
    /// Leaves a copy of the conversation (ending with the reply just committed) for the
    /// tools of this reply that want one — only then, since the copy costs the whole history.
    pub(super) fn publish_fork_point(&self, calls: &[Call]) {
        let (Some(source), Some(base)) = (self.config.fork_source(), &self.fork_base) else {
            return;
        };
        let wanted = calls.iter().any(|call| {
            self.config
                .tools
                .pool
                .get(&call.name)
                .is_some_and(|tool| tool.wants_conversation())
        });
        if wanted {
            source.publish(ForkPoint {
                base: base.clone(),
                messages: self.messages.clone(),
            });
        }
    }

    /// Shows the model a server's new tools after its `list_changed`, before the request
    /// that follows it.
    pub(super) async fn refresh_mcp_tools(&mut self) {
        let Some(live) = self.config.tools.mcp_live.as_mut() else {
            return;
        };
        if live.refresh(&mut self.config.tools.pool).await {
            self.tool_definitions = Arc::new(self.config.tools.pool.definitions());
        }
    }

    /// Commits whatever arrived for this agent since its last request (task notifications),
    /// one user message each, so the model reads them before it answers.
    pub(super) async fn deliver_inbox(&mut self, sink: &EventSink) {
        let Some(inbox) = self.config.tree.as_ref().map(|tree| tree.inbox.clone()) else {
            return;
        };
        for message in inbox.drain() {
            self.commit(sink, message, None, Vec::new()).await;
        }
    }

    /// Runs one reply's tool calls and commits their results as one user message. Returns
    /// the reason when a tool hook said `continue: false`.
    pub(super) async fn answer(
        &mut self,
        calls: Vec<Call>,
        request_id: Option<&str>,
        sink: &EventSink,
        cancel: &CancellationToken,
        denials: &mut Vec<PermissionDenial>,
    ) -> Option<String> {
        let caller = self.hook_caller();
        let hook_stop = crate::hooks::tool::HookStop::default();
        let dispatcher = Dispatcher {
            tools: &self.config.tools.pool,
            permissions: &self.config.tools.permissions,
            ctx: &self.ctx,
            sink,
            cancel,
            concurrency: self.config.tools.concurrency,
            approver: self.config.tools.approver.as_deref(),
            request_id,
            hooks: self
                .config
                .hooks
                .as_deref()
                .map(|hooks| crate::hooks::tool::ToolHooks {
                    hooks,
                    caller: &caller,
                    stop: &hook_stop,
                }),
        };
        // Skills loaded by this reply change the agent's next requests (`skills/active.rs`).
        let skill_calls: Vec<Call> = calls
            .iter()
            .filter(|c| c.name == crate::skills::SKILL_TOOL)
            .cloned()
            .collect();
        let outcomes = dispatcher.run(calls).await;
        let loaded = crate::skills::loaded_skills(&skill_calls, &outcomes);
        self.skills.apply(&loaded, &mut self.config, &self.catalog);
        let mut blocks = Vec::with_capacity(outcomes.len());
        let mut structured = Vec::new();
        for outcome in outcomes {
            if let (ContentBlock::ToolResult { tool_use_id, .. }, Some(value)) =
                (&outcome.block, outcome.structured)
            {
                structured.push((tool_use_id.clone(), value));
            }
            denials.extend(outcome.denial);
            blocks.push(outcome.block);
        }
        self.commit(
            sink,
            Message::with_blocks(Role::User, blocks),
            None,
            structured,
        )
        .await;
        hook_stop.take()
    }
}
