//! The built-in agents. (Stub: the real prompts replace these.)

use super::{AgentDefinition, AgentSource, ModelSetting, Restriction, ToolEntry};

pub fn builtin_agents() -> Vec<AgentDefinition> {
    let mut general = AgentDefinition::new(
        "general-purpose",
        "General-purpose agent for multi-step tasks.",
        "You are a general-purpose agent.",
        AgentSource::BuiltIn,
    );
    general.model = Some(ModelSetting::Inherit);
    let mut explore = AgentDefinition::new(
        "Explore",
        "Fast read-only agent for exploring code.",
        "You explore code and report.",
        AgentSource::BuiltIn,
    );
    explore.tools = Some(
        ["Read", "Glob", "Grep", "Bash"]
            .into_iter()
            .map(ToolEntry::new)
            .collect(),
    );
    explore.model = Some(ModelSetting::Named("haiku".into()));
    explore.max_turns = Some(25);
    explore.restriction = Restriction::ReadOnly;
    let mut plan = explore.clone();
    plan.name = "Plan".into();
    plan.description = "Read-only planning agent.".into();
    plan.model = Some(ModelSetting::Inherit);
    plan.max_turns = Some(50);
    let mut verification = AgentDefinition::new(
        "verification",
        "Checks work by running it.",
        "You verify. End with VERDICT: PASS, FAIL or PARTIAL.",
        AgentSource::BuiltIn,
    );
    verification.disallowed_tools = ["Agent", "Edit", "Write"]
        .into_iter()
        .map(ToolEntry::new)
        .collect();
    verification.restriction = Restriction::TempWritesOnly;
    vec![general, explore, plan, verification]
}
