//! The Agent tool's input, and the schema the model is shown: only the fields of features
//! this session has, so the model is not offered what would only fail.

use serde::Deserialize;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentInput {
    pub description: String,
    pub prompt: String,
    #[serde(default)]
    pub subagent_type: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub run_in_background: Option<bool>,
    #[serde(default)]
    pub isolation: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub team_name: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
}

/// How a session's agents delegate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Orchestration {
    /// Subagents of any type, in the foreground or the background.
    #[default]
    Plain,
    /// An Agent call without `subagent_type` forks the caller; every child runs in the
    /// background (`FLEET_FORK_SUBAGENT`).
    Fork,
    /// The main agent only orchestrates workers, which all run in the background and cannot
    /// start workers of their own (`FLEET_COORDINATOR_MODE`, `--coordinator`).
    Coordinator,
}

/// Which optional parts of the Agent tool this session offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    pub background: bool,
    /// `isolation: worktree | remote`: worktrees or remote workers are at hand.
    pub isolation: bool,
    /// `team_name` for teammates (later).
    pub teams: bool,
    /// `name`, so SendMessage can reach the agent by name.
    pub names: bool,
    pub cwd: bool,
    pub orchestration: Orchestration,
}

impl Default for Features {
    fn default() -> Self {
        Self {
            background: true,
            isolation: false,
            teams: false,
            names: true,
            cwd: true,
            orchestration: Orchestration::Plain,
        }
    }
}

impl Features {
    /// Forks and coordinator workers always run in the background, so the model is not
    /// offered the choice.
    pub fn always_background(&self) -> bool {
        self.orchestration != Orchestration::Plain
    }

    pub fn fork(&self) -> bool {
        self.orchestration == Orchestration::Fork
    }

    pub fn coordinator(&self) -> bool {
        self.orchestration == Orchestration::Coordinator
    }
}

/// Why an Agent call's input cannot be used in this session. The text is what the model
/// reads; [`InputProblem::field`] names the input field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputProblem {
    /// A field of a feature this session does not have.
    #[error("`{field}` is not available in this session; leave it out and call Agent again.")]
    Unavailable { field: &'static str },
    /// `isolation: remote` in a session with no remote workers.
    #[error("{}", super::remote::NO_WORKERS)]
    NoRemoteWorkers,
    #[error("`description` is empty: give the task a 3-5 word description.")]
    EmptyDescription,
    #[error("`prompt` is empty: say what the agent should do.")]
    EmptyPrompt,
    /// A `name` that cannot be used as a SendMessage address.
    #[error(
        "`name` {name:?} cannot be used: use 1-64 letters, digits, '-', '_' or '.', \
         other than \"main\"."
    )]
    BadName { name: String },
}

impl InputProblem {
    /// The input field at fault.
    pub fn field(&self) -> &'static str {
        match self {
            Self::Unavailable { field } => field,
            Self::NoRemoteWorkers => "isolation",
            Self::EmptyDescription => "description",
            Self::EmptyPrompt => "prompt",
            Self::BadName { .. } => "name",
        }
    }
}

/// The model reads the problem's text as a `BadValue` of its field.
impl From<InputProblem> for fleet_tools::ToolError {
    fn from(problem: InputProblem) -> Self {
        Self::bad_value(problem.field(), problem.to_string())
    }
}

impl AgentInput {
    /// Refuses fields of features this session does not have, naming them.
    pub fn check_features(&self, features: Features) -> Result<(), InputProblem> {
        let unsupported = |field: &'static str| InputProblem::Unavailable { field };
        if self.run_in_background == Some(true) && !features.background {
            return Err(unsupported("run_in_background"));
        }
        if self.isolation.is_some() && !features.isolation {
            if self.isolation.as_deref().map(str::trim) == Some("remote") {
                return Err(InputProblem::NoRemoteWorkers);
            }
            return Err(unsupported("isolation"));
        }
        if self.name.is_some() && !(features.names || features.teams) {
            return Err(unsupported("name"));
        }
        if self.team_name.is_some() && !features.teams {
            return Err(unsupported("team_name"));
        }
        if let Some(name) = &self.name {
            check_name(name)?;
        }
        if self.cwd.is_some() && !features.cwd {
            return Err(unsupported("cwd"));
        }
        if self.description.trim().is_empty() {
            return Err(InputProblem::EmptyDescription);
        }
        if self.prompt.trim().is_empty() {
            return Err(InputProblem::EmptyPrompt);
        }
        Ok(())
    }
}

