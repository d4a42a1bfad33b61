//! The Agent tool (alias `Task`): how an agent delegates. Bound to the agent that holds it,
//! so a spawn knows its parent.

use super::input::{schema, AgentInput};
use super::{ParentView, Spawner};
use fleet_tools::tool::parse_input;
use fleet_tools::{Access, Parallelism, Tool, ToolContext, ToolFuture};
use serde_json::Value;
use std::fmt::Write as _;
use std::sync::Arc;

pub struct AgentTool {
    spawner: Arc<Spawner>,
    parent: Arc<ParentView>,
}

impl AgentTool {
    pub(crate) fn new(spawner: Arc<Spawner>, parent: Arc<ParentView>) -> Self {
        Self { spawner, parent }
    }
}

impl Tool for AgentTool {
    fn name(&self) -> &str {
        "Agent"
    }

    fn aliases(&self) -> &[&str] {
        &["Task"]
    }

    fn description(&self) -> String {
        let features = self.spawner.config.children.features;
        if features.coordinator() {
            return self.coordinator_description();
        }
        let mut text = String::from(
            "Starts a subagent: a separate agent with its own context that works on a task and \
             reports back. Use it for work that is self-contained — broad searches, research, \
             independent changes, verification — so that its intermediate steps stay out of \
             your context.\n\n\
             - The subagent sees none of this conversation: put everything it needs in `prompt` \
             (goal, relevant files, constraints, what to report back).\n\
             - To run several at once, make several Agent calls in one message.\n\
             - By default you wait for the result. With run_in_background you get control back \
             at once and a <task-notification> message when it finishes; such notifications \
             arrive as user-role messages but come from fleet, not from the user.\n\
             - Its final message is returned to you; the user does not see it, so relay what \
             matters.\n",
        );
        if features.fork() {
            text.push_str(
                "- Leave out subagent_type to fork yourself: the fork carries on from this very \
                 conversation (same instructions, tools and model; it reuses the prompt cache), \
                 so `prompt` only needs the directive. Forks always run in the background; \
                 several in one message work in parallel. A fork cannot fork again.\n\
                 - Every agent runs in the background; you get a <task-notification> when it \
                 finishes.\n",
            );
        }
        text.push_str("\nAgent types (subagent_type):\n");
        self.list_types(&mut text);
        text
    }

    /// A fork starts from the conversation that made the call.
    fn wants_conversation(&self) -> bool {
        self.spawner.config.children.features.fork()
    }

    fn input_schema(&self) -> Value {
        schema(self.spawner.config.children.features)
    }

    /// Starting an agent changes nothing by itself; what the child does is checked call by
    /// call against its own permissions.
    fn is_read_only(&self) -> bool {
        true
    }

    fn parallelism(&self) -> Parallelism {
        Parallelism::Unbounded
    }

    fn access(&self, _input: &Value, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: AgentInput = parse_input("Agent", input)?;
            self.spawner.spawn(&self.parent, input, ctx).await
        })
    }
}

impl AgentTool {
    fn coordinator_description(&self) -> String {
        let mut text = String::from(
            "Starts a worker: an agent with its own context and the coding tools (not this \
             one), which works on one task in the background and reports back with a \
             <task-notification>. Workers see none of this conversation: the prompt must hold \
             everything — goal, exact files and lines, constraints, what to report. Start \
             independent workers together by making several Agent calls in one message. Give \
             a worker a `name` to continue it later with SendMessage.\n\nAgent types \
             (subagent_type, default general-purpose):\n",
        );
        self.list_types(&mut text);
        text
    }

    fn list_types(&self, text: &mut String) {
        for def in self.spawner.agents().agents() {
            let tools = match &def.tools {
                None => "all tools".to_string(),
                Some(list) => list
                    .iter()
                    .map(|t| t.to_rule_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let description = def.description.lines().next().unwrap_or_default();
            let _ = writeln!(text, "- {}: {description} (Tools: {tools})", def.name);
        }
    }
}