/// A name must be usable as a SendMessage address: not empty, no spaces, not an agent id's
/// shape or a reserved word.
fn check_name(name: &str) -> Result<(), InputProblem> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !matches!(name, "main" | "*");
    if ok {
        Ok(())
    } else {
        Err(InputProblem::BadName {
            name: name.to_string(),
        })
    }
}

/// The JSON Schema for `features`.
pub fn schema(features: Features) -> Value {
    let mut properties = Map::new();
    properties.insert(
        "description".into(),
        json!({"type": "string", "description": "A short (3-5 word) description of the task"}),
    );
    let (prompt, subagent_type) = if features.fork() {
        (
            "The task. A fork sees this conversation, so a short directive is enough; any other agent type sees none of it, so tell it everything it needs to know",
            "The type of agent to use; leave it out to fork yourself",
        )
    } else {
        (
            "The task for the agent: everything it needs to know, since it does not see this conversation",
            "The type of agent to use (default general-purpose)",
        )
    };
    properties.insert(
        "prompt".into(),
        json!({"type": "string", "description": prompt}),
    );
    properties.insert(
        "subagent_type".into(),
        json!({"type": "string", "description": subagent_type}),
    );
    properties.insert(
        "model".into(),
        json!({"type": "string", "enum": ["sonnet", "opus", "haiku"], "description": "Model for this agent; defaults to the agent type's model, else yours"}),
    );
    if features.background && !features.always_background() {
        properties.insert(
            "run_in_background".into(),
            json!({"type": "boolean", "description": "Run the agent in the background; you get a <task-notification> when it finishes"}),
        );
    }
    if features.isolation {
        properties.insert(
            "isolation".into(),
            json!({"type": "string", "enum": ["worktree", "remote"], "description": "Run in a separate git worktree, or on a remote worker"}),
        );
    }
    if features.teams && !features.coordinator() {
        properties.insert(
            "name".into(),
            json!({"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$", "description": "Makes the agent a teammate: a long-lived member of your team that works in the background, reads its mail between turns, and is reached by this name with SendMessage. Leave it out for an ordinary subagent"}),
        );
    } else if features.names || features.teams {
        properties.insert(
            "name".into(),
            json!({"type": "string", "description": "Name for this agent, so SendMessage can reach it"}),
        );
    }
    if features.cwd {
        properties.insert(
            "cwd".into(),
            json!({"type": "string", "description": "Working directory for the agent (inside the project); defaults to yours"}),
        );
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": ["description", "prompt"],
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_offers_only_enabled_features() {
        let all = schema(Features::default());
        assert!(all["properties"].get("run_in_background").is_some());
        assert!(all["properties"].get("isolation").is_none());
        assert!(all["properties"].get("team_name").is_none());
        assert!(all["properties"].get("name").is_some());
        for orchestration in [Orchestration::Fork, Orchestration::Coordinator] {
            let forced = schema(Features {
                orchestration,
                ..Features::default()
            });
            assert!(
                forced["properties"].get("run_in_background").is_none(),
                "{orchestration:?} runs every child in the background"
            );
        }
        let no_bg = schema(Features {
            background: false,
            ..Features::default()
        });
        assert!(no_bg["properties"].get("run_in_background").is_none());
    }

    #[test]
    fn fields_of_missing_features_are_refused_by_name() {
        let input: AgentInput = serde_json::from_value(json!({
            "description": "x", "prompt": "y", "isolation": "worktree"
        }))
        .expect("parses");
        let err = input
            .check_features(Features::default())
            .expect_err("isolation is not offered");
        assert_eq!(err, InputProblem::Unavailable { field: "isolation" });
        assert!(err.to_string().contains("`isolation`"), "{err}");
    }
}
